"""The vault's layout and the one safe way to read a file from it.

Every read of private material goes through `read_capped`, which walks the path one component at a
time without following symbolic links, refuses anything that is not a regular file (a FIFO must never
block a session start), checks the size before reading and reads at most cap + 1 bytes, so a 6 GiB
sparse file costs one `fstat`. Paths come from the tools themselves or are checked by `safe_rel`, so
nothing can name a file outside the vault.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from pathlib import Path, PurePosixPath

from continuity import limits, safeio
from continuity.errors import InputRejected, NoteError

# The layout's names, re-exported for code that reads the vault through `access` (`access.HANDOFFS`).
from continuity.vault.layout import (
    ALL_DIRS as ALL_DIRS,
    ARCHIVE as ARCHIVE,
    CANDIDATES as CANDIDATES,
    DECISIONS as DECISIONS,
    DEVICES as DEVICES,
    DOCUMENTS as DOCUMENTS,
    FACTS as FACTS,
    HANDOFFS as HANDOFFS,
    INBOX as INBOX,
    INDEX as INDEX,
    LEASES as LEASES,
    LESSONS as LESSONS,
    MEMORY as MEMORY,
    MEMORY_POLICY as MEMORY_POLICY,
    PROJECTS as PROJECTS,
    SESSIONS as SESSIONS,
    STATE as STATE,
    SYSTEM as SYSTEM,
    TOOL_STATE as TOOL_STATE,
    WORKING_SET_DIRS as WORKING_SET_DIRS,
    device_dir as device_dir,
)


def journal(device: str) -> str:
    return f"{DEVICES}/{device}/journal.jsonl"


def safe_rel(rel: str) -> str:
    """Check a vault-relative path given by a person or a note: no absolute paths, no `..`."""
    if not rel or "\x00" in rel or "\\" in rel:
        raise InputRejected(f"invalid vault path {rel!r}")
    # Split by hand: PurePosixPath drops "." and empty parts, so "." would name the vault itself.
    parts = rel.split("/")
    if PurePosixPath(rel).is_absolute() or any(p in ("..", ".", "") for p in parts):
        raise InputRejected(f"path {rel!r} would leave the vault")
    return "/".join(parts)


def _open_nofollow(vault: Path, rel: str) -> int:
    """Open `rel` for reading, refusing a symbolic link at any component (shared with the warm path)."""
    return safeio.open_nofollow(str(vault), rel)


def real_folder(root: Path, rel_dir: str) -> bool:
    """True when every component of `rel_dir` is a real folder (no link anywhere on the way)."""
    current = root
    for part in rel_dir.split("/"):
        current = current / part
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return False
        except OSError:
            return False
    return True


def entry_names(root: Path, rel_dir: str) -> list[str]:
    """The sorted names in the vault folder `rel_dir`; none when it is not a real folder (a link on the
    way, absent) or cannot be listed. The device-record folders (leases, removals, overlaps) read this."""
    if not real_folder(root, rel_dir):
        return []
    try:
        return sorted(entry.name for entry in os.scandir(root / rel_dir))
    except OSError:
        return []


def _other_links(fd: int, info: os.stat_result) -> bool:
    """Whether the file has names besides this one: a hard link reaches a file outside the vault (or
    another note) as a symbolic link would. `atomic.write_bytes` links its temporary file to a new
    note's name and unlinks the temporary at once; a read that lands between the two calls looks
    once more after a moment, so only a link that stays is refused."""
    if info.st_nlink <= 1:
        return False

    time.sleep(limits.HARD_LINK_RECHECK_SECONDS)
    return os.fstat(fd).st_nlink > 1


def read_capped(vault: Path, rel: str, cap: int) -> bytes:
    """The bytes of a regular vault file of at most `cap` bytes, or a NoteError with its reason.

    Reasons: `missing`, `link`, `invalid` (not a regular file), `too_large`, `unreadable`.
    """
    try:
        fd = _open_nofollow(vault, rel)
    except FileNotFoundError:
        raise NoteError(f"{rel} is missing", "missing") from None
    except NotADirectoryError:
        raise NoteError(f"{rel}: a folder on its path is a file or a link", "link") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) or (exc.errno == errno.ENOTDIR):
            raise NoteError(f"{rel} is a symbolic link (links are never followed)", "link") from None
        raise NoteError(f"{rel} cannot be opened ({exc.strerror})", "unreadable") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NoteError(f"{rel} is not a regular file", "invalid")
        if _other_links(fd, info):
            raise NoteError(f"{rel} has other hard links (links are never followed)", "link")
        if info.st_size > cap:
            raise NoteError(f"{rel} is {info.st_size} bytes, over its cap of {cap}", "too_large")
        data = safeio.read_fd_capped(fd, cap)
    except OSError as exc:
        raise NoteError(f"{rel} cannot be read ({exc.strerror})", "unreadable") from None
    finally:
        os.close(fd)
    if len(data) > cap:
        raise NoteError(f"{rel} grew past its cap of {cap} bytes while being read", "too_large")
    return data


def read_head(root: Path, rel: str, size: int) -> tuple[bytes, int] | None:
    """The first `size` bytes of a regular vault file and its full size (None when it cannot be read)."""
    try:
        fd = _open_nofollow(root, rel)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or _other_links(fd, info):
            return None
        return os.read(fd, size), info.st_size
    except OSError:
        return None
    finally:
        os.close(fd)


def list_notes(vault: Path, rel_dir: str) -> list[tuple[str, os.stat_result]]:
    """Regular `*.md` files directly in a vault folder, sorted by name, without following links.

    Links and other non-regular entries are returned too (their lstat result says what they are) so
    callers can report them; hidden names (temporary files) are skipped.
    """
    folder = vault / rel_dir
    try:
        # Every component, not just the last: a linked `20-state` must not list a folder outside.
        parts = PurePosixPath(rel_dir).parts
        steps = [vault.joinpath(*parts[: n + 1]) for n in range(len(parts))]
        if any(step.is_symlink() for step in steps) or not folder.is_dir():
            return []
        entries = list(os.scandir(folder))
    except OSError:
        return []
    out: list[tuple[str, os.stat_result]] = []
    for entry in entries:
        if entry.name.startswith(".") or not entry.name.endswith(".md"):
            continue
        try:
            out.append((f"{rel_dir}/{entry.name}", entry.stat(follow_symlinks=False)))
        except OSError:
            continue
    out.sort()
    return out
