"""From a checkout's folder to its brief, failing open: what the hook and `render` show.

Fail open for the session, fail closed for content: whatever goes wrong (no vault, a broken note, a
bug) the session still starts, with a short notice that private memory was not (fully) restored and
never with a traceback or a claim that it was. A checkout that no connection reaches has no brief
(the hook then prints nothing; `render` shows an unavailable one).

This module and everything it imports at module level use the standard library only; YAML and the
secret scanner are imported by the cold path alone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from continuity.brief import render
from continuity.brief.render import Brief
from continuity.errors import NotConnected
from continuity.local import connection
from continuity.local.repo import top_level

EXIT_FOR_STATUS = {"restored": 0, "partial": 1, "unavailable": 3}


def _why(exc: NotConnected) -> str:
    if isinstance(exc, connection.AmbiguousConnection):
        return "sibling worktrees of this repository disagree about which vault to use"
    if isinstance(exc, connection.NoConnection):
        return "this checkout is not connected to a vault"
    return "the connection file could not be used"


def unconnected(cwd: Path) -> str:
    """Why no brief reaches `cwd`: there is no checkout at all, or the checkout has no connection."""
    if top_level(cwd) is None:
        return "this folder is not inside a git checkout, so no vault is connected"
    return "this checkout is not connected to a vault"


def build(
    cwd: Path, event: str, harness: str, environ: dict[str, str] | None = None, code: str | None = None
) -> Brief | None:
    """The brief for `cwd`, or None when no connection reaches it at all.

    `code` is the digest of the pinned code when the startup script asks; the command line leaves it
    out and the package's own digest keys its records instead.
    """
    try:
        conn = connection.discover(cwd, environ)
    except connection.NoConnection:
        return None
    except NotConnected as exc:
        return render.unavailable(event, harness, _why(exc))
    try:
        root = connection.require_vault(conn)
    except NotConnected:
        return render.unavailable(event, harness, "the vault is not reachable from this computer")
    from continuity.brief import cache  # lazy: an unconnected start loads no cache, sources or gate

    return cache.brief_for(root, conn, event, harness, code)


def build_safely(
    cwd: Path, event: str, harness: str, environ: dict[str, str] | None = None, code: str | None = None
) -> Brief | None:
    """`build`, turning any unexpected failure except a missing import into an unavailable brief."""
    try:
        return build(cwd, event, harness, environ, code)
    except ImportError:
        raise
    except Exception as exc:
        if os.environ.get("CONTINUITY_DEBUG") == "1":
            raise
        return render.unavailable(event, harness, f"the startup code failed ({type(exc).__name__})")


def format_text(brief: Brief, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(brief.to_json(), ensure_ascii=False, indent=2)
    return brief.text


def render_command(cwd: Path, event: str, fmt: str, harness: str, code: str | None = None) -> tuple[str, int]:
    """What `lifecycle render` and `agent-startup-context.py --render` print, and their exit code."""
    brief = build_safely(cwd, event, harness, code=code)
    if brief is None:
        brief = render.unavailable(event, harness, unconnected(cwd))
    return format_text(brief, fmt), EXIT_FOR_STATUS[brief.status]
