"""The writer lease as this computer can see it: the lease file's format and the status it gives.

A lease is synchronized state, `<vault>/.continuity/leases/<device>.json`, one file per device, so that
no two computers ever write one synchronized file. A file is versioned JSON: `version`, `device`,
`token`, `acquired`, `expires`, `task`. Another device's unexpired lease is `foreign` (every vault
write refuses, exit 4); an expired one is `stale`. Reading is all this module does: taking,
extending and releasing a lease, and the local lock, are the write path's (`store.lease`), which
builds on these types. Doctor, `lease status` and the sync read through here without loading it.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from continuity import tunables
from continuity.errors import InputRejected, NoteError
from continuity.gate.secrets import shown_value
from continuity.ids import is_valid_id
from continuity.vault import access, layout, notes

LEASE_VERSION = 1
LEASE_SUFFIX = ".json"


def utcnow(now: dt.datetime | None = None) -> dt.datetime:
    """The clock, overridable in tests; always aware UTC with whole seconds (what files record)."""
    moment = now if now is not None else dt.datetime.now(dt.timezone.utc)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.astimezone(dt.timezone.utc).replace(microsecond=0)


# ------------------------------------------------------------------------------------------ leases


@dataclass(frozen=True)
class Lease:
    device: str
    token: str
    acquired: dt.datetime
    expires: dt.datetime
    task: str | None
    rel: str  # vault-relative path of the lease file

    def expired(self, now: dt.datetime) -> bool:
        return self.expires <= now

    def to_json(self) -> str:
        doc = {
            "version": LEASE_VERSION,
            "device": self.device,
            "token": self.token,
            "acquired": notes.format_utc(self.acquired),
            "expires": notes.format_utc(self.expires),
            "task": self.task,
        }
        return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


@dataclass(frozen=True)
class LeaseStatus:
    """What this computer can see of the synchronized lease state, from `device`'s point of view.

    `state` is `foreign` when any other device holds an unexpired lease (that is what blocks writes),
    else `held` when ours is unexpired, else `stale` when only expired leases are visible, else `none`.
    `lease` is the lease the state describes; `leases` every valid one seen; `invalid` (rel, message).
    """

    state: str
    device: str  # the device asking
    lease: Lease | None
    leases: list[Lease] = field(default_factory=list)
    invalid: list[tuple[str, str]] = field(default_factory=list)

    def own(self) -> Lease | None:
        return next((item for item in self.leases if item.device == self.device), None)

    def line(self) -> str:
        if self.lease is None:
            return "lock=none"
        when = notes.format_utc(self.lease.expires)
        word = "expired" if self.state == "stale" else "expires"
        return f"lock={self.state} device={self.lease.device} {word}={when}"

    def to_json(self) -> dict[str, Any]:
        lease = self.lease
        return {
            "version": 1,
            "state": self.state,
            "device": lease.device if lease else None,
            "acquired": notes.format_utc(lease.acquired) if lease else None,
            "expires": notes.format_utc(lease.expires) if lease else None,
            "task": lease.task if lease else None,
        }


def lease_rel(device: str) -> str:
    return f"{layout.LEASES}/{device}{LEASE_SUFFIX}"


def _text_field(doc: dict[str, Any], key: str, rel: str) -> str:
    value = doc.get(key)
    if not isinstance(value, str) or not value:
        raise NoteError(f"{rel}: '{key}' is missing", "invalid")
    return value


def parse_lease(data: bytes, rel: str) -> Lease:
    """A lease file; NoteError when it is malformed, InputRejected when a newer tool wrote it."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise NoteError(f"{rel}: not a JSON lease file", "invalid") from None
    if not isinstance(doc, dict):
        raise NoteError(f"{rel}: not a JSON object", "invalid")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise NoteError(f"{rel}: 'version' is missing", "invalid")
    if version > LEASE_VERSION:
        raise InputRejected(
            f"{rel} was written by a newer version of continuity (lease version {version}); "
            "upgrade continuity on this computer"
        )
    device = _text_field(doc, "device", rel)
    if not is_valid_id(device) or rel != lease_rel(device):
        raise NoteError(f"{rel}: its 'device' does not match its file name", "invalid")
    token = _text_field(doc, "token", rel)
    acquired = notes.as_utc(_text_field(doc, "acquired", rel))
    expires = notes.as_utc(_text_field(doc, "expires", rel))
    if acquired is None or expires is None:
        raise NoteError(f"{rel}: 'acquired' and 'expires' must be UTC times", "invalid")
    task = doc.get("task")
    # A lease file another device, an older version or a hand wrote is data: a secret-like task in it
    # is withheld from every status, error and report.
    return Lease(device, token, acquired, expires, shown_value(task) if isinstance(task, str) else None, rel)


def read_leases(vault_root: Path) -> tuple[list[Lease], list[tuple[str, str]]]:
    """Every lease file this computer can see; unreadable or malformed ones come back as (rel, why)."""
    leases: list[Lease] = []
    invalid: list[tuple[str, str]] = []
    for name in access.entry_names(vault_root, layout.LEASES):
        if name.startswith(".") or not name.endswith(LEASE_SUFFIX):
            continue  # temporary files and foreign debris
        rel = f"{layout.LEASES}/{name}"
        try:
            leases.append(parse_lease(access.read_capped(vault_root, rel, tunables.LEASE_FILE_CAP_BYTES), rel))
        except NoteError as exc:
            invalid.append((rel, str(exc)))
    return leases, invalid


def status(vault_root: Path, device: str, now: dt.datetime | None = None) -> LeaseStatus:
    moment = utcnow(now)
    leases, invalid = read_leases(vault_root)
    foreign = [item for item in leases if item.device != device and not item.expired(moment)]
    own = [item for item in leases if item.device == device and not item.expired(moment)]
    stale = [item for item in leases if item.expired(moment)]
    if foreign:
        return LeaseStatus("foreign", device, max(foreign, key=lambda item: item.expires), leases, invalid)
    if own:
        return LeaseStatus("held", device, own[0], leases, invalid)
    if stale:
        return LeaseStatus("stale", device, max(stale, key=lambda item: item.expires), leases, invalid)
    return LeaseStatus("none", device, None, leases, invalid)
