"""The startup hook's warm path, and the low-level pieces both paths share.

Every session and subagent waits for the startup hook, so serving an unchanged vault must cost little
more than starting Python. This module therefore imports only `sys`, the built-in SHA-256 and
`rawos` (not `os`, `re`, `json`, `pathlib` or `dataclasses`, each of which costs from one to several
milliseconds; nor `from __future__ import annotations`, which at run time imports `__future__`),
parses the harness's JSON with a small strict parser, and answers from a cache record written by the
cold path when the cache key still matches. Anything unusual (a compaction start, another event, a missing record, a
changed key) returns None and the caller takes the full path, which validates everything.

The key covers every byte the brief depends on: the hot sources and INDEX/MEMORY_POLICY by content
digest, every handoff file by (name, type, size, mtime, ctime, inode) — ctime cannot be set by user
code, so any rewrite changes it — the folders the startup vault check visited by (mtime, ctime), the
connection, event, harness and the digest of the pinned code. The one thing the folder check does not
see at once is an existing file that grows past the storage review limit; that budget notice follows
at the next change of a visited folder, and `lifecycle budget` is always exact.

The pieces the cold path shares (reading the connection file, the key, the record) live here and in
`rawos` so that both paths run the same code.
"""

import sys

try:  # the built-in module: OpenSSL's hashlib costs milliseconds to import
    from _sha256 import sha256  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # Python 3.12 and later
    try:
        from _sha2 import sha256  # type: ignore[import-not-found, unused-ignore, no-redef]
    except ImportError:
        from hashlib import sha256  # type: ignore[assignment, unused-ignore]

from continuity import layout, limits, rawos
from continuity.minijson import json_object, parse_json
from continuity.rawos import join, open_nofollow, read_fd_capped, write_private

RECORD_MAGIC = b"continuity-startup-cache 3\n"
START_EVENTS = ("SessionStart", "SubagentStart")
HARNESSES = ("codex", "claude")
CONNECTION_FILE = ".agent-vault"
CONNECTION_KEYS = ("vault", "device", "project", "python")
HOT_CAPS = {
    "soul": limits.SOUL_CAP_BYTES,
    "preferences": limits.PREFERENCES_CAP_BYTES,
    "project": limits.PROJECT_CAP_BYTES,
    "device": limits.DEVICE_CAP_BYTES,
}
_ID_FIRST = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_ID_REST = _ID_FIRST | {"-"}


# --- connection ---------------------------------------------------------------------------------------


def is_valid_id(value: object) -> bool:
    """Device and project ids: `^[a-z0-9][a-z0-9-]{0,62}$`."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= limits.ID_MAX_CHARS
        and value[0] in _ID_FIRST
        and all(c in _ID_REST for c in value)
    )


def find_repo_root(start: str) -> str | None:
    """The nearest folder at or above `start` holding a `.git` entry (folder or worktree file)."""
    try:
        here = rawos.realpath(start)
    except (OSError, ValueError):
        return None
    while True:
        if rawos.lexists(join(here, ".git")):
            return here
        parent = rawos.dirname(here)
        if parent == here:
            return None
        here = parent


def _unquote(raw: str, where: str) -> str:
    raw = raw.strip()
    if raw.startswith('"'):
        value = parse_json(raw)
        if not isinstance(value, str):
            raise ValueError(f"{where}: a quoted value is malformed")
        return value
    if raw.startswith("'"):
        if len(raw) < 2 or not raw.endswith("'"):
            raise ValueError(f"{where}: a quoted value is malformed")
        return raw[1:-1].replace("''", "'")
    if " #" in raw:
        raw = raw.split(" #", 1)[0].rstrip()
    if raw[:1] in ("[", "{", "&", "*", "!", "|", ">", "%", "@", "`"):
        raise ValueError(f"{where}: only plain or quoted scalars are allowed in a connection file")
    return raw


def parse_connection_text(text: str, name: str = CONNECTION_FILE) -> dict[str, str]:
    """The connection file's strict YAML subset: one `key: scalar` per line (ValueError otherwise)."""
    values: dict[str, str] = {}
    for number, line in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped in ("---", "..."):
            continue
        key, colon, rest = line.partition(":")
        where = f"{name} line {number}"
        if not colon or line[:1].isspace() or key.strip() != key:
            raise ValueError(f"{where}: expected 'key: value'")
        if key in values:
            raise ValueError(f"{where}: duplicate key {key!r}")
        if key not in CONNECTION_KEYS:
            continue  # newer tools may add keys; unknown ones are ignored, not fatal
        try:
            values[key] = _unquote(rest, where)
        except (ValueError, IndexError):
            raise ValueError(f"{where}: a quoted value is malformed") from None
    return values


# --- the cache key -----------------------------------------------------------------------------------------


def _file_token(root: str, rel: str, cap: int) -> bytes:
    """What the key records of one source: its content digest, or why it could not be read."""
    try:
        fd = open_nofollow(root, rel)
    except OSError as exc:
        return f"{rel}!open:{exc.errno}".encode()
    try:
        info = rawos.fstat(fd)
        if not rawos.S_ISREG(info.st_mode):
            return f"{rel}!mode:{rawos.S_IFMT(info.st_mode)}".encode()
        if info.st_size > cap:
            return f"{rel}!size:{info.st_size}".encode()
        data = read_fd_capped(fd, cap)
    except OSError as exc:
        return f"{rel}!read:{exc.errno}".encode()
    finally:
        rawos.close(fd)
    return f"{rel}:{len(data)}:".encode() + bytes(sha256(data).digest())


def hot_paths(project: str, device: str) -> dict[str, str]:
    return {
        "soul": layout.SOUL,
        "preferences": layout.PREFERENCES,
        "project": layout.project_profile(project),
        "device": layout.device_profile(device),
    }


EVENT_HOT = {"SessionStart": ("soul", "preferences", "project", "device"), "SubagentStart": ("project", "device")}
POLICY_FILES = (layout.INDEX, layout.MEMORY_POLICY)
HANDOFFS = layout.HANDOFFS


def vault_key(root: str, project: str, device: str, event: str, harness: str, code: str) -> str:
    """The cache key of everything but the visited folders (see the module docstring)."""
    h = sha256(f"3\0{code}\0{root}\0{project}\0{device}\0{event}\0{harness}\0".encode())
    paths = hot_paths(project, device)
    for name in EVENT_HOT[event]:
        h.update(_file_token(root, paths[name], HOT_CAPS[name]) + b"\0")
    for rel in POLICY_FILES:
        h.update(_file_token(root, rel, limits.LIFECYCLE_TEXT_CAP_BYTES) + b"\0")
    listing: list[str] = []
    try:
        with rawos.scandir(join(root, HANDOFFS)) as entries:
            for entry in entries:
                if entry.name.startswith(".") or not entry.name.endswith(".md"):
                    continue
                try:
                    s = entry.stat(follow_symlinks=False)
                except OSError:
                    listing.append(f"{entry.name}!stat")
                    continue
                listing.append(f"{entry.name}:{s.st_mode}:{s.st_size}:{s.st_mtime_ns}:{s.st_ctime_ns}:{s.st_ino}")
    except OSError as exc:
        listing.append(f"!{exc.errno}")
    listing.sort()
    h.update("\n".join(listing).encode("utf-8", "surrogateescape"))
    return str(h.hexdigest())


def dir_stamp(root: str, rel: str) -> str:
    try:
        s = rawos.lstat(join(root, rel))
    except OSError:
        return "-"
    return f"{s.st_mode}:{s.st_mtime_ns}:{s.st_ctime_ns}:{s.st_ino}"


# --- the cache record -------------------------------------------------------------------------------------


def cache_dir() -> str:
    return join(rawos.user_dir("cache"), "startup")


def slot_path(root: str, project: str, device: str, event: str, harness: str, who: str) -> str:
    ident = f"{who}\0{root}\0{project}\0{device}\0{event}\0{harness}"
    return join(cache_dir(), sha256(ident.encode()).hexdigest()[:32] + ".rec")


def encode_record(key: str, dirs: list[tuple[str, str]], fields: dict[str, str], sections: dict[str, bytes]) -> bytes:
    """Header lines (`key`, `dir <hex rel> <stamp>`, `field <name> <value>`), then length-prefixed blobs."""
    lines = [f"key {key}"]
    lines += [f"dir {rel.encode('utf-8', 'surrogateescape').hex()} {stamp}" for rel, stamp in dirs]
    lines += [f"field {name} {value}" for name, value in fields.items()]
    head = ("\n".join(lines) + "\n").encode()
    body = b"".join(f"blob {name} {len(data)}\n".encode() + data for name, data in sections.items())
    return RECORD_MAGIC + head + b"end\n" + body


def decode_record(data: bytes) -> tuple[str, list[tuple[str, str]], dict[str, str], dict[str, bytes]] | None:
    if not data.startswith(RECORD_MAGIC):
        return None
    end = data.find(b"\nend\n")
    if end < 0:
        return None
    key = ""
    dirs: list[tuple[str, str]] = []
    fields: dict[str, str] = {}
    for line in data[len(RECORD_MAGIC) : end].decode("utf-8", "replace").split("\n"):
        kind, _, rest = line.partition(" ")
        if kind == "key":
            key = rest
        elif kind == "dir":
            rel_hex, _, stamp = rest.partition(" ")
            dirs.append((bytes.fromhex(rel_hex).decode("utf-8", "surrogateescape"), stamp))
        elif kind == "field":
            name, _, value = rest.partition(" ")
            fields[name] = value
    sections: dict[str, bytes] = {}
    position = end + 5
    while position < len(data):
        newline = data.find(b"\n", position)
        if newline < 0:
            return None
        kind, name, size = data[position:newline].decode("ascii", "replace").split(" ")
        if kind != "blob":
            return None
        start = newline + 1
        sections[name] = data[start : start + int(size)]
        if len(sections[name]) != int(size):
            return None
        position = start + int(size)
    return key, dirs, fields, sections


def read_record(path: str) -> tuple[str, list[tuple[str, str]], dict[str, str], dict[str, bytes]] | None:
    try:
        return decode_record(rawos.read_regular(path, limits.STARTUP_CACHE_RECORD_CAP_BYTES))
    except (OSError, ValueError, UnicodeDecodeError):
        return None


# --- receipts -----------------------------------------------------------------------------------------------


def state_home() -> str:
    return rawos.user_dir("state")


def digest_hex(data: bytes) -> str:
    """SHA-256 in hex, by the built-in module (hashlib costs milliseconds to import)."""
    return str(sha256(data).hexdigest())


def checkout_digest(checkout: str | None) -> str | None:
    if checkout is None:
        return None
    return str(sha256(checkout.encode("utf-8", errors="surrogateescape")).hexdigest())[:16]


def write_receipt(entry: dict[str, object], now: float | None = None) -> None:
    """One receipt file per (checkout, harness, event), written by hand as a small JSON object.

    It is padded with spaces to a fixed size so that the next delivery overwrites it in place
    (`rawos.overwrite`), a few microseconds instead of a tenth of a millisecond; a reader takes a
    damaged receipt for a missing one, and proof of delivery is not worth slowing a delivery.
    """
    import time

    entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)), **entry}
    slot = f"{entry.get('checkout')}-{entry.get('harness')}-{entry.get('event')}"
    path = join(state_home(), "receipts", sha256(slot.encode()).hexdigest()[:24] + ".json")
    data = json_object(entry).encode()
    if len(data) < limits.RECEIPT_FILE_BYTES:
        data = data.ljust(limits.RECEIPT_FILE_BYTES - 1) + b"\n"
    try:
        if not rawos.overwrite(path, data):
            write_private(path, data)
    except OSError:
        pass  # proof of delivery must never cost a delivery


# --- the warm path ------------------------------------------------------------------------------------------


_PARSED: tuple[bytes, dict[str, object] | None] | None = None


def parse_payload(data: bytes) -> dict[str, object] | None:
    """The harness's JSON object, or None for anything else; each input is parsed once, since the
    warm path and then the tool-event path both read it (a tool's output can be long)."""
    global _PARSED
    if _PARSED is not None and _PARSED[0] is data:
        return _PARSED[1]
    try:
        value = parse_json(data.decode("utf-8")) if len(data) <= limits.HOOK_STDIN_CAP_BYTES else None
    except (ValueError, UnicodeDecodeError, IndexError, RecursionError):
        value = None
    payload = value if isinstance(value, dict) else None
    _PARSED = (data, payload)
    return payload


def serve(data: bytes, harness: str, code: str) -> bytes | None:
    """The hook's stdout for an unchanged vault, or None when the full path must answer."""
    if harness not in HARNESSES or rawos.getenv("CONTINUITY_NO_CACHE") == "1":
        return None
    payload = parse_payload(data)
    if payload is None:
        return None
    event, cwd, source = payload.get("hook_event_name"), payload.get("cwd"), payload.get("source")
    if event not in START_EVENTS or source == "compact" or not isinstance(cwd, str) or not cwd:
        return None
    override = rawos.getenv("AGENT_VAULT_CONNECTION")
    repo = find_repo_root(cwd)
    if override:
        conn_file = override
    elif repo is None:
        return None
    else:
        conn_file = join(repo, CONNECTION_FILE)
    try:
        values = parse_connection_text(rawos.read_regular(conn_file, limits.CONNECTION_CAP_BYTES).decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    root, project, device = values.get("vault", ""), values.get("project"), values.get("device")
    if not rawos.isabs(root) or not is_valid_id(project) or not is_valid_id(device):
        return None
    assert isinstance(project, str) and isinstance(device, str) and isinstance(event, str)
    record = read_record(slot_path(root, project, device, event, harness, "hook"))
    if record is None:
        return None
    key, dirs, fields, sections = record
    if key != vault_key(root, project, device, event, harness, code):
        return None
    if any(dir_stamp(root, rel) != stamp for rel, stamp in dirs):
        return None
    output = sections.get("output")
    if output is None or fields.get("output_sha256") != str(sha256(output).hexdigest()):
        return None  # a damaged record is a miss, never a different brief
    write_receipt(
        {
            "harness": harness,
            "event": event,
            "source": source if isinstance(source, str) else None,
            "status": fields.get("status", ""),
            "bytes": int(fields.get("bytes", "0")),
            "tokens_estimate": int(fields.get("tokens_estimate", "0")),
            "sha256": fields.get("sha256", ""),
            "recovery_note": False,
            "checkout": checkout_digest(repo),
        }
    )
    return output


def read_stdin() -> bytes:
    """The harness's JSON: at most one byte over the cap, so that an oversized input can be told."""
    try:
        return sys.stdin.buffer.read(limits.HOOK_STDIN_CAP_BYTES + 1) if sys.stdin is not None else b""
    except (OSError, ValueError, AttributeError):
        return b""


def main_warm(harness: str, code: str) -> bytes | None:
    """Read stdin and try the warm path; stdin stays available to the full path in `DATA`."""
    global DATA
    DATA = read_stdin()
    return serve(DATA, harness, code)


DATA = b""
# The pinned code's digest, set by the startup script; the cold path keys its records with it.
CODE: str | None = None
