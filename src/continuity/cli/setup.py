"""`lifecycle init` and `lifecycle render`."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from continuity.cli.options import JsonOption
from continuity.cli.output import emit, emit_json


class Event(str, Enum):
    SessionStart = "SessionStart"
    SubagentStart = "SubagentStart"


class Format(str, Enum):
    text = "text"
    json = "json"


class Harness(str, Enum):
    codex = "codex"
    claude = "claude"


def init(
    vault: Annotated[Path, typer.Option("--vault", help="The vault folder (absolute or relative to here).")],
    new: Annotated[
        bool, typer.Option("--new", help="Create the vault from the template (folder absent or empty).")
    ] = False,
    device: Annotated[str | None, typer.Option(help="This computer's id (default: host name + suffix).")] = None,
    project: Annotated[str | None, typer.Option(help="The project id (default: the repository's folder name).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing, different connection.")] = False,
    json_out: JsonOption = False,
) -> None:
    """Connect this checkout to a vault on this computer (idempotent)."""
    from continuity import onboard

    result = onboard.init(Path.cwd(), vault, new=new, device=device, project=project, force=force)
    if json_out:
        emit_json(
            {
                "version": 1,
                "connection": str(result.connection_file),
                "vault": str(result.vault),
                "device": result.device,
                "project": result.project,
                "created_vault": result.created_vault,
                "created": result.created,
                "changed": result.changed_connection or bool(result.created) or result.created_vault,
            }
        )
        return
    if result.created_vault:
        emit(f"created a new vault at {result.vault}")
    for rel in result.created:
        emit(f"created {rel}")
    state = "connected" if result.changed_connection else "already connected"
    emit(f"{state}: device {result.device}, project {result.project} -> {result.vault}")
    if result.exclude_added:
        emit(f"git now ignores {result.connection_file.name} (via .git/info/exclude)")
    emit("next: edit the ## Brief sections of your profiles, then run 'lifecycle render' or 'lifecycle doctor'")


def render(
    event: Annotated[Event, typer.Option(help="Which start to render for.")] = Event.SessionStart,
    fmt: Annotated[
        Format, typer.Option("--format", help="text: the brief; json: the brief with its figures.")
    ] = Format.text,
    harness: Annotated[Harness, typer.Option(help="Whose limits to respect.")] = Harness.codex,
    explain: Annotated[
        bool, typer.Option("--explain", help="Also list each source and compare with the last delivery.")
    ] = False,
) -> None:
    """Print the startup brief (exit 0 restored, 1 partial, 3 unavailable)."""
    from continuity import hook

    if explain:
        if fmt is Format.json:
            from continuity.errors import UsageError

            raise UsageError("--explain prints text; for the figures as JSON use --format json without --explain")
        from continuity.cli.hooks import explain_command

        explain_command(event.value, harness.value)
    text, code = hook.render_command(Path.cwd(), event.value, fmt.value, harness.value)
    emit(text)
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command()(init)
    app.command()(render)
