"""Periodic revalidation: which approved notes are past their `revalidate_by` date.

Read-only and without the lock: it only lists and reads the approved folders; `lifecycle revalidate`
lists what is due.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity import ids, limits
from continuity.errors import NoteError
from continuity.memory.lookup import Found
from continuity.vault import access, layout, notes


@dataclass(frozen=True)
class Due:
    id: str
    rel: str
    kind: str | None
    title: str | None
    revalidate_by: dt.date | None  # None: the note has no usable date, which is itself overdue

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.rel,
            "type": self.kind,
            "title": self.title,
            "revalidate_by": self.revalidate_by.isoformat() if self.revalidate_by else None,
        }


def revalidate(vault_root: Path, now: dt.datetime | None = None) -> tuple[list[Due], list[tuple[str, str]]]:
    """Approved notes whose `revalidate_by` is past (or missing); read-only, no lock. (due, invalid)."""
    today = (now if now is not None else dt.datetime.now(dt.timezone.utc)).astimezone(dt.timezone.utc).date()
    due: list[Due] = []
    invalid: list[tuple[str, str]] = []
    for folder in layout.APPROVED_FOLDERS:
        for rel, _info in access.list_notes(vault_root, folder):
            try:
                data = access.read_capped(vault_root, rel, limits.LIFECYCLE_TEXT_CAP_BYTES)
                note = notes.parse_note(data, rel)
            except NoteError as exc:
                invalid.append((rel, str(exc)))
                continue
            found = Found(rel, note, data)
            if note.meta.get("status") != "approved" or not ids.is_note_id(note.meta.get("id")):
                continue
            when = notes.as_date(note.meta.get("revalidate_by"))
            if when is None or when < today:
                kind = found.text("type")
                due.append(Due(found.id, rel, kind, found.text("title"), when))
    due.sort(key=lambda item: (item.revalidate_by or dt.date.min, item.rel))
    return due, invalid
