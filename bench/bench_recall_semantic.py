"""Would a local static-embedding re-ranker earn its cost? WordLlama beside recall, on the evaluation.

Run from the repository root, in an environment where `pip install wordllama` was run (it is not a
dependency of continuity):

    python bench/bench_recall_semantic.py

WordLlama's wheel holds its 256-dimension weights and its tokenizer; `WordLlama.load` looks for the
tokenizer elsewhere and then tries a download, so the bundled file is copied into a cache folder
first and the load runs with `disable_download=True` (nothing is fetched). Every note of the
evaluation is embedded (title, tags, aliases, body); each query is embedded at query time. Reported:
recall alone, the embeddings alone (same scope rules), and reciprocal rank fusion of the two (k = 10
or 60) either re-ranking recall's own notes or adding the embeddings' best five to them; a query recall
answers with nothing stays answered with nothing. Keep the re-ranker only if it lifts recall@3 by at
least 3 points (docs/recall.md).
"""

from __future__ import annotations

import glob
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "recall_eval"))

import bench_recall_quality as quality  # noqa: E402
import dataset  # noqa: E402


def main() -> None:
    start = time.perf_counter()
    import numpy as np
    import wordllama
    from wordllama import WordLlama

    imported = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as work:
        os.makedirs(f"{work}/wl/tokenizers")
        for file in glob.glob(os.path.join(os.path.dirname(wordllama.__file__), "tokenizers", "*.json")):
            shutil.copy(file, f"{work}/wl/tokenizers/")
        start = time.perf_counter()
        model = WordLlama.load(cache_dir=f"{work}/wl", disable_download=True)
        loaded = time.perf_counter() - start
        notes = dataset.load_notes()
        queries = dataset.load_queries()
        os.environ["XDG_CACHE_HOME"] = f"{work}/cache"
        vault = Path(work) / "vault"
        dataset.write_vault(vault, notes)
        start = time.perf_counter()
        matrix = model.embed(
            [f"{n.title}. {' '.join(n.tags)}. {' '.join(n.aliases)}. {n.body}" for n in notes], norm=True
        )
        embedded = time.perf_counter() - start
        lexical = quality.lifecycle_ranker(vault)
        seen: dict[tuple[str, str, str], list[str]] = {}

        def lex(query: dataset.Query) -> list[str]:
            key = (query.text, query.project, query.device)
            if key not in seen:
                seen[key] = lexical(query)
            return seen[key]

        def dense(query: dataset.Query) -> list[str]:
            scores = matrix @ model.embed([query.text], norm=True)[0]
            ranked = [notes[i] for i in np.argsort(-scores)]
            return [n.id for n in ranked if not n.superseded_by and n.visible(query.project, query.device)][:10]

        def fused(k: int, widen: bool) -> quality.Ranker:
            def rank(query: dataset.Query) -> list[str]:
                found = lex(query)
                if not found:
                    return []
                near = dense(query)
                pool = list(dict.fromkeys(found + near[:5])) if widen else found
                score = {x: (1 / (k + found.index(x) + 1) if x in found else 0.0) for x in pool}
                for x in pool:
                    if x in near:
                        score[x] += 1 / (k + near.index(x) + 1)
                return sorted(pool, key=lambda x: -score[x])

            return rank

        times = []
        for query in queries:
            start = time.perf_counter()
            dense(query)
            times.append(time.perf_counter() - start)
        print(
            f"import {imported * 1000:.0f} ms, load {loaded * 1000:.0f} ms, {len(notes)} notes embedded in "
            f"{embedded * 1000:.0f} ms, one query embedded and scored {statistics.median(times) * 1000:.2f} ms"
        )
        systems: dict[str, quality.Ranker] = {"lifecycle recall": lex, "embeddings alone": dense}
        for k in (10, 60):
            systems[f"fusion k={k}, recall's notes"] = fused(k, False)
            systems[f"fusion k={k}, + embeddings' best 5"] = fused(k, True)
        results = {}
        for name, ranker in systems.items():
            table, _lines, median = quality.evaluate(ranker, queries)
            results[name] = (table, median)
        print(quality.render(results))


if __name__ == "__main__":
    main()
