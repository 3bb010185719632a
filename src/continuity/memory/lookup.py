"""Note ids in the improvement loop: how an id a person typed finds its note, and how a new note gets one.

Ids typed by a person are checked with `notes.is_note_id` and never joined into a path: notes are
found by reading the known folders and comparing their frontmatter `id`. Every folder is read whole,
since a note renamed by hand (Obsidian renames files, not ids) or a copy in another folder carries
the same id under another path, and a second note with the id must make the lookup ambiguous, not
quietly pick the first. The raw bytes are searched for the id before any YAML is parsed, so the walk
costs one capped read per file and one parse per note that mentions the id.

A file named `<id>.md` that cannot be read as a note (a link, not a regular file, over its cap,
broken frontmatter, another id) is named in the "no note" error, so the person learns what is there.

Candidate ids are `cand-<kind>-<slug>`, approved ids `<kind>-<slug>`, with a counter when the id is
taken: by a file of that name (archived ones included, so an id never comes back to life) or by the
frontmatter id of a note under another name. A note's `supersedes` holds one id or a list of them
(`superseded_ids`).

It only reads: a caller that goes on to change a note looks it up inside its `writer.transaction`.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity import ids, limits, safeio, tunables
from continuity.errors import InputRejected, NoteError
from continuity.vault import access, layout, notes
from continuity.vault.notes import Note


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
        data = access.read_capped(vault_root, rel, limits.LIFECYCLE_TEXT_CAP_BYTES)
        return Found(rel, notes.parse_note(data, rel), data)
    except NoteError:
        return None


def check_id(note_id: str) -> str:
    """`note_id` if it is a valid id (so the guess `<folder>/<id>.md` cannot leave its folder), else exit 5."""
    if not ids.is_note_id(note_id):
        raise InputRejected(
            f"{note_id!r} is not a valid note id ([a-z0-9][a-z0-9._-]*, at most {limits.NOTE_ID_MAX_CHARS} characters)"
        )
    return note_id


# A walk opens each folder once and each file relative to it, so the kernel resolves one name per file
# rather than the whole path, as recall's walk does; where the platform cannot, it reads full paths.
_BY_FD = os.scandir in os.supports_fd and os.open in os.supports_dir_fd
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_CAP = limits.LIFECYCLE_TEXT_CAP_BYTES


def _link(rel: str) -> str:
    return f"{rel} exists but is a symbolic link (links in the vault are never followed): put the note itself there"


def _not_regular(rel: str) -> str:
    return f"{rel} exists but is not a regular file"


def _too_large(rel: str, size: int) -> str:
    return f"{rel} exists but is {size:,} bytes, over its cap of {_CAP:,}: shorten or split it"


def _folder_files(vault_root: Path, folder: str) -> Iterator[tuple[str, bytes | str]]:
    """Each `*.md` entry of a vault folder by name: its bytes, or why it cannot be read as a note.

    The rules of `access.read_capped`: no link followed at any component, never blocking on a FIFO, the
    size checked before reading and at most cap + 1 bytes read. Hidden names (temporary files) are
    skipped, as `access.list_notes` does; a missing or linked folder is empty.
    """
    if not _BY_FD:
        yield from _folder_files_by_path(vault_root, folder)
        return
    try:
        dir_fd = safeio.open_nofollow(str(vault_root), folder)
    except OSError:
        return
    try:
        if not stat.S_ISDIR(os.fstat(dir_fd).st_mode):
            return
        with os.scandir(dir_fd) as listing:
            names = sorted(e.name for e in listing if e.name.endswith(".md") and not e.name.startswith("."))
        for name in names:
            rel = f"{folder}/{name}"
            try:
                fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EMLINK):
                    yield rel, _link(rel)
                elif exc.errno != errno.ENOENT:
                    yield rel, f"{rel} exists but cannot be opened ({exc.strerror})"
                continue
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode):
                    yield rel, _not_regular(rel)
                elif info.st_size > _CAP:
                    yield rel, _too_large(rel, info.st_size)
                else:
                    data = safeio.read_fd_capped(fd, _CAP)
                    yield rel, data if len(data) <= _CAP else _too_large(rel, len(data))
            except OSError as exc:
                yield rel, f"{rel} exists but cannot be read ({exc.strerror})"
            finally:
                os.close(fd)
    finally:
        os.close(dir_fd)


def _folder_files_by_path(vault_root: Path, folder: str) -> Iterator[tuple[str, bytes | str]]:
    """`_folder_files` through `access.list_notes` and `access.read_capped`: a full path per file."""
    for rel, info in access.list_notes(vault_root, folder):
        if stat.S_ISLNK(info.st_mode):
            yield rel, _link(rel)
        elif not stat.S_ISREG(info.st_mode):
            yield rel, _not_regular(rel)
        elif info.st_size > _CAP:
            yield rel, _too_large(rel, info.st_size)
        else:
            try:
                yield rel, access.read_capped(vault_root, rel, _CAP)
            except NoteError as exc:
                yield rel, str(exc)


def _walk(
    vault_root: Path, folders: tuple[str, ...], text: str, name: str | None = None
) -> tuple[list[Found], list[str]]:
    """The readable notes in `folders` whose bytes contain `text`, and why any file called `name` is not one.

    With `name` (a lookup by id), `text` must stand as a whole id, so `fact-x` does not parse every
    `fact-x-2` and every note that links to it. A file called `name` is always parsed, so that one
    with another id (or none) is described too.
    """
    needle = text.encode("utf-8")
    whole = re.compile(rb"(?<![a-z0-9._-])" + re.escape(needle) + rb"(?![a-z0-9._-])") if name else None
    found: list[Found] = []
    problems: list[str] = []
    for folder in folders:
        for rel, data in _folder_files(vault_root, folder):
            named = name is not None and rel.rpartition("/")[2] == name
            if isinstance(data, str):
                if named:
                    problems.append(data)
                continue
            if not named and (needle not in data or (whole is not None and not whole.search(data))):
                continue
            try:
                note = notes.parse_note(data, rel)
            except NoteError as exc:
                if named:
                    problems.append(str(exc))
                continue
            if named and note.meta.get("id") != text:
                other = note.meta.get("id")
                problems.append(f"{rel} has id {other!r}" if other is not None else f"{rel} has no id")
            found.append(Found(rel, note, data))
    return found, problems


def notes_mentioning(vault_root: Path, folders: tuple[str, ...], text: str) -> list[Found]:
    """The readable notes in `folders` whose raw bytes contain `text` (unreadable and malformed ones skipped)."""
    return _walk(vault_root, folders, text)[0]


def find_note(vault_root: Path, note_id: str, folders: tuple[str, ...]) -> Found:
    """The one note in `folders` whose frontmatter id is `note_id`; exit 5 when none or several.

    "None" names what stands at `<folder>/<id>.md` when that file exists but is not the note.
    """
    check_id(note_id)
    found, problems = _walk(vault_root, folders, note_id, f"{note_id}.md")
    matches = [item for item in found if item.meta.get("id") == note_id]
    if len(matches) > 1:
        raise InputRejected(
            f"id {note_id} is ambiguous: {', '.join(m.rel for m in matches)}; "
            "edit the id in one of them, or delete the one that is a copy"
        )
    if not matches:
        detail = f": {'; '.join(problems)}" if problems else ""
        raise InputRejected(f"no note with id {note_id} in {', '.join(folders)}{detail}")
    return matches[0]


def free_id(
    vault_root: Path,
    base: str,
    folder: str,
    *,
    unique_in: tuple[str, ...] = (),
    next_step: str = "",
    field: str | None = None,
) -> str:
    """`base`, or `base-2`, `base-3`…: the first id that no note has taken.

    Taken: a file `<id>.md` in `folder` or in `90-archive/<folder>`, or a frontmatter id of a note
    in `folder`, in `unique_in`, or archived from one of them. After `NOTE_ID_ATTEMPTS` ids, exit 5
    with `next_step` (what the person can do instead; it may name `field`, the input to change, as
    `errors.FIELD`).
    """
    scope = tuple(dict.fromkeys((folder, *unique_in)))
    searched = scope + tuple(f"{layout.ARCHIVE}/{rel}" for rel in scope)
    taken = {item.meta.get("id") for item in notes_mentioning(vault_root, searched, base)}
    attempts = tunables.NOTE_ID_ATTEMPTS
    for attempt in range(1, attempts + 1):
        candidate = base if attempt == 1 else f"{base}-{attempt}"
        paths = (f"{folder}/{candidate}.md", f"{layout.ARCHIVE}/{folder}/{candidate}.md")
        if candidate not in taken and not any(os.path.lexists(vault_root / rel) for rel in paths):
            return candidate
    raise InputRejected(
        f"no free id for {base}: {base} and {base}-2 to {base}-{attempts} are all taken by notes or archived notes"
        + (f"; {next_step}" if next_step else ""),
        field=field,
    )


def superseded_ids(value: object) -> list[str] | None:
    """A `supersedes` value as a list: absent or empty is [], one id (the single form) or a list of ids.

    None when it is anything else, which no command overwrites.
    """
    if value is None or value == "":
        return []
    if ids.is_note_id(value):
        return [str(value)]
    if isinstance(value, list) and all(ids.is_note_id(item) for item in value):
        return [str(item) for item in value]
    return None
