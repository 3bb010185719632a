"""`lifecycle preserve`: an exact delivered file kept in the vault on purpose, with its evidence.

The seed's outbox flow ends one of two ways: the knowledge becomes a small memory, or, when the exact
file matters, the person approves a preserved original in `40-documents/` while the outbox copy is
still deleted on time. This module is the second ending, in two steps:

1. `plan` reads the package's evidence (`outbox.package.evidence`: each file's size and SHA-256 from
   the manifest, the delivery time from the outbox record) and each chosen file once, capped and
   without following links. A file is kept only when its bytes are exactly the delivered ones; text
   passes the secret gate like a note, and a binary file, which the gate cannot read, is only capped
   and recorded as not scanned (`store.documents`). Nothing is written: the person sees the plan and
   confirms it (binary files need that confirmation explicitly).
2. `preserve_write.apply` writes each file under `40-documents/<project>/<UTC date>-<package>/` through the write
   path (local lock, lease refusal, exclusive atomic write, one journal line each), with a record
   beside it, `<file>.record.md`, whose frontmatter (`type: document`, `status: approved`, the
   package, digest, size, delivery and preservation times, device, whether it was scanned, and why)
   lets Obsidian show where it came from. Every record is checked before the first write.

The copies are cold: the brief never reads `40-documents/` and recall only reads `30-memory/` and
the device's notes, so nothing kept here reaches a model unless someone opens it on purpose. The
outbox is not touched: its copy keeps its expiry.

Decisions the issue leaves open:
- Only a package the outbox record lists as delivered is evidence: a manifest copied in from
  elsewhere proves nothing about the file beside it (exit 5, nothing written).
- Each file stands alone. A refused file (changed since delivery, a secret, over its cap, a name that
  cannot live in a vault, already kept with other bytes) is named with its reason and nothing is
  written for it; the others are still kept, and the command exits 5.
- Running it again is safe: a file already kept with the same bytes, on any date, is reported where
  it is (and its record completed after a crash), never copied twice.
- Names that begin with a dot (hidden in Obsidian, and shaped like the write path's temporary files),
  that cannot be printed, whose record would not fit in a file name, or that look like a secret are
  refused: rename the file and deliver it again.

Why here: it joins the outbox (the package's evidence) to the vault's write path. The outbox package
must not import the memory packages and the store never imports the outbox, so the join lives in
`memory`, which may use both; keeping an original is also one of the person's approvals, like
`approve`, and is written the same way.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

from continuity import ids, tunables
from continuity.errors import FIELD, InputRejected, NoteError, UsageError
from continuity.gate.secrets import scan_text
from continuity.outbox import package as outbox_package
from continuity.outbox.folder import STATE_NAME, format_time, outbox_path
from continuity.store import writer
from continuity.store.documents import CheckedDocument, check_document
from continuity.store.writer import WriteContext
from continuity.vault import access, budget, layout, notes

RECORD_SUFFIX = ".record.md"
OP_FILE = "document.preserve"
OP_RECORD = "document.record"
RECORD_CAP_BYTES = tunables.RECALL_NOTE_CAP_BYTES
READ_CAP_BYTES = max(tunables.PRESERVE_TEXT_MAX_BYTES, tunables.PRESERVE_BINARY_MAX_BYTES)
WITHHELD = "(file name withheld)"
# Refusal reasons for what `read_member` found, and what each says after the file's name.
_MEMBER_STATUS = {
    "missing": ("missing", "is no longer in the package"),
    "not-a-file": ("not_a_file", "is not a regular file in the package (a link or a folder)"),
    "modified": ("modified", "is not what was delivered: its size or SHA-256 differs from the manifest"),
    "too-large": ("too_large", f"is over the {READ_CAP_BYTES:,}-byte limit of a preserved file"),
}


@dataclass(frozen=True)
class Refused:
    file: str  # the package's name for it, or WITHHELD when the name itself looks like a secret
    reason: str  # not_in_package missing not_a_file modified too_large secret name record exists unconfirmed
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "reason": self.reason, "message": self.message}


@dataclass(frozen=True)
class Planned:
    """One file that will be kept: its checked bytes, where they go, and whether they are there already."""

    file: str
    id: str
    doc: CheckedDocument
    kept: bool  # the same bytes already sit at doc.rel (an earlier run): only a missing record is written

    @property
    def rel(self) -> str:
        return self.doc.rel

    @property
    def record(self) -> str:
        return self.doc.rel + RECORD_SUFFIX


class Source(NamedTuple):
    """What a record says of the delivery every file of one run came from."""

    package: str
    delivered: dt.datetime
    expires: dt.datetime
    why: str | None


@dataclass(frozen=True)
class Plan:
    package: str
    folder: str  # vault-relative folder of new copies
    delivered: dt.datetime
    expires: dt.datetime  # when the outbox copy is deleted, preserved or not
    files: tuple[Planned, ...]
    refused: tuple[Refused, ...]
    why: str | None

    def record_text(self, ctx: WriteContext, item: Planned, now: dt.datetime) -> str:
        return record_text(ctx, Source(self.package, self.delivered, self.expires, self.why), item, now)

    @property
    def unscanned(self) -> tuple[Planned, ...]:
        """Binary files to be written, which the secret gate cannot read."""
        return tuple(item for item in self.files if not item.doc.scanned and not item.kept)

    def without_unscanned(self) -> Plan:
        """The plan once the person declined to keep binary files unscanned."""
        declined = self.unscanned
        refused = tuple(
            Refused(item.file, "unconfirmed", f"{item.file} is binary and cannot be scanned for secrets; not confirmed")
            for item in declined
        )
        kept = tuple(item for item in self.files if item.doc.scanned or item.kept)
        return replace(self, files=kept, refused=self.refused + refused)


def _why(text: str | None) -> str | None:
    if text is None:
        return None
    clean = writer.clean_line(text, "why", tunables.PRESERVE_WHY_MAX_CHARS)

    if scan_text(clean):
        raise InputRejected(f"{FIELD} looks like it holds a secret; nothing was written", field="why")
    return clean


def _looks_secret(text: str) -> bool:
    return bool(scan_text(text))


def _shown(name: str) -> str:
    """A package file's name as it may be printed: withheld when secret-like, escaped when unprintable."""
    if _looks_secret(name):
        return WITHHELD
    return "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in name)


def _name_problem(name: str, listed: dict[str, outbox_package.PackageFile]) -> str | None:
    if name.startswith("."):
        return "begins with a dot, so it would be hidden in the vault"
    if not name.isprintable():
        return "has a character that cannot be printed"
    if len((name + RECORD_SUFFIX).encode("utf-8")) > tunables.FILE_NAME_MAX_BYTES:
        return f"is too long to have its record ({RECORD_SUFFIX}) beside it"
    if name + RECORD_SUFFIX in listed:
        return f"would share the name of its record with the package's file {name}{RECORD_SUFFIX}"
    return None


def document_ids(package: str, files: Sequence[outbox_package.PackageFile]) -> dict[str, str]:
    """`doc-<package>-<file slug>` for every file of the package, in manifest order.

    Derived from the manifest alone, so a file keeps its id whichever files a run preserves; package
    names are unique, so the ids are unique in the vault. Two names with one slug get `-2`, `-3`.
    """
    base = "doc-" + package.lower()
    out: dict[str, str] = {}
    used: set[str] = set()
    for item in files:
        slug = writer.slugify(item.name, "file")
        ident, count = f"{base}-{slug}", 1
        while ident in used:
            count += 1
            ident = f"{base}-{slug}-{count}"
        if not ids.is_note_id(ident):  # too long: the slug gives way, the package part stays unique
            ident = f"{base}-{count}"
        used.add(ident)
        out[item.name] = ident
    return out


def _earlier(vault: Path, project: str, package: str, name: str) -> str | None:
    """Where this package's file was kept before, on any date (the earliest), if anywhere."""
    parent = f"{layout.DOCUMENTS}/{project}"
    if not access.real_folder(vault, parent):
        return None
    with os.scandir(vault / parent) as listing:
        folders = sorted(
            entry.name
            for entry in listing
            if entry.name.endswith("-" + package) and len(entry.name) == len("YYYY-MM-DD-") + len(package)
        )
    for folder in folders:
        rel = f"{parent}/{folder}/{name}"
        if os.path.lexists(vault / rel):
            return rel
    return None


def same_bytes(vault: Path, rel: str, sha256: str) -> bool:
    try:
        data = access.read_capped(vault, rel, READ_CAP_BYTES)
    except NoteError:
        return False
    return writer.sha256_hex(data) == sha256


def _plan_one(
    ctx: WriteContext,
    found: outbox_package.Evidence,
    expected: outbox_package.PackageFile,
    folder: str,
    ident: str,
    why: str | None,
) -> Planned | Refused:
    name = expected.name
    shown = _shown(name)
    if shown == WITHHELD:
        return Refused(shown, "secret", "a file's name looks like a secret; rename it and deliver it again")
    listed = {item.name: item for item in found.files}
    problem = _name_problem(name, listed)
    if problem:
        return Refused(shown, "name", f"{shown} {problem}; rename it and deliver it again")
    member = outbox_package.read_member(found.path, expected, READ_CAP_BYTES)
    if member.status != "intact" or member.data is None:
        reason, said = _MEMBER_STATUS[member.status]
        return Refused(shown, reason, f"{shown} {said}")
    try:
        doc = check_document(f"{folder}/{name}", member.data, label=shown, **_caps())
    except NoteError as exc:
        return Refused(shown, exc.reason, str(exc))
    assert ctx.project is not None
    source = Source(found.package, found.created, found.expires, why)
    planned = Planned(name, ident, doc, kept=False)
    try:  # the record passes the same gate at the write, where a refusal would stop every file
        writer.check_text(planned.record, record_text(ctx, source, planned, ctx.clock()), RECORD_CAP_BYTES)
    except InputRejected as exc:
        return Refused(shown, "record", f"{shown}: its record would be refused ({exc})")
    earlier = _earlier(ctx.vault, ctx.project, found.package, name)
    if earlier is None:
        return planned
    if not same_bytes(ctx.vault, earlier, doc.sha256):
        return Refused(shown, "exists", f"{earlier} already exists with other content; it is never overwritten")
    return Planned(name, ident, replace(doc, rel=earlier), kept=True)


def _caps() -> dict[str, int]:
    return {"text_cap": tunables.PRESERVE_TEXT_MAX_BYTES, "binary_cap": tunables.PRESERVE_BINARY_MAX_BYTES}


def plan(ctx: WriteContext, repo: Path, package: str, names: Sequence[str] = (), *, why: str | None = None) -> Plan:
    """What preserving `names` of `package` (all of its files when none is named) would write; read-only."""
    if not ctx.project:
        raise UsageError("preserving needs a connected project; run 'lifecycle init' in this checkout")
    reason = _why(why)
    found = outbox_package.evidence(repo, package)
    if not found.managed:
        raise InputRejected(
            f"{package} is not listed as a delivery in {outbox_path(repo) / STATE_NAME}, so its manifest "
            "proves nothing about its files; deliver them with 'lifecycle outbox deliver' and preserve that package"
        )
    if _looks_secret(package):
        raise InputRejected(
            f"the package's name looks like a secret; deliver the files again under another {FIELD}", field="name"
        )
    folder = f"{layout.DOCUMENTS}/{ctx.project}/{ctx.clock():%Y-%m-%d}-{package}"
    access.safe_rel(folder)
    idents = document_ids(package, found.files)
    listed = {item.name: item for item in found.files}
    files: list[Planned] = []
    refused: list[Refused] = []
    for name in dict.fromkeys(names) or listed:
        expected = listed.get(name)
        if expected is None:
            shown = _shown(name)
            refused.append(Refused(shown, "not_in_package", f"{shown} is not a file of package {package}"))
            continue
        outcome = _plan_one(ctx, found, expected, folder, idents[name], reason)
        (files if isinstance(outcome, Planned) else refused).append(outcome)  # type: ignore[arg-type]
    return Plan(package, folder, found.created, found.expires, tuple(files), tuple(refused), reason)


class VaultAfter(NamedTuple):
    """The whole vault's storage figures once the plan is written, against the review limits."""

    bytes: int
    files: int
    limit_bytes: int
    limit_files: int
    state: str  # ok | warning | over


def vault_after(vault: Path, planned: Plan) -> VaultAfter:
    """Preserved originals count in the whole vault (never in the working set): where this leaves it."""
    limits_ = budget.Thresholds()
    now = budget.walk(vault, limits_).vault
    new = [item for item in planned.files if not item.kept]
    size = (now.bytes or 0) + sum(len(item.doc.data) for item in new)
    count = (now.files or 0) + 2 * len(new)
    state = budget.worst(
        budget.level(size, limits_.vault_bytes, limits_.ratio), budget.level(count, limits_.vault_files, limits_.ratio)
    )
    return VaultAfter(size, count, limits_.vault_bytes, limits_.vault_files, state)


def record_text(ctx: WriteContext, source: Source, item: Planned, now: dt.datetime) -> str:
    """The Markdown record kept beside a preserved file: where it came from, in frontmatter and prose."""
    meta: dict[str, Any] = {
        "id": item.id,
        "type": "document",
        "status": "approved",
        "project": ctx.project,
        "file": item.file,
        "source_package": source.package,
        "sha256": item.doc.sha256,
        "bytes": len(item.doc.data),
        "scanned": item.doc.scanned,
        "delivered": source.delivered,
        "preserved": now,
        "device": ctx.device,
    }
    if ctx.session:
        meta["session"] = ctx.session
    meta["why"] = source.why
    label = item.file.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    scanned = (
        "It is text and passed the secret gate."
        if item.doc.scanned
        else "It is binary: the secret gate cannot read it, so it was kept unscanned, as the person confirmed."
    )
    body = (
        f"# {label}\n\n"
        f"[{label}]({quote(item.file)}) is the exact file delivered in the outbox package "
        f"`{source.package}` at {format_time(source.delivered)}, kept on purpose at {notes.format_utc(now)} "
        f"on device `{ctx.device}`; its size and SHA-256 are those of the delivery. {scanned}\n\n"
        "A preserved original is cold: it is never loaded into a session and never returned by recall. "
        f"The outbox copy is deleted at its expiry all the same ({format_time(source.expires)}).\n"
    )
    return notes.compose(meta, body)
