"""The `lifecycle` command line: a thin layer over the library.

Only this package imports typer and prints. Each command module parses its options, calls one core
function with explicit paths and turns the returned data into text or one JSON document. Core modules
are imported inside the commands, so `lifecycle --help` never pays for YAML or the secret scanner.

The application is `application.app` (one module per command group registers on it); `main`, the `lifecycle`
entry point, runs it. Every failure leaves through one funnel (`funnel`): one `lifecycle: error: …`
line on stderr and the documented exit code; a traceback only with CONTINUITY_DEBUG=1.
"""

from __future__ import annotations

from typing import Any


def main() -> None:
    """`lifecycle`: the typer application, whose group turns every failure into one line and an exit code."""
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
