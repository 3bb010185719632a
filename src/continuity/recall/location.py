"""Where a vault's recall index lives, and the stamp of the code that built it.

The index is a per-machine cache under `$XDG_CACHE_HOME/continuity/recall/` (else `~/.cache/…`),
one file per vault, named by a digest of the vault's resolved path. Its stamp covers the code that
classifies and tokenizes (the recall modules, notes, the secret gate, limits, ids): a note the gate
would now refuse, or a change in how words are indexed, must not survive in an old index.
"""

from __future__ import annotations

import functools
import os
from hashlib import sha256
from pathlib import Path

# The code an index depends on, as patterns under the package: what it keeps, how it reads notes,
# and the whole secret gate (a note the gate would now refuse must not stay searchable).
_STAMP_MODULES = ("recall/*.py", "vault/notes.py", "gate/*.py", "limits.py", "ids.py")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "continuity" / "recall"


def vault_key(root: Path) -> str:
    return str(root.resolve())


def index_file(root: Path) -> Path:
    return cache_dir() / (sha256(vault_key(root).encode("utf-8")).hexdigest()[:16] + ".sqlite")


@functools.cache
def code_stamp() -> str:
    """A digest of the modules an index depends on, read once per process: the code a process runs
    does not change under it, and reading two dozen files at every search cost a few milliseconds."""
    parts: list[bytes] = []
    package = Path(__file__).resolve().parents[1]
    for pattern in _STAMP_MODULES:
        for path in sorted(package.glob(pattern)) or [package / pattern]:
            name = path.relative_to(package).as_posix()
            try:
                parts.append(name.encode() + b"\0" + path.read_bytes())
            except OSError:
                parts.append(name.encode() + b"\0missing")
    return sha256(b"".join(parts)).hexdigest()
