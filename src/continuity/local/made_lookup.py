"""The read side of `made`: whether this computer made the file at a path.

Apart from `made` (which records and forgets) because the startup hook's warm path asks this at
every session start and compiles each module it imports then: this part needs no subprocess, no
fsync and no temporary files. See `made` for why these records exist and where they live.
Standard library only.
"""

from __future__ import annotations

import hashlib
import os

from continuity import lightjson, safeio
from continuity.local import userdirs

CONNECTION = "connection"
OUTBOX = "outbox"
RECORD_CAP_BYTES = 4096  # a path and a digest; anything larger is not a record of ours


def real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(path))


def record_path(kind: str, path: str | os.PathLike[str]) -> str:
    key = hashlib.sha256(real(path).encode("utf-8", "surrogateescape")).hexdigest()
    return os.path.join(userdirs.state_dir(), "made", kind, key)


def read_small(path: str | os.PathLike[str], cap: int) -> bytes | None:
    """A regular file's bytes (never through a link), or None when it is not one within `cap` bytes."""
    try:
        return safeio.read_regular(os.fspath(path), cap)
    except OSError:
        return None


def recalled(kind: str, path: str | os.PathLike[str]) -> str | None:
    """The value recorded when this computer made the file at `path`, or None."""
    data = read_small(record_path(kind, path), RECORD_CAP_BYTES)
    try:
        doc = lightjson.loads(data) if data is not None else None
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("version") != 1 or doc.get("path") != real(path):
        return None
    value = doc.get("value")
    return value if isinstance(value, str) and value else None


def is_made(kind: str, path: str | os.PathLike[str], value: str | None) -> bool:
    """Whether this computer recorded `value` for the file at `path`."""
    return value is not None and recalled(kind, path) == value
