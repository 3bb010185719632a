"""`lifecycle edit soul|preferences|project|device [--from FILE|-]`: change a hot profile safely.

With `--from` the complete new file is read and checked. Without it the person's editor opens a
private working copy (`memory.editor`), as `visudo` and `crontab -e` do: saving and quitting is the
person's approval of the content, so `--yes` is not needed. A copy that fails the frontmatter or the
secret gate is not installed: on a terminal the reason is shown and the person may edit again;
otherwise (or when they decline) the command names the working file that keeps their text and exits
5. A copy of a file that changed in the vault while it was being edited (a sync arrived) is refused
the same way, since installing it would silently undo the other change.

SOUL.md, PREFERENCES.md and PROJECT.md are written by every computer that syncs the vault, so their
edit also needs the person's word that other writers are stopped and the sync is current (asked on a
terminal; `--accept-concurrency-risk` without one). DEVICE.md is written only by its own computer
and needs no such confirmation. With `--from` and no terminal, `--yes` states that the person approved
this exact content. A missing confirmation is a usage error, exit 2, checked before the editor opens,
and nothing is written. The lease is checked first, so a foreign lease fails fast (exit 4).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import click
import typer

from continuity import limits
from continuity.cli.common import JsonOption, emit, emit_json, warn
from continuity.cli.funnel import message
from continuity.cli.memory import interactive, refuse_foreign
from continuity.errors import ContinuityError, InputRejected, NoteError, UsageError
from continuity.vault import registry

if TYPE_CHECKING:
    from continuity.memory.editor import WorkingCopy
    from continuity.memory.edits import EditPlan
    from continuity.store.writer import WriteContext


# The profiles `lifecycle edit` changes, as the registry of brief sources declares them.
EDITABLE = click.Choice([source.name for source in registry.EDITABLE])


def _template(which: str, ctx: WriteContext, project: str, repo: Path | None) -> str:
    """The template a missing profile starts from in the editor, filled in as `init` fills it."""
    from continuity.local import identity
    from continuity.store import onboard
    from continuity.vault import notes, resources

    text = (resources.resource_dir("templates") / f"{which}.md").read_text(encoding="utf-8")
    found = identity.of_repo(repo) if repo is not None else identity.RepoIdentity(None, None)
    values = {
        "device": ctx.device,
        "project": project,
        "created": notes.format_utc(ctx.clock()),
        "repository": found.repository or "",
        "root_commit": found.root_commit or "",
    }
    return onboard.fill(text, values)


def _edit_in_editor(
    which: str, ctx: WriteContext, project: str, rel: str, repo: Path | None
) -> tuple[EditPlan | None, WorkingCopy]:
    """Run the editor until the copy passes or the person gives up; (None, copy) when left unchanged."""
    from continuity.memory import editor, edits

    command = editor.editor_command()
    try:
        copy = editor.start(ctx.vault, rel, _template(which, ctx, project, repo), ctx.clock())
    except NoteError as exc:
        if exc.reason != "too_large":
            raise
        cap = edits.editable(which).cap_bytes  # the profile's own cap, the one the brief and the install apply
        raise InputRejected(
            f"{rel} is too large to open here (its cap is {cap} bytes, and the brief leaves it out until it fits); "
            "shorten it in any text editor, or write the new version to a file and use --from FILE"
        ) from None
    while True:
        editor.run_editor(copy, command)
        text = editor.read(copy)
        if editor.unchanged(copy, text):
            return None, copy
        try:
            plan = edits.plan_edit(ctx.vault, which, text, project=project, device=ctx.device)
            if plan.old != copy.base:
                raise InputRejected(f"{rel} changed in the vault while you edited it (a sync arrived?)")
        except ContinuityError as exc:
            if interactive():
                warn(f"lifecycle: {message(exc)}")
                if typer.confirm("Edit it again?", default=True, err=True):
                    continue
            raise _refused(exc, copy) from None
        return plan, copy


def _confirmed(rel: str, *, ask_content: bool, ask_risk: bool) -> bool:
    if ask_content and not typer.confirm(f"Write this new {rel}?", default=False, err=True):
        return False
    if not ask_risk:
        return True
    question = "Are other vault-writing tasks stopped, and is the sync current on this computer?"
    if typer.confirm(question, default=False, err=True):
        return True
    return typer.confirm("Accept the concurrency risk and write anyway?", default=False, err=True)


def _discard(copy: WorkingCopy | None) -> None:
    if copy is not None:
        from continuity.memory import editor

        editor.discard(copy)


def _refused(exc: ContinuityError, copy: WorkingCopy) -> ContinuityError:
    """The refusal, with the file that keeps the person's text; the same exit code as the reason."""
    reason = message(exc).removesuffix("; nothing was written")  # said once, below
    text = f"{reason}; nothing was written, your text is kept in {copy.path} (edit it, then --from that file)"
    return UsageError(text) if isinstance(exc, UsageError) else InputRejected(text)


def edit(
    which: Annotated[
        str,
        typer.Argument(click_type=EDITABLE, help="Which profile: soul, preferences, this project's, this device's."),
    ],
    source: Annotated[
        str | None,
        typer.Option("--from", help="The complete new file (frontmatter included), or -; default: open $EDITOR."),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", help="The person approved this exact content (--from).")] = False,
    accept_risk: Annotated[
        bool,
        typer.Option(
            "--accept-concurrency-risk",
            help="Write without confirming that other writers are stopped and the sync is current.",
        ),
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """Change SOUL.md, PREFERENCES.md, PROJECT.md or DEVICE.md after checks; the old one goes to 90-archive/."""
    from continuity.memory import edits
    from continuity.store import writer

    conn, ctx = writer.connect(Path.cwd(), on_wait=warn)
    rel = edits.edit_path(which, project=conn.project, device=ctx.device)
    refuse_foreign(ctx)
    shared = edits.editable(which).shared
    if not interactive():
        needs = (("--yes", source is not None and not yes), ("--accept-concurrency-risk", shared and not accept_risk))
        missing = [flag for flag, need in needs if need]
        if missing:
            raise UsageError(f"editing {rel} needs a person at a terminal; without one, pass {' and '.join(missing)}")
    copy: WorkingCopy | None = None
    if source is None:
        plan, copy = _edit_in_editor(which, ctx, conn.project, rel, conn.repo)
    else:
        text = writer.read_input(source, limits.LIFECYCLE_TEXT_CAP_BYTES)
        plan = edits.plan_edit(ctx.vault, which, text, project=conn.project, device=ctx.device)
    if plan is None or plan.unchanged:
        _discard(copy)
        if json_out:
            emit_json(edits.Edited(which, rel, None, False).to_json())
        else:
            emit(f"{rel} is unchanged; nothing to do")
        return
    if not json_out:
        for line in plan.diff:
            emit(line.rstrip("\n"))
    if shared:
        warn(
            f"warning: {plan.rel} is shared by every computer that syncs this vault; a writer elsewhere whose "
            "changes have not synced yet can overwrite this edit or be overwritten by it"
        )
    if not _confirmed(plan.rel, ask_content=source is not None and not yes, ask_risk=shared and not accept_risk):
        if copy is not None:
            warn(f"nothing was written; your text is kept in {copy.path}")
        raise typer.Abort()
    result = edits.apply_edit(ctx, plan)
    _discard(copy)
    if json_out:
        emit_json(result.to_json())
        return
    kept = f"; the previous version is kept at {result.archived}" if result.archived else ""
    emit(f"wrote {result.rel}{kept}")


def register(app: typer.Typer) -> None:
    app.command()(edit)
