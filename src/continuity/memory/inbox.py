"""What waits on the person, in one list: the review inbox (`lifecycle review`, `doctor`).

Five kinds of item, each with the actions `memory.resolve` carries out:

* `candidate` — a proposed memory in `20-state/candidates/` (from `note new` or an agent's
  `propose_note`): approve, edit, reject;
* `due` — an approved note past its `revalidate_by`: verify, supersede, archive;
* `conflict` — a sync-conflict copy beside its original (the two computers' versions of one note):
  keep this side (the copy), keep the other (the original), merge the two in the editor;
* `handoffs` — several current handoffs of this project, of which the brief loads only the newest:
  keep one, supersede the rest;
* `held` — a note that the gate or every sync holds back (a secret-like line, broken frontmatter, a
  file over its cap): open it in the editor.

Gathering only reads; it never takes the lock. Paths are vault-relative; a title is shown through
`shown_value`, so a pasted token never reaches a listing. Order: what blocks the brief first
(handoffs, held), then conflicts, due notes and candidates, each by path.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity import limits, tunables
from continuity.errors import NoteError
from continuity.gate.secrets import scan_text, shown_value
from continuity.memory import handoff, revalidation
from continuity.vault import access, conflicts, layout, notes

KINDS = ("handoffs", "held", "conflict", "due", "candidate")
ACTIONS = {
    "candidate": ("approve", "edit", "reject"),
    "due": ("verify", "supersede", "archive"),
    "conflict": ("keep-this", "keep-other", "merge"),
    "handoffs": ("keep",),
    "held": ("open",),
}
# The folders whose notes `held` looks at: what recall, review and the brief read.
HELD_FOLDERS = (layout.CANDIDATES, *layout.APPROVED_FOLDERS, layout.HANDOFFS)
# Where conflict copies are looked for: the folders people and agents write.
CONFLICT_FOLDERS = (layout.SYSTEM, layout.PROJECTS, layout.STATE, layout.MEMORY, layout.DEVICES)


@dataclass(frozen=True)
class Item:
    kind: str
    path: str  # vault-relative: the note, the conflict copy, or the newest current handoff
    id: str | None
    title: str
    detail: str
    other: tuple[str, ...] = ()  # conflict: the original; handoffs: every current one, oldest first

    @property
    def actions(self) -> tuple[str, ...]:
        return ACTIONS[self.kind]

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.path,
            "id": self.id,
            "title": self.title,
            "detail": self.detail,
            "other": list(self.other),
            "actions": list(self.actions),
        }


def _title(meta: dict[str, Any], fallback: str) -> str:
    title = meta.get("title")
    return shown_value(title) if isinstance(title, str) and title.strip() else fallback


def candidates(vault: Path) -> list[Item]:
    out: list[Item] = []
    for rel, _info in access.list_notes(vault, layout.CANDIDATES):
        try:
            note = notes.parse_note(access.read_capped(vault, rel, limits.LIFECYCLE_TEXT_CAP_BYTES), rel)
        except NoteError:
            continue  # a broken one is a `held` item
        if note.meta.get("status") != "candidate" or not isinstance(note.meta.get("id"), str):
            continue
        meta = note.meta
        origin = meta.get("provenance")
        origin = origin if isinstance(origin, dict) else {}
        device = origin.get("device") or meta.get("device") or "an unknown device"
        created = meta.get("created")
        moment = created if isinstance(created, dt.datetime) else notes.as_utc(str(created or ""))
        when = f"at {notes.format_utc(moment)}" if moment is not None else "at an unknown time"
        detail = f"a proposed {meta.get('type')}, from {device} {when}"
        out.append(Item("candidate", rel, str(meta["id"]), _title(meta, str(meta["id"])), detail))
    return out


def due(vault: Path, now: dt.datetime | None) -> list[Item]:
    found, _invalid = revalidation.revalidate(vault, now)
    out = []
    for item in found:
        when = f"was due {item.revalidate_by.isoformat()}" if item.revalidate_by else "has no revalidate_by date"
        out.append(Item("due", item.rel, item.id, item.title or item.id, f"an approved {item.kind} that {when}"))
    return out


def original_of(copy: str) -> str | None:
    """The note a sync-conflict copy (`name.sync-conflict-<date>-<time>-<id>.md`) was made from."""
    folder, slash, name = copy.rpartition("/")
    stem, marker, rest = name.partition(".sync-conflict-")
    if not marker:
        return None
    ext = rest.partition(".")[2]
    return f"{folder}{slash}{stem}{'.' + ext if ext else ''}"


def conflict_copies(vault: Path) -> list[Item]:
    out: list[Item] = []
    for top in CONFLICT_FOLDERS:
        for folder, dirs, files in os.walk(vault / top):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(folder, d)))
            present = set(files)
            for name in sorted(files):
                if conflicts.conflict_engine(name, present.__contains__) is None:
                    continue
                rel = Path(folder, name).relative_to(vault).as_posix()
                original = original_of(rel)
                if original is None or not (vault / original).is_file():
                    continue  # another engine's copy, or one whose original is gone: doctor names those
                detail = f"two computers changed {original}: this side is the copy, the other is in place"
                out.append(Item("conflict", rel, None, original, detail, (original,)))
    return out


def several_current(vault: Path, project: str | None) -> list[Item]:
    if not project:
        return []
    selection = handoff.current(vault, project)
    if len(selection.current) < 2 or selection.chosen is None:
        return []
    rels = tuple(h.rel for h in selection.current)
    detail = f"{len(rels)} current handoffs of project {project}; the brief loads only the newest"
    return [Item("handoffs", selection.chosen.rel, None, f"handoffs of {project}", detail, rels)]


def held(vault: Path, extra: tuple[tuple[str, str], ...] = ()) -> list[Item]:
    """Notes the gate leaves out (from the folders of `HELD_FOLDERS`), and `extra` (rel, why) from sync."""
    out: dict[str, Item] = {}
    for folder in HELD_FOLDERS:
        for rel, _info in access.list_notes(vault, folder):
            if len(out) >= tunables.DOCTOR_NOTE_CHECK_MAX_FILES:
                break
            why = _why_held(vault, rel)
            if why:
                out[rel] = Item("held", rel, None, rel, why)
    for rel, why in extra:
        out.setdefault(rel, Item("held", rel, None, rel, why))
    return list(out.values())


def _why_held(vault: Path, rel: str) -> str | None:
    try:
        data = access.read_capped(vault, rel, tunables.RECALL_NOTE_CAP_BYTES)
        text = data.decode("utf-8")
        notes.parse_note(data, rel)
    except NoteError as exc:
        return None if exc.reason in ("missing", "link") else f"left out: {exc}"
    except UnicodeDecodeError:
        return "left out: it is not valid UTF-8"
    found = scan_text(text)
    if found:
        return f"left out: line {found[0].line} looks like a secret ({found[0].detector})"
    return None


def gather(
    vault: Path,
    project: str | None,
    now: dt.datetime | None = None,
    sync_held: tuple[tuple[str, str], ...] = (),
) -> list[Item]:
    """Everything that waits on the person, in the order of the module docstring."""
    items = [
        *several_current(vault, project),
        *held(vault, sync_held),
        *conflict_copies(vault),
        *due(vault, now),
        *candidates(vault),
    ]
    seen: set[str] = set()
    out = []
    for item in items:
        if item.path not in seen or item.kind == "handoffs":
            seen.add(item.path)
            out.append(item)
    return out


def count_line(items: list[Item]) -> str:
    """`2 candidates, 1 conflict copy` (what doctor says before naming `lifecycle review`)."""
    counts = {kind: sum(1 for item in items if item.kind == kind) for kind in KINDS}
    return ", ".join(f"{n} {WORDS[kind][n != 1]}" for kind, n in counts.items() if n)


WORDS = {
    "candidate": ("candidate", "candidates"),
    "due": ("note due for revalidation", "notes due for revalidation"),
    "conflict": ("sync-conflict copy", "sync-conflict copies"),
    "handoffs": ("set of several current handoffs", "sets of several current handoffs"),
    "held": ("held-back note", "held-back notes"),
}
