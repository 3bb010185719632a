"""`lifecycle handoff new|list|current|show`.

A handoff's body is printed only after the secret gate has passed it (the note may have been written
by hand, not through `handoff new`); a refusal names the line and detector, never the value.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from continuity import limits
from continuity.cli.common import JsonOption, SessionOption, emit, emit_json, report, warn
from continuity.errors import InputRejected

if TYPE_CHECKING:
    from continuity.memory.handoff import Handoff

handoff_app = typer.Typer(
    help="Handoffs: what a later task needs to resume without rediscovering state.",
    no_args_is_help=True,
)


def _secret_free(item: Handoff) -> str | None:
    """None when the handoff may be shown, else why not (the brief leaves it out for the same reason)."""
    from continuity.gate.secrets import scan_text

    if item.size > limits.HANDOFF_CAP_BYTES:
        return "too_large"
    return "secret" if scan_text(item.note.text) else None


def _refuse_secret(item: Handoff) -> None:
    from continuity.gate.secrets import scan_text

    findings = scan_text(item.note.text)
    if findings:
        first = min(findings, key=lambda f: f.line)
        from continuity.memory import handoff

        shown = handoff.summary(item)["path"]
        raise InputRejected(f"{shown} line {first.line} looks like a secret ({first.detector}); not shown")


@handoff_app.command("new")
def new(
    title: Annotated[str, typer.Option("--title", help="One line: what this handoff is about.")],
    source: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="The body (required): a Markdown file with the four sections of templates/handoff.md, or - for "
            "standard input.",
        ),
    ] = None,
    session: SessionOption = None,
    json_out: JsonOption = False,
) -> None:
    """Write a new current handoff for this project; the previous one becomes superseded."""
    from continuity.memory import handoff_write
    from continuity.store import writer

    conn, ctx = writer.connect(Path.cwd(), session=session, on_wait=warn)
    body, name = writer.read_body(source, limits.HANDOFF_CAP_BYTES)
    commit = handoff_write.head_commit(conn.repo)
    result = handoff_write.new_handoff(ctx, title, body, commit=commit, source_name=name)
    if json_out:
        emit_json(result.to_json())
        return
    emit(f"wrote {result.rel} (id {result.id})")
    if result.supersedes:
        emit(f"superseded {result.supersedes}")


@handoff_app.command("list")
def list_(
    all_: Annotated[
        bool,
        typer.Option("--all", help="Every handoff of every project, superseded and historical ones too."),
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """List this project's current handoffs, newest first (--all: every handoff in the vault)."""
    from continuity.memory import handoff
    from continuity.store import writer

    _conn, ctx = writer.connect(Path.cwd())
    listing = (
        handoff.list_handoffs(ctx.vault, None)
        if all_
        else handoff.list_handoffs(ctx.vault, ctx.project, statuses=("current",))
    )
    if json_out:
        emit_json(
            {
                "version": 1,
                "handoffs": [handoff.summary(item) for item in listing.handoffs],
                "invalid": [{"path": rel, "error": message} for rel, message in listing.invalid],
            }
        )
        return
    for _rel, message in listing.invalid:
        warn(f"lifecycle: warning: {message}")
    if not listing.handoffs:
        emit("no handoffs" if all_ else f"no current handoff for project {ctx.project}")
    for item in listing.handoffs:
        info = handoff.summary(item)
        project = f"  [{info['project']}]" if all_ else ""
        emit(f"{info['created']}  {info['status']:<10}  {item.id}{project}  {info['title'] or ''}".rstrip())


@handoff_app.command()
def current(json_out: JsonOption = False) -> None:
    """The handoff the startup brief would use for this project (the same selection)."""
    from continuity.memory import handoff
    from continuity.store import writer
    from continuity.vault import notes

    _conn, ctx = writer.connect(Path.cwd())
    project = ctx.project or ""
    files = handoff.read_all(ctx.vault)
    selection = handoff.select(files, project)
    chosen = selection.chosen
    for rel in handoff.newer_unparsed(selection, files, project):
        warn(f"lifecycle: warning: {rel} is newer but cannot be used; 'lifecycle doctor' says why")
    reason = _secret_free(chosen) if chosen is not None else None
    if json_out:
        document = None
        if chosen is not None:
            document = {**handoff.summary(chosen), "reason": reason}
        emit_json({"version": 1, "current": document})
        return
    if len(selection.current) > 1:
        warn(f"lifecycle: warning: {len(selection.current)} current handoffs for {project}; the newest is used")
    if chosen is None:
        emit(f"no current handoff for project {project}")
        return
    emit(f"{chosen.id}  {handoff.summary(chosen)['path']}")
    emit(f"created {notes.format_utc(chosen.created)} on {chosen.note.meta.get('device')}")
    if reason is not None:
        emit(f"not shown: {reason} (the startup brief leaves it out too; see 'lifecycle doctor')")
        return
    emit("")
    emit(handoff.brief_text(chosen))


@handoff_app.command()
def show(
    handoff_id: Annotated[
        str, typer.Argument(metavar="ID", help="The handoff's id (its file name without .md, any case).")
    ],
    json_out: JsonOption = False,
) -> None:
    """Print one handoff in full (refused when it holds secret-like content)."""
    from continuity.memory import handoff
    from continuity.store import writer

    _conn, ctx = writer.connect(Path.cwd())
    # Handoff ids are the lower-cased file stem, so the name `handoff new` printed works as typed.
    item = handoff.find(ctx.vault, handoff_id.removesuffix(".md").lower())
    _refuse_secret(item)
    document = {"version": 1, "handoff": handoff.summary(item), "text": item.note.text}
    report(document, json_out, item.note.text.rstrip("\n"))


def register(app: typer.Typer) -> None:
    app.add_typer(handoff_app, name="handoff")
