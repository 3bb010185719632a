"""Telling a device that its lease was removed: the record `lease release --force` leaves behind.

Removing another device's lease file (the person says that computer is gone, or stuck) leaves that
device seeing `lock=none` with no hint of why, so the remover also writes a small record, and the
device whose lease was removed sees it in `lease status` and `doctor`: who removed it, when, and
what the lease was for.

Each device writes only its own record file, `.continuity/removed-leases/<remover>.json`, as with
leases, so that no two computers ever write one synchronized file: versioned JSON, `version`,
`device` (the remover) and `removed`, a list of `device`, `task`, `acquired`, `expires`, `at`, newest
last, of at most `LEASE_REMOVALS_KEPT` entries. A reader takes every record file it can see and
keeps the entries about its own device that are newer than its current lease (a lease taken again
after the removal makes the news old) and younger than `LEASE_REMOVAL_NOTICE_DAYS`.

This module reads (doctor and `lease status` through it); the write is `store.records.record_removals`.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, NamedTuple

from continuity import tunables
from continuity.ids import is_valid_id
from continuity.records import devicefiles
from continuity.vault import layout, notes

FOLDER = f"{layout.TOOL_STATE}/removed-leases"
VERSION = 1


class Removal(NamedTuple):
    device: str  # whose lease was removed
    by: str  # the device that removed it
    at: dt.datetime
    task: str | None
    acquired: dt.datetime
    expires: dt.datetime

    def describe(self) -> str:
        task = f" ({self.task})" if self.task else ""
        return (
            f"device {self.by} removed this device's writer lease{task} at {notes.format_utc(self.at)}, "
            f"before it expired at {notes.format_utc(self.expires)}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "at": notes.format_utc(self.at),
            "task": self.task,
            "acquired": notes.format_utc(self.acquired),
            "expires": notes.format_utc(self.expires),
        }


def record_rel(device: str) -> str:
    return devicefiles.rel(FOLDER, device)


def entries(doc: dict[str, Any], by: str) -> list[Removal]:
    """The well-formed removals of `by`'s record (what is not one is passed over)."""
    items = doc.get("removed")
    found = [_entry(item, by) for item in items] if isinstance(items, list) else []
    return [item for item in found if item is not None]


def _entry(raw: object, by: str) -> Removal | None:
    if not isinstance(raw, dict):
        return None
    device, task = raw.get("device"), raw.get("task")
    times = [notes.as_utc(raw.get(key)) for key in ("at", "acquired", "expires")]
    if not isinstance(device, str) or not is_valid_id(device) or any(t is None for t in times):
        return None
    at, acquired, expires = times
    assert at is not None and acquired is not None and expires is not None
    return Removal(device, by, at, task if isinstance(task, str) else None, acquired, expires)


def read_own(root: Path, by: str) -> list[Removal]:
    """`by`'s own record, or nothing when it is unusable (what its next write keeps)."""
    doc = devicefiles.read(root, record_rel(by), tunables.LEASE_REMOVALS_CAP_BYTES, VERSION)
    return entries(doc, by) if doc is not None and doc.get("device") == by else []


def read_all(root: Path) -> list[Removal]:
    """Every device's removals; a record is its writer's only when it names itself as in its file name."""
    out: list[Removal] = []
    for by, doc in devicefiles.each(root, FOLDER, tunables.LEASE_REMOVALS_CAP_BYTES, VERSION):
        if doc.get("device") == by:
            out.extend(entries(doc, by))
    return out


def seen_by(root: Path, device: str, held_since: dt.datetime | None, now: dt.datetime) -> Removal | None:
    """The newest removal of `device`'s lease it has not yet moved past, or None."""
    oldest = now - dt.timedelta(days=tunables.LEASE_REMOVAL_NOTICE_DAYS)
    found = [
        item
        for item in read_all(root)
        if item.device == device and item.at >= oldest and (held_since is None or item.at > held_since)
    ]
    return max(found, key=lambda item: item.at) if found else None
