"""`lifecycle preserve`, the write: each planned file and its record through the one write path.

`preserve.plan` decided what is kept and checked its bytes; this writes it under the writer's
transaction (local lock, lease refusal, exclusive atomic write, one journal line per file: op
`document.preserve` for the copy, `document.record` for its record). Every record is checked before
the first write, so a problem there writes nothing at all. Under the lock, a copy that another run
wrote meanwhile is accepted when it has the same bytes and refused otherwise, never replaced, and an
existing record is left as it is, so a run after a crash only completes what is missing.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from typing import Any

from continuity.memory.preserve import OP_FILE, OP_RECORD, RECORD_CAP_BYTES, Plan, Planned, Refused, same_bytes
from continuity.store import writer
from continuity.store.writer import WriteContext


@dataclass(frozen=True)
class Kept:
    file: str
    path: str  # vault-relative
    record: str  # vault-relative
    sha256: str
    bytes: int
    scanned: bool
    written: bool  # False when the same bytes were already there

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "path": self.path,
            "record": self.record,
            "sha256": self.sha256,
            "bytes": self.bytes,
            "scanned": self.scanned,
        }


@dataclass(frozen=True)
class Preservation:
    package: str
    expires: dt.datetime
    preserved: tuple[Kept, ...]
    refused: tuple[Refused, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "preserved": [item.to_json() for item in self.preserved],
            "refused": [item.to_json() for item in self.refused],
        }


def apply(ctx: WriteContext, planned: Plan) -> Preservation:
    """Write the plan through the write path; every record is checked before the first write."""
    if not planned.files:
        return Preservation(planned.package, planned.expires, (), planned.refused)
    now = ctx.clock()
    kept: list[Kept] = []
    refused = list(planned.refused)
    with writer.transaction(ctx) as tx:
        records = {item.file: planned.record_text(ctx, item, now) for item in planned.files}
        for item in planned.files:
            tx.check(item.record, records[item.file], RECORD_CAP_BYTES)
        for item in planned.files:
            outcome = _write(tx, item, records[item.file])
            (kept if isinstance(outcome, Kept) else refused).append(outcome)  # type: ignore[arg-type]
    return Preservation(planned.package, planned.expires, tuple(kept), tuple(refused))


def _write(tx: writer.Transaction, item: Planned, record: str) -> Kept | Refused:
    """One file and its record, under the lock; what another run wrote meanwhile is kept, never replaced."""
    written = False
    if not os.path.lexists(tx.vault / item.rel):
        try:
            tx.create_document(item.doc, op=OP_FILE, note_id=item.id)
            written = True
        except writer.Exists:
            pass
    if not written and not same_bytes(tx.vault, item.rel, item.doc.sha256):
        return Refused(item.file, "exists", f"{item.rel} already exists with other content; it is never overwritten")
    if not os.path.lexists(tx.vault / item.record):
        tx.create(item.record, record, op=OP_RECORD, note_id=item.id, cap=RECORD_CAP_BYTES)
    return Kept(item.file, item.rel, item.record, item.doc.sha256, len(item.doc.data), item.doc.scanned, written)
