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
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, NamedTuple

from continuity import tunables
from continuity.errors import NoteError
from continuity.ids import is_valid_id
from continuity.store import atomic
from continuity.vault import access, layout, notes

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
    return f"{FOLDER}/{device}.json"


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


def _read(root: Path, rel: str) -> list[Removal]:
    """One device's record, or nothing when it is unreadable, malformed or from a newer version."""
    try:
        doc = json.loads(access.read_capped(root, rel, tunables.LEASE_REMOVALS_CAP_BYTES).decode("utf-8"))
    except (NoteError, UnicodeDecodeError, ValueError):
        return []
    if not isinstance(doc, dict):
        return []
    by = doc.get("device")
    if doc.get("version") != VERSION or not isinstance(by, str) or rel != record_rel(by):
        return []
    items = doc.get("removed")
    found = [_entry(item, by) for item in items] if isinstance(items, list) else []
    return [item for item in found if item is not None]


def read_all(root: Path) -> list[Removal]:
    out: list[Removal] = []
    for name in access.entry_names(root, FOLDER):
        if not name.startswith(".") and name.endswith(".json"):
            out.extend(_read(root, f"{FOLDER}/{name}"))
    return out


def record(root: Path, by: str, removed: list[Removal]) -> str:
    """Add `removed` to `by`'s own record file (the caller holds the local lock); its vault path."""
    rel = record_rel(by)
    kept = [*_read(root, rel), *removed][-tunables.LEASE_REMOVALS_KEPT :]
    entries = [{"device": item.device, **{k: v for k, v in item.to_json().items() if k != "by"}} for item in kept]
    doc = {"version": VERSION, "device": by, "removed": entries}
    atomic.ensure_dir(root, FOLDER)
    atomic.write_text(root / rel, json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    return rel


def seen_by(root: Path, device: str, held_since: dt.datetime | None, now: dt.datetime) -> Removal | None:
    """The newest removal of `device`'s lease it has not yet moved past, or None."""
    oldest = now - dt.timedelta(days=tunables.LEASE_REMOVAL_NOTICE_DAYS)
    found = [
        item
        for item in read_all(root)
        if item.device == device and item.at >= oldest and (held_since is None or item.at > held_since)
    ]
    return max(found, key=lambda item: item.at) if found else None
