"""An exact "nothing changed" oracle for the recall index, for a long-lived process (the MCP server).

The index's freshness check lists and stats every warm note at every search (`eligible.scan`), which
at 10,000 notes costs more than the whole search. A process that stays up can instead ask the kernel
to tell it about every change: on Linux, an inotify instance (through ctypes on libc) watches every
folder the recall walk enters (the same folders, the same depth, links never followed) and the
folders on the way to them. At each search the queue is drained without blocking; when nothing that
the walk could see happened since the last full refresh, and the index still holds the listing that
refresh committed, the listing is unchanged and the walk is skipped. Anything else (a relevant
event, `IN_Q_OVERFLOW`, `IN_IGNORED`, a read error, a watch that could not be added) means a full
refresh as before, after which the watches are armed again, each folder's before it is listed, so a
change made while the walk runs is seen by the next search. It is exact, never time-based.

Which events count: any event on a watched folder itself (moved, deleted, its mode changed), any
event on a folder entry, and any on a `*.md` name, except hidden names, which the walk skips too; on
the folders on the way (the vault, `50-devices/`, the device's folder) only the next name on the way
counts. Where inotify cannot be used (not Linux, no libc, the watch limit reached), `usable` is False
and every search makes the full check, as the command line and the hook always do: one-shot
processes gain nothing from a watcher, so only the server's session holds one.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from continuity import tunables
from continuity.recall.eligible import warm_folders

# From <sys/inotify.h> (the same on every Linux architecture).
IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

MASK = (
    IN_CREATE
    | IN_DELETE
    | IN_MODIFY
    | IN_CLOSE_WRITE
    | IN_ATTRIB
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
)
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len; then `len` bytes of NUL-padded name
_ALWAYS = IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF


class Event(NamedTuple):
    wd: int
    mask: int
    name: str


def parse_events(buffer: bytes) -> Iterator[Event]:
    """The events in one `read` of an inotify descriptor; a truncated tail ends the iteration."""
    offset = 0
    while offset + _HEADER.size <= len(buffer):
        wd, mask, _cookie, length = _HEADER.unpack_from(buffer, offset)
        start = offset + _HEADER.size
        raw = buffer[start : start + length]
        yield Event(wd, mask, raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape"))
        offset = start + length


def matters(event: Event, on_the_way: dict[int, set[str]]) -> bool:
    """True when `event` could change what the recall walk lists (see the module's docstring).

    `on_the_way` maps the descriptors of the folders above the warm ones to the names that count in
    each; any other watched descriptor is a folder the walk lists."""
    if event.mask & _ALWAYS or not event.name:
        return True  # the queue overflowed, a watch is gone, or a watched folder itself changed
    if event.wd in on_the_way:
        return event.name in on_the_way[event.wd]
    if event.name.startswith("."):
        return False
    return bool(event.mask & IN_ISDIR) or event.name.endswith(".md")


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        for name in ("inotify_init1", "inotify_add_watch"):
            getattr(libc, name)
    except (OSError, AttributeError):
        return None
    libc.inotify_init1.argtypes = [ctypes.c_int]
    libc.inotify_init1.restype = ctypes.c_int
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    libc.inotify_add_watch.restype = ctypes.c_int
    return libc


class Watcher:
    """The warm folders of one vault for one device, watched; `usable` False means "always check".

    Not thread-safe: the server calls it under its session's lock. Close it when done."""

    def __init__(self, root: Path, device: str) -> None:
        self.root = root
        self.device = device
        self._libc = _libc()
        self.usable = self._libc is not None
        self._fd = -1
        self._on_the_way: dict[int, set[str]] = {}
        self._clean = False  # armed, and no add_watch failed since
        self.fingerprint: str | None = None  # the listing the last full refresh committed

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = -1
        self._clean = False
        self.fingerprint = None

    def disable(self) -> None:
        """Give up on inotify for good (a watch limit, a failing descriptor): every search checks."""
        self.close()
        self.usable = False

    def unchanged(self) -> bool:
        """True when nothing the walk could see has changed since the last full refresh was armed."""
        if not self.usable or self._fd < 0 or not self._clean or self.fingerprint is None:
            return False
        try:
            while True:
                buffer = os.read(self._fd, tunables.RECALL_WATCH_READ_BYTES)
                if not buffer:
                    break
                if any(matters(event, self._on_the_way) for event in parse_events(buffer)):
                    self._clean = False
                    return False
        except BlockingIOError:
            return True  # the queue is empty
        except OSError:
            self.disable()
        self._clean = False
        return False

    def arm(self) -> None:
        """Start a fresh instance and watch the folders on the way to the warm folders; the walk
        itself then calls `enter` for each folder before it lists it."""
        self.close()
        if not self.usable or self._libc is None:
            return
        fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            self.disable()
            return
        self._fd = fd
        self._clean = True
        self._on_the_way = {}
        for folder in warm_folders(self.device):
            parts = folder.split("/")
            for depth, name in enumerate(parts):
                # A folder on the way that is missing, or a link or a file, ends the chain: the walk
                # will not enter it either, and the watch on its parent sees the name change.
                wd = self._add("/".join(parts[:depth]), absent_ok=True)
                if wd is None:
                    break
                self._on_the_way.setdefault(wd, set()).add(name)

    def enter(self, rel_dir: str) -> None:
        """Watch one folder the walk is about to list (a folder it opened, never through a link)."""
        if self._clean:
            self._add(rel_dir, absent_ok=False)

    def _add(self, rel_dir: str, *, absent_ok: bool) -> int | None:
        if self._libc is None or not self._clean:
            return None
        path = os.path.join(os.fsencode(self.root), os.fsencode(rel_dir)) if rel_dir else os.fsencode(self.root)
        wd = int(self._libc.inotify_add_watch(self._fd, path, MASK))
        if wd >= 0:
            return wd
        code = ctypes.get_errno()
        if code in (errno.ENOSPC, errno.ENOMEM, errno.EBADF, errno.EINVAL):
            self.disable()  # the watch limit is reached, or inotify itself failed: check every time
        elif not (absent_ok and code in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EACCES)):
            self._clean = False  # gone or swapped for a link while the walk ran: the next search checks
        return None
