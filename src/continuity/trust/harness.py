"""The hook handlers in each harness's configuration: build them, merge them in, find them again.

Codex reads `hooks.json` (user: `$CODEX_HOME/hooks.json`, default `~/.codex`; project:
`.codex/hooks.json`); Claude Code reads `settings.json` (user: `$CLAUDE_CONFIG_DIR/settings.json`,
default `~/.claude`; project: `.claude/settings.json`). Both nest event -> matcher groups -> handlers.

Every handler is pinned: its command carries the SHA-256 of the script it runs
(`scripts/agent-startup-context.py`, or `scripts/artifactctl.py` for the outbox sweep), and a few
lines of standard-library Python inside the command (`hookcommand`) hash the file and run exactly
the bytes they hashed, or print a fixed notice instead. That matters for Codex, whose trust hash
covers the command string but not the script.

Merging keeps every unrelated key, group and handler. Our handlers are recognised by the script
names in their commands; they are replaced where they were (Codex's trust key includes the group
and handler index, so a stable position keeps other hooks trusted) and our brief handler comes first
in its group. A file that is not valid JSON, holds duplicate keys, is a link, is too large, or (for
Codex) has a top-level key other than `description` and `hooks` is refused rather than rewritten:
Codex ignores a whole `hooks.json` with any other top-level key.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity import names, tunables
from continuity.errors import InputRejected, UsageError
from continuity.store import atomic
from continuity.trust import hookcommand

CODEX, CLAUDE, HARNESSES = names.CODEX, names.CLAUDE, names.HARNESSES
SCOPES = ("user", "project")
SCRIPT_REL = "scripts/agent-startup-context.py"
SWEEP_REL = "scripts/artifactctl.py"
BRIEF_MARKER = "agent-startup-context.py"
SWEEP_MARKER = "artifactctl.py"
CODEX_TOP_KEYS = ("description", "hooks")
DESCRIPTION = (
    "continuity: restores the private-memory brief at session and subagent start (SHA-256-pinned), "
    "recovers after compaction, asks at Stop whether a handoff is worth writing, sweeps the outbox."
)
SESSION_MATCHER = {CODEX: "startup|resume|clear|compact", CLAUDE: "startup|resume|clear|compact|fork"}
STATE_EVENTS = {  # Codex has no UserPromptSubmit hook
    CODEX: tuple(event for event in names.STATE_EVENTS if event != names.USER_PROMPT_SUBMIT),
    CLAUDE: names.STATE_EVENTS,
}
CONTEXT_LIMIT = {
    names.SESSION_START: tunables.CODEX_SESSION_START_CONTEXT_LIMIT_TOKENS,
    names.SUBAGENT_START: tunables.CODEX_SUBAGENT_START_CONTEXT_LIMIT_TOKENS,
}
STATUS_MESSAGE = {names.SESSION_START: "Restoring private memory", names.SUBAGENT_START: "Restoring project memory"}


@dataclass(frozen=True)
class Location:
    """Where the handlers point: the scripts folder, and the interpreter written into commands.

    Project files are shared through the repository, so they name the scripts relative to its top
    level and `python3`/`python` from PATH. User files name absolute paths: the installation's
    scripts folder (`installation`) and `interpreter`, a real interpreter, never a shim.
    """

    scripts: Path
    scope: str
    interpreter: str = sys.executable

    @property
    def script(self) -> str:
        return SCRIPT_REL if self.scope == "project" else str(self.scripts / Path(SCRIPT_REL).name)

    @property
    def sweep_script(self) -> str:
        return SWEEP_REL if self.scope == "project" else str(self.scripts / Path(SWEEP_REL).name)

    @property
    def script_file(self) -> Path:
        return self.scripts / Path(SCRIPT_REL).name

    @property
    def sweep_file(self) -> Path:
        return self.scripts / Path(SWEEP_REL).name

    def python(self, windows: bool) -> str:
        if self.scope == "project":
            return "python" if windows else "python3"
        return self.interpreter


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pinned_command(
    where: Location, script: str, digest: str, args: list[str], *, notice: bool, windows: bool = False
) -> str:
    """The command that runs `script` only when its SHA-256 is `digest` (see `hookcommand`)."""
    build = hookcommand.windows_command if windows else hookcommand.posix_command
    return build(where.python(windows), script, digest, args, notice=notice)


def _handler(harness: str, where: Location, script: str, digest: str, args: list[str], notice: bool) -> dict[str, Any]:
    handler: dict[str, Any] = {"type": "command", "command": pinned_command(where, script, digest, args, notice=notice)}
    if harness == CODEX:
        handler["commandWindows"] = pinned_command(where, script, digest, args, notice=notice, windows=True)
    return handler


def _sweep_handler(harness: str, where: Location) -> dict[str, Any] | None:
    """The outbox sweep at session start, registered `async` so that no session waits for it."""
    script = where.sweep_file
    if not script.is_file():
        return None
    handler = _handler(harness, where, where.sweep_script, sha256_file(script), ["sweep", "--hook"], False)
    handler["timeout"] = tunables.SWEEP_HOOK_TIMEOUT_SECONDS
    handler["async"] = True
    return handler


def _brief_handler(harness: str, event: str, where: Location, digest: str) -> dict[str, Any]:
    start = event in CONTEXT_LIMIT
    handler = _handler(harness, where, where.script, digest, ["--hook", "--harness", harness], start)
    handler["timeout"] = tunables.HOOK_TIMEOUT_SECONDS if start else tunables.HOOK_STATE_TIMEOUT_SECONDS
    if harness == CODEX and start:
        handler["statusMessage"] = STATUS_MESSAGE[event]
        handler["additionalContextLimit"] = CONTEXT_LIMIT[event]
    return handler


def wanted_groups(harness: str, where: Location) -> dict[str, dict[str, Any]]:
    """Our one matcher group per event, brief handler first."""
    script = where.script_file
    if not script.is_file():
        raise UsageError(f"{script} is missing; reinstall continuity, or run this from a continuity checkout")
    digest = sha256_file(script)
    session: dict[str, Any] = {
        "matcher": SESSION_MATCHER[harness],
        "hooks": [_brief_handler(harness, names.SESSION_START, where, digest)],
    }
    sweep = _sweep_handler(harness, where)
    if sweep is not None:
        session["hooks"].append(sweep)
    groups = {
        names.SESSION_START: session,
        names.SUBAGENT_START: {"hooks": [_brief_handler(harness, names.SUBAGENT_START, where, digest)]},
    }
    for event in STATE_EVENTS[harness]:
        group: dict[str, Any] = {"matcher": "*"} if event == names.POST_TOOL_USE else {}
        group["hooks"] = [_brief_handler(harness, event, where, digest)]
        groups[event] = group
    return groups


def is_ours(handler: object) -> bool:
    if not isinstance(handler, dict):
        return False
    text = " ".join(str(handler.get(key, "")) for key in ("command", "commandWindows"))
    return BRIEF_MARKER in text or (SWEEP_MARKER in text and "sweep --hook" in text)


def merge(doc: dict[str, Any], wanted: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """`doc` with our groups in place of our old handlers; every other key, group and handler kept."""
    out = dict(doc)
    hooks: dict[str, Any] = dict(out.get("hooks") or {})
    for event in list(hooks) + [e for e in wanted if e not in hooks]:
        groups = list(hooks.get(event) or [])
        position: int | None = None
        kept: list[Any] = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list) or not any(is_ours(h) for h in handlers):
                kept.append(group)
                continue
            if position is None:
                position = len(kept)
            others = [h for h in handlers if not is_ours(h)]
            if others:
                kept.append({**group, "hooks": others})
        if event in wanted:
            kept.insert(len(kept) if position is None else position, wanted[event])
        if kept:
            hooks[event] = kept
        elif event in hooks:
            del hooks[event]
    out["hooks"] = hooks
    return out


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def read_config(path: Path, cap_bytes: int) -> str | None:
    """A harness configuration file's text, None when absent; InputRejected for a file we must not rewrite."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise InputRejected(f"{path} is a link or not a regular file; edit it by hand (nothing was changed)")
    if info.st_size > cap_bytes:
        raise InputRejected(f"{path} is larger than {cap_bytes} bytes; nothing was changed")
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise InputRejected(f"{path} is not valid UTF-8; fix or move it, nothing was changed") from None


def parse_object(path: Path, text: str) -> dict[str, Any]:
    """The text as one JSON object (a byte-order mark allowed, duplicate keys refused), else InputRejected."""
    try:
        doc = json.loads(text.removeprefix("\ufeff"), object_pairs_hook=_reject_duplicates) if text.strip() else {}
    except (ValueError, RecursionError) as exc:
        where = f" (line {exc.lineno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise InputRejected(f"{path} is not valid JSON{where}; fix or move it, nothing was changed") from None
    if not isinstance(doc, dict):
        raise InputRejected(f"{path} does not hold a JSON object; nothing was changed")
    return doc


def load(path: Path) -> dict[str, Any] | None:
    """The file as a JSON object, None when absent; InputRejected for anything we must not rewrite."""
    text = read_config(path, tunables.HARNESS_CONFIG_CAP_BYTES)
    return None if text is None else parse_object(path, text)


def validate(doc: dict[str, Any], harness: str, path: Path) -> None:
    """Refuse shapes the harness would reject or that merging cannot keep intact."""
    if harness == CODEX:
        extra = sorted(k for k in doc if k not in CODEX_TOP_KEYS)
        if extra:
            raise InputRejected(
                f"{path} has the top-level key {extra[0]!r}; Codex ignores a hooks.json with any key but "
                "'description' and 'hooks', so remove it first (nothing was changed)"
            )
        if "description" in doc and not isinstance(doc["description"], str):
            raise InputRejected(f"{path}: 'description' must be a string (nothing was changed)")
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InputRejected(f"{path}: 'hooks' must be an object (nothing was changed)")
    for event, groups in hooks.items():
        if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
            raise InputRejected(f"{path}: hooks.{event} must be a list of objects (nothing was changed)")
        for group in groups:
            if not isinstance(group.get("hooks", []), list):
                raise InputRejected(f"{path}: a group of hooks.{event} has 'hooks' that is not a list")
            if harness == CODEX and not isinstance(group.get("matcher", ""), str | None):
                raise InputRejected(f"{path}: a matcher of hooks.{event} is not a string")


def user_config_path(harness: str) -> Path:
    if harness == CODEX:
        return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "hooks.json"
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "settings.json"


def project_config_path(harness: str, checkout: Path) -> Path:
    return checkout / (".codex/hooks.json" if harness == CODEX else ".claude/settings.json")


def config_path(harness: str, scope: str, checkout: Path) -> Path:
    return user_config_path(harness) if scope == "user" else project_config_path(harness, checkout)


@dataclass(frozen=True)
class InstallResult:
    harness: str
    scope: str
    path: Path
    text: str
    changed: bool
    dry_run: bool
    duplicate_of: Path | None = None  # the other scope's file that already registers our handlers

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "harness": self.harness,
            "scope": self.scope,
            "path": str(self.path),
            "changed": self.changed,
            "dry_run": self.dry_run,
            "duplicate_of": None if self.duplicate_of is None else str(self.duplicate_of),
        }


def render_doc(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def registrations(harness: str, repo: Path | None) -> dict[str, Path]:
    """The files that register our handlers for `harness`: the user's, and `repo`'s project file.

    Both harnesses run user-scope and project-scope hooks alike, so a handler registered in both gives
    the model the brief twice and runs Stop twice. A file that cannot be read is left out.
    """
    places = [("user", user_config_path(harness))]
    if repo is not None:
        places.append(("project", project_config_path(harness, repo)))
    found: dict[str, Path] = {}
    for scope, path in places:
        try:
            doc = load(path)
        except InputRejected:
            continue
        if doc is not None and our_commands(doc):
            found[scope] = path
    return found


def install(
    harness: str,
    scope: str,
    checkout: Path,
    *,
    dry_run: bool = False,
    repo: Path | None = None,
    both: bool = False,
    where: Location | None = None,
) -> InstallResult:
    """Merge our handlers into the harness's file for `scope`; write only when something changed.

    The handlers run `checkout`'s scripts unless `where` says otherwise (user scope from a package
    installation: its own copy, see `installation`). Unless `both`, nothing is written while the other
    scope already registers them (for project scope, the user's file; for user scope, the project
    file of `repo`, the checkout the person is in).
    """
    if harness not in HARNESSES or scope not in SCOPES:
        raise UsageError(f"unknown harness or scope: {harness} {scope}")
    path = config_path(harness, scope, checkout)
    existing = load(path)
    if not both:
        other = registrations(harness, checkout if scope == "project" else repo).get(
            "project" if scope == "user" else "user"
        )
        if other is not None:
            text = render_doc(existing) if existing is not None else ""
            return InstallResult(harness, scope, path, text, False, dry_run, duplicate_of=other)
    doc = existing if existing is not None else {}
    validate(doc, harness, path)
    if harness == CODEX and "description" not in doc:
        doc = {"description": DESCRIPTION, **doc}
    merged = merge(doc, wanted_groups(harness, where or Location(checkout / "scripts", scope)))
    if harness == CODEX:
        validate(merged, harness, path)
    changed = merged != existing
    text = render_doc(merged)
    if changed and not dry_run:
        mode = stat.S_IMODE(os.lstat(path).st_mode) if existing is not None else 0o644
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(path, text, mode)
    return InstallResult(harness, scope, path, text, changed, dry_run)


def our_commands(doc: dict[str, Any]) -> list[str]:
    """Every command string (and Windows command) of our handlers in a configuration document."""
    found: list[str] = []
    hooks = doc.get("hooks")
    for groups in hooks.values() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else ():
                if is_ours(handler):
                    found.extend(str(handler[k]) for k in ("command", "commandWindows") if k in handler)
    return found
