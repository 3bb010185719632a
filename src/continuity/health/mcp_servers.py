"""Doctor's look at where each harness would start the memory server (`lifecycle mcp`) from.

Not registered is no fault (the hooks and the shell commands work without it), so it is `ok` with
the command that registers it; registered at both scopes is a warning, since the client would start
two servers and meter them apart; a project registration names `lifecycle` on PATH, which the client
must find, so doctor warns when its own PATH has none.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from continuity.health.report import Check, check
from continuity.trust import mcpconfig


def checks(repo: Path | None, environ: Mapping[str, str]) -> list[Check]:
    found = []
    for name in mcpconfig.HARNESSES:
        places = mcpconfig.registrations(name, repo)
        ident = f"mcp.{name}"
        if len(places) > 1:
            files = " and ".join(str(path) for path in places.values())
            message = f"{name} starts the continuity MCP server from both {files}; remove it from one of them"
            found.append(check(ident, "warn", message))
        elif "project" in places and shutil.which("lifecycle", path=environ.get("PATH")) is None:
            message = f"{places['project']} runs 'lifecycle mcp', but 'lifecycle' is not on PATH here"
            found.append(check(ident, "warn", message + "; install the package where the client finds it"))
        elif places and mcpconfig.reads_the_working_folder(mcpconfig.entry_at(name, next(iter(places.values())))):
            path = next(iter(places.values()))
            message = (
                f"{path} starts the server as 'python -m continuity mcp' without -I, which imports from the "
                f"repository the client opened; run 'lifecycle mcp install --harness {name}' to rewrite it"
            )
            found.append(check(ident, "warn", message))
        elif places:
            scope, path = next(iter(places.items()))
            found.append(check(ident, "ok", f"{name} MCP server: registered at {scope} scope in {path}"))
        else:
            hint = f"lifecycle mcp install --harness {name}"
            found.append(check(ident, "ok", f"{name} MCP server: not registered (the memory tools: {hint})"))
    return found
