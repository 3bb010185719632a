"""`lifecycle log`: search the write history of every device, newest entries first.

Each device appends to its own `50-devices/<device>/journal.jsonl` (one JSON object per line: `ts`,
`device`, `op`, `id`, `path`, `sha256`; see `journal`). A search reads the last `window` lines of every
journal, backwards in blocks from the end, so a long history costs only what is read; while fewer than
`limit` entries match and some journal has older lines, the window grows fourfold, up to
`LOG_MAX_WINDOW_LINES`. Lines already read are not read again when it grows.

Matching. QUERY is a literal, case-sensitive substring, or a regular expression when written `/…/`.
It is tested against the decoded values of `device`, `op`, `id`, `path` and `sha256`, never the raw
line: keys and timestamps cannot match by accident, and a character the line escapes (`\\u00e9`) matches
as itself. For a literal query, a line that holds neither the query's bytes nor a backslash cannot
match and is passed over without being parsed.

Untrusted input. Journals arrive through the sync engine from other computers, so every line is
checked: valid UTF-8, a JSON object with the six keys (`ts`, `device`, `op`, `path` text; `id`,
`sha256` text or null), a `ts` that reads as a time, and a `device` equal to its folder's name. Any
other line (blank, torn, foreign, longer than `LOG_MAX_LINE_BYTES`) is skipped and counted in
`malformed` (among the lines examined). Device folders whose names are not device ids, links (to a
folder or to a journal) and anything but a regular file are never read, and no journal is read past
`LOG_MAX_READ_BYTES` from its end.

Order: newest `ts` first; on equal times the later line of its journal first, then by device name.
`truncated` is true when more may match than was returned: matches beyond the limit, or a journal whose
older lines were not searched.
"""

from __future__ import annotations

import datetime as dt
import heapq
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity import tunables
from continuity.errors import FIELD, UsageError
from continuity.gate.secrets import shown_path, shown_value
from continuity.ids import is_valid_id
from continuity.records.journal import KEYS, Entry
from continuity.vault import access, layout, notes

MATCHED = ("device", "op", "id", "path", "sha256")
JOURNAL_NAME = "journal.jsonl"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


@dataclass(frozen=True)
class Matcher:
    literal: str | None = None
    pattern: re.Pattern[str] | None = None

    def prefilter(self) -> bytes | None:
        """Bytes a line must hold (unless it has escapes) to possibly match; None when no such test."""
        return self.literal.encode("utf-8") if self.literal else None

    def matches(self, values: tuple[str | None, ...]) -> bool:
        for value in values:
            if value is None:
                continue
            if self.pattern is not None:
                if self.pattern.search(value):
                    return True
            elif self.literal is not None and self.literal in value:
                return True
        return False


def compile_query(query: str | None) -> Matcher | None:
    """None for no query; `/…/` is a regular expression (UsageError when it does not compile)."""
    if query is None:
        return None
    if len(query) >= 2 and query.startswith("/") and query.endswith("/"):
        try:
            return Matcher(pattern=re.compile(query[1:-1]))
        except (re.error, RecursionError, OverflowError) as exc:
            raise UsageError(f"QUERY is not a valid regular expression: {exc}") from None
    return Matcher(literal=query)


Values = tuple[str, str, str, str | None, str, str | None]  # ts, device, op, id, path, sha256
_KEYSET = frozenset(KEYS)
_ONE_MICROSECOND = dt.timedelta(microseconds=1)
_EPOCH_NAIVE = dt.datetime(1970, 1, 1)


def micros_of(ts: str) -> int | None:
    """Microseconds since 1970 of a journal time; the writer's own `YYYY-MM-DDTHH:MM:SSZ` fast."""
    if len(ts) == 20 and ts[19] == "Z" and ts[10] == "T":
        try:
            return (dt.datetime.fromisoformat(ts[:19]) - _EPOCH_NAIVE) // _ONE_MICROSECOND
        except ValueError:
            return None
    moment = notes.as_utc(ts)
    return None if moment is None else (moment - _EPOCH) // _ONE_MICROSECOND


def parse_entry(raw: bytes, device: str) -> tuple[Values, int] | None:
    """(values, time in microseconds since 1970) of a well-formed line of `device`'s journal, else None."""
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if type(doc) is not dict or not doc.keys() >= _KEYSET:
        return None
    ts, owner, op, ident, path, sha = doc["ts"], doc["device"], doc["op"], doc["id"], doc["path"], doc["sha256"]
    if owner != device or not (isinstance(ts, str) and isinstance(op, str) and isinstance(path, str)):
        return None
    if (ident is not None and not isinstance(ident, str)) or (sha is not None and not isinstance(sha, str)):
        return None
    micros = micros_of(ts)
    if micros is None:
        return None
    return (ts, owner, op, ident, path, sha), micros


def shown(values: Values) -> Values:
    """The values as they may be shown: a line another device, an older version or a hand wrote may name
    a secret-like file (or id), which is withheld like everywhere else (`gate.secrets.shown_path`)."""
    ts, owner, op, ident, path, sha = values
    return ts, owner, op, None if ident is None else shown_value(ident), shown_path(path), sha


def _pread(fd: int, size: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # pragma: no cover - platforms without pread
    return os.read(fd, size)  # pragma: no cover


class TailReader:
    """The lines of an open file from its end backwards (newest first), read in blocks.

    Memory stays bounded: a line longer than `max_line` is dropped while it is read and returned as
    None (a malformed line); reading stops after `max_bytes`, leaving `cut` set.
    """

    def __init__(
        self,
        fd: int,
        size: int,
        *,
        block: int = tunables.LOG_READ_BLOCK_BYTES,
        max_line: int = tunables.LOG_MAX_LINE_BYTES,
        max_bytes: int = tunables.LOG_MAX_READ_BYTES,
    ) -> None:
        self.fd = fd
        self.block = block
        self.max_line = max_line
        self.max_bytes = max_bytes
        # A final newline ends the last line; it does not start an empty one.
        self.pos = size - 1 if size > 0 and _pread(fd, 1, size - 1) == b"\n" else size
        self.first_pending = size > 0  # the file's first line, which no newline precedes
        self.carry = b""
        self.oversized = False
        self.pending: list[bytes | None] = []  # file order: pop() gives the newest
        self.read_bytes = 0
        self.lines = 0
        self.cut = False

    @property
    def complete(self) -> bool:
        """Every line of the file has been returned."""
        return not self.pending and not self.first_pending and not self.cut

    def take(self, count: int) -> list[bytes | None]:
        """Up to `count` more lines, newest first."""
        out: list[bytes | None] = []
        while len(out) < count:
            if self.pending:
                wanted = min(count - len(out), len(self.pending))
                out.extend(reversed(self.pending[-wanted:]))  # whole slices: no per-line Python work
                del self.pending[-wanted:]
            elif not self._fill():
                break
        self.lines += len(out)
        return out

    def _fill(self) -> bool:
        if self.pos == 0:
            if not self.first_pending:
                return False
            self.first_pending = False
            self.pending.append(None if self.oversized else self.carry)
            self.carry = b""
            return True
        if self.read_bytes >= self.max_bytes:
            self.cut, self.first_pending = True, False
            return False
        step = min(self.block, self.pos)
        self.pos -= step
        chunk = _pread(self.fd, step, self.pos)
        self.read_bytes += step
        if len(chunk) != step:  # the file shrank under us: treat what is left as gone
            self.pos, self.first_pending, self.cut = 0, False, True
            return False
        pieces = (chunk + self.carry).split(b"\n")
        self.carry = pieces[0]
        if len(pieces) > 1:
            lines: list[bytes | None] = [None if len(p) > self.max_line else p for p in pieces[1:]]
            if self.oversized:
                lines[-1] = None
                self.oversized = False
            self.pending.extend(lines)
        if len(self.carry) > self.max_line:
            self.carry = b""
            self.oversized = True
        return True


@dataclass(frozen=True)
class LogSearch:
    results: tuple[Entry, ...]
    truncated: bool
    used_window_lines: int
    malformed: int
    journals: int

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "results": [entry.to_json() for entry in self.results],
            "truncated": self.truncated,
            "used_window_lines": self.used_window_lines,
            "malformed": self.malformed,
        }


def open_journals(root: Path) -> list[tuple[str, int]]:
    """(device, open descriptor) of every regular journal file, links never followed."""
    folder = root / layout.DEVICES
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return []
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    out: list[tuple[str, int]] = []
    for entry in entries:
        if not is_valid_id(entry.name) or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            fd = access._open_nofollow(root, f"{layout.DEVICES}/{entry.name}/{JOURNAL_NAME}")
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                out.append((entry.name, fd))
                continue
        except OSError:
            pass
        os.close(fd)
    return out


def search(
    root: Path,
    query: str | None = None,
    *,
    limit: int = tunables.LOG_DEFAULT_LIMIT,
    window: int = tunables.LOG_DEFAULT_WINDOW_LINES,
) -> LogSearch:
    """The newest `limit` entries matching `query` across every device's journal."""
    if limit < 1:
        raise UsageError(f"{FIELD} must be at least 1", field="limit")
    if not 1 <= window <= tunables.LOG_MAX_WINDOW_LINES:
        raise UsageError(f"{FIELD} must be between 1 and {tunables.LOG_MAX_WINDOW_LINES} lines", field="window")
    matcher = compile_query(query)
    needle = matcher.prefilter() if matcher else None
    opened = open_journals(root)
    try:
        readers = [(device, TailReader(fd, os.fstat(fd).st_size)) for device, fd in opened]
        # Candidates ranked by (-time, distance from the end, device): smallest is newest.
        found: list[tuple[int, int, str, Values]] = []
        matched = malformed = 0
        target = window
        while True:
            for device, reader in readers:
                start = reader.lines
                for offset, raw in enumerate(reader.take(target - reader.lines)):
                    if raw is None:
                        malformed += 1
                        continue
                    if needle is not None and needle not in raw and b"\\" not in raw:
                        continue
                    parsed = parse_entry(raw, device)
                    if parsed is None:
                        malformed += 1
                        continue
                    values, micros = parsed
                    if matcher is not None and not matcher.matches(values[1:]):
                        continue
                    matched += 1
                    found.append((-micros, start + offset, device, values))
                    if len(found) > 4 * limit + 1024:
                        found = heapq.nsmallest(2 * limit, found)  # room for withheld ones that fail
            more = any(not reader.complete for _device, reader in readers)
            if matched >= limit or not more or target >= tunables.LOG_MAX_WINDOW_LINES:
                break
            target = min(target * tunables.LOG_WINDOW_GROWTH_FACTOR, tunables.LOG_MAX_WINDOW_LINES)
    finally:
        for _device, fd in opened:
            os.close(fd)
    # What is returned is what may be shown (`shown`), and it must match as shown too, else a query
    # could probe a withheld name character by character. Judged here, on the newest candidates
    # only, since the gate costs tens of microseconds a value and a broad query matches every line.
    entries: list[Entry] = []
    for item in sorted(found):
        values = shown(item[3])
        if matcher is not None and values != item[3] and not matcher.matches(values[1:]):
            matched -= 1
            continue
        entries.append(Entry(*values, 0))  # line 0: read from the tail
        if len(entries) == limit:
            break
    return LogSearch(tuple(entries), matched > limit or more, target, malformed, len(opened))
