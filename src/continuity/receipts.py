"""Proof of delivery: a machine-local receipt of the last brief each harness received.

No harness shows what the model was actually given, so after every SessionStart and SubagentStart
the hook records what it printed: time, harness, event, source, status, bytes, token estimate and
the SHA-256 of the brief, never its text. `lifecycle doctor` shows the last delivery per harness and
event, and `lifecycle render --explain` prints the digest of the brief that would be delivered now,
so a person can compare the two.

Receipts live in `$XDG_STATE_HOME/continuity/receipts.json` (else `~/.local/state/…`), outside the
vault (they are about this computer), mode 0600, replaced atomically (without fsync: see
`write_quick`). The checkout is recorded as a digest of its path, so the file names no folder. A
receipt that cannot be written is skipped: proof of delivery must never cost a delivery. Standard
library only: it runs inside the hook.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

from continuity import limits
from continuity.render import Brief

RECEIPTS_VERSION = 1
FIELDS = (
    "time", "harness", "event", "source", "status", "bytes", "tokens_estimate", "sha256",
    "recovery_note", "checkout",
)  # fmt: skip


def state_home() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "continuity"


def receipts_path() -> Path:
    return state_home() / "receipts.json"


def checkout_digest(checkout: Path | None) -> str | None:
    """A short digest that tells checkouts apart without naming them."""
    if checkout is None:
        return None
    return hashlib.sha256(str(checkout).encode("utf-8", errors="surrogateescape")).hexdigest()[:16]


def read_json_capped(path: Path, cap: int) -> Any:
    """A small JSON file that is a regular file (no link) within `cap` bytes, else None."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
            return None
        with open(path, "rb") as handle:
            data = handle.read(cap + 1)
        return json.loads(data.decode("utf-8")) if len(data) <= cap else None
    except (OSError, ValueError, RecursionError):
        return None


def write_quick(path: Path, text: str) -> None:
    """Replace `path` atomically (temporary sibling, rename) without fsync.

    Hook state and receipts are machine-local bookkeeping that a crash may lose without harm, and they
    are written on every tool event: an fsync there would cost more than the rest of the hook. A reader
    still sees the old file or the new one, never a torn one.
    """
    from continuity import atomic

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = atomic.tmp_name_for(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _entries() -> dict[str, dict[str, Any]]:
    doc = read_json_capped(receipts_path(), limits.RECEIPTS_CAP_BYTES)
    if not isinstance(doc, dict) or doc.get("version") != RECEIPTS_VERSION:
        return {}
    found = doc.get("deliveries")
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, dict)}


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def record(
    brief: Brief, source: str | None, checkout: Path | None, recovery_note: bool, now: float | None = None
) -> None:
    """Remember this delivery as the last one for its checkout, harness and event."""
    digest = checkout_digest(checkout)
    entry = {
        "time": _utc(time.time() if now is None else now),
        "harness": brief.harness,
        "event": brief.event,
        "source": source,
        "status": brief.status,
        "bytes": brief.bytes,
        "tokens_estimate": brief.tokens_estimate,
        "sha256": brief.sha256,
        "recovery_note": recovery_note,
        "checkout": digest,
    }
    try:
        entries = _entries()
        entries[f"{digest}:{brief.harness}:{brief.event}"] = entry
        newest = sorted(entries.items(), key=lambda item: str(item[1].get("time", "")), reverse=True)
        kept = dict(newest[: limits.RECEIPTS_MAX_ENTRIES])
        text = json.dumps({"version": RECEIPTS_VERSION, "deliveries": kept}, indent=1, sort_keys=True)
        write_quick(receipts_path(), text + "\n")
    except OSError:
        pass


def last_deliveries(checkout: Path | None = None) -> list[dict[str, Any]]:
    """The last delivery per harness and event, of one checkout when given, else of any checkout.

    Each item has exactly the keys of FIELDS; `checkout` is a digest of the path, never the path.
    """
    wanted = checkout_digest(checkout)
    newest: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in _entries().values():
        if wanted is not None and entry.get("checkout") != wanted:
            continue
        item = {key: entry.get(key) for key in FIELDS}
        slot = (str(item["harness"]), str(item["event"]))
        if slot not in newest or str(item["time"]) > str(newest[slot]["time"]):
            newest[slot] = item
    return [newest[slot] for slot in sorted(newest)]
