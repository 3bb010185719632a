"""What is registered where: continuity's handlers in each harness's user and project files.

`lifecycle hooks show` reads the files the harnesses read (never writes them) and, for each of our
handlers, takes the script and the SHA-256 out of its command (the command is `PYTHON -I -S -c
PROGRAM SCRIPT DIGEST ARGS…`, see `hookcommand`) and compares the digest with the script's bytes
today: `current` when they match, `stale` when the script changed (an upgrade or an edit: the hook
then injects only a notice until `lifecycle hooks install` or `hook pin` pins it again), `missing`
when the script is gone (a moved or deleted checkout or installation). A project file names its
script relative to the repository's top level, which is where it is looked for.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from continuity import limits
from continuity.errors import InputRejected
from continuity.trust import harness, hookcommand

CURRENT = "current"
STALE = "stale"
MISSING = "missing"
UNREADABLE = "unreadable"  # a command of ours whose script and digest cannot be read out of it


@dataclass(frozen=True)
class Handler:
    event: str
    script: str  # as the command names it
    python: str
    sha256: str | None  # the digest the command pins
    state: str

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "script": self.script,
            "python": self.python,
            "sha256": self.sha256,
            "current": self.state == CURRENT,
            "state": self.state,
        }


@dataclass(frozen=True)
class Registration:
    harness: str
    scope: str
    file: Path
    exists: bool
    error: str | None = None  # why the file could not be read
    handlers: list[Handler] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "harness": self.harness,
            "scope": self.scope,
            "file": str(self.file),
            "exists": self.exists,
            "error": self.error,
            "handlers": [h.to_json() for h in self.handlers],
        }


def _digest(path: Path) -> str | None:
    """The file's SHA-256, or None when it is not a readable regular file within the cap."""
    try:
        if not path.is_file() or path.stat().st_size > limits.LIFECYCLE_TEXT_CAP_BYTES:
            return None
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _handlers(doc: dict[str, Any], base: Path | None) -> list[Handler]:
    found: list[Handler] = []
    hooks = doc.get("hooks")
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else ():
                if not harness.is_ours(handler):
                    continue
                parsed = hookcommand.split(str(handler.get("command", "")))
                if parsed is None:
                    found.append(Handler(str(event), "", "", None, UNREADABLE))
                    continue
                python, script, digest = parsed
                path = Path(script) if os.path.isabs(script) or base is None else base / script
                actual = _digest(path)
                state = MISSING if actual is None else CURRENT if actual == digest else STALE
                found.append(Handler(str(event), script, python, digest, state))
    return found


def _read(name: str, scope: str, path: Path, base: Path | None) -> Registration:
    try:
        doc = harness.load(path)
    except InputRejected as exc:
        return Registration(name, scope, path, True, str(exc))
    if doc is None:
        return Registration(name, scope, path, False)
    return Registration(name, scope, path, True, None, _handlers(doc, base))


def show(repo: Path | None) -> list[Registration]:
    """Each harness's user file, and `repo`'s project files when there is a repository."""
    found: list[Registration] = []
    for name in harness.HARNESSES:
        found.append(_read(name, "user", harness.user_config_path(name), None))
        if repo is not None:
            found.append(_read(name, "project", harness.project_config_path(name, repo), repo))
    return found
