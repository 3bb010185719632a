"""What a version manager's shim in front of `python3` adds to every hook run, side by side.

    python bench/bench_shim.py [--repeat 31] [--shim PATH]

The checked-in project hooks run `python3` from PATH. With pyenv (or asdf…) that is a shell script
that finds the version to use and then runs the real binary. On a copy of the checkout connected to
a generated vault, each sample runs the same hook command twice through `bash -c`: once with the
shim's folder first on PATH, once with a folder whose `python3` is the binary the shim ends up
running; the order alternates, and the table shows the medians, the difference and the median of
the pairwise ratios:

* the bare interpreter (`python3 -I -S -c pass`);
* the brief handler at session start, warm (an unchanged vault);
* the PostToolUse handler (it runs after every tool call).

The shim defaults to the first `python3` on PATH when that is a script. Benchmarks never assert a
time; `doctor` quotes the figure measured here (tunables.PYTHON_SHIM_COST_MS).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from bench_session import BARE, BIN, copy_checkout, environment, grow, handlers, run_together

from continuity.local import interpreter


def shim_target(shim: Path, env: dict[str, str]) -> str:
    """The binary the shim runs, as that binary reports it."""
    code = "import sys; print(sys.executable)"
    return subprocess.run([str(shim), "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()


def paired(
    command: str, stdin: bytes, cwd: Path, real: dict[str, str], shimmed: dict[str, str], repeat: int
) -> tuple[float, float, float]:
    real_times, shim_times, ratios = [], [], []
    for i in range(repeat):
        order = [(real, real_times), (shimmed, shim_times)]
        for env, times in order if i % 2 == 0 else order[::-1]:
            took, _ = run_together([command], stdin, cwd, env)
            times.append(took)
        ratios.append(shim_times[-1] / real_times[-1])
    return statistics.median(real_times) * 1000, statistics.median(shim_times) * 1000, statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=31)
    parser.add_argument("--shim", type=Path, default=None, help="the shim (default: python3 on PATH, if a script)")
    args = parser.parse_args()
    found = args.shim or Path(interpreter.on_path("python3") or "")
    if not found.is_file() or not interpreter.is_script(str(found)):
        raise SystemExit(f"no shim to measure: {found or 'python3'} is not a script; pass --shim PATH")
    with tempfile.TemporaryDirectory(prefix="continuity-bench-") as tmp:
        base = Path(tmp)
        checkout = copy_checkout(base / "checkout")
        env = environment(base)
        subprocess.run(
            [str(BIN / "lifecycle"), "init", "--new", "--vault", str(base / "vault"), "--device", "bench-box",
             "--project", "bench"], cwd=checkout, env=env, check=True, capture_output=True,
        )  # fmt: skip
        grow(base / "vault", 0)
        rest = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != str(BIN))
        shimmed = {**env, "PATH": f"{found.parent}{os.pathsep}{rest}"}
        target = shim_target(found, shimmed)
        real_bin = base / "real-bin"
        real_bin.mkdir()
        (real_bin / "python3").symlink_to(target)
        real = {**env, "PATH": f"{real_bin}{os.pathsep}{rest}"}
        cwd = checkout / "src"
        doc = {"session_id": "bench", "transcript_path": None, "cwd": str(cwd), "hook_event_name": "SessionStart",
               "model": "m", "permission_mode": "default", "source": "startup"}  # fmt: skip
        start = json.dumps(doc).encode()
        tool = json.dumps({**doc, "hook_event_name": "PostToolUse", "turn_id": "t1", "tool_name": "Bash",
                           "tool_input": {"command": "git status"}}).encode()  # fmt: skip
        brief = handlers(checkout, "SessionStart")[0]
        _, out = run_together([brief], start, cwd, real)  # fill the cache
        if b"restored" not in out:
            raise SystemExit(f"the brief handler did not restore the brief: {out[:300]!r}")
        rows = [
            ("bare interpreter (python3 -I -S -c pass)", paired(BARE[2], b"", cwd, real, shimmed, args.repeat)),
            ("the brief handler, warm", paired(brief, start, cwd, real, shimmed, args.repeat)),
            ("the PostToolUse handler", paired(handlers(checkout, "PostToolUse")[0], tool, cwd, real, shimmed,
                                               args.repeat)),
        ]  # fmt: skip
        print(f"shim: {found} ({interpreter.manager(str(found))}) -> {target}")
        print(f"\n{'measure (bench/bench_shim.py)':44} {'real ms':>8} {'shim ms':>8} {'added':>7} {'ratio':>6}")
        for label, (real_ms, shim_ms, ratio) in rows:
            print(f"{label:44} {real_ms:8.1f} {shim_ms:8.1f} {shim_ms - real_ms:7.1f} {ratio:6.2f}")


if __name__ == "__main__":
    main()
