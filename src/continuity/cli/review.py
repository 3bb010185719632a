"""`lifecycle review`: one inbox for everything that waits on the person, and `note list`.

On a terminal it works like `git add -p`: one item at a time, a one-key choice (`?` explains the keys,
`n` leaves the item for later, `q` stops). Each action is one transaction of the write path (lease,
gate, journal, atomic write), so stopping at any point (`q`, or Ctrl-C) loses nothing: what was done
is done, the rest waits for the next `lifecycle review`. `--list [--json]` prints the inbox for
scripts; without a terminal that is all it does. What the items are, and what each action writes:
`memory.inbox` and `memory.resolve`; the prose for people is `docs/review.md`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from continuity.cli.common import JsonOption, emit, emit_json, warn
from continuity.cli.funnel import message
from continuity.cli.memory import interactive, note_app
from continuity.errors import EXIT_INTERRUPTED, ContinuityError, one_line

if TYPE_CHECKING:
    from continuity.health.context import Context
    from continuity.health.report import Check
    from continuity.memory.inbox import Item
    from continuity.store.writer import WriteContext

# One key per action, by kind; `n`, `q` and `?` work everywhere.
KEYS = {
    "candidate": {"a": "approve", "e": "edit", "r": "reject"},
    "due": {"v": "verify", "s": "supersede", "x": "archive"},
    "conflict": {"t": "keep-this", "o": "keep-other", "m": "merge"},
    "held": {"e": "open"},
    "handoffs": {},  # 1..9: keep that one
}
HELP = {
    "approve": "approve it: it becomes an approved note that recall can load",
    "edit": "open it in $VISUAL/$EDITOR first; it stays a candidate",
    "reject": "reject it: it moves to 90-archive/ with the reason",
    "verify": "it still holds: verified today, due again after the policy's interval",
    "supersede": "another approved note replaces it (you type that note's id)",
    "archive": "it no longer matters: it moves to 90-archive/ with the reason",
    "keep-this": "keep this computer's side (the copy); the other side is archived",
    "keep-other": "keep the other side (the original in place); this computer's copy is archived",
    "merge": "merge the two sides in $VISUAL/$EDITOR; the copy is archived",
    "open": "open it in $VISUAL/$EDITOR and fix what holds it back",
}


def _sync_held(ctx: WriteContext) -> tuple[tuple[str, str], ...]:
    """The files every sync of a Git vault holds back (as the next sync would judge them)."""
    from continuity.sync import commit
    from continuity.sync.git import Git, GitFailed, is_git_vault

    if not is_git_vault(ctx.vault):
        return ()
    git = Git(ctx.vault, ctx.device)
    try:
        changed = [rel for rel in commit.changed_paths(git) if os.path.lexists(ctx.vault / rel)]
    except GitFailed:
        return ()
    found = [commit.gate_file(git, rel) for rel in changed[:500]]
    return tuple((h.rel, f"every sync holds it back: {h.message()}") for h in found if h and h.shown == h.rel)


def gather(ctx: WriteContext) -> list[Item]:
    from continuity.memory import inbox

    return inbox.gather(ctx.vault, ctx.project, ctx.clock(), _sync_held(ctx))


def review(
    list_only: Annotated[bool, typer.Option("--list", help="Print what waits, one line each; change nothing.")] = False,
    json_out: JsonOption = False,
) -> None:
    """Go through everything that waits on you: candidates, due notes, conflict copies, handoffs, held notes."""
    from continuity.store import writer

    _conn, ctx = writer.connect(Path.cwd(), on_wait=warn)
    items = gather(ctx)
    if json_out:
        emit_json({"version": 1, "items": [item.to_json() for item in items]})
        return
    if list_only or not interactive() or not items:
        for item in items:
            emit(f"{item.kind:<9}  {item.path}  {item.detail}")
        if not items:
            emit("nothing waits for review")
        elif not list_only:
            warn("note: run 'lifecycle review' on a terminal to go through them one at a time")
        return
    try:
        for number, item in enumerate(items, start=1):
            if not _one(ctx, item, number, len(items)):
                break
    except KeyboardInterrupt:
        emit("")
        left = len(gather(ctx))  # counted again: what was done is done, whatever was skipped still waits
        warn(f"lifecycle: stopped: nothing was lost; {left} item(s) still wait ('lifecycle review')")
        raise typer.Exit(EXIT_INTERRUPTED) from None


@contextlib.contextmanager
def _cbreak() -> Iterator[None]:
    """Keys without Enter (Ctrl-C still interrupts); the terminal is put back however this ends."""
    import termios
    import tty

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd, termios.TCSANOW)  # keys typed ahead are kept, not flushed
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _key(prompt: str) -> str:
    typer.echo(prompt, nl=False)
    with _cbreak():
        key = sys.stdin.read(1)
    if not key:
        raise KeyboardInterrupt  # end of input: stop as q would, nothing half done
    typer.echo(key)
    return key.lower()


def _show(ctx: WriteContext, item: Item, number: int, total: int) -> None:
    emit(f"\n({number}/{total}) {item.kind}: {item.title}")
    emit(f"  {item.path}: {item.detail}")
    if item.kind in ("candidate", "due"):
        from continuity.memory.lookup import read_note

        found = read_note(ctx.vault, item.path)
        if found is not None:
            for line in found.note.body.strip("\n").splitlines()[:20]:
                emit(f"  | {line}")
    if item.kind == "handoffs":
        for index, rel in enumerate(item.other, start=1):
            emit(f"  {index}) {rel}{'  (the newest: the one the brief loads)' if rel == item.path else ''}")


def _one(ctx: WriteContext, item: Item, number: int, total: int) -> bool:
    """Ask about one item until it is done or skipped; False when the person stops."""
    keys = KEYS[item.kind]
    choices = [*keys, *(str(i) for i in range(1, len(item.other) + 1) if item.kind == "handoffs"), "n", "q", "?"]
    words = ", ".join(f"{k}={action}" for k, action in keys.items())
    if item.kind == "handoffs":
        words = f"1-{len(item.other)}=keep that one"
    _show(ctx, item, number, total)
    while True:
        key = _key(f"{words}, n=later, q=stop [{','.join(choices)}]? ")
        if key == "q":
            return False
        if key == "n":
            return True
        if key not in choices or key == "?":
            for k, action in keys.items():
                emit(f"  {k}  {HELP[action]}")
            if item.kind == "handoffs":
                emit("  1-9  keep that handoff current; the others are marked superseded by it")
            emit("  n  leave it for later\n  q  stop here (what is done stays done)\n  ?  this help")
            continue
        try:
            done = _act(ctx, item, keys.get(key, key))
        except ContinuityError as exc:
            warn(f"lifecycle: error: {one_line(message(exc))}")
            continue
        emit(f"  {done}")
        if keys.get(key) == "edit":
            _show(ctx, item, number, total)  # edited, still a candidate: now approve or reject it
            continue
        return True


def _act(ctx: WriteContext, item: Item, action: str) -> str:
    from continuity.memory import handoff, handoff_write, resolve, revalidation, review as loop

    if item.kind == "handoffs":
        keep = item.other[int(action) - 1]
        keep_id = handoff.id_for_name(keep.rpartition("/")[2])
        for rel in item.other:
            if rel != keep:
                handoff_write.supersede(ctx, handoff.id_for_name(rel.rpartition("/")[2]), keep_id)
        return f"kept {keep}; the other(s) are superseded by it"
    if action == "approve":
        approved = loop.approve(ctx, str(item.id), revalidate_days=revalidation.interval_days(ctx.vault))
        return f"approved as {approved.id} ({approved.rel})"
    if action == "reject":
        return f"rejected: {loop.archive(ctx, str(item.id), reason='rejected at review').rel}"
    if action == "verify":
        verified = revalidation.verify(ctx, str(item.id))
        return f"verified; due again {verified.revalidate_by.isoformat()}"
    if action == "supersede":
        new_id = typer.prompt("  superseded by which approved note (its id)").strip()
        loop.supersede(ctx, str(item.id), new_id)
        return f"{item.id} is superseded by {new_id}"
    if action == "archive":
        return f"archived: {loop.archive(ctx, str(item.id), reason='retired at review').rel}"
    if action in ("keep-this", "keep-other"):
        return f"kept; the other side is archived as {resolve.settle_conflict(ctx, item.path, item.other[0], action)}"
    if action == "merge":
        text = _edit(ctx, item.other[0], resolve.merge_file_text(ctx.vault, item.path, item.other[0]))
        if text is None:
            return "nothing changed; it waits for later"
        archived = resolve.settle_conflict(ctx, item.path, item.other[0], "merge", merged=text)
        return f"merged into {item.other[0]}; the copy is archived as {archived}"
    text = _edit(ctx, item.path, None)  # edit (a candidate) or open (a held-back note)
    return "nothing changed" if text is None else "saved"


def _edit(ctx: WriteContext, rel: str, start_text: str | None) -> str | None:
    """Open `rel` (or `start_text`) in the editor; the saved text when it changed and was written
    in place (edits only: a merge is written by the caller). The working copy keeps the text on a refusal."""
    from continuity.memory import editor, resolve
    from continuity.store import atomic

    copy = editor.start(ctx.vault, rel, "", ctx.clock())
    if start_text is not None:
        atomic.write_text(copy.path, start_text)
    editor.run_editor(copy, editor.editor_command())
    text = editor.read(copy)
    if (start_text is None and editor.unchanged(copy, text)) or start_text == text:
        editor.discard(copy)
        return None
    try:
        if start_text is None:
            resolve.write_edited(ctx, rel, copy.base or b"", text)
    except ContinuityError as exc:
        raise type(exc)(f"{message(exc)}; your text is kept in {copy.path}") from None
    if start_text is None:
        editor.discard(copy)
    return text


def doctor_check(ctx: Context) -> list[Check]:
    """Doctor's count of what waits, naming `lifecycle review` (which `cli.doctor` adds to doctor's checks)."""
    from continuity.health.report import check
    from continuity.memory import inbox

    items = inbox.gather(ctx.root, ctx.conn.project, ctx.now)
    if not items:
        return [check("review", "ok", "nothing waits for review")]
    return [check("review", "warn", f"waiting for you: {inbox.count_line(items)}; run 'lifecycle review'")]


def note_list(json_out: JsonOption = False) -> None:
    """The candidates that wait for approval (the review inbox's first kind), one line each."""
    from continuity.memory import inbox
    from continuity.store import writer

    _conn, ctx = writer.connect(Path.cwd())
    items = inbox.candidates(ctx.vault)
    if json_out:
        emit_json({"version": 1, "candidates": [item.to_json() for item in items]})
        return
    for item in items:
        emit(f"{item.id}  {item.title}  ({item.detail}; {item.path})")
    emit(f"{len(items)} candidate(s) wait for review: 'lifecycle review'" if items else "no candidate waits")


def register(app: typer.Typer) -> None:
    app.command()(review)
    note_app.command("list")(note_list)
