"""`lifecycle init` and `lifecycle render`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from continuity.cli.common import Event, Format, Harness, JsonOption, emit, emit_json, warn

if TYPE_CHECKING:
    from continuity.brief.render import Brief


def init(
    vault: Annotated[Path, typer.Option("--vault", help="The vault folder (absolute or relative to here).")],
    new: Annotated[
        bool, typer.Option("--new", help="Create the vault from the template (folder absent or empty).")
    ] = False,
    device: Annotated[str | None, typer.Option(help="This computer's id (default: host name + suffix).")] = None,
    project: Annotated[
        str | None,
        typer.Option(help="The project id (default: the vault's project for this repository, else the folder's name)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing, different connection.")] = False,
    json_out: JsonOption = False,
) -> None:
    """Connect this checkout to a vault on this computer (idempotent)."""
    from continuity.store import onboard

    result = onboard.init(Path.cwd(), vault, new=new, device=device, project=project, force=force)
    if json_out:
        emit_json(
            {
                "version": 1,
                "connection": str(result.connection_file),
                "vault": str(result.vault),
                "device": result.device,
                "project": result.project,
                "project_found_by": result.found_by,
                "repository": result.identity.repository,
                "root_commit": result.identity.root_commit,
                "created_vault": result.created_vault,
                "created": result.created,
                "changed": result.changed_connection or bool(result.created) or result.created_vault,
            }
        )
        return
    if result.created_vault:
        emit(f"created a new vault at {result.vault}")
    for other in result.neighbours:
        warn(f"lifecycle: note: {other} beside it is also a vault; a second vault is synchronized on its own")
    found = FOUND_BY.get(result.found_by)
    if found:
        emit(found.format(project=result.project, identity=result.identity.describe()))
    for rel in result.created:
        emit(f"created {rel}")
    state = "connected" if result.changed_connection else "already connected"
    emit(f"{state}: device {result.device}, project {result.project} -> {result.vault}")
    if result.exclude_added:
        emit(f"git now ignores {result.connection_file.name} (via .git/info/exclude)")
    emit(
        "next: fill in the ## Brief sections with 'lifecycle edit device' (this computer's DEVICE.md), "
        "'lifecycle edit project' (PROJECT.md), 'lifecycle edit soul' and 'lifecycle edit preferences', "
        "then run 'lifecycle render' or 'lifecycle doctor'"
    )


# What init says about how it chose the project (nothing when it was given or already connected).
FOUND_BY = {
    "repository": "this repository ({identity}) is already known to the vault as project {project}: connecting to it",
    "root_commit": "this repository ({identity}) is already known to the vault as project {project}: connecting to it",
    "folder": "connecting to the vault's project {project}, named like this checkout (no identity to compare)",
    "new": "new project {project} for this repository ({identity})",
}


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
    from continuity.brief import build

    if explain:
        if fmt is Format.json:
            from continuity.errors import UsageError

            raise UsageError("--explain prints text; for the figures as JSON use --format json without --explain")
        explain_command(event.value, harness.value)
    text, code = build.render_command(Path.cwd(), event.value, fmt.value, harness.value)
    emit(text)
    raise typer.Exit(code)


def explain(brief: Brief) -> str:
    """Each source with its bytes, digest, inclusion and reason; the brief's digest; the last deliveries."""
    from continuity.hook import receipts
    from continuity.local.repo import find_repo_root

    lines = [f"event {brief.event}, harness {brief.harness}: status {brief.status}"]
    for s in brief.sources:
        state = "included" if s.included else f"left out ({s.reason})"
        digest = s.sha256[:16] if s.sha256 else "-"
        size = "-" if s.size is None else f"{s.size} bytes"
        lines.append(f"  {s.name:<12} {state:<24} {size:>12}  sha256 {digest}  {s.path or '(missing)'}")
    lines.append(
        f"brief: {brief.bytes} bytes of {brief.ceiling_bytes}, ~{brief.tokens_estimate} tokens, sha256 {brief.sha256}"
    )
    checkout = find_repo_root(Path.cwd())
    delivered = [d for d in receipts.last_deliveries(checkout) if d["event"] == brief.event]
    for item in delivered:
        same = "same as now" if item["sha256"] == brief.sha256 else "differs from now"
        note = ", with the compaction note" if item["recovery_note"] else ""
        lines.append(
            f"last delivered to {item['harness']} at {item['time']} ({item['source'] or brief.event}{note}): "
            f"{item['status']}, {item['bytes']} bytes, sha256 {item['sha256']} ({same})"
        )
    if not delivered:
        lines.append("no delivery of this event is recorded on this computer for this checkout")
    lines.append("")
    lines.append(brief.text)
    return "\n".join(lines)


def explain_command(event: str, harness_name: str) -> None:
    """`lifecycle render --explain`: print the explanation and leave with render's exit code."""
    from continuity.brief import build, render

    brief = build.build_safely(Path.cwd(), event, harness_name)
    if brief is None:
        brief = render.unavailable(event, harness_name, build.unconnected(Path.cwd()))
    emit(explain(brief))
    raise typer.Exit(build.EXIT_FOR_STATUS[brief.status])


def register(app: typer.Typer) -> None:
    app.command()(init)
    app.command()(render)
