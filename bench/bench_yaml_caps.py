"""The cold session start on the worst vault the YAML caps allow, beside an ordinary one.

    python bench/bench_yaml_caps.py [--repeat 5] [--handoffs 30]

Text in the vault (a note, a clip, a handoff another agent wrote) can hold any frontmatter up to
FRONTMATTER_CAP_BYTES. A pure-Python YAML scanner spends time on every open flow level for every
token, so the cost of a block grows with its nesting and its tokens; the caps (FRONTMATTER_MAX_DEPTH
and FRONTMATTER_MAX_TOKENS per block, FRONTMATTER_RUN_MAX_TOKENS per hook run, all in
`continuity.limits`) bound it in the scanner, before a tree is built. This benchmark fills every
source the hook reads, and `--handoffs` handoffs of the project, with frontmatter of each worst kind:

* `at the caps`: just within every cap (depth 15, about 2,000 tokens, under 16 KiB), which the parser
  must read in full until the run's allowance is spent;
* `nesting bomb`: `x: [[[[…` of 16 KiB, past the depth cap (about 2 s a file without the caps);
* `wide`: a flat list of 16 KiB behind a YAML comment, past the token cap;

and times the cold hook (CONTINUITY_NO_CACHE=1, so each run reads and parses everything) against the
same vault with ordinary frontmatter. It prints medians; benchmarks never assert a time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from continuity import limits  # noqa: E402

BIN = Path(sys.executable).parent
SCRIPT = ROOT / "scripts" / "agent-startup-context.py"
SOURCES = (
    "00-system/SOUL.md",
    "00-system/PREFERENCES.md",
    "10-project/bench/PROJECT.md",
    "50-devices/bench-box/DEVICE.md",
)


def at_the_caps() -> str:
    depth = limits.FRONTMATTER_MAX_DEPTH - 1
    items = (limits.FRONTMATTER_MAX_TOKENS - 4 * depth - 16) // 2
    return "# YAML, not flat\nx: " + "[" * (depth - 1) + ",".join(["a"] * items) + "]" * (depth - 1) + "\n"


def bomb() -> str:
    n = (limits.FRONTMATTER_CAP_BYTES - 16) // 2
    return "x: " + "[" * n + "]" * n + "\n"


def wide() -> str:
    n = (limits.FRONTMATTER_CAP_BYTES - 64) // 2
    return "# YAML, not flat\nx: [" + ",".join(["a"] * n) + "]\n"


def ordinary(kind: str) -> str:
    return f"type: {kind}\nid: {kind}-note\ntags: [bench, {kind}]\n"


def write_vault(vault: Path, front: str | None, handoffs: int) -> None:
    for rel in SOURCES:
        kind = Path(rel).stem.lower()
        head = front if front is not None else ordinary(kind)
        (vault / rel).write_text(f"---\n{head}---\n# {kind}\n\n## Brief\n\n- one line of {kind}.\n")
    folder = vault / "20-state" / "handoffs"
    for old in folder.glob("*.md"):
        old.unlink()
    for i in range(handoffs):
        head = front if front is not None else ordinary("handoff") + f"project: bench\nstatus: superseded\nn: {i}\n"
        (folder / f"2025-01-01T00{i:04d}Z-bench.md").write_text(f"---\n{head}---\n## Goal and status\n\nx\n")


def cold_hook(checkout: Path, env: dict[str, str]) -> tuple[float, bytes]:
    data = json.dumps({"session_id": "b", "transcript_path": None, "cwd": str(checkout), "source": "startup",
                       "hook_event_name": "SessionStart", "model": "m"}).encode()  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(SCRIPT), "--hook", "--harness", "codex"],
        input=data, cwd=checkout, env=env, capture_output=True, check=False, timeout=120,
    )  # fmt: skip
    return time.perf_counter() - start, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--handoffs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="continuity-bench-yaml-") as tmp:
        base = Path(tmp)
        checkout = base / "checkout"
        checkout.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=checkout, check=True)
        env = {k: v for k, v in os.environ.items() if k != "AGENT_VAULT_CONNECTION"}
        home = base / "home"
        env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".state"),
                   CONTINUITY_NO_CACHE="1")  # fmt: skip
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        subprocess.run(
            [str(BIN / "lifecycle"), "init", "--new", "--vault", str(base / "vault"), "--device", "bench-box",
             "--project", "bench"], cwd=checkout, env=env, check=True, capture_output=True,
        )  # fmt: skip
        rows = []
        for label, front in (("ordinary", None), ("at the caps", at_the_caps()), ("nesting bomb", bomb()),
                             ("wide", wide())):  # fmt: skip
            write_vault(base / "vault", front, args.handoffs)
            times = []
            for _ in range(args.repeat):
                took, out = cold_hook(checkout, env)
                if b"private-memory" not in out:
                    raise SystemExit(f"{label}: the hook printed no brief: {out[:200]!r}")
                times.append(took)
            rows.append((label, statistics.median(times) * 1000, max(times) * 1000))
        files = len(SOURCES) + args.handoffs
        print(f"\ncold session start, {files} notes with this frontmatter (bench/bench_yaml_caps.py)")
        print(f"{'frontmatter':16} {'median ms':>10} {'max ms':>8}")
        for label, median, worst in rows:
            print(f"{label:16} {median:10.0f} {worst:8.0f}")


if __name__ == "__main__":
    main()
