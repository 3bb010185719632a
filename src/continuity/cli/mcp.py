"""`lifecycle mcp`: the stdio MCP server, one process per client session.

The server and the `mcp` SDK are imported only when the server runs, so no other command pays for
them. Its audience and harness cannot be learnt from the protocol, so they are options: the client's
configuration names them once.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from continuity.cli.options import Harness

mcp_app = typer.Typer(
    help="The MCP server: recall, brief, handoffs and candidates for any MCP client, metered per session.",
    invoke_without_command=True,
    no_args_is_help=False,
)


class Audience(str, Enum):
    main = "main"
    subagent = "subagent"


@mcp_app.callback()
def mcp(
    ctx: typer.Context,
    audience: Annotated[
        Audience,
        typer.Option("--for", help="Whose allowance: main (12 KiB warm, 24 KiB in all) or subagent (8, 16 KiB)."),
    ] = Audience.main,
    harness: Annotated[
        Harness, typer.Option(help="The client: whose startup receipts count and whose limits the brief keeps.")
    ] = Harness.codex,
) -> None:
    """Serve the memory tools over stdin and stdout until the client closes them (the client starts it)."""
    if ctx.invoked_subcommand is not None:
        return
    from continuity.server import stdio

    stdio.serve(Path.cwd(), audience.value, harness.value)


def register(app: typer.Typer) -> None:
    app.add_typer(mcp_app, name="mcp")
