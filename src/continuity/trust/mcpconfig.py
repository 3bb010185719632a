"""Registering `lifecycle mcp` in each harness's configuration, merge-safe, and finding it again.

Where (checked against each client's documentation and source):
- Codex: `[mcp_servers.continuity]` in `config.toml`: user `$CODEX_HOME/config.toml` (default
  `~/.codex`), project `.codex/config.toml` in the repository (Codex reads it in trusted projects).
  Keys written: `command`, `args`; any other key a person added to the table (`enabled`,
  `tool_timeout_sec`, `env`…) is kept. No `startup_timeout_sec`: it bounds how long Codex lets a server
  take to start at all, not how long the first request waits for its tools (that is Codex's shared
  `mcp_optional_startup_grace_ms`, 1 s by default, the person's setting for every server); the server
  answers its handshake in tens of milliseconds, well inside both. An entry written by an earlier
  version with `startup_timeout_sec = 30` keeps it, as any key a person may have set.
- Claude Code: `mcpServers.continuity` (`type: stdio`, `command`, `args`): user scope in `.claude.json`
  (`$CLAUDE_CONFIG_DIR/.claude.json`, default `~/.claude.json`), project scope in `.mcp.json` at the
  repository's top level (Claude Code asks the person to approve a project server before first use).

What runs. User scope is for every repository on this computer, so it names this interpreter by its
absolute path with `-I -m continuity mcp`: the server then starts with exactly the package that wrote the
entry, whatever is on PATH, as `hooks install` names `sys.executable` at user scope. `-I` is what makes
that safe: the client starts the server in the repository the person opened, and a plain `-m` puts
that folder first on `sys.path`, so a cloned repository holding a `continuity/` folder (or a `json.py`,
or any module the server imports) at its top would run its own code there. Isolated mode leaves the
working folder, `PYTHON*` variables and the user's site folder out of the path. An entry an earlier
version wrote without `-I` is still ours (it is rewritten by the next install), and doctor says so.
Isolated mode also leaves out the user's site folder and PYTHONPATH: a package installed only there
(`pip install --user`) is registered with `-P` instead, which leaves out the working folder alone
(`path_flags`). Project files are
shared through Git, so they name no machine path: `lifecycle mcp`, the console script, which must be on
the client's PATH (doctor says when it is not). Both clients start a stdio server in the session's
working directory, where the server finds its connection as every command does, so no `cwd` is written.

Merging. TOML goes through tomlkit, which keeps every comment, table and key it does not touch; JSON is
rewritten with the file's own indentation and key order, every other key untouched. An entry named
`continuity` that does not run `… mcp` is someone else's and is refused, never overwritten. A file that
is a link, not a regular file, over `MCP_CONFIG_CAP_BYTES`, not valid (duplicate keys included) or not
shaped as expected is refused with one line and left as it was. Nothing is written when nothing would
change, and never while the other scope of the same harness already registers the server (the client
would start it twice), unless `both`.
"""

from __future__ import annotations

import functools
import json
import os
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import continuity
from continuity import names, tunables
from continuity.errors import InputRejected, UsageError
from continuity.store import atomic
from continuity.trust.harness import parse_object, read_config

CODEX, CLAUDE, HARNESSES = names.CODEX, names.CLAUDE, names.HARNESSES
SCOPES = ("user", "project")
SERVER_NAME = "continuity"
TABLE = {CODEX: "mcp_servers", CLAUDE: "mcpServers"}


def user_config_path(harness: str) -> Path:
    if harness == CODEX:
        return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "config.toml"
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home()) / ".claude.json"


def project_config_path(harness: str, repo: Path) -> Path:
    return repo / (".codex/config.toml" if harness == CODEX else ".mcp.json")


def config_path(harness: str, scope: str, repo: Path | None) -> Path:
    if scope == "user":
        return user_config_path(harness)
    if repo is None:
        raise UsageError("project scope needs a git repository; run this inside the checkout")
    return project_config_path(harness, repo)


# How a user-scope entry keeps the working folder off the server's path (see "What runs" above):
# isolated mode, or, for a package only the user's site folder or PYTHONPATH holds, safe-path mode.
ISOLATED = ("-I",)
SAFE_PATH = ("-P",)  # Python 3.11 and later
PATH_FLAGS = (ISOLATED, SAFE_PATH)
_PROBE = "import continuity, os; print(os.path.dirname(os.path.abspath(continuity.__file__)))"


@functools.cache
def path_flags() -> tuple[str, ...]:
    """The flags this interpreter runs the server with so that the opened repository is not on its path.

    `-I` when this very package imports in isolated mode (a virtual environment, pipx, uv tool, the
    system's site folder). Isolated mode leaves out the user's site folder and PYTHONPATH, so a package
    found only there (`pip install --user`) gets `-P`, which leaves out the working folder alone; Python
    3.10 has no `-P`, and such an install is refused there with what to do instead."""
    here = os.path.dirname(os.path.abspath(continuity.__file__))
    try:
        probe = subprocess.run(
            [sys.executable, *ISOLATED, "-c", _PROBE], capture_output=True, text=True, timeout=60, check=False
        )
        found = probe.stdout.strip() if probe.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        found = ""
    if found == here:
        return ISOLATED
    if sys.version_info >= (3, 11):
        return SAFE_PATH
    raise UsageError(
        f"{sys.executable} -I cannot import continuity from {here} (the user's site folder or PYTHONPATH), and "
        "Python 3.10 has no -P to keep the opened repository off the server's path; install continuity with "
        "pipx or uv tool, or register the server for the project with 'lifecycle mcp install --scope project'"
    )


def wanted_entry(harness: str, scope: str) -> dict[str, Any]:
    """Our server's entry for `harness` at `scope` (see the module docstring for why these commands)."""
    if scope == "user":
        command, args = sys.executable, [*path_flags(), "-m", "continuity", "mcp"]
    else:
        command, args = "lifecycle", ["mcp"]
    if harness == CODEX:  # the server's default harness: whose startup receipts its meter counts
        return {"command": command, "args": args}
    return {"type": "stdio", "command": command, "args": [*args, "--harness", harness]}


def is_ours(entry: object) -> bool:
    """An entry that runs `lifecycle mcp` or `python [-I] -m continuity mcp`."""
    if not isinstance(entry, dict):
        return False
    args = entry.get("args")
    command = str(entry.get("command", ""))
    if not isinstance(args, list) or "mcp" not in args:
        return False
    before = args[: args.index("mcp")]
    return (Path(command).stem == "lifecycle" and not before) or before in (
        ["-m", "continuity"],
        *([*flags, "-m", "continuity"] for flags in PATH_FLAGS),
    )


def reads_the_working_folder(entry: object) -> bool:
    """An entry of ours that an earlier version wrote as `python -m continuity mcp`, without `-I`: it puts
    the repository the client opened first on the server's import path."""
    if not is_ours(entry) or not isinstance(entry, dict):
        return False
    args = entry.get("args")
    return isinstance(args, list) and args[: args.index("mcp")] == ["-m", "continuity"]


def entry_at(harness: str, path: Path) -> Any:
    """The entry named `continuity` in `path` as plain data; None when absent or not valid."""
    try:
        text = read_config(path, tunables.MCP_CONFIG_CAP_BYTES)
        return None if text is None else plain(servers_of(harness, path, text).get(SERVER_NAME))
    except InputRejected:
        return None


def _load_toml(path: Path, text: str) -> Any:
    import tomlkit  # lazy: about 25 ms of imports that only Codex's TOML needs, never Claude Code's JSON
    from tomlkit.exceptions import TOMLKitError  # lazy: with tomlkit

    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputRejected(f"{path} is not valid TOML ({first}); fix or move it, nothing was changed") from None


def json_indent(text: str) -> str | int | None:
    """The indentation of a JSON document's first indented line: a tab, a number of spaces, or None."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            head = line[: len(line) - len(stripped)]
            return "\t" if head.startswith("\t") else len(head)
    return None if text.strip() and "\n" not in text.strip() else 2


def servers_of(harness: str, path: Path, text: str) -> Any:
    """The servers table of a configuration's text (an empty one when it has none)."""
    if harness == CODEX:
        table = _load_toml(path, text).get(TABLE[CODEX], {})
    else:
        table = parse_object(path, text).get(TABLE[CLAUDE], {})
    if not isinstance(table, dict):
        raise InputRejected(f"{path}: {TABLE[harness]} is not a table of servers; nothing was changed")
    return table


def registered(harness: str, path: Path) -> bool:
    """True when `path` registers our server; False when absent or unreadable."""
    return is_ours(entry_at(harness, path))


def registrations(harness: str, repo: Path | None) -> dict[str, Path]:
    """The files that register our server for `harness`: the user's, and `repo`'s project file."""
    places = [("user", user_config_path(harness))]
    if repo is not None:
        places.append(("project", project_config_path(harness, repo)))
    return {scope: path for scope, path in places if registered(harness, path)}


def plain(value: object) -> object:
    """A tomlkit value as plain Python (dicts, lists, strings, numbers); JSON values pass through."""
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def _merged_toml(path: Path, text: str, wanted: dict[str, Any]) -> str:
    import tomlkit  # lazy: as in _load_toml

    doc = _load_toml(path, text)
    servers = doc.get(TABLE[CODEX])
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc[TABLE[CODEX]] = servers
    elif not isinstance(servers, dict) or isinstance(servers, tomlkit.items.InlineTable):
        raise InputRejected(f"{path}: mcp_servers is not a table of servers; edit it by hand (nothing was changed)")
    entry = servers.get(SERVER_NAME)
    if entry is None:
        entry = tomlkit.table()
        for key, value in wanted.items():
            entry[key] = value
        entry.add(tomlkit.nl())  # a blank line before whatever table follows ours
        servers[SERVER_NAME] = entry
    elif not isinstance(entry, tomlkit.items.Table):
        raise InputRejected(f"{path}: mcp_servers.{SERVER_NAME} is not a table; edit it by hand (nothing was changed)")
    for key, value in wanted.items():
        if plain(entry.get(key)) != value:
            entry[key] = value
    return tomlkit.dumps(doc)


def _merged_json(path: Path, text: str, wanted: dict[str, Any]) -> str:
    doc = parse_object(path, text)
    servers = doc.setdefault(TABLE[CLAUDE], {})
    if not isinstance(servers, dict):
        raise InputRejected(f"{path}: mcpServers is not an object; edit it by hand (nothing was changed)")
    entry = servers.get(SERVER_NAME)
    servers[SERVER_NAME] = {**(entry if isinstance(entry, dict) else {}), **wanted}
    ending = "\n" if not text or text.endswith("\n") else ""
    return json.dumps(doc, indent=json_indent(text), ensure_ascii=False) + ending


@dataclass(frozen=True)
class Registered:
    harness: str
    scope: str
    path: Path
    text: str  # the file as it is (or, for a dry run, would be) after the command
    changed: bool
    dry_run: bool
    command: tuple[str, ...]
    duplicate_of: Path | None = None  # the other scope's file that already registers the server

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "harness": self.harness,
            "scope": self.scope,
            "path": str(self.path),
            "server": SERVER_NAME,
            "command": list(self.command),
            "changed": self.changed,
            "dry_run": self.dry_run,
            "duplicate_of": None if self.duplicate_of is None else str(self.duplicate_of),
        }


def install(harness: str, scope: str, repo: Path | None, *, dry_run: bool = False, both: bool = False) -> Registered:
    """Register our server in the harness's file for `scope`; write only when something changes."""
    if harness not in HARNESSES or scope not in SCOPES:
        raise UsageError(f"unknown harness or scope: {harness} {scope}")
    path = config_path(harness, scope, repo)
    wanted = wanted_entry(harness, scope)
    command = (wanted["command"], *wanted["args"])
    text = read_config(path, tunables.MCP_CONFIG_CAP_BYTES)
    existing = text or ""
    current = plain(servers_of(harness, path, existing).get(SERVER_NAME))
    if current is not None and not is_ours(current):
        raise InputRejected(
            f"{path} already has an MCP server named {SERVER_NAME!r} that does not run 'lifecycle mcp'; "
            "rename or remove it first (nothing was changed)"
        )
    if not both:
        other = registrations(harness, repo).get("project" if scope == "user" else "user")
        if other is not None:
            return Registered(harness, scope, path, existing, False, dry_run, command, duplicate_of=other)
    if isinstance(current, dict) and all(current.get(key) == value for key, value in wanted.items()):
        return Registered(harness, scope, path, existing, False, dry_run, command)  # as it was, formatting too
    merged = _merged_toml(path, existing, wanted) if harness == CODEX else _merged_json(path, existing, wanted)
    changed = merged != existing
    if changed and not dry_run:
        mode = stat.S_IMODE(os.lstat(path).st_mode) if text is not None else 0o600 if scope == "user" else 0o644
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(path, merged, mode)
    return Registered(harness, scope, path, merged, changed, dry_run, command)
