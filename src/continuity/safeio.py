"""Opening files without following links, reading within a cap, and replacing private files whole.

Both startup paths and the vault reader use these, so the rules for private material hold in one
place: a path inside the vault is opened one component at a time with `O_NOFOLLOW`, so a symbolic
link anywhere on it is refused, not followed; a FIFO or device never blocks (`O_NONBLOCK`, then a
regular-file check); and at most cap + 1 bytes are ever read, so "exactly the cap" and "over it"
can be told apart without reading a huge file.

Temporary siblings are named `.<name>.<12 hex>.tmp` by every writer of this tool (`tmp_name`), so no
reader takes one for a note and doctor can tell a leftover from a file of the person's.

`write_private` is for machine-local bookkeeping (the startup cache, hook state, receipts): a
temporary sibling created 0600 with `O_EXCL`, then renamed over the target, so a reader sees the old
file or the new one. It does not fsync: a crash may lose the newest record, which costs a slower next
start or a restarted heuristic, never a wrong answer. Notes go through `atomic`, which does.
"""

from __future__ import annotations

import os
import stat

TMP_SUFFIX = ".tmp"
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_READ_CHUNK_BYTES = 1 << 16


def tmp_name(name: str) -> str:
    """The name of a temporary sibling of `name`: `.<name>.<12 hex>.tmp` (never a `.md` name)."""
    return f".{name}.{os.urandom(6).hex()}{TMP_SUFFIX}"


def is_tmp_name(name: str) -> bool:
    """True for the names `tmp_name` makes, whoever made them (doctor reports the ones left over)."""
    if not (name.startswith(".") and name.endswith(TMP_SUFFIX)):
        return False
    _, dot, token = name[: -len(TMP_SUFFIX)].rpartition(".")
    return bool(dot) and len(token) == 12 and all(c in "0123456789abcdef" for c in token)


def open_nofollow(root: str, rel: str) -> int:
    """Open `rel` (with `/` between its parts) under `root` for reading, refusing a link at any part.

    OSError (ELOOP, ENOTDIR…) when a part is a link or missing. `root` itself may be a link the
    person chose (a sync folder often is); nothing below it is followed.
    """
    parts = rel.split("/")
    if os.open not in os.supports_dir_fd or not O_NOFOLLOW or not O_DIRECTORY:  # pragma: no cover - Windows
        import errno  # lazy: only this fallback needs it, never the hook's warm start

        current = root
        for part in parts:
            current = os.path.join(current, part)
            if os.path.islink(current):
                raise OSError(errno.ELOOP, "symbolic link", current)
        return os.open(current, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    dir_fd = os.open(root, os.O_RDONLY | O_DIRECTORY)
    try:
        for part in parts[:-1]:
            next_fd = os.open(part, os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = next_fd
        return os.open(parts[-1], os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def read_fd_capped(fd: int, cap: int) -> bytes:
    """At most `cap + 1` bytes, so that the caller can tell "exactly the cap" from "over it"."""
    chunks: list[bytes] = []
    remaining = cap + 1
    while remaining > 0:
        chunk = os.read(fd, min(remaining, _READ_CHUNK_BYTES))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_regular(path: str, cap: int) -> bytes:
    """A machine-local file's bytes: never through a final link, never blocking, OSError over `cap`."""
    fd = os.open(path, os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | getattr(os, "O_BINARY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if info.st_size > cap:
            raise OSError(f"{path} is over {cap} bytes")
        data = read_fd_capped(fd, cap)
    finally:
        os.close(fd)
    if len(data) > cap:
        raise OSError(f"{path} is over {cap} bytes")
    return data


def write_private(path: str, data: bytes) -> None:
    """Replace a machine-local file whole, mode 0600, making its folder (0700) when it is missing."""
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, tmp_name(name))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(tmp, flags, 0o600)
    except FileNotFoundError:  # the first write on this computer
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(tmp, flags, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:  # noqa: SIM105 -- not contextlib: the hook's warm path writes through here, and imports it not
            os.unlink(tmp)
        except OSError:
            pass  # the rename's own error is the one to report
        raise
