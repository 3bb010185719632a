"""Appending to this device's journal: the exact line one vault write adds (`records.journal` reads them).

`50-devices/<device>/journal.jsonl` holds one JSON object per line with exactly the keys of
`records.journal.KEYS`. A line is built with the json module (so no note text can break it) and
appended with a single `write` on an O_APPEND descriptor under the local lock, which means a killed
writer leaves a whole line or none.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from continuity.gate.secrets import shown_path, shown_value
from continuity.store import atomic
from continuity.vault import notes


def entry_line(device: str, op: str, note_id: str | None, path: str, sha256: str | None, now: dt.datetime) -> str:
    """The exact line written for one write (without its newline).

    A file name that looks like a secret (a token pasted as a note's name) is withheld here, in the one
    place lines are made: the journal is synchronized and shown (`lifecycle log`, `search_log`).
    """
    doc = {
        "ts": notes.format_utc(now),
        "device": device,
        "op": op,
        "id": None if note_id is None else shown_value(note_id),
        "path": shown_path(path),
        "sha256": sha256,
    }
    return json.dumps(doc, ensure_ascii=True, separators=(",", ":"))


def append(
    file: Path, device: str, op: str, note_id: str | None, path: str, sha256: str | None, now: dt.datetime
) -> str:
    """Append one entry to `file` (the caller holds the local lock and made the folder); returns the line."""
    line = entry_line(device, op, note_id, path, sha256, now)
    atomic.append_line(file, line)
    return line
