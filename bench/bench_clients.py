"""What continuity costs a person at launch, in the real clients: launch to the model's first request.

Run from the repository root (it needs npm and `unshare -n`, like the tests marked `clients`):

    python bench/bench_clients.py [--rounds 7] [--clients codex,claude] [--floor] [--installed]

For Codex (`codex exec "say hi"`) and Claude Code (`claude -p "say hi"`), at the versions the client
tests pin (`tests/clients.py`, installed from npm into their cache once), three configurations of
copies of this checkout, connected to one vault:

* `bare`: no hooks and no MCP server (the checkout's hook files removed);
* `hooks`: continuity's project hooks (Codex: `.codex/hooks.json`, trusted as `/hooks` would; Claude
  Code: `.claude/settings.json` from `lifecycle hooks install --scope project`);
* `hooks + MCP`: the same, and the server registered (Codex: `[mcp_servers.continuity]` in
  `config.toml` as `lifecycle setup codex` writes it by default, at user scope: this checkout's
  interpreter running `python -I -m continuity mcp`; Claude Code: the checkout's `.mcp.json`, project
  scope, `lifecycle mcp --harness claude`);
* `hooks + floor server` (with `--floor`): the same hooks, and in place of the server a stand-in
  that answers the same handshake with the same tool list from a file, started with `python -I -S`
  and importing nothing (it reads the id and the method without a JSON parser, as the C stand-in
  does): what any Python MCP server costs the client, so what is left between it and `hooks + MCP`
  is this server's own start;
* `hooks + MCP, installed` (with `--installed`): the user-scope command, `python -I -m continuity
  mcp`, with the interpreter of a new virtual environment that holds a wheel of this checkout, as a
  person installs it (pipx), instead of the checkout's editable install;
* `hooks + C server` and `bare + C server` (with `--floor`, when `cc` is there): the same stand-in
  with no interpreter at all, `bench/floor_server.c` compiled at bench time, so what is left between
  it and `hooks` (or `bare`) is what the client itself spends on any stdio MCP server, and between
  it and `hooks + floor server` the interpreter's start;
* `hooks + C server, no tools` (with `--floor`, likewise): that stand-in listing no tools, so what is
  left between it and `hooks + C server` is what the client spends on this server's tool list;
* `hooks + C server, 30 ms asleep first` and `hooks + C server, 30 ms of processor first` (with
  `--floor`, likewise): the same stand-in, sleeping or spinning 30 ms before it starts, so the bench
  tells a server that answers late from one that takes processor time while the client starts.

The stand-ins record when they started and when each message came and went; with `--floor` a
second table gives, since the client's launch, the medians of when the server was running, when
`initialize` arrived, when `tools/list` was answered and when the first model request came, and
which methods the client sent.

Each run is one session against the scripted model of `tests/mockmodel.py` inside a loopback-only
network namespace; the time is from the client's launch to the first model request the mock
recorded. The rounds are interleaved (every configuration of every client once a round, in an order
that rotates), so a change of load hits all of them alike. Reported: medians, the ratios to `bare`
and of `hooks + MCP` to `hooks` (of the medians, and the median of each round's own ratio, which a
drifting load disturbs less, with its quartiles), and in how many rounds the first request already offered the
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
import subprocess
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
C_FLOOR = "hooks + C server"
BARE_C_FLOOR = "bare + C server"
NO_TOOLS = "hooks + C server, no tools"
ASLEEP = "hooks + C server, 30 ms asleep first"
SPINNING = "hooks + C server, 30 ms of processor first"
INSTALLED = "hooks + MCP, installed"
FLOOR_SERVER = """
import sys, time
trace = open(sys.argv[3], "a")
def note(what, detail=""):
    trace.write(f"{time.time():.9f} {what} {detail}\\n")
    trace.flush()
def token(line, key):  # the raw JSON token after "key", as the C stand-in reads it
    at = line.find(key)
    if at < 0:
        return None
    rest = line[at + len(key):].lstrip(" :")
    if rest.startswith('"'):
        return rest[: rest.index('"', 1) + 1]
    ends = [end for end in (rest.find(stop) for stop in ",} ") if end >= 0]
    return rest[: min(ends, default=len(rest))]
note("start")
initialize_rest, tools = open(sys.argv[1]).read(), open(sys.argv[2]).read()
for line in sys.stdin:
    method = token(line, '"method"')
    if method is None:
        continue
    note("recv", method)
    request_id = token(line, '"id"')
    if request_id is None:
        continue
    if method == '"initialize"':
        version = token(line, '"protocolVersion"') or '"2025-06-18"'
        result = '{"protocolVersion":' + version + "," + initialize_rest
    elif method == '"tools/list"':
        result = tools
    elif method == '"ping"':
        result = "{}"
    else:
        result = None
    if result is None:
        reply = '{"jsonrpc":"2.0","id":' + request_id + ',"error":{"code":-32601,"message":"Method not found"}}'
    else:
        reply = '{"jsonrpc":"2.0","id":' + request_id + ',"result":' + result + "}"
    sys.stdout.write(reply + "\\n")
    sys.stdout.flush()
    note("sent", method)
"""
PROMPT = "say hi"
RULES: list[dict[str, Any]] = [{"reply": {"text": "Hi."}}]
CODEX_TOOLS = "mcp__continuity"
CLAUDE_TOOLS = "mcp__continuity__recall"


def offered_codex(run: Run) -> bool:
    return CODEX_TOOLS in [tool.get("name") for tool in run.requests[0].get("tools", [])]


def offered_claude(run: Run) -> bool:
    return CLAUDE_TOOLS in json.dumps(run.requests[0])


def stand_ins(work: Path) -> dict[str, list[str]]:
    """The stand-in servers' commands (less the trace file each is given last), answering from files
    that hold this server's own handshake and tool list: `python -I -S` on a script that imports
    nothing (it reads the id and the method as the C stand-in does), and, when a C compiler is there,
    `bench/floor_server.c` compiled into `work`."""
    server = protocol.Protocol(stdio.SERVER_INFO, stdio.INSTRUCTIONS, catalog.listing, 1 << 20)
    start = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}'
    initialize = server.receive(start).answers[0]["result"]
    tools = server.receive(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}').answers[0]["result"]
    # the initialize answer after its protocolVersion, which the stand-ins echo from the request
    rest = json.dumps({key: value for key, value in initialize.items() if key != "protocolVersion"})[1:]
    (work / "initialize.rest").write_text(rest, encoding="utf-8")
    (work / "tools.json").write_text(json.dumps(tools), encoding="utf-8")
    (work / "floor.py").write_text(FLOOR_SERVER, encoding="utf-8")
    answers = [str(work / "initialize.rest"), str(work / "tools.json")]
    commands = {FLOOR: [sys.executable, "-I", "-S", str(work / "floor.py"), *answers]}
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        print("no C compiler: the stand-in without an interpreter is left out")
        return commands
    subprocess.run([compiler, "-O2", "-o", str(work / "floor"), str(ROOT / "bench" / "floor_server.c")], check=True)
    command = [str(work / "floor"), str(work / "initialize.rest"), str(work / "tools.json")]
    (work / "no-tools.json").write_text(json.dumps({"tools": []}), encoding="utf-8")
    empty = [*command[:2], str(work / "no-tools.json")]
    asleep, spinning = [command[0], "--sleep-ms", "30", *command[1:]], [command[0], "--spin-ms", "30", *command[1:]]
    return {**commands, C_FLOOR: command, BARE_C_FLOOR: command, NO_TOOLS: empty, ASLEEP: asleep, SPINNING: spinning}


class Client:
    """One client's set-ups on a site, and one session of a configuration."""

    def __init__(self, name: str, site: Site, stand_in: dict[str, list[str]]) -> None:
        self.name = name
        self.site = site
        self.exe = install(CODEX if name == "codex" else CLAUDE)
        self.offered: Callable[[Run], bool] = offered_codex if name == "codex" else offered_claude
        claude = name == "claude"
        self.traces = {config: site.root / f"trace-{name}-{index}" for index, config in enumerate(stand_in)}
        self.traces.pop(INSTALLED, None)  # the real server, which records nothing
        self.stand_in = {
            config: [*argv, str(self.traces[config])] for config, argv in stand_in.items() if config in self.traces
        }
        if INSTALLED in stand_in:
            self.stand_in[INSTALLED] = [*stand_in[INSTALLED], "--harness", name]
        self.clones: dict[str, Path] = {}
        for index, config in enumerate(("bare", "hooks", "hooks + MCP", *stand_in)):
            hooks = not config.startswith("bare")
            self.clones[config] = site.clone(f"{name}-{index}", claude=claude and hooks)
            for rel in () if hooks else (".codex/hooks.json", ".claude/settings.json"):
                (self.clones[config] / rel).unlink(missing_ok=True)
            if claude and config != "bare" and config != "hooks":
                site.register_claude_mcp(self.clones[config])
                if config in self.stand_in:
                    self._point_at(self.clones[config] / ".mcp.json", self.stand_in[config])
            elif not claude:
                site.trust_codex(self.exe, self.clones[config], hooks=hooks)

    @staticmethod
    def _point_at(mcp_json: Path, argv: list[str]) -> None:
        doc = json.loads(mcp_json.read_text(encoding="utf-8"))
        doc["mcpServers"]["continuity"].update(command=argv[0], args=argv[1:])
        mcp_json.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")

    def session(self, config: str) -> tuple[Run, list[tuple[float, str, str]]]:
        """One session, and what the stand-in server (if any) recorded: (time, event, method)."""
        clone = self.clones[config]
        trace = self.traces.get(config)
        if trace is not None:
            trace.unlink(missing_ok=True)
        if self.name == "codex":
            self.site.register_codex_mcp_off()
            if config == "hooks + MCP":
                self.site.register_codex_mcp()
            elif config in self.stand_in:
                self.site.register_codex_mcp(command=self.stand_in[config])
            argv = [str(self.exe), "exec", PROMPT]
        else:
            argv = [str(self.exe), "-p", PROMPT]
        run = self.site.run(clone, argv, RULES, timeout=120)
        if run.returncode != 0 or run.first_request_seconds is None:
            raise SystemExit(f"{self.name} {config}: {run.describe()}")
        events = []
        if trace is not None and trace.exists():
            for line in trace.read_text(encoding="utf-8").splitlines():
                when, event, *method = line.split(" ", 2)
                events.append((float(when), event, "".join(method).strip().strip('"')))
        return run, events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--clients", default="codex,claude")
    parser.add_argument("--floor", action="store_true", help="also the stand-in servers that only answer")
    parser.add_argument("--installed", action="store_true", help="also the server from a wheel install")
    args = parser.parse_args()
    reason = missing_tools()
    if reason:
        raise SystemExit(f"bench_clients: {reason}")
    names = args.clients.split(",")
    print(f"python {platform.python_version()}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f} at start")
    work = Path(tempfile.mkdtemp(prefix="continuity-bench-clients-"))
    try:
        site = Site(work)
        stand_in = stand_ins(work) if args.floor else {}
        if args.installed:
            stand_in[INSTALLED] = [str(installed(work)), "-I", "-m", "continuity", "mcp"]
        configs = (*CONFIGS, *stand_in)
        clients = [Client(name, site, stand_in) for name in names]
        times: dict[tuple[str, str], list[float]] = {(c.name, config): [] for c in clients for config in configs}
        steps: dict[tuple[str, str], list[dict[str, float]]] = {key: [] for key in times}
        methods: dict[tuple[str, str], set[str]] = {key: set() for key in times}
        offered: dict[tuple[str, str], list[bool]] = {key: [] for key in times}
        sessions = [(client, config) for client in clients for config in configs]
        for number in range(args.rounds + 1):  # round 0 warms the file cache and is not counted
            shift = number % len(sessions)
            for client, config in sessions[shift:] + sessions[:shift]:
                run, events = client.session(config)
                if number == 0:
                    continue
                times[client.name, config].append(float(run.first_request_seconds or 0.0))
                if events:
                    steps[client.name, config].append(milestones(run, events))
                    methods[client.name, config].update(method for _, event, method in events if event == "recv")
                if config in ("hooks + MCP", INSTALLED):
                    offered[client.name, config].append(client.offered(run))
        print(f"load {os.getloadavg()[0]:.2f} at the end; {args.rounds} rounds; launch to first model request")
        report(clients, configs, times, offered)
        if set(stand_in) - {INSTALLED}:
            report_steps(clients, configs, steps, methods)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(
    clients: list[Client],
    configs: tuple[str, ...],
    times: dict[tuple[str, str], list[float]],
    offered: dict[tuple[str, str], list[bool]],
) -> None:
    def median(name: str, config: str) -> float:
        return statistics.median(times[name, config])

    print("| configuration | " + " | ".join(f"{c.name} {version(c.name)}" for c in clients) + " |")
    print("|---|" + "---|" * len(clients))
    for config in configs:
        cells = []
        for client in clients:
            value, bare = median(client.name, config), median(client.name, "bare")
            cells.append(f"{value:.3f} s" + ("" if config == "bare" else f" ({value / bare:.2f}x)"))
        print(f"| {config} | " + " | ".join(cells) + " |")
    ratios = [f"{median(c.name, 'hooks + MCP') / median(c.name, 'hooks'):.2f}x" for c in clients]
    print("| hooks + MCP / hooks | " + " | ".join(ratios) + " |")
    paired = [paired_cell(times[c.name, "hooks + MCP"], times[c.name, "hooks"]) for c in clients]
    print("| the same, median of each round's ratio (quartiles) | " + " | ".join(paired) + " |")
    if INSTALLED in configs:
        cells = [f"{median(c.name, INSTALLED) / median(c.name, 'hooks'):.2f}x" for c in clients]
        print(f"| {INSTALLED} / hooks | " + " | ".join(cells) + " |")
    pairs = (
        (INSTALLED, "hooks"), (FLOOR, "hooks"), (C_FLOOR, "hooks"), (NO_TOOLS, "hooks"), (ASLEEP, "hooks"),
        (SPINNING, "hooks"), (BARE_C_FLOOR, "bare"),
    )  # fmt: skip
    for config, base in pairs:
        if config in configs:
            cells = [paired_cell(times[c.name, config], times[c.name, base]) for c in clients]
            print(f"| {config} / {base}, median of each round's ratio (quartiles) | " + " | ".join(cells) + " |")
    if FLOOR in configs:
        cells = [f"{median(c.name, 'hooks + MCP') / median(c.name, FLOOR):.2f}x" for c in clients]
        print("| hooks + MCP / hooks + floor server | " + " | ".join(cells) + " |")
    for config in ("hooks + MCP", INSTALLED):
        if config in configs:
            cells = [f"{sum(offered[c.name, config])} of {len(offered[c.name, config])} rounds" for c in clients]
            print(f"| {config}: the first request offers the tools | " + " | ".join(cells) + " |")


def installed(work: Path) -> Path:
    """The interpreter of a new virtual environment holding this checkout as a person installs it: a
    wheel (the checkout's own environment holds it editable: a path line in a `.pth` file)."""
    venv = work / "installed"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, str(ROOT)], check=True, stderr=subprocess.DEVNULL)
    return venv / "bin" / "python"


def milestones(run: Run, events: list[tuple[float, str, str]]) -> dict[str, float]:
    """When, since the client's launch, the stand-in was running, got `initialize`, answered
    `tools/list`, and the model got its first request (a step the trace lacks is left out)."""
    launched = float(run.launched or 0.0)
    found = {"first model request": launched + float(run.first_request_seconds or 0.0)}
    wanted = {("start", ""): "server running", ("recv", "initialize"): "initialize arrives"}
    wanted["sent", "tools/list"] = "tools/list answered"
    for when, event, method in events:
        name = wanted.get((event, method if event != "start" else ""))
        if name is not None and name not in found:
            found[name] = when
    return {name: when - launched for name, when in found.items()}


STEPS = ("server running", "initialize arrives", "tools/list answered", "first model request")


def report_steps(
    clients: list[Client],
    configs: tuple[str, ...],
    steps: dict[tuple[str, str], list[dict[str, float]]],
    methods: dict[tuple[str, str], set[str]],
) -> None:
    print("\nWith a stand-in server, medians since the client's launch (ms), and the methods it was sent:")
    print("| client, configuration | " + " | ".join(STEPS) + " | methods |")
    print("|---|" + "---|" * (len(STEPS) + 1))
    for client in clients:
        for config in configs:
            rows = steps[client.name, config]
            if not rows:
                continue
            cells = []
            for step in STEPS:
                values = [row[step] for row in rows if step in row]
                cells.append(f"{1000 * statistics.median(values):.0f}" if values else "-")
            listed = ", ".join(sorted(methods[client.name, config]))
            print(f"| {client.name}, {config} | " + " | ".join(cells) + f" | {listed} |")


def paired_ratio(numerators: list[float], denominators: list[float]) -> float:
    """The median of the rounds' own ratios: each round's two sessions ran minutes apart at most, so a
    change of the machine's load between rounds cancels out of it."""
    return statistics.median(top / bottom for top, bottom in zip(numerators, denominators, strict=True))


def paired_cell(numerators: list[float], denominators: list[float]) -> str:
    """The median of the rounds' own ratios and, with four rounds or more, their quartiles: how far
    apart two runs of the same configurations may land on this machine."""
    ratios = [top / bottom for top, bottom in zip(numerators, denominators, strict=True)]
    if len(ratios) < 4:
        return f"{statistics.median(ratios):.2f}x"
    low, _, high = statistics.quantiles(ratios, n=4)
    return f"{statistics.median(ratios):.2f}x ({low:.2f}-{high:.2f})"


def version(name: str) -> str:
    return (CODEX if name == "codex" else CLAUDE).version


if __name__ == "__main__":
    main()
