"""Writes made under another computer's lease: found at sync, recorded, reported until reviewed.

A computer that has not synced yet cannot see a lease another computer took meanwhile, so it may
write (a handoff, a note) while that lease holds. Refusing such a write after the fact would lose
it, so a sync pushes it like any other and records the overlap instead: after integrating, the
operations this device's journal gained since the remote last saw it are compared with every other
device's lease now visible; an operation whose time falls inside such a lease (from `acquired` to
`expires`) was written under it. The sync names each one, and the record lets `doctor` on every
computer report it until the person has looked.

Each device writes only its own record, `.continuity/overlaps/<device>.json` (as with leases, so no
two computers write one synchronized file): versioned JSON with `device`, `overlaps` (each `id`,
`lease_device`, `lease_task`, `lease_acquired`, `lease_expires`, `ops` [`op`, `path`, `ts`]) and
`reviewed` (the ids of any device's overlaps this person has reviewed on this computer, through
`lifecycle lease overlaps --reviewed`). An overlap is open until some device's record lists it as
reviewed. Lease operations themselves are never an overlap: taking a lease is how the race is seen.

What it cannot see: a lease released before this computer synced is gone from the remote, so a write
made under it is not found.

This module finds and reads (the sync and doctor through it); the writes are `store.records`
(`record_overlaps`, `mark_reviewed`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity import tunables
from continuity.records import devicefiles
from continuity.records.journal import Entry
from continuity.records.leases import Lease
from continuity.vault import layout, notes

FOLDER = f"{layout.TOOL_STATE}/overlaps"
VERSION = 1
# How many overlaps (and reviewed ids) one record keeps, newest last: enough for months of mistakes.
OVERLAPS_KEPT = 200


@dataclass(frozen=True)
class Overlap:
    id: str
    device: str  # the device that wrote
    lease_device: str
    lease_task: str | None
    lease_acquired: str
    lease_expires: str
    ops: tuple[tuple[str, str, str], ...]  # (op, path, ts)

    def describe(self) -> str:
        task = f" ({self.lease_task})" if self.lease_task else ""
        done = ", ".join(f"{op} {path}" for op, path, _ts in self.ops[:3])
        more = f" and {len(self.ops) - 3} more" if len(self.ops) > 3 else ""
        return (
            f"device {self.device} wrote {done}{more} while device {self.lease_device} held the writer lease"
            f"{task} (from {self.lease_acquired} until {self.lease_expires})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "device": self.device,
            "lease_device": self.lease_device,
            "lease_task": self.lease_task,
            "lease_acquired": self.lease_acquired,
            "lease_expires": self.lease_expires,
            "ops": [{"op": op, "path": path, "ts": ts} for op, path, ts in self.ops],
        }


def record_rel(device: str) -> str:
    return devicefiles.rel(FOLDER, device)


def find(device: str, entries: list[Entry], leases: list[Lease]) -> list[Overlap]:
    """The overlaps among this device's journal `entries` and the leases seen."""
    found: list[Overlap] = []
    for held in sorted(leases, key=lambda item: (item.acquired, item.device)):
        if held.device == device:
            continue
        ops: list[tuple[str, str, str]] = []
        for entry in entries:
            when = entry.time
            if when is None or entry.op.startswith("lease."):
                continue
            if held.acquired <= when < held.expires:
                ops.append((entry.op, entry.path, notes.format_utc(when)))
        if ops:
            key = f"{device}\0{held.device}\0{held.token}\0{ops[0][2]}".encode()
            ident = hashlib.sha256(key).hexdigest()[:16]
            found.append(
                Overlap(
                    ident,
                    device,
                    held.device,
                    held.task,
                    notes.format_utc(held.acquired),
                    notes.format_utc(held.expires),
                    tuple(ops),
                )
            )
    return found


def read_own(vault: Path, device: str) -> dict[str, Any] | None:
    """`device`'s own record as it is stored, or None when it is unusable (what its next write keeps)."""
    return devicefiles.read(vault, record_rel(device), tunables.OVERLAPS_RECORD_CAP_BYTES, VERSION)


def stored(doc: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """A record's overlaps (as stored) and reviewed ids, with anything of the wrong shape left out."""
    kept = [item for item in doc.get("overlaps") or [] if isinstance(item, dict)]
    return kept, [str(x) for x in doc.get("reviewed") or [] if isinstance(x, str)]


def _overlap(doc: Any, device: str) -> Overlap | None:
    if not isinstance(doc, dict):
        return None
    try:
        ops = tuple((str(o["op"]), str(o["path"]), str(o["ts"])) for o in doc["ops"])
        task = doc.get("lease_task")
        return Overlap(
            str(doc["id"]),
            device,
            str(doc["lease_device"]),
            task if isinstance(task, str) else None,
            str(doc["lease_acquired"]),
            str(doc["lease_expires"]),
            ops,
        )
    except (KeyError, TypeError):
        return None


def read_all(vault: Path) -> tuple[list[Overlap], set[str]]:
    """Every overlap any device recorded, and every id any device marked reviewed."""
    found: list[Overlap] = []
    reviewed: set[str] = set()
    for device, doc in devicefiles.each(vault, FOLDER, tunables.OVERLAPS_RECORD_CAP_BYTES, VERSION):
        for item in doc.get("overlaps") or []:
            overlap = _overlap(item, device)
            if overlap is not None:
                found.append(overlap)
        reviewed.update(str(ident) for ident in doc.get("reviewed") or [] if isinstance(ident, str))
    return found, reviewed


def open_overlaps(vault: Path) -> list[Overlap]:
    """The overlaps no device has marked reviewed yet."""
    found, reviewed = read_all(vault)
    return [item for item in found if item.id not in reviewed]
