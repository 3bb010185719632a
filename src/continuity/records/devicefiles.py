"""A folder of per-device record files, `<folder>/<device>.json`, read the one way they are all read.

The lease-removal and overlap records follow the leases' rule: each device writes only its own file,
so no two computers ever write one synchronized file. Every device's file arrives through the sync,
so reading is tolerant: a file that is a link, unreadable, over its cap, not a JSON object or of
another version is passed over (None), never fatal; names that are hidden, not `.json` or not a
device id are never opened. What each record holds is its own module's (`removals`, `overlaps`);
the write is `store.records`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from continuity.errors import NoteError
from continuity.ids import is_valid_id
from continuity.vault import access

SUFFIX = ".json"


def rel(folder: str, device: str) -> str:
    """Where `device`'s own record in `folder` lives, vault-relative."""
    return f"{folder}/{device}{SUFFIX}"


def read(root: Path, rel: str, cap_bytes: int, version: int) -> dict[str, Any] | None:
    """One record as a JSON object of `version`; None when it cannot be used."""
    try:
        doc = json.loads(access.read_capped(root, rel, cap_bytes))
    except (NoteError, OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("version") == version else None


def each(root: Path, folder: str, cap_bytes: int, version: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """(device, record) for every usable record in `folder`, by file name."""
    for name in access.entry_names(root, folder):
        device = name.removesuffix(SUFFIX)
        if name.startswith(".") or not name.endswith(SUFFIX) or not is_valid_id(device):
            continue
        doc = read(root, rel(folder, device), cap_bytes, version)
        if doc is not None:
            yield device, doc
