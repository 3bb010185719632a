"""Every benchmark in one command.

    python bench/run.py [--repeat 31] [--quick]

Runs `bench_session.py` (the session start as the client waits for it, the hooks, `lifecycle render`
and `--help`, each beside the bare interpreter in the same run), then `bench_doctor_budget.py`,
`bench_recall.py`, `secrets_bench.py`, `bench_scan.py`, `bench_shim.py` and `bench_mcp.py` (doctor
and budget on 1,000 to 100,000 files, recall cold and warm, secret-gate throughput, `lifecycle scan`
over 5,000 notes, what a version manager's shim in front of `python3` adds to each hook run, the MCP
server's start and recall through it, and `bench_sync.py`: `lifecycle sync` against a local remote);
`--quick` runs those on smaller sizes. Each prints medians (and ratios to the bare interpreter where a
person waits). Benchmarks never assert a time; the targets
are in docs/speed.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=31)
    parser.add_argument("--quick", action="store_true", help="smaller sizes for the storage and recall benchmarks")
    args = parser.parse_args()
    system = f"{platform.system()} {platform.machine()}"
    print(f"machine: {os.cpu_count()} cores, {system}, Python {platform.python_version()}")
    runs = {
        "bench_session.py": ["--repeat", str(args.repeat)],
        "bench_doctor_budget.py": ["--sizes", "1000,10000" if args.quick else "1000,10000,100000"],
        "bench_recall.py": ["--sizes", "1000" if args.quick else "1000,10000"]
        + (["--journal-lines", "100000"] if args.quick else []),
        "secrets_bench.py": [],
        "bench_scan.py": ["--notes", "1000"] if args.quick else [],
        "bench_shim.py": ["--repeat", str(args.repeat)],  # says so and stops when python3 is not a shim
        "bench_mcp.py": ["--sizes", "1000" if args.quick else "1000,10000"],
        "bench_sync.py": ["--repeat", "3" if args.quick else "7"],
    }
    for script, extra in runs.items():
        print(f"== {script}", flush=True)
        subprocess.run([sys.executable, str(BENCH / script), *extra], check=False)


if __name__ == "__main__":
    main()
