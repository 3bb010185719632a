"""The advisory writer lease and the machine-local lock that makes each write atomic on one computer.

Two mechanisms with different reach:

* **The lease** is synchronized state: `<vault>/.continuity/leases/<device>.json`, one file per device,
  so that no two computers ever write one synchronized file (the sync engine would otherwise have to
  merge them). A file is versioned JSON: `version`, `device`, `token`, `acquired`, `expires`, `task`.
  Another device's unexpired lease is `foreign` and makes every vault write refuse (exit 4); an expired
  one is `stale` and may be taken over, which means writing our own file, never touching theirs. The
  lease only reduces accidental overlap: sync is slow and eventual, so this is not a distributed
  transaction and `lock=none` only describes what this computer can see. `release --force` is the one
  deliberate exception that deletes another device's file. The file's format and the status read
  from it are `records.leases` (read-only, shared with doctor and the sync); this module writes.

* **The local lock** serializes writers on this computer (several agents, a person in a terminal). It is
  a portalocker (flock) lock on a machine-local file,
  `$XDG_STATE_HOME/continuity/locks/<first 16 hex of sha256(real path of the vault)>.lock`
  (`~/.local/state` when XDG_STATE_HOME is unset). It is deliberately *not* inside the vault: a lock
  file under `.continuity/` would be picked up and copied around by the sync engine, and flock means
  nothing on another computer anyway. Keying by the vault's real path makes every checkout connected
  to one vault share one lock. Waiting is announced once through a callback, bounded by
  `LOCAL_LOCK_TIMEOUT_SECONDS`, and a timeout is reported as exit 4 (the vault is busy). Everything
  that decides (lease state, name collisions) is re-read inside the lock. The lock is re-entrant
  within one thread, so a command that holds it can call helpers that take it again.

Only this module imports portalocker, and only inside the functions that lock.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import re
import secrets
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from continuity import limits, tunables
from continuity.errors import FIELD, InputRejected, LeaseHeld, UsageError
from continuity.gate.secrets import scan_text
from continuity.local import userdirs
from continuity.records.leases import (
    Lease,
    LeaseStatus,
    lease_rel as lease_rel,  # the write path names the file it writes
    status,
    utcnow,
)
from continuity.store import atomic
from continuity.vault import layout, notes

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION_PART = re.compile(r"([0-9]{1,9})([smhdSMHD])")

WaitNotice = Callable[[str], None]


def parse_duration(text: str) -> int:
    """`90s`, `30m`, `2h`, `7d` or a sum of them (`1h30m`, `1d12h`) -> seconds; else a usage error.

    Each part is a whole number (ASCII digits) and a unit, any case, with no spaces; the total must be
    longer than zero and at most `LEASE_MAX_TTL_SECONDS`.
    """
    raw = text.strip()
    parts = _DURATION_PART.findall(raw)
    if not raw or not raw.isascii() or "".join(n + u for n, u in parts) != raw:
        raise UsageError(
            f"invalid duration {text!r}: write whole numbers with units s, m, h or d, e.g. 90s, 30m, 2h, 1h30m, 7d"
        )
    seconds = sum(int(number) * _UNITS[unit.lower()] for number, unit in parts)
    if seconds <= 0:
        raise UsageError(f"invalid duration {text!r}: it must be longer than zero")
    if seconds > tunables.LEASE_MAX_TTL_SECONDS:
        days = tunables.LEASE_MAX_TTL_SECONDS // 86400
        raise UsageError(f"duration {text!r} is longer than the maximum of {days}d")
    return seconds


# ------------------------------------------------------------------------------------- local lock


def lock_path(vault_root: Path) -> Path:
    """Where this computer's lock for `vault_root` lives (machine-local, never synchronized)."""
    key = hashlib.sha256(os.path.realpath(vault_root).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return Path(userdirs.state_dir()) / "locks" / f"{key}.lock"


_local = threading.local()


def _depths() -> dict[str, int]:
    depths: dict[str, int] | None = getattr(_local, "depths", None)
    if depths is None:
        depths = {}
        _local.depths = depths
    return depths


@contextlib.contextmanager
def local_lock(
    vault_root: Path,
    *,
    timeout: float = limits.LOCAL_LOCK_TIMEOUT_SECONDS,
    on_wait: WaitNotice | None = None,
) -> Iterator[Path]:
    """Hold this computer's write lock for the vault; LeaseHeld (exit 4) when it stays busy."""
    path = lock_path(vault_root)
    depths = _depths()
    key = str(path)
    if depths.get(key, 0) > 0:
        depths[key] += 1
        try:
            yield path
        finally:
            depths[key] -= 1
        return

    import portalocker
    from portalocker import exceptions as lock_errors

    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    lock = portalocker.Lock(path, mode="a", timeout=timeout, fail_when_locked=False)
    try:
        try:
            lock.acquire(timeout=0, fail_when_locked=True)
        except lock_errors.AlreadyLocked:
            if on_wait is not None:
                on_wait(f"another lifecycle command on this computer is writing the vault; waiting up to {timeout:g}s")
            lock.acquire(timeout=timeout)
    except lock_errors.AlreadyLocked:
        raise LeaseHeld(
            f"another lifecycle command on this computer kept the vault's write lock for {timeout:g}s; "
            "try again when it has finished"
        ) from None
    except lock_errors.LockException as exc:
        raise LeaseHeld(f"the local write lock {path} cannot be taken ({exc.strerror or 'lock failed'})") from None
    depths[key] = 1
    try:
        yield path
    finally:
        depths[key] = 0
        lock.release()


# ------------------------------------------------------------------------------------------ leases


def refuse_if_foreign(current: LeaseStatus) -> None:
    """The check every vault write makes inside the local lock."""
    if current.state == "foreign" and current.lease is not None:
        lease = current.lease
        task = f" ({lease.task})" if lease.task else ""
        raise LeaseHeld(
            f"device {lease.device} holds the writer lease until {notes.format_utc(lease.expires)}{task}; "
            "nothing was written",
            advice="wait for it to finish, or run 'lifecycle lease release --force' if that device is gone",
        )


def clean_task(task: str | None) -> str | None:
    """The task as stored; InputRejected (exit 5) when it holds anything secret-like.

    The lease file is synchronized as it is and its task is shown to every other device (status, the
    error another device's agent receives), so it goes through the same gate as a note; the refusal
    names the detector only, never the text.
    """
    if task is None:
        return None
    text = " ".join(task.split())
    if len(text) > tunables.LEASE_TASK_MAX_CHARS:
        raise UsageError(f"{FIELD} is longer than {tunables.LEASE_TASK_MAX_CHARS} characters", field="task")
    if any(not ch.isprintable() for ch in text):
        raise UsageError(f"{FIELD} must be printable text", field="task")

    found = scan_text(text)
    if found:
        raise InputRejected(
            f"{FIELD} looks like it holds a secret ({found[0].detector}); the lease was not taken", field="task"
        )
    return text or None


def write_own(vault_root: Path, lease: Lease) -> None:
    """Write this device's lease file atomically (the caller holds the local lock)."""
    atomic.ensure_dir(vault_root, layout.LEASES)
    atomic.write_text(vault_root / lease.rel, lease.to_json())


def acquire_locked(
    vault_root: Path, device: str, ttl_seconds: int, task: str | None, now: dt.datetime | None = None
) -> Lease:
    """Take or extend this device's lease; the caller already holds the local lock."""
    if not 0 < ttl_seconds <= tunables.LEASE_MAX_TTL_SECONDS:
        raise UsageError(f"a lease lasts between 1 second and {tunables.LEASE_MAX_TTL_SECONDS} seconds")
    moment = utcnow(now)
    current = status(vault_root, device, moment)
    refuse_if_foreign(current)
    own = current.own()
    expires = moment + dt.timedelta(seconds=ttl_seconds)
    if own is not None and not own.expired(moment):
        # Re-acquiring extends: same token and start, a new end (never shorter than promised before).
        lease = Lease(device, own.token, own.acquired, max(expires, own.expires), task or own.task, own.rel)
    else:
        lease = Lease(device, secrets.token_hex(16), moment, expires, task, lease_rel(device))
    write_own(vault_root, lease)
    return lease


def remove_lease_file(vault_root: Path, rel: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        (vault_root / rel).unlink()
    atomic.fsync_dir((vault_root / rel).parent)


@dataclass(frozen=True)
class Released:
    released: list[Lease]  # lease files removed
    left: LeaseStatus  # the state afterwards


def release_locked(vault_root: Path, device: str, force: bool, now: dt.datetime | None = None) -> list[Lease]:
    """Remove our lease; a foreign unexpired one only with `force` (LeaseHeld otherwise)."""
    moment = utcnow(now)
    current = status(vault_root, device, moment)
    own = current.own()
    removed: list[Lease] = []
    if force:
        targets = list(current.leases)
    elif own is not None:
        targets = [own]
    else:
        refuse_if_foreign(current)
        targets = []
    for lease in targets:
        remove_lease_file(vault_root, lease.rel)
        removed.append(lease)
    return removed
