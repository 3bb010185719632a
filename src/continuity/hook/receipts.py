"""Proof of delivery: a machine-local receipt of the last brief each harness received.

No harness shows what the model was actually given, so after every SessionStart and SubagentStart
the hook records what it printed: time, harness, event, source, status, bytes, token estimate and
the SHA-256 of the brief, never its text. `lifecycle doctor` shows the last delivery per harness and
event, and `lifecycle render --explain` prints the digest of the brief that would be delivered now,
so a person can compare the two.

Receipts live in `$XDG_STATE_HOME/continuity/receipts/` (else `~/.local/state/…`), outside the
vault (they are about this computer): one small JSON file per checkout, harness and event, mode 0600,
replaced whole at each delivery (`warm.write_receipt`, which both startup paths use). The checkout
is recorded as a digest of its path, so no file names a folder. A receipt that cannot be written is
skipped: proof of delivery must never cost a delivery.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from continuity import limits
from continuity.brief.render import Brief

RECEIPTS_VERSION = 1
FIELDS = (
    "time", "harness", "event", "source", "status", "bytes", "tokens_estimate", "sha256",
    "recovery_note", "checkout",
)  # fmt: skip


def state_home() -> Path:
    from continuity.local import userdirs

    return Path(userdirs.state_dir())


def receipts_dir() -> Path:
    return state_home() / "receipts"


def checkout_digest(checkout: Path | None) -> str | None:
    """A short digest that tells checkouts apart without naming them."""
    from continuity.hook import warm

    return warm.checkout_digest(None if checkout is None else str(checkout))


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


def _entries() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    try:
        names = sorted(os.listdir(receipts_dir()))
    except OSError:
        return out
    for name in names[: limits.RECEIPTS_MAX_ENTRIES]:
        if name.endswith(".json") and not name.startswith("."):
            doc = read_json_capped(receipts_dir() / name, limits.RECEIPTS_CAP_BYTES)
            if isinstance(doc, dict):
                out.append(doc)
    return out


def record(
    brief: Brief, source: str | None, checkout: Path | None, recovery_note: bool, now: float | None = None
) -> None:
    """Remember this delivery as the last one for its checkout, harness and event."""
    from continuity.hook import warm

    warm.write_receipt(
        {
            "harness": brief.harness,
            "event": brief.event,
            "source": source,
            "status": brief.status,
            "bytes": brief.bytes,
            "tokens_estimate": brief.tokens_estimate,
            "sha256": brief.sha256,
            "recovery_note": recovery_note,
            "checkout": checkout_digest(checkout),
        },
        now,
    )


def stored_text() -> str:
    """Every receipt file's text, for checking what the receipts hold."""
    try:
        return "".join((receipts_dir() / name).read_text("utf-8") for name in sorted(os.listdir(receipts_dir())))
    except OSError:
        return ""


def last_deliveries(checkout: Path | None = None) -> list[dict[str, Any]]:
    """The last delivery per harness and event, of one checkout when given, else of any checkout.

    Each item has exactly the keys of FIELDS; `checkout` is a digest of the path, never the path.
    """
    wanted = checkout_digest(checkout)
    newest: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in _entries():
        if wanted is not None and entry.get("checkout") != wanted:
            continue
        item = {key: entry.get(key) for key in FIELDS}
        slot = (str(item["harness"]), str(item["event"]))
        if slot not in newest or str(item["time"]) > str(newest[slot]["time"]):
            newest[slot] = item
    return [newest[slot] for slot in sorted(newest)]
