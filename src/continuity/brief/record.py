"""The startup cache's record: what the cold path keeps, and when it still holds.

One record per connection, event, harness and caller (the hook or the command line): the digest of
the code that made it, every input the brief depends on with its token at that time, the hook's exact
output and the brief. A record is current when the code is the same and every input's token still
is. Tokens: a `file` is its size and SHA-256 (or why it cannot be read), read without following
links; a `dir` is its (mode, mtime, ctime, inode); a `names` folder is the listing of its notes with
each one's (mode, size, mtime, ctime, inode). The ctime cannot be set by user code, so a rewrite
always shows. Tokens are taken before the cold path reads, so a change while it works only causes a
miss.

Standard library only: the hook's warm path (`hook.warm`) reads records with this module, the cold
path (`brief.cache`) writes them.
"""

from __future__ import annotations

import hashlib
import os
import stat

from continuity import lightjson, limits
from continuity.local import userdirs
from continuity.safeio import open_nofollow, read_fd_capped, read_regular

RECORD_MAGIC = b"continuity-startup-cache 5\n"

Record = tuple[dict[str, object], dict[str, bytes]]


def _file_token(root: str, rel: str, cap: int) -> str:
    try:
        fd = open_nofollow(root, rel)
    except OSError as exc:
        return f"open:{exc.errno}"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
            return f"mode:{info.st_mode}:size:{info.st_size}"
        data = read_fd_capped(fd, cap)
    except OSError as exc:
        return f"read:{exc.errno}"
    finally:
        os.close(fd)
    return f"{len(data)}:{hashlib.sha256(data).hexdigest()}"


def _stamp(info: os.stat_result) -> str:
    return f"{info.st_mode}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}"


def _names_token(root: str, rel: str) -> str:
    listing: list[str] = []
    try:
        with os.scandir(os.path.join(root, rel)) as entries:
            for entry in entries:
                if entry.name.endswith(".md") and not entry.name.startswith("."):
                    try:
                        listing.append(f"{entry.name}:{_stamp(entry.stat(follow_symlinks=False))}")
                    except OSError:
                        listing.append(f"{entry.name}!stat")
    except OSError as exc:
        return f"!{exc.errno}"
    return "\n".join(sorted(listing))


def token(root: str, rel: str, kind: str, cap: int = 0) -> str:
    """What a record keeps of one input (see the module docstring)."""
    if kind == "file":
        return _file_token(root, rel, cap)
    if kind == "names":
        return _names_token(root, rel)
    try:
        return _stamp(os.lstat(os.path.join(root, rel)))
    except OSError:
        return "-"


def record_path(root: str, project: str, device: str, event: str, harness: str, who: str) -> str:
    """Where the record of one connection, event, harness and caller (the hook or the CLI) lives."""
    ident = f"{who}\0{root}\0{project}\0{device}\0{event}\0{harness}"
    name = hashlib.sha256(ident.encode("utf-8", "surrogateescape")).hexdigest()[:32] + ".rec"
    return os.path.join(userdirs.cache_dir(), "startup", name)


def read_record(path: str) -> Record | None:
    """A whole record of this version with each blob matching its digest, else None."""
    try:
        data = read_regular(path, limits.STARTUP_CACHE_RECORD_CAP_BYTES)
        if not data.startswith(RECORD_MAGIC):
            return None
        end = data.index(b"\n", len(RECORD_MAGIC))
        head = lightjson.loads(data[len(RECORD_MAGIC) : end])
        blobs, position = {}, end + 1
        for name, size in head["blobs"]:
            blobs[name] = data[position : position + size]
            position += size
        intact = all(head[name + "_sha256"] == hashlib.sha256(blob).hexdigest() for name, blob in blobs.items())
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return (head, blobs) if intact and position == len(data) and isinstance(head, dict) else None


def is_current(head: dict[str, object], root: str, code: str) -> bool:
    deps = head.get("deps")
    return (
        head.get("code") == code
        and isinstance(deps, list)
        and all(token(root, rel, kind, cap) == was for rel, kind, cap, was in deps)
    )
