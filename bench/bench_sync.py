"""`lifecycle sync` against a local bare remote, side by side with the bare interpreter.

    python bench/bench_sync.py [--repeat 7] [--notes 1000]

Measures, as a person waits for them (the real `lifecycle sync` command line, a fresh process each
time): a sync with nothing to do (target at most 1 s), and a sync that commits and pushes `--notes`
changed notes (target at most 10 s for 1,000), each paired with `python3 -I -S -c pass` in the same
run. Prints medians and the median of pairwise ratios. Never asserts a time; the targets are in
docs/sync.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

BARE = [sys.executable, "-I", "-S", "-c", "pass"]
SYNC = [sys.executable, "-c", "from continuity.cli.application import app; app(prog_name='lifecycle')", "sync"]


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--notes", type=int, default=1000)
    args = parser.parse_args()
    from syncvaults import bare_remote, new_vault

    from continuity.local import connection
    from continuity.sync import engine

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home = base / "home"
        home.mkdir()
        env = dict(os.environ, HOME=str(home), XDG_STATE_HOME=str(home / "state"), XDG_CACHE_HOME=str(home / "cache"))
        os.environ.update(env)
        remote = bare_remote(base)
        vault = new_vault(base / "vault", "bench")
        engine.connect_remote(vault, "bench", str(remote))
        conn = base / "conn"
        conn.write_text(connection.render_connection(vault, "bench", "bench", sys.executable))
        env["AGENT_VAULT_CONNECTION"] = str(conn)
        rows = []
        for label, prepare in (
            ("sync, nothing to do", lambda _round: None),
            (f"sync, {args.notes} changed notes", lambda r: _change(vault, args.notes, r)),
        ):
            bare_times, times, ratios = [], [], []
            for round_ in range(args.repeat):
                prepare(round_)
                bare = timed(BARE, env)
                took = timed(SYNC, env)
                bare_times.append(bare)
                times.append(took)
                ratios.append(took / bare)
            rows.append(
                (
                    label,
                    statistics.median(bare_times) * 1000,
                    statistics.median(times) * 1000,
                    statistics.median(ratios),
                )
            )
    print(f"\n{'measure (bench/bench_sync.py)':50} {'bare ms':>8} {'ms':>8} {'ratio':>6}")
    for label, bare, took, ratio in rows:
        print(f"{label:50} {bare:8.1f} {took:8.1f} {ratio:6.1f}")


def _change(vault: Path, count: int, round_: int) -> None:
    folder = vault / "30-memory" / "facts"
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        (folder / f"bench-{index:04d}.md").write_text(
            f"---\nid: bench-{index:04d}\ntype: fact\nstatus: approved\n---\nRound {round_}: fact number {index}, "
            "a sentence or two of ordinary prose about the project, as approved notes hold.\n"
        )


if __name__ == "__main__":
    main()
