"""The `lifecycle` command line: a thin layer over the library.

Only this package imports typer and prints. Each command module parses its options, calls one core
function with explicit paths and turns the returned data into text or one JSON document. Core modules
are imported inside the commands, so `lifecycle --help` never pays for YAML or the secret scanner.

The typer application lives in `group`; `main`, the `lifecycle` entry point, runs it. This module
stays free of typer, so that `group` can import the funnel from it.

Every failure leaves through one funnel (`failure`, and `group.FunnelGroup.main` for click's own
errors): one `lifecycle: error: …` line on stderr and the documented exit code; a traceback only with
CONTINUITY_DEBUG=1.
"""

from __future__ import annotations

import os
import traceback
from typing import Any

from continuity.errors import EXIT_PROBLEMS, ContinuityError


def _debug() -> bool:
    return os.environ.get("CONTINUITY_DEBUG") == "1"


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def _trace() -> None:
    if _debug():
        traceback.print_exc()


def failure(exc: Exception, label: str) -> tuple[str, int]:
    """The error line and exit code for a failure that is not a usage error of click's."""
    _trace()
    if isinstance(exc, ContinuityError):
        return f"{label}: error: {one_line(str(exc))}", exc.exit_code
    if isinstance(exc, OSError):
        name = os.path.basename(str(exc.filename)) if exc.filename else ""
        where = f": {name}" if name else ""
        return f"{label}: error: {one_line(exc.strerror or str(exc))}{where}", EXIT_PROBLEMS
    return (
        f"{label}: error: unexpected {type(exc).__name__}; rerun with CONTINUITY_DEBUG=1 for details",
        EXIT_PROBLEMS,
    )


def main() -> None:
    """`lifecycle`: the typer application, whose group turns every failure into one line and an exit code."""
    from continuity.cli.group import app

    app()


def __getattr__(name: str) -> Any:
    """`app`, `new_app` and `FunnelGroup` load typer on first use (`from continuity.cli import app`)."""
    if name in ("app", "new_app", "FunnelGroup"):
        from continuity.cli import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
