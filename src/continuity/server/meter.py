"""The session's allowance of private memory, metered at the one path the MCP server gives retrieval.

Seed 003 allows a main task 12 KiB of warm retrieval and 24 KiB of private memory in all (the startup
brief included); a subagent 8 KiB and 16 KiB. Without a server retrieval had no single path, so the
allowance was behavioural; a server process lives for one client session, so it can count.

What counts, in UTF-8 bytes:
- each note block a `recall` returns (from `<note` to `</note>`, as `lifecycle recall` counts them),
  against both the warm allowance and the total;
- each `brief` and `current_handoff` text returned, against the total only (it is not warm retrieval);
- the startup brief the hook delivered to this checkout for the session's start event, once, against
  the total: the newest delivery receipt (`hook.receipts`) of this checkout, harness and event that is
  no older than `MCP_STARTUP_RECEIPT_WINDOW_SECONDS` before the server started. It is looked up at
  every metered call, because a client may run its start hook after it started its servers.

A call that would pass either allowance gets a short notice instead of notes: never a partial note.

Writes (`write_handoff`, `propose_note`) are metered too, against their own allowance
(`tunables.MCP_WRITE_*_ALLOWANCE_BYTES` and `_COUNT`): the UTF-8 bytes of the text a write call carries
(every string argument), and the number of writes done. A write that would pass either is refused, as
a tool error, before anything is written; a refused write (a secret, a lease, a cap) costs nothing.
The meter is the server process's memory: a second server process, `lifecycle recall` in a shell and
a brief another session received are invisible to it (the README says so).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from continuity import names, tunables

AUDIENCES = ("main", "subagent")
WARM_ALLOWANCE_BYTES = {
    "main": tunables.RECALL_MAIN_ALLOWANCE_BYTES,
    "subagent": tunables.RECALL_SUBAGENT_ALLOWANCE_BYTES,
}
TOTAL_ALLOWANCE_BYTES = {
    "main": tunables.SESSION_MEMORY_MAIN_ALLOWANCE_BYTES,
    "subagent": tunables.SESSION_MEMORY_SUBAGENT_ALLOWANCE_BYTES,
}
START_EVENT = {"main": names.SESSION_START, "subagent": names.SUBAGENT_START}
WRITE_ALLOWANCE_BYTES = {
    "main": tunables.MCP_WRITE_MAIN_ALLOWANCE_BYTES,
    "subagent": tunables.MCP_WRITE_SUBAGENT_ALLOWANCE_BYTES,
}
WRITE_ALLOWANCE_COUNT = {
    "main": tunables.MCP_WRITE_MAIN_ALLOWANCE_COUNT,
    "subagent": tunables.MCP_WRITE_SUBAGENT_ALLOWANCE_COUNT,
}

Deliveries = Callable[[], Iterable[Mapping[str, Any]]]


def _receipt_time(value: object) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
    except ValueError:
        return None


class Meter:
    """What this session has been given so far; `deliveries` reads the hook's receipts for this checkout."""

    def __init__(self, audience: str, harness: str, started: dt.datetime, deliveries: Deliveries) -> None:
        if audience not in AUDIENCES:
            raise ValueError(f"audience must be one of {', '.join(AUDIENCES)}")
        self.audience = audience
        self.harness = harness
        self.started = started
        self.deliveries = deliveries
        self.warm_used = 0
        self.served_used = 0
        self.written_bytes = 0
        self.written_count = 0
        self.startup: dict[str, Any] | None = None

    @property
    def warm_allowance(self) -> int:
        return WARM_ALLOWANCE_BYTES[self.audience]

    @property
    def total_allowance(self) -> int:
        return TOTAL_ALLOWANCE_BYTES[self.audience]

    def startup_bytes(self) -> int:
        """The bytes of this session's startup brief, once one is seen; 0 while none is."""
        if self.startup is None:
            self.startup = self._find_startup()
        return int(self.startup["bytes"]) if self.startup is not None else 0

    def _find_startup(self) -> dict[str, Any] | None:
        earliest = self.started - dt.timedelta(seconds=tunables.MCP_STARTUP_RECEIPT_WINDOW_SECONDS)
        best: dict[str, Any] | None = None
        for item in self.deliveries():
            when = _receipt_time(item.get("time"))
            size = item.get("bytes")
            if item.get("event") != START_EVENT[self.audience] or item.get("harness") != self.harness:
                continue
            if when is None or when < earliest or not isinstance(size, int) or size < 0:
                continue
            if best is None or when > best["when"]:
                best = {"when": when, "bytes": size}
        return best

    def total_used(self) -> int:
        return self.startup_bytes() + self.served_used

    def warm_left(self) -> int:
        """What a recall may still return: the smaller of the warm and the total allowance's rest."""
        return max(0, min(self.warm_allowance - self.warm_used, self.total_allowance - self.total_used()))

    def total_left(self) -> int:
        return max(0, self.total_allowance - self.total_used())

    def charge_warm(self, size: int) -> None:
        self.warm_used += size
        self.served_used += size

    def charge(self, size: int) -> None:
        self.served_used += size

    def notice(self, what: str, size: int | None = None) -> str:
        """The short text that replaces notes once an allowance would be passed (no private content)."""
        need = f" ({size} bytes)" if size is not None else ""
        return (
            f"continuity: no {what} returned{need}: this session's allowance of private memory is used up "
            f"(warm retrieval {self.warm_used} of {self.warm_allowance} bytes; all private memory "
            f"{self.total_used()} of {self.total_allowance} bytes, the startup brief's {self.startup_bytes()} "
            "included). Work from what is already in context; the person can run 'lifecycle recall' if more "
            "is needed."
        )

    def write_refusal(self, size: int) -> str | None:
        """Why a write of `size` bytes is refused (the allowance would be passed), or None."""
        room = WRITE_ALLOWANCE_BYTES[self.audience]
        count = WRITE_ALLOWANCE_COUNT[self.audience]
        if self.written_count < count and self.written_bytes + size <= room:
            return None
        return (
            f"this session's allowance of writes through the server is used up ({self.written_count} of "
            f"{count} writes, {self.written_bytes} of {room} bytes; this one {size} bytes); nothing was "
            "written. Tell the person what you would write instead"
        )

    def charge_write(self, size: int) -> None:
        self.written_bytes += size
        self.written_count += 1

    def to_json(self) -> dict[str, Any]:
        return {
            "audience": self.audience,
            "warm_used": self.warm_used,
            "warm_allowance": self.warm_allowance,
            "total_used": self.total_used(),
            "total_allowance": self.total_allowance,
            "startup_brief_bytes": self.startup_bytes(),
            "written_bytes": self.written_bytes,
            "written_count": self.written_count,
        }
