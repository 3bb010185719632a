"""Handoffs: uniquely named notes that let a later task resume without rediscovering state.

"Latest" is always derived from the note set, never from a pointer file or a modification time: the
current handoff of a project is the newest syntactically valid `status: current` handoff by its
`created` time, ties broken by the later file name (names begin with the UTC time). Selection comes
before gating: when the chosen handoff is then rejected (a secret, over its cap) no handoff is shown,
and an older one is never used in its place, because an older plan would be silently wrong.

A handoff larger than the general 1 MiB lifecycle cap is never read whole: its frontmatter is read
from its head, so that when it is the newest current one it is still chosen, and then left out as too
large, rather than letting an older handoff stand in for it.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import NamedTuple

from continuity import ids, limits
from continuity.errors import InputRejected, NoteError
from continuity.gate.secrets import shown_value, withheld_name
from continuity.vault import access, layout, notes
from continuity.vault.conflicts import conflict_engine
from continuity.vault.notes import Note

SECTIONS = ("Goal and status", "Completed work", "Risks and decisions", "Next actions")
BRIEF_SECTIONS = ("Goal and status", "Next actions", "Risks and decisions")
# The brief leaves `Completed work` out to stay short; it says where that section is instead.
COMPLETED_ELSEWHERE = (
    "(Its `Completed work` section, with the evidence, is not in this brief: it is in the handoff's file, "
    "and `lifecycle handoff show {id}` prints it.)"
)
STATUSES = ("current", "superseded", "historical")


class Handoff(NamedTuple):
    rel: str
    note: Note
    created: dt.datetime
    size: int
    data: bytes

    @property
    def id(self) -> str:
        return str(self.note.meta["id"])


class Selection:
    """The handoff chosen for the brief, every valid current one of the project, and the unusable ones."""

    def __init__(self) -> None:
        self.chosen: Handoff | None = None
        self.current: list[Handoff] = []
        self.invalid: list[tuple[str, str]] = []  # (rel, message)


_NAME_STAMP = re.compile(r"^([0-9]{8}T[0-9]{6}Z)-")
_PROJECT_LINE = re.compile(rb"^project:[ \t]*[\"']?([^\"'\s]+)", re.M)


def _name_stamp(rel: str) -> str | None:
    match = _NAME_STAMP.match(rel.rsplit("/", 1)[-1])
    return match.group(1) if match else None


def newer_unparsed(selection: Selection, files: list[tuple[str, bytes | NoteError]], project: str) -> list[str]:
    """The handoff files that cannot be used, whose name's UTC timestamp is newer than the chosen
    handoff's (or any, when none was chosen), and that are this project's as far as can be told (a
    `project:` line naming it, or none to be found): the person may have meant one to be current."""
    bad = {rel for rel, _message in selection.invalid}
    chosen = selection.chosen
    floor = ""
    if chosen is not None:
        floor = _name_stamp(chosen.rel) or chosen.created.astimezone(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out: list[str] = []
    for rel, data in files:
        stamp = _name_stamp(rel)
        if rel not in bad or stamp is None or stamp <= floor or not isinstance(data, bytes):
            continue  # a link, a FIFO, an unreadable entry: not a text someone wrote (doctor names those)
        named = _PROJECT_LINE.search(data[:4096])
        if named is None or named.group(1).decode("utf-8", "replace") == project:
            out.append(rel)
    return out


def parse_handoff(data: bytes, rel: str) -> Handoff:
    """A handoff that is valid for loading: frontmatter fields present and at least one brief section."""
    return _checked(notes.parse_note(data, rel), rel, len(data), data, sections=True)


def _checked(note: Note, rel: str, size: int, data: bytes, *, sections: bool) -> Handoff:
    meta = note.meta
    if meta.get("type") != "handoff":
        raise NoteError(f"{rel}: 'type' must be 'handoff'", "invalid")
    if not ids.is_note_id(meta.get("id")):
        raise NoteError(f"{rel}: 'id' is missing or not of the form [a-z0-9][a-z0-9._-]*", "invalid")
    for key in ("status", "project", "device"):
        if not isinstance(meta.get(key), str) or not meta.get(key):
            raise NoteError(f"{rel}: '{key}' is missing", "invalid")
    created = notes.as_utc(meta.get("created"))
    if created is None:
        raise NoteError(f"{rel}: 'created' is missing or not a UTC time", "invalid")
    if sections and not any(notes.section(note.body, title) is not None for title in BRIEF_SECTIONS):
        raise NoteError(f"{rel}: none of the sections {', '.join(BRIEF_SECTIONS)} is present", "invalid")
    return Handoff(rel, note, created, size, data)


class Oversized(NoteError):
    """A handoff over the 1 MiB lifecycle cap: only its head was read, for its frontmatter."""

    def __init__(self, message: str, head: bytes, size: int) -> None:
        super().__init__(message, "too_large")
        self.head = head
        self.size = size


def _oversized(root: Path, rel: str, exc: NoteError) -> NoteError:
    head = access.read_head(root, rel, limits.FRONTMATTER_CAP_BYTES + 8)
    if head is None:
        return exc
    data, size = head
    return Oversized(str(exc), data, size)


def _parse_head(item: Oversized, rel: str) -> Handoff:
    """Selection needs only the frontmatter; the body of a file this large is never read."""
    cut = item.head.rfind(b"\n")
    text = notes.decode(item.head[: cut + 1], rel)
    front, _body, start = notes.split_frontmatter(text, rel)
    if front is None:
        raise NoteError(f"{rel}: no frontmatter block", "invalid")
    note = Note(notes.parse_frontmatter(front, rel), "", start, text)
    return _checked(note, rel, item.size, b"", sections=False)


def read_all(root: Path) -> list[tuple[str, bytes | NoteError]]:
    """Every handoff file's bytes (or why it could not be read), in name order.

    Sync-engine conflict copies are skipped: a copy carries the same id and `created` as its original,
    so it would tie with it and could win on its name; doctor names the copies instead.
    """
    listed = access.list_notes(root, layout.HANDOFFS)
    names = {rel.rsplit("/", 1)[1] for rel, _info in listed}
    out: list[tuple[str, bytes | NoteError]] = []
    for rel, _info in listed:
        if conflict_engine(rel.rsplit("/", 1)[1], names.__contains__):
            continue
        try:
            out.append((rel, access.read_capped(root, rel, limits.LIFECYCLE_TEXT_CAP_BYTES)))
        except NoteError as exc:
            out.append((rel, _oversized(root, rel, exc) if exc.reason == "too_large" else exc))
    return out


def select(files: list[tuple[str, bytes | NoteError]], project: str) -> Selection:
    result = Selection()
    for rel, data in files:
        if isinstance(data, NoteError) and not isinstance(data, Oversized):
            result.invalid.append((rel, str(data)))
            continue
        try:
            handoff = _parse_head(data, rel) if isinstance(data, Oversized) else parse_handoff(data, rel)
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
    completed = notes.section(handoff.note.body, "Completed work")
    if completed is not None and completed.strip():
        parts.append(COMPLETED_ELSEWHERE.format(id=id_for_name(handoff.rel.rsplit("/", 1)[-1])))
    return "\n\n".join(parts)


# ------------------------------------------------------------------------------------ reading


def id_for_name(name: str) -> str:
    """A handoff's id is its file name without `.md`, lower-cased."""
    return name.removesuffix(".md").lower()


class Listing:
    """Handoffs newest first, and the ones that cannot be loaded (rel, message)."""

    def __init__(self) -> None:
        self.handoffs: list[Handoff] = []
        self.invalid: list[tuple[str, str]] = []


def list_handoffs(vault_root: Path, project: str | None, *, statuses: tuple[str, ...] | None = None) -> Listing:
    """Valid handoffs (of `project` unless None, of `statuses` unless None), newest first."""
    result = Listing()
    for rel, data in read_all(vault_root):
        if isinstance(data, NoteError):
            result.invalid.append((rel, str(data)))
            continue
        try:
            item = parse_handoff(data, rel)
        except NoteError as exc:
            result.invalid.append((rel, str(exc)))
            continue
        meta = item.note.meta
        if project is not None and meta.get("project") != project:
            continue
        if statuses is not None and meta.get("status") not in statuses:
            continue
        result.handoffs.append(item)
    result.handoffs.sort(key=lambda h: (h.created, h.rel), reverse=True)
    return result


def current(vault_root: Path, project: str) -> Selection:
    """The same selection the startup brief makes (so `handoff current` and the brief agree)."""
    return select(read_all(vault_root), project)


def find(vault_root: Path, handoff_id: str) -> Handoff:
    """A handoff by its id (or its file name's lower-cased stem); exit 5 for unknown or invalid ids."""
    if not ids.is_note_id(handoff_id):
        raise InputRejected(f"{handoff_id!r} is not a valid id ([a-z0-9][a-z0-9._-]*)")
    matches: list[Handoff] = []
    problems: list[str] = []
    for rel, data in read_all(vault_root):
        stem_match = id_for_name(rel.rpartition("/")[2]) == handoff_id
        if isinstance(data, NoteError):
            if stem_match:
                problems.append(str(data))
            continue
        try:
            item = parse_handoff(data, rel)
        except NoteError as exc:
            if stem_match:
                problems.append(str(exc))
            continue
        if item.note.meta.get("id") == handoff_id or stem_match:
            matches.append(item)
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise InputRejected(f"handoff id {handoff_id} is ambiguous: {', '.join(m.rel for m in matches)}")
    if problems:
        raise InputRejected(problems[0])
    raise InputRejected(f"no handoff with id {handoff_id}")


def summary(item: Handoff) -> dict[str, object]:
    """The metadata of a handoff as JSON (never its body; a secret-like value or file name withheld)."""
    meta = item.note.meta

    def text(key: str) -> str | None:
        value = meta.get(key)
        return shown_value(value) if isinstance(value, str) and value else None

    named = withheld_name(item.rel)
    return {
        "id": item.id,
        "path": item.rel if named is None else named[0],
        "status": text("status"),
        "project": text("project"),
        "device": text("device"),
        "created": notes.format_utc(item.created),
        "title": text("title"),
        "session": text("session"),
        "commit": text("commit"),
        "supersedes": text("supersedes"),
        "superseded_by": text("superseded_by"),
    }
