"""Writes that never leave a partial file.

A write goes to a temporary sibling named `.<name>.<random>.tmp` (never ending in `.md`, so no reader
takes it for a note), created with its final permissions, flushed and fsynced, then renamed over the
target; the directory is fsynced after the rename so the new name itself survives a crash. A killed
writer therefore leaves the old file or the new one, and at worst a stray `*.tmp` that doctor reports.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from continuity.errors import InputRejected
from continuity.safeio import tmp_name
from continuity.vault import access

PRIVATE_FILE_MODE = 0o600


def tmp_name_for(target: Path) -> Path:
    return target.with_name(tmp_name(target.name))


def fsync_dir(directory: Path) -> None:
    """Persist a rename; some platforms cannot open directories, which is then not an error."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_bytes(target: Path, data: bytes, mode: int = PRIVATE_FILE_MODE, *, exclusive: bool = False) -> None:
    """Atomically replace (or, with `exclusive`, create) `target` with `data`.

    `exclusive` refuses to replace an existing file (FileExistsError), which is how unique note names
    stay unique even when two writers pick the same name in the same instant.
    """
    tmp = tmp_name_for(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if exclusive:
            # link() fails when the target exists, unlike rename(): no window where one writer
            # silently replaces another's new note.
            os.link(tmp, target)
            os.unlink(tmp)
        else:
            os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(target.parent)


def write_text(target: Path, text: str, mode: int = PRIVATE_FILE_MODE, *, exclusive: bool = False) -> None:
    write_bytes(target, text.encode("utf-8"), mode, exclusive=exclusive)


def append_line(target: Path, line: str, mode: int = PRIVATE_FILE_MODE) -> None:
    """Append one whole line with a single write() on an O_APPEND descriptor.

    One write of a complete line is what keeps journal lines from tearing: a killed writer leaves the
    line or nothing (local file systems do not split a small O_APPEND write).
    """
    if "\n" in line:
        raise ValueError("a journal line must not contain a newline")
    data = (line + "\n").encode("utf-8")
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), mode)
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(f"short append to {target.name}")
        os.fsync(fd)
    finally:
        os.close(fd)


def ensure_dir(vault_root: Path, rel_dir: str) -> Path:
    """Create a vault folder (0700) component by component, refusing links and non-folders on the way."""
    current = vault_root
    for part in access.safe_rel(rel_dir).split("/"):
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            with contextlib.suppress(FileExistsError):
                current.mkdir(mode=0o700)
            info = os.lstat(current)
        if stat.S_ISLNK(info.st_mode):
            raise InputRejected(f"{current.relative_to(vault_root)} is a symbolic link; writes never follow links")
        if not stat.S_ISDIR(info.st_mode):
            raise InputRejected(f"{current.relative_to(vault_root)} is not a folder")
    return current
