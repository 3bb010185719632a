"""The review inbox's actions on conflict copies and edited notes (`lifecycle review`).

Approving, superseding, verifying, archiving and choosing one of several current handoffs are the
loop's own operations (`review`, `revalidation`, `handoff_write`); this module adds what only the
inbox does, each through one `writer.transaction` (local lock, lease refusal, secret gate, journal,
atomic writes) and each refused when a file changed since it was shown:

* **a conflict copy** (`name.sync-conflict-….md` beside `name.md`): *keep this side* puts the copy's
  text in place of the original, *keep the other* leaves the original, and *merge* puts the text the
  person merged in place. In every case the side that was not kept (or, after a merge, the copy) is
  archived under `90-archive/` with the reason, and the copy is removed: nothing is deleted outright;
* **a note written in the editor** (a candidate edited before approval, a held-back note opened to be
  fixed): the saved text replaces the note when it passes the gate.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

from continuity import limits, tunables
from continuity.errors import InputRejected, NoteError
from continuity.store import writer
from continuity.store.writer import WriteContext
from continuity.vault import access, layout, notes, registry

# The line the merge file holds between the two sides; the person removes it with what they drop.
MERGE_MARK = "=== lifecycle review: this computer's side follows; merge it above, then delete this line and below ==="
KEPT_OTHER = "sync conflict: the other computer's version was kept"
KEPT_THIS = "sync conflict: this computer's version was kept"
MERGED = "sync conflict: the two versions were merged into the original"


def cap_for(rel: str) -> int:
    """The cap a kept or edited note is written under.

    A note in a source's folder (a handoff) takes that source's cap. A profile (SOUL.md, a DEVICE.md)
    takes the lifecycle cap here, as it always has: its own cap is what `lifecycle edit` applies, and a
    kept side over it is still named by doctor and left out of the brief rather than refused here.
    """
    source = registry.holding(rel)
    if source is not None and source.folder:
        return source.cap_bytes
    if rel.startswith((layout.CANDIDATES + "/", layout.MEMORY + "/")):
        return tunables.RECALL_NOTE_CAP_BYTES
    return limits.LIFECYCLE_TEXT_CAP_BYTES


def read_text(vault: Path, rel: str) -> tuple[str, bytes]:
    data = access.read_capped(vault, rel, limits.LIFECYCLE_TEXT_CAP_BYTES)
    try:
        return data.decode("utf-8"), data
    except UnicodeDecodeError:
        raise InputRejected(f"{rel} is not valid UTF-8; fix it in an editor first") from None


def merge_file_text(vault: Path, copy: str, original: str) -> str:
    """What the person merges in the editor: the original's text, the mark, then this computer's side."""
    return read_text(vault, original)[0].rstrip("\n") + f"\n{MERGE_MARK}\n" + read_text(vault, copy)[0]


def _archived_text(text: str, rel: str, reason: str, now: dt.datetime) -> str:
    """`text` with `archived` and `archived_reason` in its frontmatter (a block is added when it has none)."""
    meta: dict[str, Any]
    try:
        note = notes.parse_note(text.encode("utf-8"), rel)
        meta, body = dict(note.meta), note.body
    except NoteError:
        meta, body = {}, text
    meta.update({"archived": now, "archived_reason": reason})
    return notes.compose(meta, body)


def _free_archive_rel(vault: Path, rel: str, now: dt.datetime) -> str:
    target = f"{layout.ARCHIVE}/{rel}"
    if not os.path.lexists(vault / target):
        return target
    stamped = f"{target.removesuffix('.md')}.{now.astimezone(dt.timezone.utc):%Y%m%dT%H%M%SZ}.md"
    if os.path.lexists(vault / stamped):
        raise writer.Exists(f"{stamped} already exists; refusing to overwrite it")
    return stamped


def settle_conflict(ctx: WriteContext, copy: str, original: str, choice: str, merged: str | None = None) -> str:
    """Resolve one conflict copy (`keep-this`, `keep-other` or `merge`); the archived side's path."""
    now = ctx.clock()
    with writer.transaction(ctx) as tx:
        copy_text, copy_data = read_text(ctx.vault, copy)
        original_text, original_data = read_text(ctx.vault, original)
        if choice == "keep-this":
            dropped, dropped_rel, reason, kept = original_text, original, KEPT_THIS, copy_text
        elif choice == "keep-other":
            dropped, dropped_rel, reason, kept = copy_text, copy, KEPT_OTHER, original_text
        elif choice == "merge" and merged is not None:
            if MERGE_MARK in merged:
                raise InputRejected("the merge mark is still in the text; nothing was written")
            dropped, dropped_rel, reason, kept = copy_text, copy, MERGED, merged
        else:
            raise InputRejected(f"unknown choice {choice!r} for a conflict copy")
        archived = _free_archive_rel(ctx.vault, dropped_rel, now)
        archived_text = _archived_text(dropped, dropped_rel, reason, now)
        # Every check before the first write: a refusal leaves both sides exactly as they were.
        tx.check(archived, archived_text, limits.LIFECYCLE_TEXT_CAP_BYTES)
        if kept != original_text:
            tx.check(original, kept, cap_for(original))
        tx.expect(original, writer.sha256_hex(original_data))
        tx.expect(copy, writer.sha256_hex(copy_data))
        tx.create(archived, archived_text, op="conflict.archive", note_id=None, cap=limits.LIFECYCLE_TEXT_CAP_BYTES)
        if kept != original_text:
            tx.replace(
                original,
                kept,
                op="conflict.keep",
                note_id=None,
                cap=cap_for(original),
                expect_sha256=writer.sha256_hex(original_data),
            )
        tx.remove(copy, op="conflict.resolve", note_id=None)
    return archived


def write_edited(ctx: WriteContext, rel: str, base: bytes, text: str) -> None:
    """Put the text the person saved in place of `rel`, unless `rel` changed since it was opened."""
    with writer.transaction(ctx) as tx:
        tx.replace(
            rel,
            text,
            op="note.edit",
            note_id=None,
            cap=cap_for(rel),
            expect_sha256=writer.sha256_hex(base),
        )
