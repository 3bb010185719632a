"""`lifecycle preserve PACKAGE [FILE…]`: keep exact delivered files in the vault's `40-documents/`.

Keeping an original is the person's act, as approval is. On a terminal the plan is shown (on stderr,
so `--json` keeps stdout to its one document) and the person is asked; binary files, which the secret
gate cannot read, get a question of their own, and declining it keeps the text files only. Without a
terminal `--yes` is needed (exit 2 otherwise, nothing written), and it covers binary files too. The
lease is checked before any question is asked, so a foreign lease fails fast (exit 4).

A refused file is listed with its reason and the command ends with exit 5 after keeping the others.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from continuity.cli.common import JsonOption, emit, emit_json, warn
from continuity.cli.memory import interactive, refuse_foreign
from continuity.errors import InputRejected, UsageError

if TYPE_CHECKING:
    from continuity.memory.preserve import Plan
    from continuity.memory.preserve_write import Preservation
    from continuity.store.writer import WriteContext


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _show(ctx: WriteContext, plan: Plan) -> None:
    """What will be written, for the person to confirm."""
    from continuity.memory.preserve import vault_after
    from continuity.outbox.folder import format_time
    from continuity.vault.budget import human_size

    warn(f"package {plan.package}, delivered {format_time(plan.delivered)}")
    warn(f"the outbox copy is deleted at {format_time(plan.expires)} whatever is kept here")
    warn(f"into {plan.folder}/ (cold: never loaded into a session, never returned by recall)")
    for item in plan.files:
        size = human_size(len(item.doc.data))
        if item.kept:
            warn(f"  already kept  {item.file}  {size}  at {item.rel}")
            continue
        kind = "text, no secret found" if item.doc.scanned else "binary: cannot be scanned for secrets"
        warn(f"  keep          {item.file}  {size}  {kind}  sha256:{item.doc.sha256}")
    for refused in plan.refused:
        warn(f"  refused       {refused.message}")
    after = vault_after(ctx.vault, plan)
    if after.state != "ok":
        warn(
            f"the whole vault would hold {human_size(after.bytes)} of {human_size(after.limit_bytes)} and "
            f"{after.files:,} of {after.limit_files:,} files ({after.state}); see 'lifecycle budget'"
        )


def _confirm(ctx: WriteContext, plan: Plan) -> Plan:
    """The plan the person agreed to: binary files may be declined on their own; declining all aborts."""
    if not interactive():
        raise UsageError("preserving needs a person at a terminal; without one, pass --yes")
    _show(ctx, plan)
    binary = plan.unscanned
    if binary:
        names = ", ".join(item.file for item in binary)
        them = "it" if len(binary) == 1 else "them"
        question = f"{names}: binary, so the secret gate cannot read {them}. Keep {them} unscanned?"
        if not typer.confirm(question, default=False, err=True):
            plan = plan.without_unscanned()
    if not plan.files:
        return plan
    if not typer.confirm(f"Preserve {_plural(len(plan.files), 'file')} in the vault?", default=False, err=True):
        raise typer.Abort()
    return plan


def _report(result: Preservation, as_json: bool) -> None:
    from continuity.outbox.folder import format_time

    if as_json:
        emit_json(result.to_json())
        return
    for item in result.preserved:
        verb = "preserved" if item.written else "already preserved"
        scanned = "" if item.scanned else ", not scanned (binary)"
        emit(f"{verb} {item.file}: {item.path} (record {item.record.rpartition('/')[2]}{scanned})")
    for refused in result.refused:
        emit(f"refused {refused.file} ({refused.reason}): {refused.message}")
    if result.preserved:
        emit(f"the outbox copy is still deleted at {format_time(result.expires)}")


def preserve(
    package: Annotated[str, typer.Argument(help="A delivered package: its name in output/, or the path to it.")],
    files: Annotated[
        list[str] | None,
        typer.Argument(metavar="[FILE]...", help="Files of the package to keep (default: every file)."),
    ] = None,
    why: Annotated[str | None, typer.Option("--why", help="Why the exact file matters (kept in its record).")] = None,
    yes: Annotated[
        bool,
        typer.Option("--yes", help="Keep without asking (the person agreed), binary files unscanned included."),
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """Keep exact delivered files in the vault's 40-documents/, each with a record of where it came from."""
    from continuity.memory import preserve as core, preserve_write
    from continuity.outbox.package import locate_package
    from continuity.store import writer

    _conn, ctx = writer.connect(Path.cwd(), on_wait=warn)
    repo, name = locate_package(Path.cwd(), package)
    plan = core.plan(ctx, repo, name, files or (), why=why)
    if plan.files:
        refuse_foreign(ctx)
        if not yes:
            plan = _confirm(ctx, plan)
    result = preserve_write.apply(ctx, plan)
    _report(result, json_out)
    if result.refused:
        reasons = "; ".join(f"{item.file}: {item.reason}" for item in result.refused)
        them = "it" if len(result.refused) == 1 else "them"
        count = _plural(len(result.refused), "file")
        raise InputRejected(f"{count} refused ({reasons}); nothing was written for {them}")


def register(app: typer.Typer) -> None:
    app.command()(preserve)
