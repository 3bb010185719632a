"""When the startup hook cannot import a dependency: run again with the connection's Python, or say so.

The hook command runs `python3` from PATH, which may lack ruamel.yaml or detect-secrets. The
connection file may name the interpreter that has the package (`python`, written by `lifecycle
init`); the hook runs itself once more with it, and failing that injects a notice that private memory
was not restored and why. Only this rare path imports this module.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def answer(harness: str, data: bytes, exc: ImportError) -> str:
    """The hook's stdout after an import failure: the re-run's answer, or the notice."""
    if os.environ.get("CONTINUITY_REEXEC") != "1":
        python = _connection_python(data)
        if python and os.path.abspath(python) != os.path.abspath(sys.executable):
            again = _reexec(python, ["--hook", "--harness", harness], data)
            if again is not None:
                return again.decode("utf-8", errors="replace").rstrip("\n")
    return _import_failure_output(harness, data, exc)


def _reexec(python: str, argv: list[str], data: bytes) -> bytes | None:
    """Run the startup script (argv[0]) again with the connection's interpreter; its stdout, or None."""
    import subprocess

    env = dict(os.environ, CONTINUITY_REEXEC="1")
    try:
        proc = subprocess.run(
            [python, os.path.abspath(sys.argv[0]), *argv], input=data, capture_output=True, env=env, timeout=25
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _import_failure_output(harness: str, data: bytes, exc: ImportError) -> str:
    """Valid hook JSON that says private memory was not restored because an import failed."""
    import json

    try:
        payload = json.loads(data.decode("utf-8", errors="replace") or "null")
    except ValueError:
        return ""
    if not isinstance(payload, dict) or payload.get("hook_event_name") not in ("SessionStart", "SubagentStart"):
        return ""
    event = payload["hook_event_name"]
    name = getattr(exc, "name", None) or "a dependency"
    text = (
        f'<private-memory event="{event}" status="unavailable">\n'
        f"Private memory was not restored (the startup code could not import {name} with this Python; "
        "set `python` in the checkout's .agent-vault to an interpreter that has continuity installed). "
        "Continue under AGENTS.md and the repository's instructions, and do not claim that private "
        "identity, preferences or handoffs were restored.\n</private-memory>"
    )
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


def _connection_python(data: bytes) -> str | None:
    """The connection's `python`, when it may be run (see `trusted_interpreter`), else None."""
    try:
        import json
        from pathlib import Path

        from continuity.local import connection

        payload = json.loads(data.decode("utf-8", errors="replace") or "null")
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
        conn = connection.discover(Path(cwd) if isinstance(cwd, str) and cwd else Path.cwd())
        if conn.python and trusted_interpreter(conn.python, conn.file, conn.repo):
            return conn.python
    except Exception:
        return None
    return None


def _tracked(repo: Path, path: str) -> bool:
    """Whether git tracks `path` in `repo` (then a clone, not this computer, chose it)."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "ls-files", "--error-unmatch", "--", path],
            capture_output=True, timeout=10, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return True  # cannot tell: do not trust it
    return done.returncode == 0


def trusted_interpreter(python: str, conn_file: Path, repo: Path | None) -> bool:
    """Whether the hook may re-run itself with the connection's `python`.

    The connection file sits in the checkout, where a repository or an agent in it can write, and the
    program it names would run outside every pin. So it must be an absolute path to an executable
    regular file that this user or root owns and nobody else can write, and when the checkout holds
    it, or the connection file, git must not track either (a committed program or connection is the
    repository's choice, not this computer's). `lifecycle init` writes a path that passes.
    """
    import stat

    if not os.path.isabs(python):
        return False
    real = os.path.realpath(python)
    try:
        info = os.stat(real)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode) or not os.access(real, os.X_OK) or info.st_mode & 0o022:
        return False
    if hasattr(os, "getuid") and info.st_uid not in (0, os.getuid()):
        return False
    if repo is None:
        return True
    top = os.path.realpath(repo)
    for candidate in (str(conn_file), python, real):
        candidate = os.path.abspath(candidate)
        for root in (str(repo), top):
            if candidate.startswith(root.rstrip(os.sep) + os.sep) and _tracked(repo, candidate):
                return False
    return True
