"""The per-device journal: one JSON line per vault write, appended and never rewritten.

`50-devices/<device>/journal.jsonl` holds one object per line with exactly the keys `ts`, `device`,
`op`, `id`, `path` and `sha256` (`id` is null for writes that are not notes, such as lease files;
`sha256` is null for a removal). Journals are per device so that no sync engine ever has to merge two
writers' appends into one file.

This module is the journal as it is read (`log`, `search_log`, the sync's overlap check):
the entry's keys, its line parser and the bounded readers. The line written for a write and the
append are the write path's (`store.journal`).

Readers are tolerant: a line that is not a JSON object with those keys (a sync engine's conflict
marker, a line torn by a foreign tool, a future format) is counted and skipped, never fatal. Reading
never follows a symbolic link and can start from the last N lines of a large journal without reading
it all.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from continuity.gate.secrets import shown_path, shown_value
from continuity.vault import notes

KEYS = ("ts", "device", "op", "id", "path", "sha256")
_BLOCK_BYTES = 64 * 1024


@dataclass(frozen=True)
class Entry:
    ts: str
    device: str
    op: str
    id: str | None
    path: str
    sha256: str | None
    line: int  # 1-based line number in the file (0 when read from the tail of an unknown length)

    def to_json(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in KEYS}

    @property
    def time(self) -> dt.datetime | None:
        return notes.as_utc(self.ts)


def parse_line(raw: str, line: int = 0) -> Entry | None:
    """One journal line as an Entry, or None when it is not a well-formed entry."""
    try:
        doc = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    for key in ("ts", "device", "op", "path"):
        if not isinstance(doc.get(key), str):
            return None
    for key in ("id", "sha256"):
        if doc.get(key) is not None and not isinstance(doc.get(key), str):
            return None
    return withheld(Entry(doc["ts"], doc["device"], doc["op"], doc.get("id"), doc["path"], doc.get("sha256"), line))


def withheld(entry: Entry) -> Entry:
    """The entry as it may be shown: a line another device, an older version or a hand wrote may hold a
    secret-like file name or id, and every reader's output goes through here."""
    ident = None if entry.id is None else shown_value(entry.id)
    path = shown_path(entry.path)
    return entry if (ident, path) == (entry.id, entry.path) else replace(entry, id=ident, path=path)


@dataclass
class Read:
    entries: list[Entry] = field(default_factory=list)
    malformed: int = 0  # lines that were not entries (a torn final line included)
    lines: int = 0  # lines looked at
    complete: bool = True  # False when only the last `window` lines were read


def _open(file: Path) -> int | None:
    try:
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def _read_at(fd: int, position: int, size: int) -> bytes:
    """`size` bytes from `position` (fewer at end of file); seek + read, since Windows has no pread."""
    os.lseek(fd, position, os.SEEK_SET)
    parts: list[bytes] = []
    while size > 0:
        part = os.read(fd, size)
        if not part:
            break
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def _tail_lines(fd: int, size: int, window: int) -> tuple[list[bytes], bool]:
    """The last `window` lines of the file, read backwards in blocks; (lines, whole file read)."""
    chunks: list[bytes] = []
    position = size
    newlines = 0
    # window + 1 newlines guarantee `window` whole lines after the (possibly cut) first piece.
    while position > 0 and newlines <= window:
        step = min(_BLOCK_BYTES, position)
        position -= step
        chunk = _read_at(fd, position, step)
        chunks.append(chunk)
        newlines += chunk.count(b"\n")
    lines = b"".join(reversed(chunks)).split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if position > 0:
        lines = lines[1:]
    whole = position == 0 and len(lines) <= window
    if len(lines) > window:
        lines = lines[len(lines) - window :]
    return lines, whole


def read(file: Path, window: int | None = None) -> Read:
    """Entries of a journal, oldest first; only the last `window` lines when it is given."""
    result = Read()
    fd = _open(file)
    if fd is None:
        return result
    try:
        size = os.fstat(fd).st_size
        if window is None:
            with os.fdopen(os.dup(fd), "rb") as handle:
                raw_lines = handle.read().split(b"\n")
            if raw_lines and raw_lines[-1] == b"":
                raw_lines.pop()
            first = 1
        else:
            raw_lines, result.complete = _tail_lines(fd, size, max(0, window))
            first = 1 if result.complete else 0
    finally:
        os.close(fd)
    for index, raw in enumerate(raw_lines):
        result.lines += 1
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            result.malformed += 1
            continue
        entry = parse_line(text, first + index if first else 0)
        if entry is None:
            result.malformed += 1
        else:
            result.entries.append(entry)
    return result


def iter_entries(file: Path, window: int | None = None) -> Iterator[Entry]:
    """The well-formed entries of a journal, oldest first; malformed lines are skipped."""
    yield from read(file, window).entries
