"""Every benchmark in one command: the startup hook against the bare interpreter, then the others.

    python bench/run.py [--repeat 21] [--quick]

It builds its vaults in a temporary folder, measures side by side in one run and prints medians and
ratios (the median of pairwise ratios, so a noisy moment hits both sides of a pair alike):

* the hook, warm (an unchanged vault, served from the startup cache) and cold (every hot source
  changed before each run, about 12 KiB in all), each against `python -I -S -c pass`, both through the
  checked-in `.codex/hooks.json` command in `bash -c`, exactly as Codex runs it; beside them the bare
  interpreter through `bash -c` (what the shell alone adds to any Codex hook), the script run
  directly (no shell, no pin check in the command, but compiled at every run), and the hook for a
  PostToolUse event (it runs after every tool call);
* `lifecycle render` and `lifecycle --help`, against the same bare interpreter;
* then `bench_doctor_budget.py`, `bench_recall.py` and `secrets_bench.py` (doctor and budget on 1,000 to
  100,000 files, recall cold and warm on 10,000 notes, secret-gate throughput); `--quick` runs them on
  smaller sizes.

Benchmarks never assert a time; the targets are in the README.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
LIFECYCLE = str(BIN / "lifecycle")


def timed(cmd: list[str], *, cwd: Path, env: dict[str, str], stdin: bytes | None = None) -> tuple[float, bytes]:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, input=stdin, capture_output=True, check=False)
    return time.perf_counter() - start, done.stdout


def setup(base: Path) -> tuple[Path, dict[str, str]]:
    """A copy of the checkout connected to a new vault, with hot sources of about 12 KiB in all."""
    checkout = base / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".venv", ".git", "output", ".agent-vault")
    shutil.copytree(ROOT, checkout, ignore=ignore)
    subprocess.run(["git", "init", "-q"], cwd=checkout, check=True)
    env = dict(os.environ)
    env.pop("AGENT_VAULT_CONNECTION", None)
    env.update(
        HOME=str(base / "home"), XDG_CACHE_HOME=str(base / "home/.cache"), XDG_STATE_HOME=str(base / "home/.state")
    )
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    subprocess.run(
        [LIFECYCLE, "init", "--new", "--vault", str(base / "vault"), "--device", "bench-box", "--project", "bench"],
        cwd=checkout,
        env=env,
        check=True,
        capture_output=True,
    )
    grow(base / "vault", 0)
    return checkout, env


HOT = ("00-system/SOUL.md", "00-system/PREFERENCES.md", "10-project/bench/PROJECT.md", "50-devices/bench-box/DEVICE.md")


def grow(vault: Path, stamp: int) -> None:
    """Give every hot source a ~3 KiB Brief, different for each `stamp` (so the cache misses)."""
    kinds = {"SOUL": "soul", "PREFERENCES": "preferences", "PROJECT": "project", "DEVICE": "device"}
    for rel in HOT:
        kind = kinds[Path(rel).stem]
        label = {"project": "project: bench\n", "device": "device: bench-box\n"}.get(kind, "")
        rule = "keep changes small and reviewed"
        lines = "".join(f"- rule {i} of {kind}, revision {stamp}: {rule}.\n" for i in range(40))
        (vault / rel).write_text(f"---\ntype: {kind}\n{label}---\n# {kind}\n\n## Brief\n\n{lines}")


def hook_command(checkout: Path, event: str = "SessionStart") -> str:
    doc = json.loads((checkout / ".codex" / "hooks.json").read_text())
    return str(doc["hooks"][event][0]["hooks"][0]["command"])


def pairwise(
    label: str, bare: list[str], other: list[str], repeat: int, **kw: object
) -> tuple[str, float, float, float]:
    before = kw.pop("before", None)
    b_times, o_times, ratios = [], [], []
    for i in range(repeat):
        if callable(before):
            before(i)
        b, _ = timed(bare, **kw)  # type: ignore[arg-type]
        o, out = timed(other, **kw)  # type: ignore[arg-type]
        if label.startswith("hook") and "PostToolUse" not in label and b"restored" not in out:
            raise SystemExit(f"{label}: the hook did not deliver a restored brief: {out[:200]!r}")
        b_times.append(b)
        o_times.append(o)
        ratios.append(o / b)
    return label, statistics.median(b_times) * 1000, statistics.median(o_times) * 1000, statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--quick", action="store_true", help="smaller sizes for the other benchmarks")
    args = parser.parse_args()
    system = f"{platform.system()} {platform.machine()}"
    print(f"machine: {os.cpu_count()} cores, {system}, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory(prefix="continuity-bench-") as tmp:
        base = Path(tmp)
        checkout, env = setup(base)
        cwd = checkout / "src"
        payload = json.dumps(
            {"session_id": "bench", "transcript_path": None, "cwd": str(cwd), "hook_event_name": "SessionStart",
             "model": "m", "permission_mode": "default", "source": "startup"}
        ).encode()  # fmt: skip
        bare = [sys.executable, "-I", "-S", "-c", "pass"]
        hook = ["bash", "-c", hook_command(checkout)]
        tool = ["bash", "-c", hook_command(checkout, "PostToolUse")]
        tool_payload = json.dumps(
            {"session_id": "bench", "transcript_path": None, "cwd": str(cwd), "hook_event_name": "PostToolUse",
             "model": "m", "permission_mode": "default", "turn_id": "t1", "tool_name": "Bash",
             "tool_input": {"command": "git commit -qm wip && rm -rf build"}, "tool_response": "", "tool_use_id": "u"}
        ).encode()  # fmt: skip
        shell = ["bash", "-c", shlex.join(bare)]
        script = [sys.executable, "-I", "-S", str(checkout / "scripts" / "agent-startup-context.py"), "--hook"]
        common = {"cwd": cwd, "env": env}
        timed(hook, stdin=payload, **common)  # fill the cache
        rows = [
            pairwise("hook, warm", bare, hook, args.repeat, stdin=payload, **common),
            pairwise("bare interpreter through bash -c", bare, shell, args.repeat, stdin=payload, **common),
            pairwise("hook script alone, warm", bare, script, args.repeat, stdin=payload, **common),
            pairwise(
                "hook, cold (every hot source changed)",
                bare,
                hook,
                args.repeat,
                stdin=payload,
                before=lambda i: grow(base / "vault", i + 1),
                **common,
            ),
            pairwise("hook, PostToolUse (after every tool)", bare, tool, args.repeat, stdin=tool_payload, **common),
            pairwise("lifecycle render", bare, [LIFECYCLE, "render"], max(5, args.repeat // 3), **common),
            pairwise("lifecycle --help", bare, [LIFECYCLE, "--help"], max(5, args.repeat // 3), **common),
        ]
    print(f"\n{'measure':40} {'bare ms':>9} {'ms':>9} {'ratio':>7}")
    for label, b, o, r in rows:
        print(f"{label:40} {b:9.1f} {o:9.1f} {r:7.2f}")
    print("targets: warm hook <= 1.5x, cold hook <= 30x, lifecycle --help <= 10x the bare interpreter\n")
    sizes = {
        "bench_doctor_budget.py": ["--sizes", "1000,10000" if args.quick else "1000,10000,100000"],
        "bench_recall.py": ["--sizes", "1000" if args.quick else "1000,10000"]
        + (["--journal-lines", "100000"] if args.quick else []),
        "secrets_bench.py": [],
    }
    for script, extra in sizes.items():
        print(f"== {script}", flush=True)
        subprocess.run([sys.executable, str(ROOT / "bench" / script), *extra], check=False)


if __name__ == "__main__":
    main()
