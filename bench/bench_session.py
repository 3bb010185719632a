"""The session start as the client waits for it, side by side with the bare interpreter.

    python bench/bench_session.py [--repeat 31] [--install]

On a copy of the checkout connected to a generated vault (hot sources of about 12 KiB in all), from
a subfolder of it, as Codex runs hooks: every non-async SessionStart handler of the copy's
`.codex/hooks.json` is started at once through `bash -c`, each with the harness's JSON on stdin, and
the clock stops when the last one exits. Each sample is paired with `bash -c 'python3 -I -S -c pass'`
run just before it, and the table shows the medians and the median of the pairwise ratios, so that a
noisy moment of this shared machine weighs on both sides of a pair alike:

* session start, warm (an unchanged vault) and cold (the soul changed before each run; and every hot
  source changed);
* the same if the session also waited for the async handlers (the outbox sweep), with no outbox, and
  with a delivered package that is not yet due;
* the brief handler alone, warm, and the PostToolUse handler (it runs after every tool call);
* the first session after install: an empty cache and state folder before each run; with `--install`
  also the very first run in a new virtual environment made with `pip install -e` of the copy;
* `lifecycle render` from a warm cache and `lifecycle --help` (plain typer).

Benchmarks never assert a time; the targets are in docs/speed.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
BARE = ["bash", "-c", "python3 -I -S -c pass"]
HOT = ("00-system/SOUL.md", "00-system/PREFERENCES.md", "10-project/bench/PROJECT.md", "50-devices/bench-box/DEVICE.md")


def environment(base: Path, bin_dir: Path = BIN) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "AGENT_VAULT_CONNECTION"}
    home = base / "home"
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".state"))
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


def copy_checkout(dest: Path) -> Path:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    return dest


def grow(vault: Path, stamp: int, names: tuple[str, ...] = HOT) -> None:
    """Give hot sources a ~3 KiB Brief each, different for each `stamp` (so that the cache misses)."""
    for rel in names:
        kind = {"SOUL": "soul", "PREFERENCES": "preferences", "PROJECT": "project", "DEVICE": "device"}[Path(rel).stem]
        label = {"project": "project: bench\n", "device": "device: bench-box\n"}.get(kind, "")
        lines = "".join(
            f"- rule {i} of {kind}, revision {stamp}: keep changes small and reviewed.\n" for i in range(40)
        )
        (vault / rel).write_text(f"---\ntype: {kind}\n{label}---\n# {kind}\n\n## Brief\n\n{lines}")


def handlers(checkout: Path, event: str, *, with_async: bool = False) -> list[str]:
    doc = json.loads((checkout / ".codex" / "hooks.json").read_text())
    found = [h for group in doc["hooks"][event] for h in group["hooks"]]
    return [h["command"] for h in found if with_async or not h.get("async")]


def run_together(commands: list[str], stdin: bytes, cwd: Path, env: dict[str, str]) -> tuple[float, bytes]:
    """Start every command at once, feed each the same JSON, and wait for the last to exit."""
    start = time.perf_counter()
    procs = [
        subprocess.Popen(["bash", "-c", c], cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        for c in commands
    ]
    outputs = [proc.communicate(stdin)[0] for proc in procs]
    return time.perf_counter() - start, b"".join(outputs)


def measure(
    label: str, commands: list[str], stdin: bytes, cwd: Path, env: dict[str, str], repeat: int,
    before: Callable[[int], None] | None = None, expect: bytes | None = b'status=\\"restored\\"',
) -> tuple[str, float, float, float]:  # fmt: skip
    bare_times, times, ratios = [], [], []
    for i in range(repeat):
        if before is not None:
            before(i)
        bare, _ = run_together([BARE[2]], b"", cwd, env)
        took, out = run_together(commands, stdin, cwd, env)
        if expect is not None and expect not in out:
            raise SystemExit(f"{label}: no restored brief in the output: {out[:300]!r}")
        bare_times.append(bare)
        times.append(took)
        ratios.append(took / bare)
    return label, statistics.median(bare_times) * 1000, statistics.median(times) * 1000, statistics.median(ratios)


def fresh_state(env: dict[str, str]) -> Callable[[int], None]:
    """An empty cache, and a state folder with only what `lifecycle init` left in it (this computer's
    device id and its record of the connection it made), as on the first session after set-up."""

    def empty(_: int) -> None:
        shutil.rmtree(env["XDG_CACHE_HOME"], ignore_errors=True)
        state = Path(env["XDG_STATE_HOME"]) / "continuity"
        for child in state.iterdir() if state.is_dir() else ():
            if child.name in ("devices", "made"):
                continue
            if child.is_dir():
                shutil.rmtree(child)
            else:
                child.unlink()

    return empty


def first_install(base: Path, stdin: bytes) -> float:
    """One run of the session start right after `pip install -e` into a new virtual environment."""
    checkout = copy_checkout(base / "installed")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "-e", str(checkout)], check=True)
    env = environment(base / "installed-home", venv / "bin")
    subprocess.run(
        [str(venv / "bin" / "lifecycle"), "init", "--new", "--vault", str(base / "installed-vault"),
         "--device", "bench-box", "--project", "bench"],
        cwd=checkout, env=env, check=True, capture_output=True,
    )  # fmt: skip
    for name in ("XDG_CACHE_HOME", "XDG_STATE_HOME"):
        shutil.rmtree(env[name], ignore_errors=True)
    cwd = checkout / "src"
    data = stdin.replace(json.dumps(str(base / "checkout" / "src")).encode(), json.dumps(str(cwd)).encode())
    took, out = run_together(handlers(checkout, "SessionStart"), data, cwd, env)
    if b"restored" not in out:
        raise SystemExit(f"first session after install: no restored brief: {out[:300]!r}")
    return took * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=31)
    parser.add_argument("--install", action="store_true", help="also time the first run in a new venv")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="continuity-bench-") as tmp:
        base = Path(tmp)
        checkout = copy_checkout(base / "checkout")
        env = environment(base)
        subprocess.run(
            [str(BIN / "lifecycle"), "init", "--new", "--vault", str(base / "vault"), "--device", "bench-box",
             "--project", "bench"], cwd=checkout, env=env, check=True, capture_output=True,
        )  # fmt: skip
        grow(base / "vault", 0)
        cwd = checkout / "src"
        doc = {"session_id": "bench", "transcript_path": None, "cwd": str(cwd), "hook_event_name": "SessionStart",
               "model": "m", "permission_mode": "default", "source": "startup"}  # fmt: skip
        start = json.dumps(doc).encode()
        tool = json.dumps({**doc, "hook_event_name": "PostToolUse", "turn_id": "t1", "tool_name": "Bash",
                           "tool_input": {"command": "git commit -qm wip && rm -rf build"}}).encode()  # fmt: skip
        session, everything = handlers(checkout, "SessionStart"), handlers(checkout, "SessionStart", with_async=True)
        run_together(session, start, cwd, env)  # fill the cache
        n = args.repeat
        rows = [
            measure("session start, warm", session, start, cwd, env, n),
            measure("session start, cold (the soul changed)", session, start, cwd, env, n,
                    before=lambda i: grow(base / "vault", i + 1, HOT[:1])),
            measure("session start, cold (every hot source changed)", session, start, cwd, env, n,
                    before=lambda i: grow(base / "vault", i + 1000)),
            measure("first session after install (empty cache)", session, start, cwd, env, max(5, n // 3),
                    before=fresh_state(env)),
            measure("if it waited for the sweep: no outbox", everything, start, cwd, env, n),
        ]  # fmt: skip
        (checkout / "report.md").write_text("final numbers\n")
        subprocess.run([str(BIN / "lifecycle"), "outbox", "deliver", "report.md"], cwd=checkout, env=env,
                       check=True, capture_output=True)  # fmt: skip
        rows += [
            measure("if it waited for the sweep: nothing due", everything, start, cwd, env, n),
            measure("the brief handler alone, warm", session[:1], start, cwd, env, n),
            measure("the PostToolUse handler", handlers(checkout, "PostToolUse"), tool, cwd, env, n, expect=None),
            measure("lifecycle render (the command line, warm)", [f"{BIN / 'lifecycle'} render"], b"", cwd, env,
                    max(5, n // 3), expect=b'status="restored"'),
            measure("lifecycle --help (typer)", [f"{BIN / 'lifecycle'} --help"], b"", cwd, env, max(5, n // 3),
                    expect=b"Usage"),
        ]  # fmt: skip
        print(f"\n{'measure (bench/bench_session.py)':50} {'bare ms':>8} {'ms':>8} {'ratio':>6}")
        for label, bare, took, ratio in rows:
            print(f"{label:50} {bare:8.1f} {took:8.1f} {ratio:6.2f}")
        if args.install:
            print(f"first session in a new venv right after pip install -e: {first_install(base, start):.0f} ms")


if __name__ == "__main__":
    main()
