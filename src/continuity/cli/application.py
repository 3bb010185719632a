"""The `lifecycle` application: every command module registered on one funnel group."""

from __future__ import annotations

from continuity.cli.funnel import new_app

app = new_app(
    "Keep a coding agent's private, reviewed memory in a synchronized vault and restore a bounded brief "
    "at every session start."
)


def _register() -> None:
    from continuity.cli import setup

    setup.register(app)
    from continuity.cli import outbox

    outbox.register(app)
    from continuity.cli import handoff, lease, memory

    lease.register(app)
    handoff.register(app)
    memory.register(app)
    from continuity.cli import hooks

    hooks.register(app)
    from continuity.cli import doctor

    doctor.register(app)
    from continuity.cli import recall

    recall.register(app)
    from continuity.cli import preserve

    preserve.register(app)
    _register_mcp()


def _register_mcp() -> None:
    """TEMPORARY until the server's own `mcp` sub-app lands: a sub-app holding only `install`.

    At that merge, delete this function and call `mcp_install.register_install` on that sub-app.
    """
    import typer

    from continuity.cli import mcp_install

    mcp_app = typer.Typer(help="The memory tools as an MCP server, and its registration.", no_args_is_help=True)
    mcp_install.register_install(mcp_app)
    app.add_typer(mcp_app, name="mcp")


_register()
