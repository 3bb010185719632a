"""Which files warm recall may see, and what it keeps of each.

Recall reads `*.md` files under `30-memory/` and under this device's `50-devices/<device>/notes/`, down
to `RECALL_MAX_FOLDER_DEPTH` levels, and nothing else: no other device's folder is listed, hidden names
(temporary files) are skipped, and a link (to a file or to a folder, anywhere on the way) is never
followed. Each file's size is checked before it is read, and at most the recall cap plus one byte is.

A file becomes one `Row` with a state:
- `ok`: `status: approved`, no `superseded_by`, a valid id, and nothing the secret gate objects to:
  searchable by id, aliases, tags, title and body, and servable;
- `secret`: approved, but the secret gate found something. Its body is neither stored nor indexed (no
  copy of a secret lands in the cache); its id, and its aliases, tags and title when no finding is in
  the frontmatter, stay searchable so that recall can name it (path, lines, detectors) when it ranks;
- `ineligible` (a candidate, superseded, archived or any other status), `invalid` (frontmatter or
  id), `too_large`, `link`, `unreadable`: never searchable; kept only so an unchanged file is not read
  again.
Scope is recorded (`scope`, `project`, `device`) and applied at search time, because one machine's
index serves every project connected to the vault.
"""

from __future__ import annotations

import json
import marshal
import os
import stat
from collections.abc import Callable
from hashlib import blake2b, sha256
from pathlib import Path
from typing import NamedTuple

from continuity import ids, tunables
from continuity.errors import NoteError
from continuity.recall.terms import identifier_parts, words
from continuity.vault import access, layout, notes

# The walk opens each folder once and asks for its entries' metadata relative to it, so the kernel
# resolves one name per file rather than the whole path (the walk of 10,000 notes takes about a fifth
# less time); where the platform cannot, it falls back to full paths.
_BY_FD = os.scandir in os.supports_fd and os.open in os.supports_dir_fd
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


class StatKey(NamedTuple):
    """What says a file may have changed; a listing holds it as a plain tuple (cheaper to build)."""

    size: int
    mtime_ns: int
    ctime_ns: int


Listing = dict[str, tuple[int, int, int]]  # vault-relative path -> (size, mtime_ns, ctime_ns), as StatKey
Enter = Callable[[str], None]  # told of each folder (vault-relative) just before the walk lists it


class Row(NamedTuple):
    """What the index keeps of one file; `fields` is None when the file is not searchable.

    A tuple rather than a dataclass, like the other records recall defines: they are defined at every
    recall, and a dataclass costs several times as much to define."""

    path: str
    key: StatKey
    sha256: str | None
    state: str
    note_id: str | None = None
    created: str = ""  # UTC `YYYY-MM-DDTHH:MM:SSZ`, or empty: sorts after every dated note
    verified: str | None = None
    revalidate_by: str | None = None
    scope: str | None = None
    project: str | None = None
    device: str | None = None
    body: str | None = None
    findings: str | None = None  # JSON [[line, detector], …] for `secret`; never a value
    fields: tuple[str, ...] | None = None  # id, aliases, tags, title, body, parts: tokens


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(item) for item in value if isinstance(item, (str, int, float)) and not isinstance(item, bool)]
    return []


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _tokens(values: tuple[str, ...]) -> tuple[str, ...]:
    fields = tuple(" ".join(words(value)) for value in values)
    return (*fields, " ".join(identifier_parts(" \n ".join(values[1:]))))


def classify(rel: str, data: bytes, key: StatKey) -> Row:
    """Parse, gate and tokenize one file's bytes (the cold path: YAML and the secret scanner)."""
    from continuity.gate.secrets import scan_text  # lazy: recall over an unchanged index never loads the gate

    digest = sha256_hex(data)
    try:
        note = notes.parse_note(data, rel)
    except NoteError:
        return Row(rel, key, digest, "invalid")
    meta = note.meta
    if meta.get("status") != "approved" or meta.get("superseded_by"):
        return Row(rel, key, digest, "ineligible")
    note_id = meta.get("id")
    if not isinstance(note_id, str) or not ids.is_note_id(note_id):
        return Row(rel, key, digest, "invalid")
    created = notes.as_utc(meta.get("created"))
    verified = notes.as_date(meta.get("verified"))
    due = notes.as_date(meta.get("revalidate_by"))
    row = Row(
        rel,
        key,
        digest,
        "ok",
        note_id,
        notes.format_utc(created) if created else "",
        verified.isoformat() if verified else None,
        due.isoformat() if due else None,
        _text(meta.get("scope")),
        _text(meta.get("project")),
        _text(meta.get("device")),
    )
    front = (
        " \n ".join(_strings(meta.get("aliases"))),
        " \n ".join(_strings(meta.get("tags"))),
        _text(meta.get("title")) or "",
    )
    findings = scan_text(note.text)
    if findings:
        clean_front = all(f.line >= note.body_start_line for f in findings)
        kept = front if clean_front else ("", "", "")
        listed = json.dumps([[f.line, f.detector] for f in findings])
        return row._replace(state="secret", findings=listed, fields=_tokens((note_id, *kept, "")))
    return row._replace(body=note.body, fields=_tokens((note_id, *front, note.body)))


def read_row(root: Path, rel: str, key: StatKey) -> Row:
    """Read (never through a link, size checked first) and classify one file."""
    if key.size > tunables.RECALL_NOTE_CAP_BYTES:
        return Row(rel, key, None, "too_large")
    try:
        data = access.read_capped(root, rel, tunables.RECALL_NOTE_CAP_BYTES)
    except NoteError as exc:
        return Row(rel, key, None, exc.reason)
    return classify(rel, data, key)


def sha256_hex(data: bytes) -> str:
    return sha256(data).hexdigest()


def digest_of(root: Path, rel: str) -> str | None:
    """SHA-256 of a file's bytes as recall would read them, or None when it cannot be read."""
    try:
        return sha256_hex(access.read_capped(root, rel, tunables.RECALL_NOTE_CAP_BYTES))
    except NoteError:
        return None


def warm_folders(device: str) -> tuple[str, ...]:
    return (layout.MEMORY, f"{layout.device_dir(device)}/notes")


def _open_folder(root: Path, rel_dir: str) -> int | None:
    """A descriptor of `rel_dir`, opened one component at a time: None at a link or a file on the way."""
    try:
        fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None
    for part in rel_dir.split("/"):
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            child = -1
        os.close(fd)
        if child < 0:
            return None
        fd = child
    return fd


def _walk(where: int | str, rel_dir: str, depth: int, out: Listing, enter: Enter | None) -> None:
    """Add the regular `*.md` files under one folder: an open descriptor (names are looked up in it)
    or, where the platform cannot list a descriptor, a path. Entries are used as the listing yields
    them rather than gathered first, which spares allocating 10,000 of them at once."""
    if enter is not None:
        enter(rel_dir)
    try:
        with os.scandir(where) as listing:
            for entry in listing:
                name = entry.name
                if name.startswith("."):
                    continue
                try:
                    # The entry's type comes from the listing itself; only Markdown files cost a stat call.
                    if entry.is_dir(follow_symlinks=False):
                        if depth < tunables.RECALL_MAX_FOLDER_DEPTH:
                            _descend(where, entry, f"{rel_dir}/{name}", depth + 1, out, enter)
                        continue
                    if not name.endswith(".md"):
                        continue
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    out[f"{rel_dir}/{name}"] = (info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    except OSError:  # the folder cannot be listed, or its listing failed part-way: what was read counts
        return


def _descend(
    where: int | str, entry: os.DirEntry[str], rel_dir: str, depth: int, out: Listing, enter: Enter | None
) -> None:
    if isinstance(where, str):
        _walk(entry.path, rel_dir, depth, out, enter)
        return
    child = os.open(entry.name, _DIR_FLAGS, dir_fd=where)  # a link swapped in since then fails here
    try:
        _walk(child, rel_dir, depth, out, enter)
    finally:
        os.close(child)


def scan(root: Path, device: str, *, by_fd: bool = _BY_FD, enter: Enter | None = None) -> Listing:
    """Every regular `*.md` file recall may serve, with its stat key (links and hidden names skipped).

    `enter` (the server's watcher) is told of every folder the walk enters before it is listed."""
    found: Listing = {}
    for folder in warm_folders(device):
        if not by_fd:
            if access.real_folder(root, folder):
                _walk(str(root / folder), folder, 1, found, enter)
            continue
        fd = _open_folder(root, folder)
        if fd is not None:
            try:
                _walk(fd, folder, 1, found, enter)
            finally:
                os.close(fd)
    return found


def listing_digest(listing: Listing) -> str:
    """A short fingerprint of a listing (its entries in their order): equal fingerprints, equal listings."""
    return blake2b(marshal.dumps(listing), digest_size=32).hexdigest()
