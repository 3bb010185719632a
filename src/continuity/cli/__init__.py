"""The `lifecycle` command line: a thin layer over the library.

Only this package imports typer and prints. Each command module parses its options, calls one core
function with explicit paths and turns the returned data into text or one JSON document. Core modules
are imported inside the commands, so `lifecycle --help` never pays for YAML or the secret scanner.

The application is `application.app` (one module per command group registers on it); `main`, the `lifecycle`
entry point, runs it. Every failure leaves through one funnel (`funnel`): one `lifecycle: error: …`
line on stderr and the documented exit code; a traceback only with CONTINUITY_DEBUG=1.
"""

from __future__ import annotations

import sys

from continuity import names

TYPE_CHECKING = False  # `typing` is not imported at run time: `lifecycle mcp` answers before it would load
if TYPE_CHECKING:
    from typing import Any

_MCP_OPTIONS = {"--for": ("main", "subagent"), "--harness": names.HARNESSES}


def mcp_serve_args(argv: list[str]) -> dict[str, str] | None:
    """The options of a plain `lifecycle mcp [--for A] [--harness H]`, or None for anything else.

    A client starts the server at its own launch and waits for its first answers, so this one command
    skips typer and click (about 60 ms of imports) and starts the server directly. Only the exact forms
    with valid values are taken; everything else (`--help`, `install`, a bad value) goes through typer,
    which says what is wrong as it does for every command."""
    if not argv or argv[0] != "mcp":
        return None
    chosen = {"--for": "main", "--harness": names.CODEX}
    rest = argv[1:]
    while rest:
        name, has_value, value = rest[0].partition("=")
        if not has_value:
            if len(rest) < 2:
                return None
            value, rest = rest[1], rest[2:]
        else:
            rest = rest[1:]
        if value not in _MCP_OPTIONS.get(name, ()):
            return None
        chosen[name] = value
    return chosen


def _serve_mcp(audience: str, harness: str) -> None:
    """The server, with the command line's one error line and exit code if it cannot start (a folder
    removed under it, say): the typer funnel is not loaded on this path."""
    import os

    try:
        from continuity.server import stdio

        stdio.serve(os.getcwd(), audience, harness)
    except Exception as exc:
        from continuity.errors import COMMAND_LINE, describe, trace

        trace()
        line, code = describe(exc, COMMAND_LINE)
        print(line, file=sys.stderr)
        sys.exit(code)


def main() -> None:
    """`lifecycle`: the typer application, whose group turns every failure into one line and an exit code."""
    serve = mcp_serve_args(sys.argv[1:])
    if serve is not None:
        _serve_mcp(serve["--for"], serve["--harness"])
        return
    from continuity.cli.application import app

    app()


def __getattr__(name: str) -> Any:
    """`app`, `new_app` and `FunnelGroup` load typer on first use (`from continuity.cli import app`)."""
    if name == "app":
        from continuity.cli.application import app

        return app
    if name in ("new_app", "FunnelGroup"):
        from continuity.cli import funnel

        return getattr(funnel, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
