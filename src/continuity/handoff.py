"""Handoffs: uniquely named notes that let a later task resume without rediscovering state.

"Latest" is always derived from the note set, never from a pointer file or a modification time: the
current handoff of a project is the newest syntactically valid `status: current` handoff by its
`created` time, ties broken by the later file name (names begin with the UTC time). Selection comes
before gating: when the chosen handoff is then rejected (a secret, over its cap) no handoff is shown,
and an older one is never used in its place, because an older plan would be silently wrong.

A handoff larger than the general 1 MiB lifecycle cap is not valid lifecycle text, so it is reported
as invalid and never considered at all.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from continuity import limits, notes, vault
from continuity.errors import NoteError
from continuity.notes import Note

SECTIONS = ("Goal and status", "Completed work", "Risks and decisions", "Next actions")
BRIEF_SECTIONS = ("Goal and status", "Next actions", "Risks and decisions")
STATUSES = ("current", "superseded", "historical")


@dataclass(frozen=True)
class Handoff:
    rel: str
    note: Note
    created: dt.datetime
    size: int
    data: bytes

    @property
    def id(self) -> str:
        return str(self.note.meta["id"])


@dataclass
class Selection:
    chosen: Handoff | None = None
    current: list[Handoff] = field(default_factory=list)  # every valid current one of the project
    invalid: list[tuple[str, str]] = field(default_factory=list)  # (rel, message)


def parse_handoff(data: bytes, rel: str) -> Handoff:
    """A handoff that is valid for loading: frontmatter fields present and at least one brief section."""
    note = notes.parse_note(data, rel)
    meta = note.meta
    if meta.get("type") != "handoff":
        raise NoteError(f"{rel}: 'type' must be 'handoff'", "invalid")
    if not notes.is_note_id(meta.get("id")):
        raise NoteError(f"{rel}: 'id' is missing or not of the form [a-z0-9][a-z0-9._-]*", "invalid")
    for key in ("status", "project", "device"):
        if not isinstance(meta.get(key), str) or not meta.get(key):
            raise NoteError(f"{rel}: '{key}' is missing", "invalid")
    created = notes.as_utc(meta.get("created"))
    if created is None:
        raise NoteError(f"{rel}: 'created' is missing or not a UTC time", "invalid")
    if not any(notes.section(note.body, title) is not None for title in BRIEF_SECTIONS):
        raise NoteError(f"{rel}: none of the sections {', '.join(BRIEF_SECTIONS)} is present", "invalid")
    return Handoff(rel, note, created, len(data), data)


def read_all(root: Path) -> list[tuple[str, bytes | NoteError]]:
    """Every handoff file's bytes (or why it could not be read), in name order."""
    out: list[tuple[str, bytes | NoteError]] = []
    for rel, _info in vault.list_notes(root, vault.HANDOFFS):
        try:
            out.append((rel, vault.read_capped(root, rel, limits.LIFECYCLE_TEXT_CAP_BYTES)))
        except NoteError as exc:
            out.append((rel, exc))
    return out


def select(files: list[tuple[str, bytes | NoteError]], project: str) -> Selection:
    result = Selection()
    for rel, data in files:
        if isinstance(data, NoteError):
            result.invalid.append((rel, str(data)))
            continue
        try:
            handoff = parse_handoff(data, rel)
        except NoteError as exc:
            result.invalid.append((rel, str(exc)))
            continue
        meta = handoff.note.meta
        if meta.get("project") == project and meta.get("status") == "current":
            result.current.append(handoff)
    result.current.sort(key=lambda h: (h.created, h.rel))
    if result.current:
        result.chosen = result.current[-1]
    return result


def brief_text(handoff: Handoff) -> str:
    """The compact part: goal and status, next actions, risks and decisions; completed work stays warm."""
    meta = handoff.note.meta
    facts = [f"created {notes.format_utc(handoff.created)}", f"device {meta.get('device')}"]
    if isinstance(meta.get("commit"), str) and meta["commit"]:
        facts.append(f"commit {meta['commit']}")
    parts = ["Handoff " + str(meta.get("id")) + " (" + ", ".join(facts) + ")."]
    for title in BRIEF_SECTIONS:
        text = notes.section(handoff.note.body, title)
        if text is not None and text.strip():
            parts.append(f"## {title}\n{text.strip()}")
    return "\n\n".join(parts)
