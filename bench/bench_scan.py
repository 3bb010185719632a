"""`lifecycle scan`: secret-gate throughput, and the wall time of one call over thousands of notes.

    python bench/bench_scan.py [--repeat 11] [--notes 5000] [--wall-repeat 3]

Two tables. Throughput, in one warm process (median of passes), in ms per KiB of note text:

* `scan_text` on clean prose notes (the common case) and on secret-dense notes (every note of the
  test corpus's positives holds a credential in a real format, so every detector has work);
* `notescan.check` on the same clean prose written to files: what `lifecycle scan` does per file
  (a capped, link-refusing read, decoding, frontmatter, the file name and the text through the gate),
  beside the floor of merely opening, reading and decoding the same files.

Wall time, each sample paired with the bare interpreter (`bash -c 'python3 -I -S -c pass'`) run just
before it, medians and the median of the pairwise ratios as in `bench_session.py`: `lifecycle scan` on
one clean note (the cost a pre-commit run pays at least), and on a generated vault of `--notes` notes
of about 1 KiB each, clean, and with one note in ten holding a secret (`--json`, so that the report
itself is part of the cost).

Benchmarks never assert a time; the targets are in docs/speed.md.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

import secret_corpus as corpus  # noqa: E402
from secrets_bench import prose_notes  # noqa: E402

from continuity.gate.secrets import scan_text  # noqa: E402
from continuity.health import notescan  # noqa: E402
from continuity.health.scanfiles import Target, vault_targets  # noqa: E402

BARE = ["bash", "-c", "python3 -I -S -c pass"]
LIFECYCLE = str(Path(sys.executable).with_name("lifecycle"))
FACT = (
    "---\nid: fact-{n}\ntype: fact\nstatus: approved\nscope: global\ncreated: 2026-01-01T00:00:00Z\n"
    "tags: [build, ci]\n---\n# Fact {n}\n\n{body}\n"
)


def kib(texts: list[str]) -> float:
    return sum(len(text.encode("utf-8")) for text in texts) / 1024


def ms_per_kib(work: Callable[[], object], size_kib: float, repeat: int) -> float:
    work()  # first pass compiles the detectors' expressions
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        runs.append((time.perf_counter() - start) * 1000 / size_kib)
    return statistics.median(runs)


def read_floor(targets: list[Target]) -> None:
    for target in targets:
        (target.root / target.rel).read_bytes().decode("utf-8")


def throughput(repeat: int, folder: Path) -> list[tuple[str, str, str]]:
    prose = prose_notes()
    dense = [sample.text for sample in corpus.positives()]
    for index, text in enumerate(prose):
        (folder / f"note-{index}.md").write_text(text)
    targets = [Target(folder, f"note-{index}.md", f"note-{index}.md", False) for index in range(len(prose))]
    rows = [
        ("scan_text, clean prose", prose, lambda: [scan_text(t) for t in prose]),
        ("scan_text, secret-dense (every note a secret)", dense, lambda: [scan_text(t) for t in dense]),
        ("notescan.check per file, clean prose", prose, lambda: [notescan.check(t) for t in targets]),
        ("floor: open, read and decode the same files", prose, lambda: read_floor(targets)),
    ]
    return [(label, f"{kib(texts):.0f}", f"{ms_per_kib(work, kib(texts), repeat):.4f}") for label, texts, work in rows]


def make_vault(root: Path, notes: int, secret_every: int | None) -> Path:
    """`notes` facts of about 1 KiB under 30-memory/facts/, a secret in one of each `secret_every`."""
    r = random.Random(5)
    folder = root / "30-memory" / "facts"
    folder.mkdir(parents=True)
    (root / "00-system").mkdir()
    line = "The nightly job moved to the new runner pool; the queue drained within the hour.\n"
    for n in range(notes):
        body = line * 12
        if secret_every and n % secret_every == 0:
            body += f"deploy token: {corpus.checksummed(r, corpus.j('gh', 'p_'))}\n"
        (folder / f"fact-{n}.md").write_text(FACT.format(n=n, body=body))
    return root


def measure(label: str, command: list[str], cwd: Path, repeat: int) -> tuple[str, float, float, float]:
    bare_times, times, ratios = [], [], []
    subprocess.run(command, cwd=cwd, capture_output=True, check=False)  # warm the file cache
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(BARE, check=True)
        bare = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, capture_output=True, check=False)
        took = time.perf_counter() - start
        bare_times.append(bare)
        times.append(took)
        ratios.append(took / bare)
    return label, statistics.median(bare_times) * 1000, statistics.median(times) * 1000, statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11, help="passes for throughput and one-note runs")
    parser.add_argument("--notes", type=int, default=5000, help="notes in the generated vault")
    parser.add_argument("--wall-repeat", type=int, default=3, help="runs over the generated vault")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-scan-"))
    try:
        files = base / "files"
        files.mkdir()
        print(f"\n{'throughput (bench/bench_scan.py)':50} {'KiB':>6} {'ms/KiB':>8}")
        for label, size, speed in throughput(args.repeat, files):
            print(f"{label:50} {size:>6} {speed:>8}")

        clean = make_vault(base / "clean", args.notes, None)
        leaky = make_vault(base / "leaky", args.notes, 10)
        assert len(vault_targets(clean)) == args.notes
        one = ["30-memory/facts/fact-1.md"]
        rows = [
            measure("lifecycle scan, one clean note", [LIFECYCLE, "scan", *one], clean, args.repeat),
            measure(f"lifecycle scan, {args.notes:,} clean notes", [LIFECYCLE, "scan", "."], clean, args.wall_repeat),
            measure(
                f"lifecycle scan --json, {args.notes:,} notes, 1 in 10 a secret",
                [LIFECYCLE, "scan", "--json", "."],
                leaky,
                args.wall_repeat,
            ),
        ]
        print(f"\n{'wall time (bench/bench_scan.py)':50} {'bare ms':>8} {'ms':>8} {'ratio':>7} {'ms/note':>8}")
        for label, bare, took, ratio in rows:
            per_note = f"{took / args.notes:8.2f}" if "notes" in label else ""
            print(f"{label:50} {bare:8.1f} {took:8.1f} {ratio:7.1f} {per_note:>8}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
