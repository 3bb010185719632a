"""`lifecycle init` and `lifecycle render`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from continuity.cli.options import Event, Format, Harness, JsonOption
from continuity.cli.output import emit, emit_json

if TYPE_CHECKING:
    from continuity.brief.render import Brief


def init(
    vault: Annotated[Path, typer.Option("--vault", help="The vault folder (absolute or relative to here).")],
    new: Annotated[
        bool, typer.Option("--new", help="Create the vault from the template (folder absent or empty).")
    ] = False,
    device: Annotated[str | None, typer.Option(help="This computer's id (default: host name + suffix).")] = None,
    project: Annotated[str | None, typer.Option(help="The project id (default: the repository's folder name).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing, different connection.")] = False,
    clone: Annotated[
        str | None, typer.Option("--clone", help="First clone the vault from this private Git remote into --vault.")
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Connect this checkout to a vault on this computer (idempotent)."""
    from continuity.store import onboard

    if clone is not None:
        from continuity.errors import UsageError
        from continuity.sync import engine

        if new:
            raise UsageError("--clone and --new exclude each other: a cloned vault already exists")
        engine.clone(clone, Path(vault).expanduser().absolute(), device or "new-computer")
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
    if clone is not None:
        emit("next: run 'lifecycle sync' to publish this computer's device profile")
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
        brief = render.unavailable(event, harness_name, "this checkout is not connected to a vault")
    emit(explain(brief))
    raise typer.Exit(build.EXIT_FOR_STATUS[brief.status])


def register(app: typer.Typer) -> None:
    app.command()(init)
    app.command()(render)
