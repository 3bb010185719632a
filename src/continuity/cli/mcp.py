"""`lifecycle mcp`: the stdio MCP server, one process per client session, and `lifecycle mcp install`,
which registers it in Codex's or Claude Code's configuration.

The server is imported only when it runs, so no other command pays for it; a plain `lifecycle mcp`
does not even come through here (`continuity.cli.mcp_serve_args` starts it before typer loads), and
this callback serves the forms it does not take. Its audience and harness cannot be learnt from the
protocol, so they are options: the client's configuration names them once.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from continuity.cli.common import Harness, JsonOption, Scope, emit, emit_json

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

    stdio.serve(str(Path.cwd()), audience.value, harness.value)


RESTART = {
    Harness.codex: "Codex starts MCP servers at launch: start a new session, then /mcp lists 'continuity'.",
    Harness.claude: "Claude Code reads this at launch (quit it before editing ~/.claude.json by hand); /mcp lists "
    "'continuity', and a project server asks for your approval once.",
}


def install_command(
    harness_name: Annotated[Harness, typer.Option("--harness", help="Which harness's configuration.")],
    scope: Annotated[
        Scope, typer.Option(help="user: your configuration, for every repository; project: this repository's file.")
    ] = Scope.user,
    both: Annotated[
        bool,
        typer.Option(
            "--both", help="Register even when the other scope already has the server (it then starts twice)."
        ),
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the resulting file; change nothing.")] = False,
    json_out: JsonOption = False,
) -> None:
    """Register 'lifecycle mcp' in Codex's config.toml or Claude Code's .claude.json / .mcp.json (idempotent)."""
    from continuity.local.repo import find_repo_root
    from continuity.trust import mcpconfig

    repo = find_repo_root(Path.cwd())
    result = mcpconfig.install(harness_name.value, scope.value, repo, dry_run=dry_run, both=both)
    if json_out:
        emit_json(result.to_json())
        return
    if result.duplicate_of is not None:
        other = "project" if scope is Scope.user else "user"
        emit(
            f"{result.duplicate_of} already registers the continuity server at {other} scope, and "
            f"{harness_name.value} reads both scopes: it would start the server twice. Nothing changed "
            "(--both registers anyway)."
        )
        return
    if dry_run:
        typer.echo(result.text, nl=not result.text.endswith("\n"))
        return
    if not result.changed:
        emit(f"{result.path} already registers the continuity server; nothing changed")
        return
    emit(f"wrote {result.path}: server 'continuity' runs {' '.join(result.command)}")
    emit(RESTART[harness_name])


def register(app: typer.Typer) -> None:
    mcp_app.command("install")(install_command)
    app.add_typer(mcp_app, name="mcp")
