"""`lifecycle note new`, `approve`, `supersede`, `archive`, `revalidate`, `verify` and `edit soul|preferences`.

Approval, re-verification and edits are the person's acts. On a terminal they are asked for; without
one (an agent, a script) `approve` and `verify` need `--yes`, and `edit` needs both `--yes` (the content) and
`--accept-concurrency-risk` (nobody can confirm from a script that other computers have stopped
writing and the sync is current). A missing confirmation is a usage error, exit 2, and nothing is
written. The lease is checked before any question is asked, so a foreign lease fails fast (exit 4).
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from continuity.cli.options import JsonOption, SessionOption
from continuity.cli.output import emit, emit_json, report, warn

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


class Editable(str, Enum):
    soul = "soul"
    preferences = "preferences"


def interactive() -> bool:
    """True when a person can answer a question here."""
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _refuse_foreign(ctx: WriteContext) -> None:
    from continuity.store import lease

    lease.refuse_if_foreign(lease.status(ctx.vault, ctx.device, ctx.now))


def _need(flag: str, what: str) -> None:
    from continuity.errors import UsageError

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
    _refuse_foreign(ctx)
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
    _refuse_foreign(ctx)
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


def edit(
    which: Annotated[Editable, typer.Argument(help="Which approval-gated file.")],
    source: Annotated[str, typer.Option("--from", help="The complete new file (frontmatter included), or -.")],
    yes: Annotated[bool, typer.Option("--yes", help="The person approved this exact content.")] = False,
    accept_risk: Annotated[
        bool,
        typer.Option(
            "--accept-concurrency-risk",
            help="Write without confirming that other writers are stopped and the sync is current.",
        ),
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """Replace SOUL.md or PREFERENCES.md after review; the previous version goes to 90-archive/."""
    from continuity import limits
    from continuity.memory import edits
    from continuity.store import writer

    _conn, ctx = writer.connect(Path.cwd(), on_wait=warn)
    text = writer.read_input(source, limits.LIFECYCLE_TEXT_CAP_BYTES)
    _refuse_foreign(ctx)
    plan = edits.plan_edit(ctx.vault, which.value, text)
    if plan.unchanged:
        if json_out:
            emit_json(edits.Edited(plan.which, plan.rel, None, False).to_json())
        else:
            emit(f"{plan.rel} already has this content; nothing to do")
        return
    if not json_out:
        for line in plan.diff:
            emit(line.rstrip("\n"))
    warn(
        f"warning: {plan.rel} is shared by every computer that syncs this vault; a writer elsewhere whose "
        "changes have not synced yet can overwrite this edit or be overwritten by it"
    )
    if not interactive() and not (yes and accept_risk):
        flags = (("--yes", yes), ("--accept-concurrency-risk", accept_risk))
        _need(" and ".join(flag for flag, given in flags if not given), f"editing {plan.rel}")
    if not yes and not typer.confirm(f"Write this new {plan.rel}?", default=False, err=True):
        raise typer.Abort()
    if not accept_risk:
        stopped = typer.confirm(
            "Are other vault-writing tasks stopped, and is the sync current on this computer?",
            default=False,
            err=True,
        )
        if not stopped and not typer.confirm("Accept the concurrency risk and write anyway?", default=False, err=True):
            raise typer.Abort()
    result = edits.apply_edit(ctx, plan)
    if json_out:
        emit_json(result.to_json())
        return
    kept = f"; the previous version is kept at {result.archived}" if result.archived else ""
    emit(f"wrote {result.rel}{kept}")


def register(app: typer.Typer) -> None:
    app.add_typer(note_app, name="note")
    app.command()(approve)
    app.command()(supersede)
    app.command()(archive)
    app.command()(revalidate)
    app.command()(verify)
    app.command()(edit)
