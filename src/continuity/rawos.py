"""The few operating-system calls the startup hook's warm path needs, without importing `os`.

Importing `os` costs about a millisecond on its own (it loads `_collections_abc`, `posixpath` and
`stat`), as much as all the rest of the warm path's work, so on POSIX this module calls the built-in
`posix` module that `os` wraps and does the handful of path operations by hand, with `posixpath`'s
exact semantics. On Windows it simply uses `os`: the speed target is measured on POSIX, and `os` is
correct everywhere. Anything unusual (a path with a link or a `..` in it, a missing folder) falls
back to `os` itself, so the shortcut is only ever taken where its answer is the same.

It also holds the file primitives both startup paths share: opening a vault file without following
a link at any component, reading within a cap, and replacing a machine-local file atomically.
"""

import sys

if sys.platform == "win32":  # pragma: no cover - POSIX is where the warm path's speed is measured
    import os as _os
    from os.path import dirname, isabs, join

    def getenv(name: str) -> str | None:
        return _os.environ.get(name)

else:
    import posix as _os

    def getenv(name: str) -> str | None:
        """`os.environ.get`, from `os.environ` itself once something has imported (and maybe changed) it."""
        loaded = sys.modules.get("os")
        if loaded is not None:
            return loaded.environ.get(name)  # type: ignore[no-any-return]
        value = _os.environ.get(name.encode())
        return None if value is None else value.decode(sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())

    def join(base: str, *parts: str) -> str:
        """`posixpath.join` for str."""
        path = base
        for part in parts:
            if part.startswith("/"):
                path = part
            elif not path or path.endswith("/"):
                path += part
            else:
                path += "/" + part
        return path

    def dirname(path: str) -> str:
        """`posixpath.dirname` for str."""
        head = path[: path.rfind("/") + 1]
        return head.rstrip("/") if head and head != "/" * len(head) else head

    def isabs(path: str) -> bool:
        return path.startswith("/")


O_NOFOLLOW = getattr(_os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(_os, "O_NONBLOCK", 0)
O_DIRECTORY = getattr(_os, "O_DIRECTORY", 0)
# What `os.supports_dir_fd` tests for `os.open`, read from the same list `os` builds it from.
USE_DIR_FD = "HAVE_OPENAT" in getattr(_os, "_have_functions", ()) and bool(O_NOFOLLOW) and bool(O_DIRECTORY)

close = _os.close
fstat = _os.fstat
lstat = _os.lstat
scandir = _os.scandir


# The file-type bits of st_mode, as the `stat` module defines them on every platform (importing even
# the built-in `_stat` costs more than these three lines).
def S_IFMT(mode: int) -> int:
    return mode & 0o170000


def S_ISREG(mode: int) -> bool:
    return mode & 0o170000 == 0o100000


def S_ISLNK(mode: int) -> bool:
    return mode & 0o170000 == 0o120000


# A path under which nothing can be opened or created, by anyone: the home of a process that has none.
NO_HOME = "/dev/null"


def home() -> str:
    """HOME when it is absolute, else the password database's home, else NO_HOME; never relative.

    `os.path.expanduser` would return a relative HOME as it is, and caches found relative to the
    session's folder would let a repository supply them (a planted startup record is a brief that
    skipped the secret gate). Without an absolute home nothing is cached or recorded; all else works.
    """
    value = getenv("HOME")
    if value and isabs(value):
        return value
    if sys.platform == "win32":  # pragma: no cover
        value = _os.path.expanduser("~")
        return value if isabs(value) else NO_HOME
    try:
        import pwd

        value = pwd.getpwuid(_os.getuid()).pw_dir
    except (ImportError, KeyError):
        return NO_HOME
    return value if isabs(value) else NO_HOME


def user_dir(kind: str) -> str:
    """`$XDG_CACHE_HOME/continuity` or `$XDG_STATE_HOME/continuity` (`kind`: "cache" or "state").

    A relative XDG value is ignored, as the XDG specification requires: taken relative to the session's
    folder, it would let a repository supply this computer's cache.
    """
    variable, fallback = ("XDG_CACHE_HOME", ".cache") if kind == "cache" else ("XDG_STATE_HOME", ".local/state")
    base = getenv(variable)
    return join(base if base and isabs(base) else join(home(), fallback), "continuity")


def plain_real(path: str) -> str | None:
    """`path` itself when it is absolute, normal and free of links, so that it is its own real path.

    None means "ask `os.path.realpath`": a `.`, `..` or empty component, or a link on the way.
    """
    if not isabs(path) or "\x00" in path:
        return None
    parts = path.split("/")[1:]
    if path == "/":
        return path
    current = ""
    for part in parts:
        if part in ("", ".", ".."):
            return None
        current += "/" + part
        try:
            if S_ISLNK(_os.lstat(current).st_mode):
                return None
        except OSError:
            return None
    return path


def realpath(path: str) -> str:
    """`os.path.realpath`, without importing `os` for a path that is already real."""
    plain = plain_real(path) if sys.platform != "win32" else None
    if plain is not None:
        return plain
    import os.path

    return os.path.realpath(path)


def lexists(path: str) -> bool:
    try:
        _os.lstat(path)
    except (OSError, ValueError):
        return False
    return True


def open_nofollow(root: str, rel: str) -> int:
    """Open `rel` under `root` for reading, refusing a symbolic link at any component (OSError)."""
    parts = rel.split("/")
    if not USE_DIR_FD:  # pragma: no cover - every POSIX system this runs on has openat
        import os

        current = root
        for part in parts:
            current = os.path.join(current, part)
            if os.path.islink(current):
                import errno

                raise OSError(errno.ELOOP, "symbolic link", current)
        return os.open(current, os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
    dir_fd = _os.open(root, _os.O_RDONLY | O_DIRECTORY)
    try:
        for part in parts[:-1]:
            next_fd = _os.open(part, _os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW, dir_fd=dir_fd)
            _os.close(dir_fd)
            dir_fd = next_fd
        return _os.open(parts[-1], _os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK, dir_fd=dir_fd)
    finally:
        _os.close(dir_fd)


def open_regular(path: str) -> int:
    """Open a machine-local file for reading: never through a link, never blocking on a FIFO."""
    fd = _os.open(path, _os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
    if not S_ISREG(_os.fstat(fd).st_mode):
        _os.close(fd)
        raise OSError(f"{path} is not a regular file")
    return fd


def read_fd_capped(fd: int, cap: int) -> bytes:
    """At most `cap + 1` bytes, so that the caller can tell "exactly the cap" from "over it"."""
    chunks: list[bytes] = []
    remaining = cap + 1
    while remaining > 0:
        chunk = _os.read(fd, min(remaining, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def overwrite(path: str, data: bytes) -> bool:
    """Write `data` over an existing regular file of exactly its size, in place; False if there is none.

    For a fixed-size record rewritten at every session start: creating and renaming a file costs about
    a tenth of a millisecond (ext4 even writes the new file out at once when a rename replaces another),
    an in-place write a few microseconds. The price is that a reader racing the write, or a crash in
    the middle of it, can see a damaged file, so this is only for records whose reader treats damage
    as absence.
    """
    pwrite = getattr(_os, "pwrite", None)
    if pwrite is None:  # pragma: no cover - Windows
        return False
    try:
        fd = _os.open(path, _os.O_WRONLY | O_NOFOLLOW | O_NONBLOCK)
    except OSError:
        return False
    try:
        info = _os.fstat(fd)
        if not S_ISREG(info.st_mode) or info.st_size != len(data):
            return False
        view, offset = memoryview(data), 0
        while offset < len(data):
            offset += pwrite(fd, view[offset:], offset)
        return True
    finally:
        _os.close(fd)


def read_regular(path: str, cap: int) -> bytes:
    """A machine-local file's bytes (`open_regular`), OSError when it holds more than `cap`."""
    fd = open_regular(path)
    try:
        data = read_fd_capped(fd, cap)
    finally:
        _os.close(fd)
    if len(data) > cap:
        raise OSError(f"{path} is over {cap} bytes")
    return data


def write_private(path: str, data: bytes) -> None:
    """Replace a machine-local file atomically, mode 0600 (no fsync: losing it in a crash costs only speed)."""
    folder = dirname(path)
    tmp = join(folder, f".{path[len(folder) + 1 :]}.{_os.urandom(6).hex()}.tmp")
    flags = _os.O_WRONLY | _os.O_CREAT | _os.O_EXCL | O_NOFOLLOW
    try:
        fd = _os.open(tmp, flags, 0o600)
    except FileNotFoundError:  # the first write on this computer: make the folder, private
        import os

        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = _os.open(tmp, flags, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[_os.write(fd, view) :]
    finally:
        _os.close(fd)
    try:
        _os.replace(tmp, path)
    except OSError:
        _os.unlink(tmp)
        raise
