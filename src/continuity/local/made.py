"""What this computer's own tool made, remembered outside every repository.

A repository can carry any file, including one shaped exactly like a file this tool writes: an
outbox's activation record (`output/.outbox.json`), whose existence lets the sweep delete, or a
connection file (`.agent-vault`), which decides whose memory the hook trusts. Whether such a file is
the person's can therefore never be read from the file or the repository. It is read here instead:
when the tool makes one, it records the file's real path and a value bound to it (the outbox's random
activation token, the connection file's SHA-256) under the user's state folder, which no repository,
clone or remote writes. A file whose path and value are not recorded here was not made by this
computer, and neither the sweep nor the hook acts on it.

One small file per record, `<state>/made/<kind>/<sha256 of the real path>`, holding JSON
`{"version": 1, "path": …, "value": …}`: a lookup is one open, and two checkouts never rewrite each
other's records. Reading a record (`is_made`, `recalled`) lives in `made_lookup`, which the startup
hook's warm path imports alone; this module adds making and forgetting them, and re-exports the
reading part for everyone else. Standard library only: the startup hook and the pinned sweep read it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os

from continuity.local.made_lookup import (
    CONNECTION as CONNECTION,
    OUTBOX as OUTBOX,
    is_made as is_made,
    read_small,
    real as real,
    recalled as recalled,
    record_path as record_path,
)

GIT_TIMEOUT_SECONDS = 10
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def remember(kind: str, path: str | os.PathLike[str], value: str) -> None:
    """Record that this computer made the file at `path` with `value` (temporary sibling, fsync, rename)."""
    target = record_path(kind, path)
    folder = os.path.dirname(target)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    data = json.dumps({"version": 1, "path": real(path), "value": value}, ensure_ascii=True).encode("ascii")
    temp = f"{target}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb", closefd=False) as handle:
            handle.write(data)
            handle.flush()
            os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.replace(temp, target)
    except OSError:
        os.unlink(temp)
        raise


def forget(kind: str, path: str | os.PathLike[str]) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(record_path(kind, path))


def file_digest(path: str | os.PathLike[str], cap: int) -> str | None:
    """SHA-256 of a regular file's bytes (never through a link), or None when it is not one within `cap`."""
    data = read_small(path, cap)
    return None if data is None else hashlib.sha256(data).hexdigest()


def tracked(repo: str | os.PathLike[str], path: str | os.PathLike[str]) -> bool:
    """Whether git tracks `path` in `repo` (then a clone, not this computer, chose it); True when unsure."""
    import subprocess  # not at import time: the hook's warm path reads records and never runs git

    try:
        done = subprocess.run(
            ["git", "-C", os.fspath(repo), "ls-files", "--error-unmatch", "--", os.fspath(path)],
            capture_output=True, timeout=GIT_TIMEOUT_SECONDS, check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return True
    return done.returncode == 0
