"""`lifecycle note new`, `approve`, `supersede`, `archive`, `revalidate` and `verify` (`edit` is in `cli.edit`).

Approval and re-verification are the person's acts. On a terminal they are asked for; without one
(an agent, a script) `approve` and `verify` need `--yes`. A missing confirmation is a usage error,
exit 2, and nothing is written. The lease is checked before any question is asked, so a foreign
lease fails fast (exit 4).
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from continuity.cli.common import JsonOption, SessionOption, emit, emit_json, report, warn
from continuity.errors import UsageError

if TYPE_CHECKING:
    from continuity.store.writer import WriteContext

note_app = typer.Typer(help="Propose memories as candidates for review.", no_args_is_help=True)


class Kind(str, Enum):
    fact = "fact"
    decision = "decision"
    lesson = "lesson"
    preference = "preference"


class Scope(str, Enum):
    global_ = "global"
    project = "project"
    device = "device"


class Confidence(str, Enum):
    low = "low"
    medium = "medium"
    high = "high"


def interactive() -> bool:
    """True when a person can answer a question here."""
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def refuse_foreign(ctx: WriteContext) -> None:
    """A write command's early refusal under another computer's lease, before it asks the person
    anything (the writer refuses again inside the lock)."""
    from continuity.records.leases import status
    from continuity.store import lease

    lease.refuse_if_foreign(status(ctx.vault, ctx.device, ctx.now))


def _need(flag: str, what: str) -> None:
    raise UsageError(f"{what} needs a person at a terminal; without one, pass {flag}")


@note_app.command("new")
def note_new(
    kind: Annotated[Kind, typer.Option("--type", help="What kind of claim.")],
    title: Annotated[str, typer.Option("--title", help="The claim in one line.")],
    source: Annotated[
        str | None, typer.Option("--from", help="The body: a Markdown file, or - for standard input.")
    ] = None,
    scope: Annotated[Scope, typer.Option(help="Where the claim holds.")] = Scope.project,
    confidence: Annotated[Confidence, typer.Option(help="How sure the evidence makes it.")] = Confidence.medium,
    evidence: Annotated[str | None, typer.Option(help="One line: where this was observed.")] = None,
    session: SessionOption = None,
    json_out: JsonOption = False,
) -> None:
    """Write a candidate into 20-state/candidates/ for the person to review."""
    from continuity.memory import review as memory
    from continuity.store import writer

    _conn, ctx = writer.connect(Path.cwd(), session=session, on_wait=warn)
    body, name = writer.read_body(source, memory.NOTE_CAP_BYTES)
    created = memory.new_candidate(
        ctx,
        kind.value,
        title,
        body,
        scope=scope.value,
        confidence=confidence.value,
        evidence=evidence,
        source_name=name,
    )
    if json_out:
        emit_json(created.to_json())
        return
    emit(f"wrote candidate {created.id} ({created.rel})")
    emit(f"a person approves it with: lifecycle approve {created.id}")


def approve(
    note_id: Annotated[str, typer.Argument(metavar="ID", help="The candidate's id.")],
    yes: Annotated[bool, typer.Option("--yes", help="Approve without asking (the person has already agreed).")] = False,
    json_out: JsonOption = False,
) -> None:
    """Approve a candidate: write it into 30-memory/ with verification dates."""
    from continuity.memory import review as memory
    from continuity.store import writer

    _conn, ctx = writer.connect(Path.cwd(), on_wait=warn)
    found = memory.load_candidate(ctx.vault, note_id)
    refuse_foreign(ctx)
    if not yes:
        if not interactive():
            _need("--yes", "approval")
        meta = found.meta
        warn(f"candidate {found.id} ({found.rel})")
        warn(f"  {meta.get('type')}: {meta.get('title')}")
        warn(f"  scope {meta.get('scope')}, confidence {meta.get('confidence')}")
        if not typer.confirm("Approve it as durable memory?", default=False, err=True):
            raise typer.Abort()
    from continuity.memory import revalidation

    result = memory.approve(ctx, note_id, revalidate_days=revalidation.interval_days(ctx.vault))
    text = f"approved {result.candidate_id} as {result.id} ({result.rel}); revalidate by {result.revalidate_by}"
    report(result.to_json(), json_out, text)


def supersede(
    old_id: Annotated[str, typer.Argument(metavar="OLD", help="The approved note that no longer holds.")],
    new_id: Annotated[str, typer.Option("--by", metavar="NEW", help="The approved note that replaces it.")],
    json_out: JsonOption = False,
) -> None:
    """Mark OLD superseded by NEW and link both (history is kept, not rewritten)."""
    from continuity.memory import review as memory
    from continuity.store import writer

    _conn, ctx = writer.connect(Path.cwd(), on_wait=warn)
    result = memory.supersede(ctx, old_id, new_id)
    report(result.to_json(), json_out, f"{result.old_id} is superseded by {result.new_id}")


def archive(
    note_id: Annotated[str, typer.Argument(metavar="ID", help="The note's id.")],
    json_out: JsonOption = False,
) -> None:
    """Move a note into 90-archive/ under its original relative path."""
    from continuity.memory import review as memory
    from continuity.store import writer

    _conn, ctx = writer.connect(Path.cwd(), on_wait=warn)
    result = memory.archive(ctx, note_id)
    report(result.to_json(), json_out, f"archived {result.id}: {result.from_rel} -> {result.rel}")


def revalidate(json_out: JsonOption = False) -> None:
    """List approved notes past their revalidate_by date (read-only)."""
    from continuity.memory import revalidation
    from continuity.store import writer

    _conn, ctx = writer.connect(Path.cwd())
    now = ctx.clock()
    due, invalid = revalidation.revalidate(ctx.vault, now)
    if json_out:
        emit_json(
            {
                "version": 1,
                "today": revalidation.today_of(now).isoformat(),
                "due": [item.to_json() for item in due],
                "invalid": [{"path": rel, "error": message} for rel, message in invalid],
            }
        )
        return
    for _rel, message in invalid:
        warn(f"lifecycle: warning: {message}")
    if not due:
        emit("nothing is due for revalidation")
        return
    for item in due:
        when = item.revalidate_by.isoformat() if item.revalidate_by else "no date"
        emit(f"{when}  {item.id}  {item.rel}  {item.title or ''}".rstrip())
    emit("check each against the current code; then 'lifecycle verify ID', or supersede or archive it")


def verify(
    note_id: Annotated[str, typer.Argument(metavar="ID", help="The approved note's id.")],
    yes: Annotated[bool, typer.Option("--yes", help="Mark it without asking (the person checked it).")] = False,
    json_out: JsonOption = False,
) -> None:
    """Mark an approved note re-verified: verified today, due again after the policy's interval."""
    from continuity.memory import revalidation
    from continuity.store import writer

    _conn, ctx = writer.connect(Path.cwd(), on_wait=warn)
    found = revalidation.verifiable(ctx.vault, note_id)
    refuse_foreign(ctx)
    if not yes:
        if not interactive():
            _need("--yes", "re-verification")
        from continuity.gate.secrets import shown_value

        warn(f"{found.id} ({found.rel}): {found.meta.get('type')}: {shown_value(str(found.meta.get('title')))}")
        if not typer.confirm("Did you check that it still holds?", default=False, err=True):
            raise typer.Abort()
    result = revalidation.verify(ctx, note_id)
    text = f"{result.id} verified {result.verified}; revalidate by {result.revalidate_by}"
    report(result.to_json(), json_out, text if result.changed else f"{text} (already; nothing changed)")


def register(app: typer.Typer) -> None:
    app.add_typer(note_app, name="note")
    app.command()(approve)
    app.command()(supersede)
    app.command()(archive)
    app.command()(revalidate)
    app.command()(verify)
