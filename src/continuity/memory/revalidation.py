"""Periodic revalidation: which approved notes are past their `revalidate_by` date, and re-verifying one.

`revalidate` is read-only and takes no lock: it only lists and reads the approved folders.

`verify` is the person's act of saying "I checked this note and it still holds": the note gets
today's `verified` date and a new `revalidate_by`, today plus the vault's interval. The interval is
`revalidate_after_days` in the frontmatter of `00-system/MEMORY_POLICY.md` (a whole number of days,
1 to `REVALIDATE_MAX_DAYS`), and `REVALIDATE_AFTER_DAYS` when the policy does not set it; approval
uses the same interval. A policy that cannot be read or sets a bad value refuses the write (exit 5)
rather than guessing. Only an approved, unsuperseded note in `30-memory/` can be verified: a
candidate (approved or not), a superseded or an archived note is refused with one line. The write
goes through `writer.transaction` (local lock, lease refusal, secret gate, journal line `note.verify`,
atomic replace of exactly the bytes that were read); a note already verified today with the same
due date is left as it is, without a journal line.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity import ids, limits, tunables
from continuity.errors import InputRejected, NoteError
from continuity.gate.secrets import redact, shown_path, shown_value
from continuity.memory.lookup import Found, find_note
from continuity.store import writer
from continuity.store.writer import WriteContext
from continuity.vault import access, layout, notes

POLICY_KEY = "revalidate_after_days"


@dataclass(frozen=True)
class Due:
    id: str
    rel: str
    kind: str | None
    title: str | None
    revalidate_by: dt.date | None  # None: the note has no usable date, which is itself overdue
    verified: dt.date | None = None
    overdue_days: int | None = None  # days past `revalidate_by`; None without a date

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.rel,
            "type": self.kind,
            "title": self.title,
            "verified": self.verified.isoformat() if self.verified else None,
            "revalidate_by": self.revalidate_by.isoformat() if self.revalidate_by else None,
            "overdue_days": self.overdue_days,
        }


def today_of(now: dt.datetime | None) -> dt.date:
    return (now if now is not None else dt.datetime.now(dt.timezone.utc)).astimezone(dt.timezone.utc).date()


def revalidate(vault_root: Path, now: dt.datetime | None = None) -> tuple[list[Due], list[tuple[str, str]]]:
    """Approved notes whose `revalidate_by` is past (or missing); read-only, no lock. (due, invalid)."""
    today = today_of(now)
    due: list[Due] = []
    invalid: list[tuple[str, str]] = []
    for folder in layout.APPROVED_FOLDERS:
        for rel, _info in access.list_notes(vault_root, folder):
            try:
                data = access.read_capped(vault_root, rel, limits.LIFECYCLE_TEXT_CAP_BYTES)
                note = notes.parse_note(data, rel)
            except NoteError as exc:
                invalid.append((shown_path(rel), redact(str(exc))))
                continue
            found = Found(rel, note, data)
            if note.meta.get("status") != "approved" or not ids.is_note_id(note.meta.get("id")):
                continue
            when = notes.as_date(note.meta.get("revalidate_by"))
            if when is None or when < today:
                overdue = None if when is None else (today - when).days
                verified = notes.as_date(note.meta.get("verified"))
                title = found.text("title")
                shown = None if title is None else shown_value(title)  # a pasted token never reaches a listing
                # and neither does a token pasted as the file's name
                due.append(Due(found.id, shown_path(rel), found.text("type"), shown, when, verified, overdue))
    due.sort(key=lambda item: (item.revalidate_by or dt.date.min, item.rel))
    return due, invalid


def interval_days(vault_root: Path) -> int:
    """The vault's revalidation interval in days (see the module docstring); exit 5 when it is unusable."""
    try:
        data = access.read_capped(vault_root, layout.MEMORY_POLICY, limits.LIFECYCLE_TEXT_CAP_BYTES)
    except NoteError as exc:
        if exc.reason == "missing":
            return tunables.REVALIDATE_AFTER_DAYS
        raise InputRejected(f"{exc}; the revalidation interval cannot be read (nothing was changed)") from None
    try:
        meta = notes.parse_note(data, layout.MEMORY_POLICY, require_frontmatter=False).meta
    except NoteError as exc:
        raise InputRejected(f"{exc}; the revalidation interval cannot be read (nothing was changed)") from None
    value = meta.get(POLICY_KEY, tunables.REVALIDATE_AFTER_DAYS)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= tunables.REVALIDATE_MAX_DAYS:
        raise InputRejected(
            f"{layout.MEMORY_POLICY}: {POLICY_KEY} must be a whole number of days from 1 to "
            f"{tunables.REVALIDATE_MAX_DAYS}; correct it, then run this again (nothing was changed)"
        )
    return value


@dataclass(frozen=True)
class Verified:
    id: str
    rel: str
    verified: dt.date
    revalidate_by: dt.date
    previous_revalidate_by: dt.date | None
    interval_days: int
    changed: bool

    def to_json(self) -> dict[str, Any]:
        previous = self.previous_revalidate_by
        return {
            "version": 1,
            "id": self.id,
            "path": self.rel,
            "verified": self.verified.isoformat(),
            "revalidate_by": self.revalidate_by.isoformat(),
            "previous_revalidate_by": previous.isoformat() if previous else None,
            "interval_days": self.interval_days,
            "changed": self.changed,
        }


def verifiable(vault_root: Path, note_id: str) -> Found:
    """The approved note `note_id`, or exit 5 with one line saying why it cannot be re-verified."""
    archived = f"{layout.ARCHIVE}/{layout.CANDIDATES}"  # where an approved candidate went
    found = find_note(vault_root, note_id, (*layout.APPROVED_FOLDERS, layout.CANDIDATES, archived))
    status = found.meta.get("status")
    if found.rel.startswith((layout.CANDIDATES + "/", archived + "/")):
        approved_as = found.text("approved_as")
        hint = f"verify the approved note {approved_as}" if approved_as else "a person approves it first"
        raise InputRejected(f"{note_id} is a candidate (status {status}), not an approved note; {hint}")
    if status != "approved" or found.meta.get("superseded_by"):
        later = found.text("superseded_by")
        detail = f", superseded by {later}" if later else ""
        raise InputRejected(
            f"{note_id} is not an approved note (status {status}{detail}); only approved notes are verified"
        )
    return found


def verify(ctx: WriteContext, note_id: str) -> Verified:
    """The person's act: mark an approved note re-verified today, due again after the policy's interval."""
    today = ctx.clock().date()
    days = interval_days(ctx.vault)
    due = today + dt.timedelta(days=days)
    with writer.transaction(ctx) as tx:
        found = verifiable(ctx.vault, note_id)
        previous = notes.as_date(found.meta.get("revalidate_by"))
        if notes.as_date(found.meta.get("verified")) == today and previous == due:
            return Verified(found.id, found.rel, today, due, previous, days, False)
        meta = dict(found.meta)
        meta.update({"verified": today, "revalidate_by": due})
        tx.replace(
            found.rel,
            notes.compose(meta, found.note.body),
            op="note.verify",
            note_id=found.id,
            cap=tunables.RECALL_NOTE_CAP_BYTES,
            expect_sha256=writer.sha256_hex(found.data),
        )
    return Verified(found.id, found.rel, today, due, previous, days, True)
