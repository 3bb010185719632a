"""The one write path into the vault.

Every command that changes the vault (handoffs, candidates, approvals, supersede, archive, edits of
SOUL.md and PREFERENCES.md, preserved originals, leases) goes through a `transaction`:

1. take this computer's local lock (`lease.local_lock`), announcing a wait;
2. re-read the lease state inside the lock and refuse with exit 4 while another device holds an
   unexpired lease;
3. check each new text before anything is written: a vault-relative path that cannot escape the vault,
   its byte cap, frontmatter that parses, and no secret-like content (exit 5 naming the line and the
   detector, never the value); a preserved original is checked by `documents.check_document` instead
   (its bytes are kept exactly, so it has no frontmatter to parse, and a binary one cannot be
   scanned). Callers check every file of a multi-file change first, so bad input writes nothing at all;
4. write atomically (temporary sibling, fsync, rename or link, directory fsync): a new note is created
   exclusively, so a name collision is a refusal and never an overwrite;
5. append one line per write to this device's journal.

Folders are created one component at a time and a symbolic link anywhere on the way is refused, so a
planted link cannot redirect a write outside the vault. A killed writer leaves the old file or the new
one (at worst a stray `.<name>.<random>.tmp` that doctor reports) and a whole journal line or none.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import stat
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from continuity import limits, tunables
from continuity.errors import FIELD, InputRejected, NotConnected, NoteError, UsageError
from continuity.gate.secrets import scan_text
from continuity.local import connection
from continuity.records import leases
from continuity.records.removals import Removal
from continuity.store import atomic, journal, lease, records
from continuity.store.documents import CheckedDocument
from continuity.vault import access, layout, notes
from continuity.vault.resources import resource_dir

if TYPE_CHECKING:
    from continuity.local.connection import Connection


class Exists(InputRejected):
    """The target of a new note already exists: refused, never overwritten."""


@dataclass(frozen=True)
class WriteContext:
    """Who writes where: explicit paths and identity, plus a clock that tests may pin."""

    vault: Path
    device: str
    project: str | None = None
    session: str | None = None
    on_wait: lease.WaitNotice | None = None
    now: dt.datetime | None = None
    lock_timeout: float = limits.LOCAL_LOCK_TIMEOUT_SECONDS

    def clock(self) -> dt.datetime:
        return leases.utcnow(self.now)


@dataclass(frozen=True)
class Written:
    op: str
    id: str | None
    rel: str
    sha256: str | None  # None for a removal


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


InputLines = tuple[int, int]  # (note line where the person's text begins, its line in their input)


def secret_message(rel: str, line: int, detector: str, input_lines: InputLines | None) -> str:
    where = f"line {line}"
    if input_lines is not None and line >= input_lines[0]:
        where += f" (line {line - input_lines[0] + input_lines[1]} of the input)"
    return f"{rel} {where} looks like a secret ({detector}); nothing was written"


def check_text(rel: str, text: str, cap: int, *, input_lines: InputLines | None = None) -> bytes:
    """The bytes to write, after the path, cap, frontmatter and secret checks (InputRejected otherwise).

    `input_lines` maps note lines back to the person's own input, so a refusal can name the line of
    the file they wrote as well as the line of the note.
    """
    access.safe_rel(rel)
    data = text.encode("utf-8")
    if len(data) > cap:
        raise InputRejected(f"{rel} would be {len(data)} bytes, over its cap of {cap}; nothing was written")
    if rel.endswith(".md"):
        notes.parse_note(data, rel)

    findings = scan_text(notes.decode(data, rel))
    if findings:
        first = min(findings, key=lambda item: item.line)
        raise InputRejected(secret_message(rel, first.line, first.detector, input_lines))
    return data


@dataclass
class Transaction:
    """A held local lock with the lease state read inside it; every write made under it."""

    ctx: WriteContext
    lease_status: leases.LeaseStatus
    written: list[Written] = field(default_factory=list)

    @property
    def vault(self) -> Path:
        return self.ctx.vault

    def record(self, op: str, note_id: str | None, rel: str, digest: str | None) -> Written:
        """Append the journal line for a write that has just happened."""
        atomic.ensure_dir(self.vault, layout.device_dir(self.ctx.device))
        journal.append(
            self.vault / access.journal(self.ctx.device),
            self.ctx.device,
            op,
            note_id,
            rel,
            digest,
            self.ctx.clock(),
        )
        item = Written(op, note_id, rel, digest)
        self.written.append(item)
        return item

    def check(self, rel: str, text: str, cap: int, *, input_lines: InputLines | None = None) -> bytes:
        return check_text(rel, text, cap, input_lines=input_lines)

    def create(
        self,
        rel: str,
        text: str,
        *,
        op: str,
        note_id: str | None,
        cap: int,
        input_lines: InputLines | None = None,
    ) -> Written:
        """Write a new note; Exists (exit 5) when the name is taken."""
        data = self.check(rel, text, cap, input_lines=input_lines)
        atomic.ensure_dir(self.vault, rel.rpartition("/")[0])
        target = self.vault / rel
        if os.path.lexists(target):
            raise Exists(f"{rel} already exists; refusing to overwrite it")
        try:
            atomic.write_bytes(target, data, exclusive=True)
        except FileExistsError:
            raise Exists(f"{rel} already exists; refusing to overwrite it") from None
        return self.record(op, note_id, rel, sha256_hex(data))

    def replace(
        self,
        rel: str,
        text: str,
        *,
        op: str,
        note_id: str | None,
        cap: int,
        expect_sha256: str | None = None,
    ) -> Written:
        """Atomically replace an existing note, optionally only if it is still what was read."""
        data = self.check(rel, text, cap)
        atomic.ensure_dir(self.vault, rel.rpartition("/")[0])
        if expect_sha256 is not None:
            self.expect(rel, expect_sha256)
        atomic.write_bytes(self.vault / rel, data)
        return self.record(op, note_id, rel, sha256_hex(data))

    def expect(self, rel: str, digest: str) -> None:
        """Refuse when a file changed since it was read (a sync or another writer got there first)."""
        try:
            current = access.read_capped(self.vault, rel, limits.LIFECYCLE_TEXT_CAP_BYTES)
        except NoteError as exc:
            raise InputRejected(f"{rel} changed while this command ran ({exc.reason}); run it again") from None
        if sha256_hex(current) != digest:
            raise InputRejected(f"{rel} changed while this command ran; run it again")

    def preserve(self, rel: str, data: bytes, *, op: str, note_id: str | None) -> Written:
        """Keep an existing file's exact bytes under a new name (an archive copy): no content checks,
        since the bytes are already in the vault and must be kept even when they are malformed."""
        access.safe_rel(rel)
        atomic.ensure_dir(self.vault, rel.rpartition("/")[0])
        try:
            atomic.write_bytes(self.vault / rel, data, exclusive=True)
        except FileExistsError:
            raise Exists(f"{rel} already exists; refusing to overwrite it") from None
        return self.record(op, note_id, rel, sha256_hex(data))

    def create_document(self, doc: CheckedDocument, *, op: str, note_id: str | None) -> Written:
        """Write a checked original under its new name; Exists (exit 5) when the name is taken."""
        if sha256_hex(doc.data) != doc.sha256:
            raise InputRejected(f"{doc.rel} changed after it was checked; nothing was written")
        atomic.ensure_dir(self.vault, doc.rel.rpartition("/")[0])
        try:
            atomic.write_bytes(self.vault / doc.rel, doc.data, exclusive=True)
        except FileExistsError:
            raise Exists(f"{doc.rel} already exists; refusing to overwrite it") from None
        return self.record(op, note_id, doc.rel, doc.sha256)

    def remove(self, rel: str, *, op: str, note_id: str | None) -> Written:
        target = self.vault / access.safe_rel(rel)
        info = os.lstat(target)
        if not stat.S_ISREG(info.st_mode):
            raise InputRejected(f"{rel} is not a regular file; it was left alone")
        target.unlink()
        atomic.fsync_dir(target.parent)
        return self.record(op, note_id, rel, None)


@contextlib.contextmanager
def transaction(ctx: WriteContext) -> Iterator[Transaction]:
    """Hold the local lock and refuse (exit 4) while another device holds an unexpired lease."""
    if not ctx.vault.is_dir():
        raise NotConnected(f"the vault {ctx.vault} is not reachable from this computer")
    with lease.local_lock(ctx.vault, timeout=ctx.lock_timeout, on_wait=ctx.on_wait):
        current = leases.status(ctx.vault, ctx.device, ctx.clock())
        lease.refuse_if_foreign(current)
        yield Transaction(ctx, current)


SESSION_ENV = ("CODEX_SESSION_ID", "CLAUDE_SESSION_ID")


def session_id(explicit: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """`--session`, else the harness's session id from the environment, else None (then omitted)."""
    env = os.environ if environ is None else environ
    value = explicit if explicit else next((env[name] for name in SESSION_ENV if env.get(name)), None)
    return clean_line(value, "session", tunables.SESSION_ID_MAX_CHARS) if value else None


def connect(
    cwd: Path,
    *,
    session: str | None = None,
    on_wait: lease.WaitNotice | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[Connection, WriteContext]:
    """The checkout's connection and a write context for it (NotConnected, exit 3, when unreachable)."""
    env = dict(os.environ if environ is None else environ)
    conn = connection.discover(cwd, env)
    root = connection.require_vault(conn)
    return conn, WriteContext(root, conn.device, conn.project, session_id(session, env), on_wait)


# ---------------------------------------------------------------------------- lease commands


def acquire_lease(ctx: WriteContext, ttl_seconds: int, task: str | None = None) -> leases.LeaseStatus:
    """Take or extend this device's lease (exit 4 on a foreign unexpired one); the state afterwards."""
    clean = lease.clean_task(task)
    with lease.local_lock(ctx.vault, timeout=ctx.lock_timeout, on_wait=ctx.on_wait):
        taken = lease.acquire_locked(ctx.vault, ctx.device, ttl_seconds, clean, ctx.clock())
        data = taken.to_json().encode("utf-8")
        tx = Transaction(ctx, leases.status(ctx.vault, ctx.device, ctx.clock()))
        tx.record("lease.acquire", None, taken.rel, sha256_hex(data))
        return tx.lease_status


def release_lease(ctx: WriteContext, force: bool = False) -> lease.Released:
    """Remove this device's lease (or, with `force`, every visible one); exit 4 on a foreign one.

    Another device's removed lease is journaled as `lease.remove` (its device as the id) and noted in
    this device's removal record (`store.records`), so that the device it belonged to is told.
    """
    with lease.local_lock(ctx.vault, timeout=ctx.lock_timeout, on_wait=ctx.on_wait):
        moment = ctx.clock()
        removed = lease.release_locked(ctx.vault, ctx.device, force, moment)
        after = leases.status(ctx.vault, ctx.device, ctx.clock())
        tx = Transaction(ctx, after)
        others = [item for item in removed if item.device != ctx.device and not item.expired(moment)]
        for item in removed:
            if item.device == ctx.device:
                tx.record("lease.release", None, item.rel, None)
            else:
                tx.record("lease.remove", item.device, item.rel, None)
        if others:
            told = [Removal(i.device, ctx.device, moment, i.task, i.acquired, i.expires) for i in others]
            records.record_removals(ctx.vault, ctx.device, told)
        return lease.Released(removed, after)


# ------------------------------------------------------------------------------------------ input


def read_body(source: str | None, cap: int) -> tuple[str | None, str]:
    """A new note's body from `--from` (None without it: the template), and how to name its source."""
    if source is None:
        return None, "the input"
    return read_input(source, cap), "the input" if source == "-" else Path(source).name


def read_input(source: str, cap: int, stdin: BinaryIO | None = None) -> str:
    """Text from a file or `-` (stdin), read up to cap + 1 bytes and decoded as UTF-8.

    The person's own file may live anywhere; only regular files are read, so a FIFO cannot hang.
    """
    if source == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        data = stream.read(cap + 1)
        name = "standard input"
    else:
        path = Path(source)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError as exc:
            raise UsageError(f"cannot read {source}: {exc.strerror}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UsageError(f"{source} is not a regular file")
            with os.fdopen(os.dup(fd), "rb") as handle:
                data = handle.read(cap + 1)
        finally:
            os.close(fd)
        name = path.name
    if len(data) > cap:
        raise InputRejected(f"{name} is over its cap of {cap} bytes; nothing was written")
    return notes.decode(data, name)


def clean_line(value: str, field: str, max_chars: int) -> str:
    """A one-line value (a title, a session): trimmed, printable, bounded; `field` names it in a refusal."""
    text = " ".join(value.split())
    if not text:
        raise UsageError(f"{FIELD} must not be empty", field=field)
    if len(text) > max_chars:
        raise UsageError(f"{FIELD} is longer than {max_chars} characters", field=field)
    if any(not ch.isprintable() for ch in text):
        raise UsageError(f"{FIELD} must be printable text", field=field)
    return text


def slugify(title: str, fallback: str) -> str:
    """File-name part from a title: lower-case ASCII letters and digits, runs of others become `-`."""
    out: list[str] = []
    for ch in title.lower():
        if ch.isascii() and ch.isalnum():
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    slug = "".join(out).strip("-")[: tunables.SLUG_MAX_CHARS].strip("-")
    return slug or fallback


def template_body(name: str, values: dict[str, str]) -> str:
    """The body of `templates/<name>` with `{{key}}` filled in (frontmatter is the writer's job).

    The template's own frontmatter documents the fields for people who write notes by hand; it is
    split off unparsed. Templates ship in the package too, so every installation has them.
    """
    path = resource_dir("templates") / name
    text = access.read_capped(path.parent, path.name, limits.LIFECYCLE_TEXT_CAP_BYTES)
    body = notes.split_frontmatter(notes.decode(text, name), name)[1]
    for key, value in values.items():
        body = body.replace("{{" + key + "}}", value)
    return body
