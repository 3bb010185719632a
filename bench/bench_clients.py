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
  `config.toml`, as `lifecycle mcp install` writes it; Claude Code: the checkout's `.mcp.json`).

Each run is one session against the scripted model of `tests/mockmodel.py` inside a loopback-only
network namespace; the time is from the client's launch to the first model request the mock
recorded. The rounds are interleaved (every configuration of every client once a round, in an order
that rotates), so a change of load hits all of them alike. Reported: medians, the ratios to `bare`
and of `hooks + MCP` to `hooks`, and in how many rounds the first request already offered the
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

CONFIGS = ("bare", "hooks", "hooks + MCP")
PROMPT = "say hi"
RULES: list[dict[str, Any]] = [{"reply": {"text": "Hi."}}]
CODEX_TOOLS = "mcp__continuity"
CLAUDE_TOOLS = "mcp__continuity__recall"


def offered_codex(run: Run) -> bool:
    return CODEX_TOOLS in [tool.get("name") for tool in run.requests[0].get("tools", [])]


def offered_claude(run: Run) -> bool:
    return CLAUDE_TOOLS in json.dumps(run.requests[0])


class Client:
    """One client's three set-ups on a site, and one session of a configuration."""

    def __init__(self, name: str, site: Site) -> None:
        self.name = name
        self.site = site
        self.exe = install(CODEX if name == "codex" else CLAUDE)
        self.offered: Callable[[Run], bool] = offered_codex if name == "codex" else offered_claude
        claude = name == "claude"
        self.bare = site.clone(f"{name}-bare")
        for rel in (".codex/hooks.json", ".claude/settings.json"):
            (self.bare / rel).unlink(missing_ok=True)
        self.hooks = site.clone(f"{name}-hooks", claude=claude)
        self.mcp = site.clone(f"{name}-mcp", claude=claude)
        if claude:
            site.register_claude_mcp(self.mcp)
        else:
            site.trust_codex(self.exe, self.bare, hooks=False)
            site.trust_codex(self.exe, self.hooks)
            site.trust_codex(self.exe, self.mcp)

    def session(self, config: str) -> Run:
        clone = {"bare": self.bare, "hooks": self.hooks, "hooks + MCP": self.mcp}[config]
        if self.name == "codex":
            if config == "hooks + MCP":
                self.site.register_codex_mcp()
            else:
                self.site.register_codex_mcp_off()
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
    args = parser.parse_args()
    reason = missing_tools()
    if reason:
        raise SystemExit(f"bench_clients: {reason}")
    names = args.clients.split(",")
    print(f"python {platform.python_version()}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f} at start")
    work = Path(tempfile.mkdtemp(prefix="continuity-bench-clients-"))
    try:
        site = Site(work)
        clients = [Client(name, site) for name in names]
        times: dict[tuple[str, str], list[float]] = {(c.name, config): [] for c in clients for config in CONFIGS}
        offered: dict[str, list[bool]] = {c.name: [] for c in clients}
        sessions = [(client, config) for client in clients for config in CONFIGS]
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
        for config in CONFIGS:
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
        print(
            "| first request offers the tools | "
            + " | ".join(f"{sum(offered[c.name])} of {len(offered[c.name])} rounds" for c in clients)
            + " |"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def version(name: str) -> str:
    return (CODEX if name == "codex" else CLAUDE).version


if __name__ == "__main__":
    main()
