"""One client session of the server: where it was started, its meter, and how one tool call runs.

A call is looked up in the catalog, its arguments checked against the tool's schema, a write checked
against the session's write allowance, and then its handler runs under the session's lock (so the
meter's check and charge are one step even if calls ever overlap). Every failure becomes the command
line's one error line as a tool error: never a traceback, a value or a partial write.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from continuity.errors import InputRejected, one_line, trace
from continuity.hook import receipts
from continuity.local import connection
from continuity.local.repo import find_repo_root
from continuity.server import catalog, schema
from continuity.server.meter import Meter
from continuity.server.tool import LABEL, Outcome, error_line

if TYPE_CHECKING:
    from continuity.recall.watch import Watcher


def text_bytes(value: object) -> int:
    """The UTF-8 bytes of every string in a tool call's checked arguments (what a write would store)."""
    if isinstance(value, str):
        return len(value.encode("utf-8", errors="surrogatepass"))
    if isinstance(value, dict):
        return sum(text_bytes(item) for item in value.values())
    if isinstance(value, list):
        return sum(text_bytes(item) for item in value)
    return 0


class Session:
    """One client session: the folder the client started the server in, its meter, its harness.

    `watch=False`: every recall walks the warm folders, as the command line does."""

    def __init__(self, cwd: Path, meter: Meter, harness: str, *, watch: bool = True) -> None:
        self.cwd = cwd
        self.meter = meter
        self.harness = harness
        self.watch = watch
        self.lock = threading.Lock()
        self._watcher: Watcher | None = None

    def call(self, name: str, args: Mapping[str, Any] | None) -> Outcome:
        """Run one tool; every failure becomes the command line's one error line, as a tool error."""
        tool = catalog.BY_NAME.get(name)
        if tool is None:
            return Outcome(f"{LABEL}: error: no tool named {one_line(name)[:64]}", True)
        try:
            checked = schema.validate(name, tool.input_schema, dict(args or {}))
            with self.lock:  # the meter's check and charge are one step
                if tool.read_only:
                    return tool.handler(self, checked)
                size = text_bytes(checked)
                refusal = self.meter.write_refusal(size)
                if refusal is not None:
                    raise InputRejected(refusal)
                outcome = tool.handler(self, checked)
                if not outcome.is_error:
                    self.meter.charge_write(size)
                return outcome
        except Exception as exc:
            trace()
            return Outcome(error_line(exc), True)

    def watcher(self, root: Path, device: str) -> Watcher | None:
        """The recall watcher of the vault this call is connected to: a checkout connected to another
        vault (or device) since the last call gets a new one, and the old one is closed."""
        if not self.watch:
            return None
        current = self._watcher
        if current is not None and (current.root, current.device) == (root, device):
            return current
        from continuity.recall.watch import Watcher  # lazy: a session that never watches loads no ctypes

        if current is not None:
            current.close()
        self._watcher = Watcher(root, device)
        return self._watcher

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None

    def connected(self) -> tuple[Path, str, str]:
        conn = connection.discover(self.cwd)
        return connection.require_vault(conn), conn.device, conn.project


def new_session(cwd: Path, audience: str, harness: str, started: float | None = None) -> Session:
    """A session for a server started in `cwd` (at `started`, seconds since the epoch; now if None): its
    meter reads the hook's receipts of this checkout, looked up at the first metered call."""
    checkout: list[Path | None] = []

    def deliveries() -> list[dict[str, Any]]:
        if not checkout:
            checkout.append(find_repo_root(cwd))
        found = checkout[0]
        return list(receipts.last_deliveries(found)) if found is not None else []

    when = dt.datetime.now(dt.timezone.utc) if started is None else dt.datetime.fromtimestamp(started, dt.timezone.utc)
    meter = Meter(audience, harness, when, deliveries)
    return Session(cwd, meter, harness)
