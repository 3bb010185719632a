"""The MCP server: its start as a client waits for it, and recall through it, on generated vaults.

Run from the repository root:

    python bench/bench_mcp.py [--sizes 1000,10000] [--repeat 15]

Reported as medians, beside the bare interpreter (`python -I -S -c pass`) measured in the same run:

* `initialize` and `tools/list`: spawn `lifecycle mcp` in a connected checkout, write `initialize`,
  `notifications/initialized` and `tools/list` on its stdin at once (as Codex and Claude Code do), and
  time from the spawn to each answer's line on its stdout: what a client waits for. Target: at most
  100 ms;
* `user entry`: the same for the command a user-scope registration runs (`python -I -m continuity
  mcp`, what `lifecycle setup` writes by default);
* `processor`: the processor time (user and system) of the whole server process for that handshake,
  `lifecycle mcp` and the user entry, beside the bare interpreter's (`python -I -S`, reading the same
  lines): what the server takes from the cores a client is starting on;
* `imports`: a process that only imports what the server imports before it answers and leaves: the
  floor under `initialize`;
* `recall in process`: the server's `recall` tool in process (`Session.call`, the handler the
  protocol dispatches to, one session whose inotify watcher stays armed, a fresh meter each time so
  the allowance never runs out) with a current index, over bench_recall's rotation of queries.
  Target: at most 10 ms at 10,000 notes;
* `no watcher`: the same with the session's watcher off (`watch=False`), so every call walks and
  stats the warm folders: what a platform without inotify gets;
* `search.recall`: the library call alone, as `lifecycle recall` makes it, for comparison;
* `recall round trip`: the same tool through an open stdio session, with a term no note holds (so
  the session's allowance is not spent and every sample does the index check and the query).

The vaults are bench_recall's (approved notes of 60 to 200 Zipf-distributed words). Nothing here
asserts a time: benchmarks are not tests.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import os
import platform
import resource
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

import json  # noqa: E402

import anyio  # noqa: E402
from bench_recall import DEVICE, PROJECT, QUERIES, make_vault  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from continuity.local.connection import render_connection  # noqa: E402
from continuity.recall import search  # noqa: E402
from continuity.server.meter import Meter  # noqa: E402
from continuity.server.session import Session  # noqa: E402

LIFECYCLE = Path(sys.executable).parent / "lifecycle"


def median_ms(action: Callable[[], object], repeat: int, warmup: int = 1) -> float:
    for _ in range(warmup):
        action()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def checkout(work: Path, vault: Path) -> Path:
    """A git checkout whose `.agent-vault` names the vault, as `lifecycle init` leaves it: written, and
    recorded as this computer's own (`local.made`, in the bench's own state folder), without which
    discovery never uses a checkout's connection."""
    from continuity.local import made

    repo = work / f"checkout-{vault.name}"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    file = repo / ".agent-vault"
    file.write_text(render_connection(vault, DEVICE, PROJECT, None), encoding="utf-8")
    made.remember(made.CONNECTION, file, hashlib.sha256(file.read_bytes()).hexdigest())
    return repo


def server_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("AGENT_VAULT_CONNECTION", "PYTHONDONTWRITEBYTECODE")}


HANDSHAKE = b"".join(
    json.dumps(message).encode() + b"\n"
    for message in (
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    )
)  # fmt: skip


USER_ENTRY = [sys.executable, "-I", "-m", "continuity", "mcp"]
BARE_READER = [
    sys.executable, "-I", "-S", "-c",
    "import sys; sys.stdin.readline(); print('{\"id\": 0}', flush=True); sys.stdin.readline(); "
    "sys.stdin.readline(); print('{\"result\": {\"tools\": [1]}}', flush=True)",
]  # fmt: skip


def start_ms(repo: Path, repeat: int, argv: list[str]) -> tuple[float, float, float]:
    """Spawn to the `initialize` answer and to the `tools/list` answer, and the processor time of the
    whole process (medians); the exit is not timed."""
    initialize: list[float] = []
    listed: list[float] = []
    processor: list[float] = []
    for n in range(repeat + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv, cwd=repo, env=server_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(HANDSHAKE)
        proc.stdin.flush()
        first = proc.stdout.readline()
        at_first = time.perf_counter()
        second = proc.stdout.readline()
        at_second = time.perf_counter()
        proc.stdin.close()
        proc.wait(timeout=30)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert json.loads(first)["id"] == 0 and json.loads(second)["result"]["tools"], (first, second)
        if n:  # the first spawn warms the file cache
            initialize.append(at_first - start)
            listed.append(at_second - start)
            processor.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    medians = [statistics.median(samples) * 1000 for samples in (initialize, listed, processor)]
    return medians[0], medians[1], medians[2]


def round_trip_ms(repo: Path, repeat: int) -> float:
    params = StdioServerParameters(command=str(LIFECYCLE), args=["mcp"], cwd=str(repo), env=server_env())
    times: list[float] = []

    async def run() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for n in range(repeat + 1):
                start = time.perf_counter()
                result = await session.call_tool("recall", {"terms": "nothing-matches-this"})
                if n:
                    times.append(time.perf_counter() - start)
                assert not result.is_error, result

    anyio.run(run)
    return statistics.median(times) * 1000


def in_process_ms(repo: Path, repeat: int, *, watch: bool = True) -> float:
    """One session for every call (so its watcher stays armed, as in a real server), a fresh meter
    each time so the allowance never runs out; `watch=False` is the walk at every call."""
    rotation = iter(range(10**9))
    session = Session(repo, Meter("main", "codex", dt.datetime.now(dt.timezone.utc), list), "codex", watch=watch)

    def one() -> None:
        session.meter = Meter("main", "codex", dt.datetime.now(dt.timezone.utc), list)
        terms = " ".join(QUERIES[next(rotation) % len(QUERIES)])
        outcome = session.call("recall", {"terms": terms})
        assert not outcome.is_error, outcome.text

    os.environ.pop("AGENT_VAULT_CONNECTION", None)
    try:
        return median_ms(one, repeat * len(QUERIES))
    finally:
        session.close()


def library_ms(vault: Path, repeat: int) -> float:
    """`search.recall` alone, as `lifecycle recall` calls it: what the server adds is the difference."""
    rotation = iter(range(10**9))
    return median_ms(
        lambda: search.recall(vault, DEVICE, PROJECT, QUERIES[next(rotation) % len(QUERIES)]), repeat * len(QUERIES)
    )


def imports_ms(repeat: int) -> float:
    program = "import continuity.cli, continuity.server.stdio"
    return median_ms(lambda: subprocess.run([sys.executable, "-c", program], check=True), repeat)


def bare_ms(repeat: int) -> float:
    return median_ms(lambda: subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True), repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpus; medians in ms")
    work = Path(tempfile.mkdtemp(prefix="continuity-bench-mcp-"))
    try:
        # Every machine-local file (index, receipts) in the bench's own folder, never the user's.
        for name, sub in (("XDG_CACHE_HOME", "cache"), ("XDG_STATE_HOME", "state")):
            os.environ[name] = str(work / sub)
        bare = bare_ms(args.repeat)
        imports = imports_ms(args.repeat)
        print(
            "notes | initialize | tools/list | tools/list/bare | user entry | processor (lifecycle, user entry,"
            " bare) | imports | recall in process | no watcher | search.recall | recall round trip | bare py"
        )
        for total in sizes:
            vault = work / f"vault-{total}"
            make_vault(vault, total)
            repo = checkout(work, vault)
            process = in_process_ms(repo, args.repeat)  # builds the index first (its warm-up)
            unwatched = in_process_ms(repo, args.repeat, watch=False)
            initialize, start, processor = start_ms(repo, args.repeat, [str(LIFECYCLE), "mcp"])
            _, user_start, user_processor = start_ms(repo, args.repeat, USER_ENTRY)
            _, _, bare_processor = start_ms(repo, args.repeat, BARE_READER)
            library = library_ms(vault, args.repeat)
            trip = round_trip_ms(repo, args.repeat)
            print(
                f"{total:5d} | {initialize:10.1f} | {start:10.1f} | {start / bare:14.1f}x | {user_start:10.1f} | "
                f"{processor:.1f}, {user_processor:.1f}, {bare_processor:.1f} | {imports:7.1f} | "
                f"{process:17.2f} | {unwatched:10.2f} | {library:13.2f} | {trip:17.2f} | {bare:7.1f}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
