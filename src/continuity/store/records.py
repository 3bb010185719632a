"""Writing this device's own record files: the lease removals it made and the overlaps it found.

Each device writes only `<folder>/<device>.json` (`records.devicefiles`), so no two computers ever
write one synchronized file. Every write here starts from the record as `records` reads it (what
cannot be read starts afresh), keeps the newest entries within the record's bound, and replaces the
file atomically; the caller holds the local lock.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from continuity import tunables
from continuity.records import overlaps, removals
from continuity.store import atomic


def _write(root: Path, folder: str, rel: str, doc: dict[str, Any]) -> None:
    atomic.ensure_dir(root, folder)
    atomic.write_text(root / rel, json.dumps(doc, ensure_ascii=False, indent=2) + "\n")


def record_removals(root: Path, by: str, removed: list[removals.Removal]) -> str:
    """Add `removed` to `by`'s own removal record; its vault path."""
    rel = removals.record_rel(by)
    kept = [*removals.read_own(root, by), *removed][-tunables.LEASE_REMOVALS_KEPT :]
    entries = [{"device": item.device, **{k: v for k, v in item.to_json().items() if k != "by"}} for item in kept]
    _write(root, removals.FOLDER, rel, {"version": removals.VERSION, "device": by, "removed": entries})
    return rel


def _write_overlaps(vault: Path, device: str, found: list[dict[str, Any]], reviewed: list[str]) -> None:
    doc = {
        "version": overlaps.VERSION,
        "device": device,
        "overlaps": found[-overlaps.OVERLAPS_KEPT :],
        "reviewed": reviewed[-overlaps.OVERLAPS_KEPT :],
    }
    _write(vault, overlaps.FOLDER, overlaps.record_rel(device), doc)


def record_overlaps(vault: Path, device: str, found: list[overlaps.Overlap]) -> list[overlaps.Overlap]:
    """Add the overlaps not recorded yet to this device's record; the new ones."""
    kept, reviewed = overlaps.stored(overlaps.read_own(vault, device) or {})
    known = {str(item.get("id")) for item in kept}
    new = [item for item in found if item.id not in known]
    if new:
        _write_overlaps(vault, device, kept + [item.to_json() for item in new], reviewed)
    return new


def mark_reviewed(vault: Path, device: str, ids: list[str]) -> None:
    """Record in this device's own file that the person reviewed these overlaps."""
    kept, reviewed = overlaps.stored(overlaps.read_own(vault, device) or {})
    reviewed += [ident for ident in ids if ident not in reviewed]
    _write_overlaps(vault, device, kept, reviewed)
