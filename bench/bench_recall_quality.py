"""How well warm recall finds the notes a person meant, on the evaluation in `bench/recall_eval/`.

Run from the repository root:

    python bench/bench_recall_quality.py [--baseline] [--per-query] [--without FEATURE,...]

The evaluation's vault (303 notes of one developer over three projects and two devices) is written to
a temporary folder, and each of its 217 queries is run the way an agent would (`lifecycle recall`
with the query's words as arguments, in the query's project, on the query's device, top 3). Per kind
of query and overall it reports:

* `recall@3`: of the notes a careful person would want (at most three per query), the share among
  the first three returned, averaged over the queries that have any;
* `MRR`: the mean reciprocal rank of the first wanted note among the first ten;
* `nothing → nothing`: of the queries that no note answers, the share that returned nothing;
* `stale first`: of the queries with an older, contradicting note, the share where it ranked above
  the newer one;
* the median time of one warm query in process.

`--baseline` adds SQLite FTS5 with the porter tokenizer over the same notes and the same scope rules
(title, tags, aliases and body as written; the query's words OR-ed; FTS5's own BM25), as a yardstick.
`--without` switches off named parts of the ranking (see `continuity.recall.rank.FEATURES`) to show
what each contributes. Nothing here asserts anything: benchmarks are not tests.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench" / "recall_eval"))

import dataset  # noqa: E402

TODAY = dt.date(2025, 7, 1)
TOP = 3
DEPTH = 10
KINDS = ("keywords", "sentence", "identifier", "inflection", "concept", "device", "recency", "nothing")

Ranker = Callable[[dataset.Query], list[str]]


def lifecycle_ranker(vault: Path) -> Ranker:
    from continuity.recall import search

    def rank(query: dataset.Query) -> list[str]:
        found = search.recall(vault, query.device, query.project, query.text.split(), limit=DEPTH, today=TODAY)
        return [r.id for r in found.results]

    return rank


def fts5_ranker(vault: Path, notes: list[dataset.EvalNote]) -> Ranker:
    """SQLite FTS5 with porter stemming over what recall may see, words OR-ed, default BM25.

    A note the secret gate withholds is left out here too, as recall can only name it."""
    from continuity.gate.secrets import scan_text

    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE fts USING fts5(id UNINDEXED, title, tags, aliases, body, tokenize='porter unicode61')"
    )
    owners: dict[str, dataset.EvalNote] = {}
    for note in notes:
        if note.superseded_by or scan_text(note.markdown()):
            continue
        owners[note.id] = note
        db.execute(
            "INSERT INTO fts VALUES (?, ?, ?, ?, ?)",
            (note.id, note.title, " ".join(note.tags), " ".join(note.aliases), note.body),
        )

    def rank(query: dataset.Query) -> list[str]:
        words = re.findall(r"[^\W_]+", query.text.lower())
        if not words:
            return []
        expression = " OR ".join(f'"{w}"' for w in words)
        rows = db.execute("SELECT id FROM fts WHERE fts MATCH ? ORDER BY bm25(fts)", (expression,)).fetchall()
        visible = [r[0] for r in rows if owners[r[0]].visible(query.project, query.device)]
        return visible[:DEPTH]

    del vault
    return rank


def evaluate(rank: Ranker, queries: list[dataset.Query]) -> tuple[dict[str, dict[str, float]], list[str], float]:
    per_kind: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    lines: list[str] = []
    times: list[float] = []
    for query in queries:
        start = time.perf_counter()
        ranked = rank(query)
        times.append(time.perf_counter() - start)
        top = ranked[:TOP]
        buckets = (per_kind[query.kind], per_kind["all"])
        if query.wanted:
            got = len(set(top) & set(query.wanted)) / min(len(query.wanted), TOP)
            first = next((i for i, nid in enumerate(ranked) if nid in query.wanted), None)
            rr = 0.0 if first is None else 1.0 / (first + 1)
            for bucket in buckets:
                bucket["recall"].append(got)
                bucket["mrr"].append(rr)
            mark = "ok " if got == 1 else "MISS"
        else:
            empty = 1.0 if not top else 0.0
            for bucket in buckets:
                bucket["nothing"].append(empty)
            mark = "ok " if empty else "NOISE"
        if query.stale:
            old = ranked.index(query.stale) if query.stale in ranked else DEPTH
            new = min((ranked.index(w) for w in query.wanted if w in ranked), default=DEPTH)
            for bucket in buckets:
                bucket["stale"].append(1.0 if old < new else 0.0)
        lines.append(f"{mark} {query.kind:10} {query.text!r} -> {top} (want {list(query.wanted)})")
    table = {
        kind: {name: statistics.mean(values) for name, values in metrics.items() if values}
        for kind, metrics in per_kind.items()
    }
    return table, lines, statistics.median(times)


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def render(results: dict[str, tuple[dict[str, dict[str, float]], float]]) -> str:
    header = "| system | recall@3 | MRR | nothing → nothing | stale first | " + " | ".join(
        k for k in KINDS if k != "nothing"
    )
    out = [header + " | median |", "|" + "---|" * (len(KINDS) + 5)]
    for name, (table, median) in results.items():
        total = table["all"]
        cells = [
            pct(total.get("recall")),
            f"{total.get('mrr', 0):.3f}",
            pct(total.get("nothing")),
            pct(total.get("stale")),
            *(pct(table.get(k, {}).get("recall")) for k in KINDS if k != "nothing"),
        ]
        out.append(f"| {name} | " + " | ".join(cells) + f" | {median * 1000:.2f} ms |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", action="store_true", help="add SQLite FTS5 with porter stemming")
    parser.add_argument("--per-query", action="store_true", help="print every query's top three")
    parser.add_argument("--without", default="", help="comma-separated ranking features to switch off")
    args = parser.parse_args()
    notes = dataset.load_notes()
    queries = dataset.load_queries()
    dataset.check(notes, queries)
    with tempfile.TemporaryDirectory() as work:
        os.environ["XDG_CACHE_HOME"] = str(Path(work) / "cache")
        vault = Path(work) / "vault"
        dataset.write_vault(vault, notes)
        if args.without:
            from continuity.recall import rank as recall_rank

            recall_rank.switch_off(args.without.split(","))
        systems: dict[str, Ranker] = {"lifecycle recall": lifecycle_ranker(vault)}
        if args.baseline:
            systems["FTS5 porter, words OR-ed"] = fts5_ranker(vault, notes)
        results = {}
        for name, ranker in systems.items():
            for query in queries[:20]:  # warm the index and the page cache before timing
                ranker(query)
            table, lines, median = evaluate(ranker, queries)
            results[name] = (table, median)
            if args.per_query:
                print(f"## {name}")
                print("\n".join(lines))
        print(f"{len(notes)} notes, {len(queries)} queries; top {TOP}")
        print(render(results))


if __name__ == "__main__":
    main()
