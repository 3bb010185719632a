"""Secret gate benchmark: recall, false positives and speed, ours beside detect-secrets' defaults.

Run from the repository root:

    python bench/secrets_bench.py [--seed N] [--repeat N]

Both scanners see the same generated corpus (tests/secret_corpus.py: fake credentials in real formats
and hard negatives). detect-secrets runs as its CLI would: default settings (every plugin, default
filters) and `scan_file` on each note written to a temporary `.md` file. Speed is reported in ms per
KiB of note text, as the median of several passes; the cost of importing each scanner is measured in
fresh interpreters. Nothing here asserts a time: benchmarks are not tests.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

import secret_corpus as corpus  # noqa: E402

from continuity.gate.secrets import scan_text  # noqa: E402

Scanner = Callable[[str], bool]

PROSE_LINES = [
    "## What happened",
    "We moved the nightly job to the new runner pool and watched the queue for an hour.",
    "- The cache key now includes the lockfile hash, so stale wheels are gone.",
    "- `make test` runs in 4 minutes on two cores; the slow part is the fixture vault.",
    "Decision: keep the brief under 2,000 tokens and leave details to recall.",
    "See [the runbook](https://wiki.example.com/runbooks/deploy) for the rollback steps.",
    "The API returns 429 when the token bucket is empty; back off and retry with jitter.",
    "Lesson: read the error message before searching; it said which path was missing.",
    "Open question: should handoffs expire after a week, or when the branch merges?",
    "```python\nfor note in vault.notes():\n    if note.stale:\n        review(note)\n```",
]


def prose_notes(count: int = 40) -> list[str]:
    """Clean notes of a few KiB each: the common case on the hook's cold path."""
    import random

    out = []
    for index in range(count):
        r = random.Random(index)
        lines = [r.choice(PROSE_LINES) for _ in range(r.randint(20, 80))]
        out.append(corpus.note(r, f"Session {index}", "\n\n".join(lines)))
    return out


def ours(text: str) -> bool:
    return bool(scan_text(text))


def detect_secrets_default() -> tuple[Scanner, Callable[[], None]]:
    """A scanner with detect-secrets' defaults over temporary files, and its clean-up."""
    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings

    folder = tempfile.mkdtemp(prefix="secrets-bench-")
    path = os.path.join(folder, "note.md")
    context = default_settings()
    context.__enter__()

    def scan(text: str) -> bool:
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        return any(True for _ in scan_file(path))

    def close() -> None:
        context.__exit__(None, None, None)
        os.unlink(path) if os.path.exists(path) else None
        os.rmdir(folder)

    return scan, close


def ms_per_kib(scan: Scanner, texts: list[str], repeat: int) -> float:
    kib = sum(len(t.encode("utf-8")) for t in texts) / 1024
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for text in texts:
            scan(text)
        runs.append((time.perf_counter() - start) * 1000 / kib)
    return statistics.median(runs)


def import_ms(statement: str, repeat: int) -> float:
    """Median wall time of a fresh interpreter running `statement`, minus a bare one."""

    # Bytecode caches are allowed here (as on a user's machine): the first run writes them.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT / "src")

    def run(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
        return (time.perf_counter() - start) * 1000

    run(statement)
    pairs = [run(statement) - run("pass") for _ in range(repeat)]
    return statistics.median(pairs)


def table(title: str, header: tuple[str, ...], rows: list[tuple[object, ...]]) -> None:
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows, strict=True)]
    print(f"\n{title}")
    for row in (header, *rows):
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)))


def pct(hits: int, total: int) -> str:
    return f"{100 * hits / total:5.1f}%" if total else "  -  "


SCAN_ONE = "import continuity.gate.secrets as s; s.scan_text("


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    positives, negatives = corpus.positives(args.seed), corpus.negatives(args.seed)
    ds_scan, ds_close = detect_secrets_default()
    scanners: dict[str, Scanner] = {"gate": ours, "detect-secrets": ds_scan}
    try:
        verdict = {name: {id(s): scan(s.text) for s in (*positives, *negatives)} for name, scan in scanners.items()}
        print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, {platform.machine()}")
        print(
            f"corpus: {len(positives)} positives in {len({s.kind for s in positives})} types, "
            f"{len(negatives)} hard negatives in {len({s.kind for s in negatives})} categories (seed {args.seed})"
        )
        for label, group in (("type", "kind"), ("family", "family")):
            buckets: dict[str, list[corpus.Sample]] = defaultdict(list)
            for sample in positives:
                buckets[getattr(sample, group)].append(sample)
            rows = [
                (key, len(items), *(pct(sum(verdict[n][id(s)] for s in items), len(items)) for n in scanners))
                for key, items in sorted(buckets.items())
            ]
            rows.append(
                (
                    "ALL",
                    len(positives),
                    *(pct(sum(verdict[n][id(s)] for s in positives), len(positives)) for n in scanners),
                )
            )
            table(f"recall per {label} (notes rejected)", (label, "n", *scanners), rows)
        buckets = defaultdict(list)
        for sample in negatives:
            buckets[sample.kind].append(sample)
        rows = [
            (key, len(items), *(pct(sum(verdict[n][id(s)] for s in items), len(items)) for n in scanners))
            for key, items in sorted(buckets.items())
        ]
        rows.append(
            ("ALL", len(negatives), *(pct(sum(verdict[n][id(s)] for s in negatives), len(negatives)) for n in scanners))
        )
        table("false positives per category (clean notes rejected)", ("category", "n", *scanners), rows)
        prose = prose_notes()
        everything = [s.text for s in (*positives, *negatives)]
        rows = [
            (
                what,
                f"{sum(len(t.encode()) for t in texts) / 1024:.0f} KiB",
                *(f"{ms_per_kib(scan, texts, args.repeat):.3f}" for scan in scanners.values()),
            )
            for what, texts in (("clean prose notes", prose), ("corpus notes", everything))
        ]
        table("speed, ms per KiB (median of passes, warm process)", ("input", "size", *scanners), rows)
        rows = [
            ("import continuity.gate.secrets", f"{import_ms('import continuity.gate.secrets', args.repeat):.1f}"),
            ("import dataclasses (part of the above)", f"{import_ms('import dataclasses', args.repeat):.1f}"),
            (
                "import + scan one clean 4 KiB note",
                f"{import_ms(SCAN_ONE + repr(prose[0]) + ')', args.repeat):.1f}",
            ),
            (
                "import detect_secrets' scanner",
                f"{import_ms('import detect_secrets.core.scan, detect_secrets.settings', args.repeat):.1f}",
            ),
        ]
        table("import cost, ms over a bare interpreter (median)", ("what", "ms"), rows)
    finally:
        ds_close()


if __name__ == "__main__":
    main()
