"""Note ids in the improvement loop: how an id a person typed finds its note, and how a new note gets one.

Ids typed by a person are checked with `notes.is_note_id` and never joined into a path: notes are
found by reading the known folders and comparing their frontmatter `id` (the name `<id>.md` is only a
fast first guess). Candidate ids are `cand-<kind>-<slug>`, approved ids `<kind>-<slug>`, with a counter
when the name is taken (archived names included, so an id never comes back to life).

It only reads: a caller that goes on to change a note looks it up inside its `writer.transaction`.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity import limits, notes, vault
from continuity.errors import InputRejected, NoteError
from continuity.notes import Note


@dataclass(frozen=True)
class Found:
    """A note as read: its vault path, the parsed note, and the exact bytes (for `expect_sha256`)."""

    rel: str
    note: Note
    data: bytes

    @property
    def id(self) -> str:
        return str(self.note.meta["id"])

    @property
    def meta(self) -> dict[str, Any]:
        return self.note.meta

    def text(self, key: str) -> str | None:
        value = self.note.meta.get(key)
        return value if isinstance(value, str) and value else None


def read_note(vault_root: Path, rel: str) -> Found | None:
    """The note at `rel`, or None when it is missing, unreadable, a link, too large or malformed."""
    try:
        data = vault.read_capped(vault_root, rel, limits.LIFECYCLE_TEXT_CAP_BYTES)
        return Found(rel, notes.parse_note(data, rel), data)
    except NoteError:
        return None


def check_id(note_id: str) -> str:
    """`note_id` if it is a valid id (so the guess `<folder>/<id>.md` cannot leave its folder), else exit 5."""
    if not notes.is_note_id(note_id):
        raise InputRejected(
            f"{note_id!r} is not a valid note id ([a-z0-9][a-z0-9._-]*, at most {limits.NOTE_ID_MAX_CHARS} characters)"
        )
    return note_id


def find_note(vault_root: Path, note_id: str, folders: tuple[str, ...]) -> Found:
    """The one note in `folders` whose frontmatter id is `note_id`; exit 5 when none or several."""
    check_id(note_id)
    for folder in folders:
        guess = read_note(vault_root, f"{folder}/{note_id}.md")
        if guess is not None and guess.meta.get("id") == note_id:
            return guess
    matches: list[Found] = []
    needle = note_id.encode("utf-8")
    for folder in folders:
        for rel, info in vault.list_notes(vault_root, folder):
            if not stat.S_ISREG(info.st_mode) or info.st_size > limits.LIFECYCLE_TEXT_CAP_BYTES:
                continue
            found = read_note(vault_root, rel)
            if found is not None and needle in found.data and found.meta.get("id") == note_id:
                matches.append(found)
    if len(matches) > 1:
        raise InputRejected(f"id {note_id} is ambiguous: {', '.join(m.rel for m in matches)}")
    if not matches:
        raise InputRejected(f"no note with id {note_id} in {', '.join(folders)}")
    return matches[0]


def free_id(vault_root: Path, base: str, folder: str) -> str:
    """`base`, or `base-2`, `base-3`…: the first id whose file exists neither in `folder` nor archived."""
    for attempt in range(1, limits.HANDOFF_NAME_ATTEMPTS + 1):
        candidate = base if attempt == 1 else f"{base}-{attempt}"
        paths = (f"{folder}/{candidate}.md", f"{vault.ARCHIVE}/{folder}/{candidate}.md")
        if not any(os.path.lexists(vault_root / rel) for rel in paths):
            return candidate
    raise InputRejected(f"could not find a free id for {base} after {limits.HANDOFF_NAME_ATTEMPTS} attempts")
