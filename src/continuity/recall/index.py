"""The warm-recall index: a per-machine SQLite FTS5 cache of what `recall_notes` finds in the vault.

Where: `$XDG_CACHE_HOME/continuity/recall/<sha256(vault path)[:16]>.sqlite` (else `~/.cache/…`), in a
0700 folder, mode 0600: it holds the text of approved notes, so it is as private as the vault. It is
never inside the vault, because sync engines corrupt live databases.

Refresh. Every search first lists the warm folders (one `lstat` per entry) and compares each file's
stat key (size, mtime_ns, ctime_ns) with its row. A file whose key changed is read again, and its
SHA-256 decides whether it really changed (a touched file only gets its new key); a file that is gone
(deleted, renamed, or another device's note left by an earlier connection) loses its row; a new one
is classified and indexed. So the index always mirrors exactly what this device may see, its BM25
statistics equal those of a fresh build, and deleting the file changes no result, only the time to
the first one. The bytes of every note that is served are hashed once more against its row, so even a
change that kept size and times is caught before it is shown.

Each refresh commits, with the rows, a fingerprint of the listing they mirror (`meta` key `listing`),
so a search over an unchanged vault compares one digest instead of reading every row back; any
difference (a change, or only another order of the same entries) means the full comparison above.
Re-reading one note outside a refresh drops the fingerprint. A long-lived process (the MCP server)
passes a `recall.watch.Watcher`: while the kernel reported nothing the walk could see and the stored
fingerprint is still the one its last refresh committed, even the walk is skipped.

Search. `recall.rank` scores the matches from the full-text table (`stem`, words through FTS5's
Porter stemmer) alone; the rows of the notes (their bodies above all) are read in rank order, only as
far as the caller goes, and filtered by scope there.

The schema version lives in `PRAGMA user_version`; a stamp in the `meta` table covers the vault path,
the code that classifies and tokenizes (the recall modules, notes, secrets, limits) and the Unicode
and SQLite versions. A missing, unreadable, corrupt, older or differently stamped file is rebuilt;
when the cache folder cannot be used at all, the index lives in memory for one search, so recall
still works everywhere, only slower.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import unicodedata
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from continuity import tunables
from continuity.recall.eligible import Row, StatKey, digest_of, listing_digest, read_row, scan, sha256_hex
from continuity.recall.location import cache_dir as cache_dir, code_stamp, index_file as index_file, vault_key
from continuity.recall.rank import enabled

if TYPE_CHECKING:  # only the server holds a watcher: the command line never imports ctypes for it
    from continuity.recall.rank import Ranked
    from continuity.recall.watch import Watcher

SCHEMA_VERSION = 4
FIELDS = ("id", "aliases", "tags", "title", "body", "parts")
_COLUMNS = (
    "path, size, mtime_ns, ctime_ns, sha256, state, note_id, created, verified, revalidate_by, scope, "
    "project, device, body, findings"
)
_SCHEMA = (
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE notes(rowid INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER NOT NULL,"
    " mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL, sha256 TEXT, state TEXT NOT NULL,"
    " note_id TEXT, created TEXT NOT NULL, verified TEXT, revalidate_by TEXT, scope TEXT, project TEXT,"
    " device TEXT, body TEXT, findings TEXT)",
    # The listing alone, so comparing it with the vault never reads the notes' bodies.
    "CREATE INDEX listing ON notes(path, size, mtime_ns, ctime_ns, sha256)",
    # The notes recall could not search are named at every recall: found without reading the rest.
    "CREATE INDEX unsearched ON notes(state, path)",
    # Whose each searchable note is (its project; the device of its folder or `scope: device`), in rows
    # small enough that the ranking's look-up by rowid reads few pages (recall/rank.py's local bonus).
    "CREATE TABLE owner(rowid INTEGER PRIMARY KEY, project TEXT, device TEXT)",
    # Tokens arrive normalized and space-separated (recall_text); unicode61 only splits them, and the
    # Porter stemmer reduces each to its stem (recall/rank.py).
    "CREATE VIRTUAL TABLE stem USING fts5(id, aliases, tags, title, body, parts,"
    " tokenize=\"porter unicode61 remove_diacritics 0 categories 'L* N* Co'\")",
)
# Statements are assembled from the constants above only; every value is a bound parameter.
_INSERT_NOTE = "INSERT INTO notes(" + _COLUMNS + ") VALUES (" + ", ".join("?" * 15) + ")"  # noqa: S608
_INSERT_STEM = "INSERT INTO stem(rowid, id, aliases, tags, title, body, parts) VALUES (?, ?, ?, ?, ?, ?, ?)"
_VISIBLE = (
    "SELECT path, state, note_id, created, verified, revalidate_by, body, findings, sha256 FROM notes"
    " WHERE rowid = ? AND state IN ('ok', 'secret')"
    " AND (scope IS NULL OR scope NOT IN ('project', 'device')"
    " OR (scope = 'project' AND project = ?) OR (scope = 'device' AND device = ?))"
)


class Hit(NamedTuple):  # a tuple, not a dataclass: a class defined at every recall should be cheap
    path: str
    state: str  # "ok" or "secret"
    note_id: str
    created: str
    verified: str | None
    revalidate_by: str | None
    body: str | None
    findings: tuple[tuple[int, str], ...]
    sha256: str | None
    score: float  # higher is better (recall.rank's)
    coverage: float = 1.0  # the share of the query's weight this note matches


@dataclass(frozen=True)
class Refreshed:
    read: int  # files read and classified
    touched: int  # files whose stat key changed but whose bytes did not
    removed: int
    compared: bool = field(default=True, compare=False)  # False: the listing's fingerprint matched
    walked: bool = field(default=True, compare=False)  # False: the watcher vouched for the listing


class Index:
    """An open index of one vault for one device. Use `open_index`; close it when done."""

    def __init__(self, db: sqlite3.Connection, root: Path, device: str, file: Path | None) -> None:
        self.db = db
        self.root = root
        self.device = device
        self.file = file  # None: in memory
        self.rebuilt = False

    def close(self) -> None:
        self.db.close()

    def _rows(self) -> dict[str, tuple[int, StatKey, str | None]]:
        cursor = self.db.execute("SELECT path, rowid, size, mtime_ns, ctime_ns, sha256 FROM notes")
        return {path: (rowid, StatKey(size, mt, ct), sha) for path, rowid, size, mt, ct, sha in cursor}

    def _fingerprint(self) -> str | None:
        found = self.db.execute("SELECT value FROM meta WHERE key = 'listing'").fetchone()
        return None if found is None else str(found[0])

    def refresh(self, watcher: Watcher | None = None) -> Refreshed:
        """Bring the index in line with the vault: read what changed, drop what is gone.

        With a `watcher` (a long-lived process's), the walk itself is skipped when the watcher saw
        nothing change since the last full refresh and the index still holds the listing that refresh
        committed (another process may have rebuilt or emptied it); otherwise the watcher is armed
        again as the walk goes, and remembers the listing once it is committed."""
        if watcher is not None:
            if watcher.unchanged() and watcher.fingerprint == self._fingerprint():
                return Refreshed(0, 0, 0, compared=False, walked=False)
            watcher.arm()
        seen = scan(self.root, self.device, enter=None if watcher is None or not watcher.usable else watcher.enter)
        fingerprint = listing_digest(seen)
        if fingerprint == self._fingerprint():  # the common case: nothing was added, removed or changed
            if watcher is not None:
                watcher.fingerprint = fingerprint
            return Refreshed(0, 0, 0, compared=False)
        with self._writing():
            rows = self._rows()  # inside the lock: another process may have refreshed while we waited
            gone = [rows[path][0] for path in rows if path not in seen]
            for rowid in gone:
                self._delete(rowid)
            read = touched = 0
            for rel, key in seen.items():
                old = rows.get(rel)
                if old is not None and old[1] == key:
                    continue
                row = read_row(self.root, rel, StatKey(*key))
                if old is not None and row.sha256 is not None and row.sha256 == old[2]:
                    self.db.execute(
                        "UPDATE notes SET size = ?, mtime_ns = ?, ctime_ns = ? WHERE rowid = ?",
                        (*key, old[0]),
                    )
                    touched += 1
                    continue
                if old is not None:
                    self._delete(old[0])
                self._insert(row)
                read += 1
            # The rows now mirror exactly this listing; committed with them, so the two never disagree.
            self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('listing', ?)", (fingerprint,))
        if watcher is not None:
            watcher.fingerprint = fingerprint  # committed: the next search may trust the watcher
        return Refreshed(read, touched, len(gone))

    def reindex(self, rel: str) -> None:
        """Read one file again whatever its stat key says (its bytes no longer match its row)."""
        with self._writing():
            found = self.db.execute("SELECT rowid FROM notes WHERE path = ?", (rel,)).fetchone()
            if found is not None:
                self._delete(found[0])
            key = scan(self.root, self.device).get(rel)
            if key is not None:
                self._insert(read_row(self.root, rel, StatKey(*key)))
            self.db.execute("DELETE FROM meta WHERE key = 'listing'")  # the next refresh compares every row

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _delete(self, rowid: int) -> None:
        self.db.execute("DELETE FROM stem WHERE rowid = ?", (rowid,))
        self.db.execute("DELETE FROM owner WHERE rowid = ?", (rowid,))
        self.db.execute("DELETE FROM notes WHERE rowid = ?", (rowid,))

    def _insert(self, row: Row) -> None:
        key = row.key
        cursor = self.db.execute(
            _INSERT_NOTE,
            (
                row.path,
                key.size,
                key.mtime_ns,
                key.ctime_ns,
                row.sha256,
                row.state,
                row.note_id,
                row.created,
                row.verified,
                row.revalidate_by,
                row.scope,
                row.project,
                row.device,
                row.body,
                row.findings,
            ),
        )
        if row.fields is not None:
            self.db.execute(_INSERT_STEM, (cursor.lastrowid, *row.fields))
            folder = row.path.split("/")  # 50-devices/<device>/notes/…: that device's own note
            mine = folder[1] if folder[0] == "50-devices" and len(folder) > 3 and folder[2] == "notes" else None
            device = row.device if row.scope == "device" else mine
            self.db.execute(
                "INSERT INTO owner(rowid, project, device) VALUES (?, ?, ?)", (cursor.lastrowid, row.project, device)
            )

    def device_rows(self, device: str) -> frozenset[int]:
        """The searchable notes of this device: its own notes folder, and `scope: device` notes of it."""
        cursor = self.db.execute(
            "SELECT rowid FROM notes WHERE state IN ('ok', 'secret')"
            " AND (substr(path, 1, ?) = ? OR (scope = 'device' AND device = ?))",
            (len(prefix := f"50-devices/{device}/notes/"), prefix, device),
        )
        return frozenset(row[0] for row in cursor)

    def search(self, ranking: Iterable[Ranked], project: str, device: str) -> Generator[Hit, None, None]:
        """The visible notes of `ranking` (rank.rank's), best first, the newest first among near-equals.

        A `scope: project` note of another project and a `scope: device` note of another device are
        left out here, before anything is shown. Each note's row is read in rank order, as far as the
        caller goes; notes whose scores are within `RECALL_NEAR_EQUAL_PERCENT` of the first of their
        group are ordered among themselves (newest `created` first, then by path) once all are read.
        """
        near = 1.0 - tunables.RECALL_NEAR_EQUAL_PERCENT / 100 if enabled("recency") else 1.0
        floor = tunables.RECALL_MIN_NOTE_COVERAGE_PERCENT / 100 if enabled("floor") else 0.0
        group: list[Hit] = []
        for rowid, score, coverage in ranking:
            if coverage < floor:
                continue
            if group and score < group[0].score * near:
                yield from _newest_first(group)
                group = []
            hit = self._visible(rowid, score, coverage, project, device)
            if hit is not None:
                group.append(hit)
        yield from _newest_first(group)

    def _visible(self, rowid: int, score: float, coverage: float, project: str, device: str) -> Hit | None:
        found = self.db.execute(_VISIBLE, (rowid, project, device)).fetchone()
        if found is None:
            return None
        path, state, note_id, created, verified, due, body, findings, sha = found
        listed: tuple[tuple[int, str], ...] = ()
        if findings:
            listed = tuple((int(line), str(det)) for line, det in json.loads(findings))
        return Hit(path, state, note_id, created, verified, due, body, listed, sha, score, coverage)

    def confirm(self, hit: Hit) -> bool:
        """True when the file still holds the bytes its row was built from (a hash, no parsing)."""
        return hit.sha256 is not None and digest_of(self.root, hit.path) == hit.sha256


def _newest_first(hits: list[Hit]) -> list[Hit]:
    """Notes of one score: the newest `created` first (undated last), then by path."""
    hits.sort(key=lambda hit: hit.path)
    hits.sort(key=lambda hit: hit.created, reverse=True)
    return hits


_DROP = tuple(f"DROP TABLE IF EXISTS {table}" for table in ("fts", "stem", "owner", "notes", "meta"))  # fts: schema 2


def stamp(root: Path) -> str:
    """What a stored index must have been built with; any difference means a rebuild."""
    versions = f"{SCHEMA_VERSION}\0{vault_key(root)}\0{unicodedata.unidata_version}\0{sqlite3.sqlite_version}\0"
    return sha256_hex(versions.encode() + code_stamp().encode())


def _current(db: sqlite3.Connection, root: Path) -> bool:
    if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
        return False
    tables = db.execute("SELECT count(*) FROM sqlite_master WHERE name IN ('meta', 'notes', 'stem')").fetchone()
    if tables[0] != 3:
        return False
    found = db.execute("SELECT value FROM meta WHERE key = 'stamp'").fetchone()
    return found is not None and found[0] == stamp(root)


def _create(db: sqlite3.Connection, root: Path) -> bool:
    """Make `db` a current, empty index, in place; False when another process just did it first.

    Everything happens inside one write transaction, so processes that open a missing or outdated
    index at the same moment take turns, and the later ones find the work done.
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        built = not _current(db, root)
        if built:
            for statement in (*_DROP, *_SCHEMA):
                db.execute(statement)
            db.execute("INSERT INTO meta(key, value) VALUES ('stamp', ?)", (stamp(root),))
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION:d}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return built


def busy(exc: sqlite3.Error) -> bool:
    """True for "another process holds the lock too long", which is no reason to throw the file away."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED
    return "locked" in str(exc) or "busy" in str(exc)  # pragma: no cover - Python 3.10


def _remove(file: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{file}{suffix}")


def _connect(file: Path) -> sqlite3.Connection:
    file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # Create the file ourselves so it is private from its first byte (SQLite would make it 0644).
    os.close(os.open(file, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600))
    return sqlite3.connect(str(file), timeout=tunables.RECALL_INDEX_BUSY_TIMEOUT_SECONDS, isolation_level=None)


def _open_file(file: Path, root: Path) -> tuple[sqlite3.Connection, bool]:
    """(connection, built): the stored index, rebuilt in place when it is missing or outdated, and
    replaced when it is not a database at all (a process still using the old file keeps its copy)."""
    db = _connect(file)
    try:
        if _current(db, root):
            return db, False
        return db, _create(db, root)
    except sqlite3.Error as exc:
        db.close()
        if busy(exc) or not isinstance(exc, sqlite3.DatabaseError):
            raise
    _remove(file)
    db = _connect(file)
    return db, _create(db, root)


def open_index(root: Path, device: str, *, use_file: bool = True) -> Index:
    """The index of `root` for `device`: the cache file (rebuilt when needed), else one in memory."""
    if use_file:
        file = index_file(root)
        try:
            db, built = _open_file(file, root)
        except (OSError, sqlite3.Error):
            pass  # an unusable cache folder or a lock held too long: this search runs in memory
        else:
            index = Index(db, root, device, file)
            index.rebuilt = built
            return index
    db = sqlite3.connect(":memory:", isolation_level=None)
    _create(db, root)
    return Index(db, root, device, None)


def discard(index: Index, *, keep_file: bool = False) -> Index:
    """Replace an index that failed: a damaged file is thrown away and built again; when the file was
    only locked too long by another process (`keep_file`), this search goes on in memory instead."""
    with contextlib.suppress(sqlite3.Error):
        index.close()
    if index.file is not None and not keep_file:
        with contextlib.suppress(OSError):
            _remove(index.file)
    fresh = open_index(index.root, index.device, use_file=index.file is not None and not keep_file)
    fresh.rebuilt = True
    return fresh
