"""Writing handoffs: `lifecycle handoff new`, kept apart from reading so the startup hook never loads it.

`handoff new` is stricter than loading: all four sections, none of them still the template's
placeholder text, one to three next actions, the 32 KiB cap and the secret gate, all checked before
anything is written. Without `--from` it refuses: the template alone holds no state worth handing
over. The file name begins with the UTC time, so names sort by time; a same-second collision (two
agents, or two computers via sync) gets a counter suffix, and the exclusive create means one writer
can never replace another's new handoff. The predecessor (the current handoff that `handoff.select`
picks, exactly as the brief would) is marked superseded in the same transaction.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from continuity import limits, tunables
from continuity.errors import FIELD, InputRejected
from continuity.memory.handoff import SECTIONS, Handoff, find, id_for_name, read_all, select
from continuity.store import writer
from continuity.vault import layout, notes, placeholders

if TYPE_CHECKING:
    from continuity.store.writer import WriteContext


_ITEM_BULLETS = ("-", "*", "+")


@dataclass(frozen=True)
class NewHandoff:
    id: str
    rel: str
    status: str
    supersedes: str | None
    commit: str | None
    session: str | None

    def to_json(self) -> dict[str, object]:
        return {
            "version": 1,
            "id": self.id,
            "path": self.rel,
            "status": self.status,
            "supersedes": self.supersedes,
        }


def _is_item(line: str) -> bool:
    """A top-level Markdown list item: `- x`, `* x`, `+ x`, `1. x`, `1) x` (at most one leading space)."""
    text = line[1:] if line.startswith(" ") else line
    if text[:1] in _ITEM_BULLETS:
        rest = text[1:]
    else:
        digits = len(text) - len(text.lstrip("0123456789"))
        if not 0 < digits <= 9 or text[digits : digits + 1] not in (".", ")"):
            return False
        rest = text[digits + 1 :]
    return rest == "" or rest[0] in " \t"


def count_items(text: str) -> int:
    """Top-level list items in a section, ignoring fenced code."""
    count = 0
    fence = False
    for line in text.split("\n"):
        if line.lstrip(" ").startswith(("```", "~~~")):
            fence = not fence
            continue
        if not fence and _is_item(line):
            count += 1
    return count


def validate_body(body: str, name: str) -> None:
    """The stricter shape `handoff new` requires (InputRejected, nothing written)."""
    missing = [title for title in SECTIONS if notes.section(body, title) is None]
    if missing:
        raise InputRejected(
            f"{name}: missing the section(s) {', '.join('## ' + m for m in missing)}; nothing was written"
        )
    unfilled = [title for title in SECTIONS if placeholders.only_placeholders(notes.section(body, title) or "")]
    if unfilled:
        raise InputRejected(
            f"{name}: {', '.join('## ' + t for t in unfilled)} still hold(s) the template's placeholder text; "
            "write what is true now; nothing was written"
        )
    actions = count_items(notes.section(body, "Next actions") or "")
    low, high = tunables.HANDOFF_MIN_NEXT_ACTIONS, tunables.HANDOFF_MAX_NEXT_ACTIONS
    if not low <= actions <= high:
        raise InputRejected(
            f"{name}: '## Next actions' has {actions} list items; write {low} to {high}; nothing was written"
        )


def head_commit(repo: Path | None) -> str | None:
    """The checkout's HEAD commit, or None outside a repository or before the first commit."""
    if repo is None:
        return None

    try:
        proc = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--verify", "-q", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    value = proc.stdout.strip()
    if proc.returncode != 0 or len(value) not in (40, 64) or any(c not in "0123456789abcdef" for c in value):
        return None
    return value


def handoff_name(moment: dt.datetime, device: str, slug: str, attempt: int) -> str:
    stamp = moment.astimezone(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    suffix = "" if attempt <= 1 else f"-{attempt}"
    room = limits.NOTE_ID_MAX_CHARS - len(stamp) - len(device) - 2 - len(f"-{tunables.HANDOFF_NAME_ATTEMPTS}")
    slug = slug[: max(1, room)].strip("-") or "handoff"
    return f"{stamp}-{device}-{slug}{suffix}.md"


def new_handoff(
    ctx: WriteContext,
    title: str,
    body: str | None = None,
    *,
    commit: str | None = None,
    source_name: str = "the input",
) -> NewHandoff:
    """Write a new current handoff for `ctx.project` and mark its predecessor superseded."""
    project = ctx.project
    if not project:
        raise InputRejected("a handoff needs a project; connect this checkout with 'lifecycle init'")
    title = writer.clean_line(title, "title", tunables.TITLE_MAX_CHARS)
    session = writer.clean_line(ctx.session, "session", tunables.SESSION_ID_MAX_CHARS) if ctx.session else None
    input_start = 1
    if body is None:
        # The template's sections are placeholders; a handoff made of them would only tell the next
        # task that nothing is known, so it is refused like any body that is still the template.
        raise InputRejected(
            f"a handoff needs its sections written: pass {FIELD} FILE (or - for standard input) with "
            "## Goal and status, ## Completed work, ## Risks and decisions and ## Next actions; "
            "nothing was written",
            field="body",
        )
    parsed = notes.parse_note(body.encode("utf-8"), source_name, require_frontmatter=False)
    body, input_start = parsed.body, parsed.body_start_line
    validate_body(body, source_name)
    now = ctx.clock()
    slug = writer.slugify(title, "handoff")
    update: str | None = None
    with writer.transaction(ctx) as tx:
        chosen = select(read_all(ctx.vault), project).chosen
        for attempt in range(1, tunables.HANDOFF_NAME_ATTEMPTS + 1):
            name = handoff_name(now, ctx.device, slug, attempt)
            rel = f"{layout.HANDOFFS}/{name}"
            if os.path.lexists(ctx.vault / rel):
                continue
            new_id = id_for_name(name)
            meta: dict[str, object] = {"id": new_id, "type": "handoff", "status": "current", "title": title}
            meta.update({"project": project, "device": ctx.device})
            if session:
                meta["session"] = session
            meta["created"] = now
            if commit:
                meta["commit"] = commit
            if chosen is not None:
                meta["supersedes"] = chosen.id
            text = notes.compose(meta, body)
            first = notes.compose(meta, "").count("\n")  # the note line where the body begins
            if chosen is not None:
                update = _superseded_text(chosen, new_id)
                tx.check(chosen.rel, update, limits.LIFECYCLE_TEXT_CAP_BYTES)
            try:
                tx.create(
                    rel,
                    text,
                    op="handoff.new",
                    note_id=new_id,
                    cap=limits.HANDOFF_CAP_BYTES,
                    input_lines=(first, input_start),
                )
            except writer.Exists:
                continue
            break
        else:
            raise InputRejected(f"could not find a free handoff name after {tunables.HANDOFF_NAME_ATTEMPTS} attempts")
        if chosen is not None and update is not None:
            tx.replace(
                chosen.rel,
                update,
                op="handoff.supersede",
                note_id=chosen.id,
                cap=limits.LIFECYCLE_TEXT_CAP_BYTES,
                expect_sha256=writer.sha256_hex(chosen.data),
            )
    return NewHandoff(new_id, rel, "current", chosen.id if chosen else None, commit, session)


def _superseded_text(previous: Handoff, new_id: str) -> str:
    meta = dict(previous.note.meta)
    meta["status"] = "superseded"
    meta["superseded_by"] = new_id
    return notes.compose(meta, previous.note.body)


def is_handoff(vault_root: Path, handoff_id: str) -> bool:
    """True when `handoff_id` names a file of `20-state/handoffs/` (its lower-cased stem)."""
    stem = handoff_id.removesuffix(".md").lower()
    return any(id_for_name(rel.rpartition("/")[2]) == stem for rel, _data in read_all(vault_root))


def supersede(ctx: WriteContext, old_id: str, new_id: str) -> tuple[Handoff, Handoff]:
    """`lifecycle supersede OLD --by NEW` for two handoffs: OLD (a current one) is marked superseded by
    NEW, which stays as it is; what doctor asks for when a project has several current handoffs."""
    with writer.transaction(ctx) as tx:
        old, new = find(ctx.vault, old_id.lower()), find(ctx.vault, new_id.lower())
        if old.rel == new.rel:
            raise InputRejected("a handoff cannot supersede itself")
        if old.note.meta.get("status") != "current":
            raise InputRejected(f"{old_id} is not a current handoff (status {old.note.meta.get('status')})")
        if new.note.meta.get("project") != old.note.meta.get("project"):
            raise InputRejected(f"{new_id} is a handoff of another project than {old_id}")
        new_name = id_for_name(new.rel.rpartition("/")[2])
        tx.replace(
            old.rel,
            _superseded_text(old, new_name),
            op="handoff.supersede",
            note_id=str(old.note.meta.get("id") or ""),
            cap=limits.LIFECYCLE_TEXT_CAP_BYTES,
            expect_sha256=writer.sha256_hex(old.data),
        )
    return old, new
