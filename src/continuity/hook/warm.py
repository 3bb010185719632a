"""The startup hook's warm path: an unchanged vault is answered from the record the cold path left.

Every session waits for this, so it imports only `os`, `json`, `hashlib` and three small modules
(every line here is compiled at each start, since no compiled code is kept). The cold path
(`startup_cache`) writes one record per connection, event, harness and caller: the digest of the
code that made it, every input the brief depends on with its token at that time, the hook's exact
output and the brief. A record is current when the code is the same and every input's token still
is; then the output is returned as it was written. Anything else returns None, and the full path
answers.

Tokens: a `file` is its size and SHA-256 (or why it cannot be read), read without following links;
a `dir` is its (mode, mtime, ctime, inode); a `names` folder is the listing of its notes with each
one's (mode, size, mtime, ctime, inode). The ctime cannot be set by user code, so a rewrite always
shows. Tokens are taken before the cold path reads, so a change while it works only causes a miss.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
import time

from continuity import ids, limits
from continuity.local import connfile, userdirs
from continuity.local.repo import top_level
from continuity.safeio import open_nofollow, read_fd_capped, read_regular, write_private

RECORD_MAGIC = b"continuity-startup-cache 5\n"
START_EVENTS = ("SessionStart", "SubagentStart")
HARNESSES = ("codex", "claude")

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
        head = json.loads(data[len(RECORD_MAGIC) : end])
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


def checkout_digest(checkout: str | None) -> str | None:
    """A short digest that tells checkouts apart without naming them."""
    if checkout is None:
        return None
    return hashlib.sha256(checkout.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def write_receipt(entry: dict[str, object], now: float | None = None) -> None:
    """Replace the receipt of this checkout, harness and event; one that cannot be written is skipped."""
    entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)), **entry}
    slot = f"{entry.get('checkout')}-{entry.get('harness')}-{entry.get('event')}"
    name = hashlib.sha256(slot.encode()).hexdigest()[:24] + ".json"
    with contextlib.suppress(OSError):  # proof of delivery must never cost a delivery
        write_private(os.path.join(userdirs.state_dir(), "receipts", name), json.dumps(entry).encode() + b"\n")


def read_stdin() -> bytes:
    """The harness's JSON: at most one byte over the cap, so that an oversized input can be told."""
    try:
        return sys.stdin.buffer.read(limits.HOOK_STDIN_CAP_BYTES + 1)
    except (OSError, ValueError, AttributeError):
        return b""


def parse_payload(data: bytes) -> dict[str, object] | None:
    """The harness's JSON object, or None for anything else (too long, not JSON, not an object)."""
    try:
        value = json.loads(data) if len(data) <= limits.HOOK_STDIN_CAP_BYTES else None
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def serve(payload: dict[str, object], harness: str, code: str) -> bytes | None:
    """The hook's stdout for an unchanged vault, or None when the full path must answer."""
    event, cwd, source = payload.get("hook_event_name"), payload.get("cwd"), payload.get("source")
    if event not in START_EVENTS or source == "compact" or not isinstance(cwd, str) or not cwd:
        return None
    if harness not in HARNESSES or os.environ.get("CONTINUITY_NO_CACHE") == "1":
        return None
    repo = top_level(cwd)
    conn_file = os.environ.get("AGENT_VAULT_CONNECTION") or (os.path.join(repo, connfile.NAME) if repo else "")
    try:
        values = connfile.parse(read_regular(conn_file, limits.CONNECTION_CAP_BYTES).decode("utf-8"))
    except (OSError, ValueError):
        return None
    root, project, device = values.get("vault", ""), values.get("project"), values.get("device")
    if not os.path.isabs(root) or not ids.is_valid_id(project) or not ids.is_valid_id(device):
        return None
    found = read_record(record_path(root, str(project), str(device), str(event), harness, "hook"))
    if found is None or not is_current(found[0], root, code) or "output" not in found[1]:
        return None
    head = found[0]
    receipt = {name: head.get(name) for name in ("status", "bytes", "tokens_estimate", "sha256")}
    write_receipt(
        {"harness": harness, "event": event, "source": source if isinstance(source, str) else None, **receipt,
         "recovery_note": False, "checkout": checkout_digest(repo)}
    )  # fmt: skip
    return found[1]["output"]
