"""Doctor and budget on generated vaults of 1,000, 10,000 and 100,000 files.

Run from the repository root:

    python bench/bench_doctor_budget.py [--sizes 1000,10000,100000] [--repeat 5]

Each vault has the hot sources, INDEX.md, MEMORY_POLICY.md and a few handoffs, and the rest of its files
spread over folders of 100 (a fifth in the working set's `30-memory`, the rest in sessions, documents and
the archive), so its shape is what a long-used vault looks like. Reported, as medians of several runs
after one warm-up (the file system's metadata cache is warm, which is the common case):

* `doctor`: the whole check in process (`doctor.run`: scan, validation, secret gate, renders, lease);
* `startup scan`: the bounded scan the startup hook runs (`scan.startup_notices`);
* `budget`: the full metadata walk (`budget.walk`), and its cost per file.

Doctor's scan is bounded (1,024 entries, 512 folders, stop once review is certain), so its time should
stay flat as the vault grows; budget visits every entry, so its time should grow linearly. Nothing here
asserts a time: benchmarks are not tests.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from continuity.health import doctor  # noqa: E402
from continuity.local import connection  # noqa: E402
from continuity.vault import budget, scan  # noqa: E402

PROJECT = "bench-app"
DEVICE = "bench-box"
PER_FOLDER = 100
HANDOFFS = 5
WORDS = ("tea", "lexer", "parser", "cache", "runner", "queue", "token", "brief", "vault", "review", "lesson")


def note(kind: str, ident: str, body: str, **extra: str) -> str:
    fields = {"id": ident, "type": kind, "status": "approved", **extra}
    front = "".join(f"{key}: {value}\n" for key, value in fields.items())
    return f"---\n{front}---\n# {ident}\n\n## Brief\n\n{body}\n"


def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)) + ".\n"


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def make_vault(root: Path, total: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    write(root, "00-system/SOUL.md", note("soul", "soul", prose(rng, 80)))
    write(root, "00-system/PREFERENCES.md", note("preferences", "preferences", prose(rng, 80)))
    write(root, "00-system/INDEX.md", note("index", "index", prose(rng, 200)))
    write(root, "00-system/MEMORY_POLICY.md", note("policy", "memory-policy", prose(rng, 200)))
    write(root, f"10-project/{PROJECT}/PROJECT.md", note("project", "project", prose(rng, 120), project=PROJECT))
    write(root, f"50-devices/{DEVICE}/DEVICE.md", note("device", "device", prose(rng, 40), device=DEVICE))
    for n in range(HANDOFFS):
        created = f"2025-01-0{n + 1}T00:00:00Z"
        text = (
            f"---\nid: h{n}\ntype: handoff\nstatus: {'current' if n == HANDOFFS - 1 else 'superseded'}\n"
            f"project: {PROJECT}\ndevice: {DEVICE}\ncreated: {created}\n---\n"
            f"## Goal and status\n\n{prose(rng, 40)}\n## Next actions\n\n1. {prose(rng, 10)}"
        )
        write(root, f"20-state/handoffs/2025010{n + 1}T000000Z-{DEVICE}-step-{n}.md", text)
    written = 6 + HANDOFFS
    areas = ("30-memory/facts", "20-state/sessions", "40-documents", "90-archive", "90-archive")
    index = 0
    while written < total:
        area = areas[index % len(areas)] if index % 5 else "30-memory/lessons"
        folder = f"{area}/batch-{index:05d}"
        count = min(PER_FOLDER, total - written)
        for m in range(count):
            size_words = rng.randint(20, 300)
            write(root, f"{folder}/note-{m:03d}.md", note("fact", f"n{index}-{m}", prose(rng, size_words)))
        written += count
        index += 1


def median_ms(action: Callable[..., object], arguments: tuple[object, ...], repeat: int) -> float:
    action(*arguments)  # warm-up: imports, first parse, page cache
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action(*arguments)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000", help="vault sizes in files, comma-separated")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per measurement (median reported)")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",") if size]
    print(
        f"python {platform.python_version()} on {platform.system()} {platform.machine()}; "
        f"median of {args.repeat} runs after one warm-up"
    )
    header = f"{'files':>8}  {'doctor ms':>10}  {'startup scan ms':>15}  {'budget ms':>10}  {'budget us/file':>14}"
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory(prefix="continuity-bench-") as tmp:
        for total in sizes:
            base = Path(tmp) / f"v{total}"
            vault = base / "vault"
            make_vault(vault, total)
            if hasattr(os, "sync"):
                os.sync()  # let the generated files' writeback finish before anything is timed
            conn_file = base / "connection.yaml"
            conn_file.write_text(connection.render_connection(vault, DEVICE, PROJECT, None), encoding="utf-8")
            env = {**os.environ, connection.ENV_CONNECTION: str(conn_file)}
            report = doctor.run(base, env)
            assert report.connected and report.ok, [c for c in report.checks if c.level == "error"]
            walked = budget.walk(vault)
            assert walked.vault.files == total, (walked.vault.files, total)
            doctor_ms = median_ms(doctor.run, (base, env), args.repeat)
            scan_ms = median_ms(scan.startup_notices, (vault, PROJECT), args.repeat)
            budget_ms = median_ms(budget.walk, (vault,), args.repeat)
            per_file = budget_ms * 1000 / total
            print(f"{total:>8,}  {doctor_ms:>10.1f}  {scan_ms:>15.2f}  {budget_ms:>10.1f}  {per_file:>14.2f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
