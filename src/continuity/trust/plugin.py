"""The Codex and Claude Code plugins that live in this repository, and whether one is installed.

Layout (each client's marketplace file names its own plugin folder):
- `.agents/plugins/marketplace.json` (Codex; it reads this one before `.claude-plugin/`) lists
  `plugins/codex/continuity`, whose manifest is `.codex-plugin/plugin.json`;
- `.claude-plugin/marketplace.json` (Claude Code) lists `plugins/claude/continuity`, manifest
  `.claude-plugin/plugin.json`.
Both plugins hold `hooks/hooks.json`, `.mcp.json` (the server: `lifecycle mcp`, found on PATH) and
`hooks/continuity-hook.py`, the runner that finds the installed package and runs its pinned startup
script (see its docstring). Both clients put the plugin's folder into the command text in place of
`${PLUGIN_ROOT}` (Codex) or `${CLAUDE_PLUGIN_ROOT}` (Claude Code).

Pinning. Each hook command is `hookcommand`'s program: it hashes the runner and runs exactly those
bytes, the runner hashes the installed script against STARTUP_SCRIPT_SHA256, and the script checks
every module it loads. `write` keeps the runner's digest and the commands current (called by
`lifecycle hook pin`); `problems` says when they are not. Codex lists plugin hooks in `/hooks` under
keys `continuity@<marketplace>:hooks/hooks.json:<event>:<group>:<handler>` and runs them only once
trusted; Claude Code trusts a plugin when it is installed.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from pathlib import Path
from typing import Any

from continuity import names, tunables
from continuity.errors import InputRejected
from continuity.store import atomic
from continuity.trust import harness, hookcommand

PLUGIN_NAME = "continuity"
FOLDER = {harness.CODEX: "plugins/codex/continuity", harness.CLAUDE: "plugins/claude/continuity"}
ROOT_VARIABLE = {harness.CODEX: "${PLUGIN_ROOT}", harness.CLAUDE: "${CLAUDE_PLUGIN_ROOT}"}
RUNNER_REL = "hooks/continuity-hook.py"
HOOKS_REL = "hooks/hooks.json"
_DIGEST_LINE = re.compile(r'^STARTUP_SCRIPT_SHA256 = "[0-9a-f]{64}"$', re.MULTILINE)
DESCRIPTION = (
    "continuity (plugin): restores the private-memory brief at session and subagent start from the installed "
    "package (SHA-256-pinned), recovers after compaction, asks at Stop whether a handoff is worth writing."
)


def runner_text(checkout: Path, startup_sha256: str) -> str:
    """The runner (its Codex copy is the source) with the startup script's digest written in."""
    text = (checkout / FOLDER[harness.CODEX] / RUNNER_REL).read_text(encoding="utf-8")
    return _DIGEST_LINE.sub(f'STARTUP_SCRIPT_SHA256 = "{startup_sha256}"', text, count=1)


def _command(name: str, runner_sha256: str, event: str, *, windows: bool) -> str:
    start = event in names.START_EVENTS
    code = hookcommand.program(notice=start, walk=True)
    args = ["--hook", "--harness", name, *(["--notice"] if start else [])]
    script = f"{ROOT_VARIABLE[name]}/{RUNNER_REL}"
    if windows:
        return f'python -I -S -c "{code.replace(chr(34), chr(39))}" "{script}" {" ".join([runner_sha256, *args])}'
    return f'python3 -I -S -c {shlex.quote(code)} "{script}" {shlex.join([runner_sha256, *args])}'


def _handler(name: str, runner_sha256: str, event: str) -> dict[str, Any]:
    handler: dict[str, Any] = {"type": "command", "command": _command(name, runner_sha256, event, windows=False)}
    if name == harness.CODEX:
        handler["commandWindows"] = _command(name, runner_sha256, event, windows=True)
    start = event in names.START_EVENTS
    handler["timeout"] = tunables.HOOK_TIMEOUT_SECONDS if start else tunables.HOOK_STATE_TIMEOUT_SECONDS
    if name == harness.CODEX and start:
        handler["statusMessage"] = harness.STATUS_MESSAGE[event]
        handler["additionalContextLimit"] = harness.CONTEXT_LIMIT[event]
    return handler


def hooks_doc(name: str, runner_sha256: str) -> dict[str, Any]:
    """The plugin's hooks.json: one group per event, as `hooks install` registers them."""
    events = [*names.START_EVENTS, *harness.STATE_EVENTS[name]]
    groups: dict[str, Any] = {}
    for event in events:
        group: dict[str, Any] = {}
        if event == names.SESSION_START:
            group["matcher"] = harness.SESSION_MATCHER[name]
        elif event == names.POST_TOOL_USE:
            group["matcher"] = "*"
        group["hooks"] = [_handler(name, runner_sha256, event)]
        groups[event] = [group]
    return {"description": DESCRIPTION, "hooks": groups}


def wanted(checkout: Path) -> dict[str, str]:
    """Every generated plugin file (relative to the checkout) and the text it should hold."""
    startup = harness.sha256_file(checkout / harness.SCRIPT_REL)
    runner = runner_text(checkout, startup)
    runner_sha256 = hookcommand_sha256(runner)
    files: dict[str, str] = {}
    for name, folder in FOLDER.items():
        files[f"{folder}/{RUNNER_REL}"] = runner
        files[f"{folder}/{HOOKS_REL}"] = harness.render_doc(hooks_doc(name, runner_sha256))
    return files


def hookcommand_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _current(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None


def problems(checkout: Path) -> list[str]:
    """Plugin files that do not hold the current pins (none when this checkout carries no plugins)."""
    if not (checkout / FOLDER[harness.CODEX] / RUNNER_REL).is_file():
        return []
    return [f"{rel} does not hold the current pins" for rel, text in wanted(checkout).items()
            if _current(checkout / rel) != text]  # fmt: skip


def write(checkout: Path) -> list[str]:
    """Bring the plugins' runner and hooks up to date; the files that changed, relative to the checkout."""
    if not (checkout / FOLDER[harness.CODEX] / RUNNER_REL).is_file():
        return []
    changed = []
    for rel, text in wanted(checkout).items():
        if _current(checkout / rel) != text:
            (checkout / rel).parent.mkdir(parents=True, exist_ok=True)
            atomic.write_text(checkout / rel, text, 0o644)
            changed.append(rel)
    return changed


# --- is a plugin installed? --------------------------------------------------------------------------


def _claude_settings(repo: Path | None) -> list[Path]:
    files = [harness.user_config_path(harness.CLAUDE)]
    if repo is not None:
        files += [repo / ".claude" / "settings.json", repo / ".claude" / "settings.local.json"]
    return files


def installed(name: str, repo: Path | None) -> str | None:
    """Where the continuity plugin is enabled for `name` (a file and the plugin's id), None when nowhere."""
    if name == harness.CLAUDE:
        for path in _claude_settings(repo):
            try:
                doc = harness.load(path)
            except InputRejected:
                continue
            enabled = (doc or {}).get("enabledPlugins")
            for key, value in enabled.items() if isinstance(enabled, dict) else ():
                if str(key).split("@")[0] == PLUGIN_NAME and value is True:
                    return f"{path} ({key})"
        return None
    import tomlkit  # lazy: about 25 ms of imports that only Codex's TOML needs
    from tomlkit.exceptions import TOMLKitError  # lazy: with tomlkit

    path = harness.user_config_path(harness.CODEX).with_name("config.toml")
    try:
        text = harness.read_config(path, tunables.MCP_CONFIG_CAP_BYTES)
        plugins = tomlkit.parse(text or "").unwrap().get("plugins", {})
    except (InputRejected, TOMLKitError):
        return None
    for key, value in plugins.items() if isinstance(plugins, dict) else ():
        if str(key).split("@")[0] == PLUGIN_NAME and isinstance(value, dict) and value.get("enabled", True):
            return f"{path} ({key})"
    return None
