"""What continuity costs a person at launch, in the real clients: launch to the model's first request.

Run from the repository root (it needs npm and `unshare -n`, like the tests marked `clients`):

    python bench/bench_clients.py [--rounds 7] [--clients codex,claude]

For Codex (`codex exec "say hi"`) and Claude Code (`claude -p "say hi"`), at the versions the client
tests pin (`tests/clients.py`, installed from npm into their cache once), three configurations of
copies of this checkout, connected to one vault:

* `bare`: no hooks and no MCP server (the checkout's hook files removed);
* `hooks`: continuity's project hooks (Codex: `.codex/hooks.json`, trusted as `/hooks` would; Claude
  Code: `.claude/settings.json` from `lifecycle hooks install --scope project`);
* `hooks + MCP`: the same, and `lifecycle mcp` registered (Codex: `[mcp_servers.continuity]` in
  `config.toml`, as `lifecycle mcp install` writes it; Claude Code: the checkout's `.mcp.json`);
* `hooks + floor server` (with `--floor`): the same hooks, and in place of `lifecycle mcp` a stand-in
  that answers the same handshake with the same tool list from a file, started with `python -I -S`
  and importing only `json` and `sys`: what any MCP server costs the client, so what is left between
  it and `hooks + MCP` is this server's own start.

Each run is one session against the scripted model of `tests/mockmodel.py` inside a loopback-only
network namespace; the time is from the client's launch to the first model request the mock
recorded. The rounds are interleaved (every configuration of every client once a round, in an order
that rotates), so a change of load hits all of them alike. Reported: medians, the ratios to `bare`
and of `hooks + MCP` to `hooks` (of the medians, and the median of each round's own ratio, which a
drifting load disturbs less), and in how many rounds the first request already offered the
continuity tools (Codex: the namespace tool `mcp__continuity`; Claude Code, which defers MCP tools
behind ToolSearch: the tool names in the request). Nothing here asserts a time: benchmarks are not tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from clients import CLAUDE, CODEX, Run, Site, install, missing_tools  # noqa: E402

from continuity.server import catalog, protocol, stdio  # noqa: E402

CONFIGS = ("bare", "hooks", "hooks + MCP")
FLOOR = "hooks + floor server"
FLOOR_SERVER = """
import json, sys
answers = json.load(open(sys.argv[1]))
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method in answers:
        result = answers[method]
        if method == "initialize":
            offered = message["params"]["protocolVersion"]
            result["protocolVersion"] = offered if offered in answers["versions"] else answers["versions"][-1]
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
    else:
        reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""
PROMPT = "say hi"
RULES: list[dict[str, Any]] = [{"reply": {"text": "Hi."}}]
CODEX_TOOLS = "mcp__continuity"
CLAUDE_TOOLS = "mcp__continuity__recall"


def offered_codex(run: Run) -> bool:
    return CODEX_TOOLS in [tool.get("name") for tool in run.requests[0].get("tools", [])]


def offered_claude(run: Run) -> bool:
    return CLAUDE_TOOLS in json.dumps(run.requests[0])


def floor_server(work: Path) -> list[str]:
    """The stand-in server's command: this interpreter, isolated and without site, on a script that
    answers from a file holding this server's own handshake and tool list."""
    server = protocol.Protocol(stdio.SERVER_INFO, stdio.INSTRUCTIONS, catalog.listing, 1 << 20)
    start = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}'
    answers = {
        "initialize": server.receive(start).answers[0]["result"],
        "tools/list": server.receive(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}').answers[0]["result"],
        "ping": {},
        "versions": list(protocol.SUPPORTED_PROTOCOL_VERSIONS),
    }
    (work / "floor.py").write_text(FLOOR_SERVER, encoding="utf-8")
    (work / "floor.json").write_text(json.dumps(answers), encoding="utf-8")
    return [sys.executable, "-I", "-S", str(work / "floor.py"), str(work / "floor.json")]


class Client:
    """One client's set-ups on a site, and one session of a configuration."""

    def __init__(self, name: str, site: Site, floor: list[str] | None) -> None:
        self.name = name
        self.site = site
        self.floor = floor
        self.exe = install(CODEX if name == "codex" else CLAUDE)
        self.offered: Callable[[Run], bool] = offered_codex if name == "codex" else offered_claude
        claude = name == "claude"
        self.clones = {"bare": site.clone(f"{name}-bare")}
        for rel in (".codex/hooks.json", ".claude/settings.json"):
            (self.clones["bare"] / rel).unlink(missing_ok=True)
        self.clones["hooks"] = site.clone(f"{name}-hooks", claude=claude)
        self.clones["hooks + MCP"] = site.clone(f"{name}-mcp", claude=claude)
        if floor is not None:
            self.clones[FLOOR] = site.clone(f"{name}-floor", claude=claude)
        if claude:
            site.register_claude_mcp(self.clones["hooks + MCP"])
            if floor is not None:
                site.register_claude_mcp(self.clones[FLOOR])
                self._point_at_floor(self.clones[FLOOR] / ".mcp.json")
        else:
            site.trust_codex(self.exe, self.clones["bare"], hooks=False)
            for config, clone in self.clones.items():
                if config != "bare":
                    site.trust_codex(self.exe, clone)

    def _point_at_floor(self, mcp_json: Path) -> None:
        assert self.floor is not None
        doc = json.loads(mcp_json.read_text(encoding="utf-8"))
        doc["mcpServers"]["continuity"].update(command=self.floor[0], args=self.floor[1:])
        mcp_json.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")

    def session(self, config: str) -> Run:
        clone = self.clones[config]
        if self.name == "codex":
            self.site.register_codex_mcp_off()
            if config == "hooks + MCP":
                self.site.register_codex_mcp()
            elif config == FLOOR:
                self.site.register_codex_mcp(command=self.floor)
            argv = [str(self.exe), "exec", PROMPT]
        else:
            argv = [str(self.exe), "-p", PROMPT]
        run = self.site.run(clone, argv, RULES, timeout=120)
        if run.returncode != 0 or run.first_request_seconds is None:
            raise SystemExit(f"{self.name} {config}: {run.describe()}")
        return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--clients", default="codex,claude")
    parser.add_argument("--floor", action="store_true", help="also the stand-in server that only answers")
    args = parser.parse_args()
    reason = missing_tools()
    if reason:
        raise SystemExit(f"bench_clients: {reason}")
    names = args.clients.split(",")
    print(f"python {platform.python_version()}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f} at start")
    work = Path(tempfile.mkdtemp(prefix="continuity-bench-clients-"))
    try:
        site = Site(work)
        floor = floor_server(work) if args.floor else None
        configs = (*CONFIGS, FLOOR) if args.floor else CONFIGS
        clients = [Client(name, site, floor) for name in names]
        times: dict[tuple[str, str], list[float]] = {(c.name, config): [] for c in clients for config in configs}
        offered: dict[str, list[bool]] = {c.name: [] for c in clients}
        sessions = [(client, config) for client in clients for config in configs]
        for number in range(args.rounds + 1):  # round 0 warms the file cache and is not counted
            shift = number % len(sessions)
            for client, config in sessions[shift:] + sessions[:shift]:
                run = client.session(config)
                if number == 0:
                    continue
                times[client.name, config].append(float(run.first_request_seconds or 0.0))
                if config == "hooks + MCP":
                    offered[client.name].append(client.offered(run))
        print(f"load {os.getloadavg()[0]:.2f} at the end; {args.rounds} rounds; launch to first model request")
        print("| configuration | " + " | ".join(f"{c.name} {version(c.name)}" for c in clients) + " |")
        print("|---|" + "---|" * len(clients))
        for config in configs:
            cells = []
            for client in clients:
                median = statistics.median(times[client.name, config])
                bare = statistics.median(times[client.name, "bare"])
                cells.append(f"{median:.3f} s" + ("" if config == "bare" else f" ({median / bare:.2f}x)"))
            print(f"| {config} | " + " | ".join(cells) + " |")
        ratios = []
        for client in clients:
            with_mcp = statistics.median(times[client.name, "hooks + MCP"])
            ratios.append(f"{with_mcp / statistics.median(times[client.name, 'hooks']):.2f}x")
        print("| hooks + MCP / hooks | " + " | ".join(ratios) + " |")
        paired = [paired_ratio(times[c.name, "hooks + MCP"], times[c.name, "hooks"]) for c in clients]
        print("| the same, median of each round's ratio | " + " | ".join(f"{ratio:.2f}x" for ratio in paired) + " |")
        if args.floor:
            floors = [
                f"{statistics.median(times[c.name, 'hooks + MCP']) / statistics.median(times[c.name, FLOOR]):.2f}x"
                for c in clients
            ]
            print("| hooks + MCP / hooks + floor server | " + " | ".join(floors) + " |")
        print(
            "| first request offers the tools | "
            + " | ".join(f"{sum(offered[c.name])} of {len(offered[c.name])} rounds" for c in clients)
            + " |"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def paired_ratio(numerators: list[float], denominators: list[float]) -> float:
    """The median of the rounds' own ratios: each round's two sessions ran minutes apart at most, so a
    change of the machine's load between rounds cancels out of it."""
    return statistics.median(top / bottom for top, bottom in zip(numerators, denominators, strict=True))


def version(name: str) -> str:
    return (CODEX if name == "codex" else CLAUDE).version


if __name__ == "__main__":
    main()
