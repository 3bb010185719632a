"""The `lifecycle` command line: a thin layer over the library.

Only this package imports typer and prints. Each command module parses its options, calls one core
function with explicit paths and turns the returned data into text or one JSON document. Core modules
are imported inside the commands, so `lifecycle --help` never pays for YAML or the secret scanner.

The typer application lives in `group`, and this module stays free of typer: `main` first offers the
command line to `quick`, which answers a plain `lifecycle recall …` (the command an agent runs in the
middle of a task) without loading typer, click or the other commands, and hands everything else, help
and every malformed line included, to the application, so both answer alike.

Every failure leaves through one funnel (`failure`, and `group.FunnelGroup.main` for click's own
errors): one `lifecycle: error: …` line on stderr and the documented exit code; a traceback only with
CONTINUITY_DEBUG=1.
"""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

from continuity.errors import EXIT_PROBLEMS, ContinuityError

_RECALL_GC_THRESHOLD = 50_000  # new objects between two runs of the cycle collector (Python's own: 700 to 2,000)


def _debug() -> bool:
    return os.environ.get("CONTINUITY_DEBUG") == "1"


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def _trace() -> None:
    if _debug():
        import traceback  # only here: it costs milliseconds at every start otherwise

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
    import gc

    argv = sys.argv[1:]
    thresholds = gc.get_threshold()
    if argv[:1] == ["recall"]:
        # A warm recall allocates fewer objects than this, so the cycle collector, which would only walk
        # the loaded modules and the vault's listing again and again (about 4 ms at 10,000 notes), never
        # runs; building the index, which allocates millions, is still collected as it goes.
        gc.set_threshold(_RECALL_GC_THRESHOLD)
    from continuity.cli import quick

    code = quick.main(argv)
    if code is not None:
        _leave(code)
    gc.set_threshold(*thresholds)
    from continuity.cli.group import app

    app()


def _leave(code: int) -> NoReturn:
    """End a quick answer without the interpreter's teardown, which costs a warm recall several
    milliseconds of freeing modules: by now the index is closed and only the standard streams may
    hold unwritten text. A stream that cannot be flushed leaves the usual way, which reports it."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(code)


def __getattr__(name: str) -> Any:
    """`app`, `new_app` and `FunnelGroup` load typer on first use (`from continuity.cli import app`)."""
    if name in ("app", "new_app", "FunnelGroup"):
        from continuity.cli import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
