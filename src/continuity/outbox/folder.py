"""The delivery outbox: `<repo>/output/`, a git-ignored folder whose contents live exactly seven days.

The outbox is not memory. A delivered package is a uniquely named folder with copies of the final files
and a manifest of their sizes and SHA-256 digests; the person gets its absolute path and its exact UTC
expiry. When the time has come, the sweeper (`outbox_sweeper.py`) deletes it for good.

The schedule lives in one tool-owned record, `output/.outbox.json`, never in the packages themselves:
editing a manifest cannot postpone a deletion, and there is deliberately no "keep" flag. The record's
existence is the activation: the moment from which the folder is governed by the expiry policy. A
folder with contents but without that record holds data from before activation (legacy data) and is
refused by every writing operation, so nothing that predates the policy is ever registered or deleted.

Everything here uses the standard library only, because the pinned session-start sweep runs it under
whatever `python3` the shell finds. Every read refuses links and checks sizes first.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from continuity import limits, safeio
from continuity.errors import ContinuityError, InputRejected, NotConnected, UsageError
from continuity.local.repo import find_repo_root
from continuity.store import atomic

OUTBOX_DIR = "output"
STATE_NAME = ".outbox.json"
MANIFEST_NAME = ".manifest.json"
FORMAT_VERSION = 1
LIFETIME = timedelta(seconds=limits.OUTBOX_LIFETIME_SECONDS)
PRIVATE_DIR_MODE = 0o700
_CHUNK_BYTES = 1024 * 1024
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class LegacyOutbox(InputRejected):
    """`output/` has contents but no activation record: data from before the expiry policy."""


class OutboxBusy(ContinuityError):
    """Another deliver or sweep holds the outbox lock."""


# --- time --------------------------------------------------------------------------------------------


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def parse_time(text: str) -> datetime:
    """An ISO 8601 time; `Z` means UTC and a time without an offset is taken as UTC."""
    raw = text.strip()
    if raw[-1:] in ("Z", "z"):
        raw = raw[:-1] + "+00:00"
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise UsageError(f"{text!r} is not an ISO 8601 time such as 2025-01-31T12:00:00Z") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def format_time(value: datetime) -> str:
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def whole_second(value: datetime) -> datetime:
    """Records keep whole seconds, so the printed expiry is exactly the one the sweeper applies."""
    return value.astimezone(timezone.utc).replace(microsecond=0)


# --- locating the outbox -----------------------------------------------------------------------------


def require_repo(start: Path) -> Path:
    repo = find_repo_root(start)
    if repo is None:
        raise NotConnected(f"{start} is not inside a git checkout; the outbox is a repository's output/ folder")
    return repo


def outbox_path(repo: Path) -> Path:
    return repo / OUTBOX_DIR


def outbox_exists(outbox: Path) -> bool:
    """False when absent; refuses an `output` that is a link or not a folder (it is never followed)."""
    try:
        info = os.lstat(outbox)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise InputRejected(f"{outbox} is a link or not a folder; the outbox must be a plain folder")
    return True


def _is_state_tmp(name: str) -> bool:
    return safeio.is_tmp_name(name) and name.startswith(f".{STATE_NAME}.")


def entries(outbox: Path) -> list[str]:
    """Direct children other than the activation record (and a torn write of it), sorted."""
    with os.scandir(outbox) as found:
        return sorted(e.name for e in found if e.name != STATE_NAME and not _is_state_tmp(e.name))


def legacy_error(outbox: Path, count: int) -> LegacyOutbox:
    noun = "entry" if count == 1 else "entries"
    return LegacyOutbox(
        f"{outbox} holds {count} {noun} but no activation record ({STATE_NAME}), so it is legacy data; "
        "nothing was registered or deleted. Review that folder and move it, exactly as it is, outside "
        "the repository; then run the command again to activate an empty outbox"
    )


@contextlib.contextmanager
def locked(outbox: Path, *, wait: bool = True) -> Iterator[None]:
    """Serialize record updates with an advisory lock on the outbox folder itself.

    Locking the folder rather than a lock file adds no entry that could be mistaken for a delivery.
    Where `fcntl` does not exist (Windows) there is no lock: two concurrent sweeps there can at worst
    re-enroll an entry a little later, never delete early.
    """
    try:
        import fcntl  # here, not at the top: absent on Windows, where there is no lock
    except ImportError:
        yield
        return
    fd = os.open(outbox, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NOFOLLOW)
    try:
        deadline = time.monotonic() + limits.LOCAL_LOCK_TIMEOUT_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait or time.monotonic() >= deadline:
                    raise OutboxBusy(f"another outbox operation is using {outbox}; try again") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


# --- the activation record ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Scheduled:
    """One direct child's deletion time; `since` is the delivery or the discovery time."""

    since: datetime
    expires: datetime


@dataclass
class OutboxState:
    activated: datetime
    packages: dict[str, Scheduled] = field(default_factory=dict)
    enrolled: dict[str, Scheduled] = field(default_factory=dict)
    unknown: dict[str, Any] = field(default_factory=dict)  # keys of a newer tool, kept on rewrite
    token: str | None = None  # the random activation token this computer recorded in `local.made`


def read_capped(path: Path, cap: int, what: str) -> bytes:
    """A regular file's bytes, refusing links and anything larger than `cap` before reading it."""
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise InputRejected(f"{path} cannot be opened as a {what} ({type(exc).__name__})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise InputRejected(f"{path} is not a regular file, so it is not a {what}")
        if info.st_size > cap:
            raise InputRejected(f"{path} is larger than {cap} bytes, so it is not a {what}")
        data = handle.read(cap + 1)
    if len(data) > cap:
        raise InputRejected(f"{path} is larger than {cap} bytes, so it is not a {what}")
    return data


def load_json(path: Path, cap: int, what: str) -> dict[str, Any]:
    data = read_capped(path, cap, what)
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise InputRejected(f"{path} is not valid JSON, so it is not a {what}") from None
    if not isinstance(doc, dict):
        raise InputRejected(f"{path} is not a JSON object, so it is not a {what}")
    version = doc.get("version")
    if version != FORMAT_VERSION:
        if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
            raise InputRejected(
                f"{path} has format version {version}, newer than this tool understands "
                f"({FORMAT_VERSION}); update continuity"
            )
        raise InputRejected(f"{path} has no supported format version, so it is not a {what}")
    return doc


def _schedules(doc: dict[str, Any], key: str, since_key: str, path: Path) -> dict[str, Scheduled]:
    table = doc.get(key, {})
    if not isinstance(table, dict):
        raise InputRejected(f"{path}: '{key}' must be an object")
    out: dict[str, Scheduled] = {}
    for name, item in table.items():
        if not isinstance(item, dict) or not isinstance(item.get(since_key), str):
            raise InputRejected(f"{path}: '{key}' entry {name!r} is malformed")
        if not isinstance(item.get("expires"), str):
            raise InputRejected(f"{path}: '{key}' entry {name!r} is malformed")
        try:
            out[name] = Scheduled(parse_time(item[since_key]), parse_time(item["expires"]))
        except UsageError:
            raise InputRejected(f"{path}: '{key}' entry {name!r} has an invalid time") from None
    return out


def read_state(outbox: Path) -> OutboxState | None:
    """The activation record, or None when the outbox has never been activated."""
    path = outbox / STATE_NAME
    try:
        doc = load_json(path, limits.OUTBOX_STATE_CAP_BYTES, "outbox record")
    except FileNotFoundError:
        return None
    except InputRejected as exc:
        raise InputRejected(
            f"{exc}; nothing was deleted. To start over, move {outbox} outside the repository"
        ) from None
    try:
        activated = parse_time(str(doc.get("activated", "")))
    except UsageError:
        raise InputRejected(f"{path}: 'activated' is not a valid time") from None
    known = {"version", "activated", "packages", "enrolled", "activation"}
    token = doc.get("activation")
    return OutboxState(
        activated=activated,
        packages=_schedules(doc, "packages", "created", path),
        enrolled=_schedules(doc, "enrolled", "discovered", path),
        unknown={k: v for k, v in doc.items() if k not in known},
        token=token if isinstance(token, str) and token else None,
    )


def write_state(outbox: Path, state: OutboxState) -> None:
    def table(items: dict[str, Scheduled], since_key: str) -> dict[str, dict[str, str]]:
        return {
            name: {since_key: format_time(s.since), "expires": format_time(s.expires)}
            for name, s in sorted(items.items())
        }

    doc: dict[str, Any] = dict(state.unknown)
    doc.update(
        version=FORMAT_VERSION,
        activated=format_time(state.activated),
        packages=table(state.packages, "created"),
        enrolled=table(state.enrolled, "discovered"),
    )
    if state.token:
        doc["activation"] = state.token
    atomic.write_text(outbox / STATE_NAME, json.dumps(doc, indent=2, ensure_ascii=True) + "\n")


# --- deletion ----------------------------------------------------------------------------------------


def remove_entry(path: Path) -> None:
    """Delete one outbox entry for good; a link is removed as a link and its target is never touched."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or _is_junction(path):
        try:
            path.unlink()
        except (IsADirectoryError, PermissionError):
            path.rmdir()  # a Windows directory link or junction: removes the link only
    elif stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path)  # never follows links inside the tree; it removes them as links
    else:
        path.unlink()


def _is_junction(path: Path) -> bool:
    check = getattr(os.path, "isjunction", None)
    return bool(check(path)) if check is not None else False
