"""What a sync leaves behind in `.git/continuity/` (machine-local, never committed), and the vault's
sync state as doctor reports it without touching the network.

`sync.json` is written (atomically) when a sync starts and removed when it ends, so finding it means
the last sync was interrupted; while the working tree moves from one commit to another it also names
both, which lets the next sync finish that step (or see that it had finished). `last.json` records the
end of the last completed sync. Both are small versioned JSON; anything unreadable counts as absent.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity import tunables
from continuity.errors import NoteError
from continuity.safeio import read_regular
from continuity.store import atomic
from continuity.sync.git import HEAD_REF, TRACKING, Git, is_git_vault

STATE_VERSION = 1


def folder(vault: Path) -> Path:
    return vault / ".git" / "continuity"


def read(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(read_regular(str(path), tunables.SYNC_STATE_CAP_BYTES))
    except (OSError, ValueError, NoteError):
        return None
    return doc if isinstance(doc, dict) and doc.get("version") == STATE_VERSION else None


def write(path: Path, doc: dict[str, Any], *, durable: bool = False) -> None:
    """Replace a record whole; fsynced only when `durable` (the checkout record, which must outlive a
    power cut: a killed process loses nothing the kernel already has, so the rest skip the fsync)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    text = json.dumps({"version": STATE_VERSION, **doc}, sort_keys=True) + "\n"
    if durable:
        atomic.write_text(path, text)
        return
    tmp = atomic.tmp_name_for(path)
    tmp.write_text(text, "utf-8")
    os.replace(tmp, path)


def running(vault: Path) -> dict[str, Any] | None:
    return read(folder(vault) / "sync.json")


def begin(vault: Path, now: dt.datetime, **fields: str) -> None:
    write(folder(vault) / "sync.json", {"started": _utc(now), **fields}, durable=fields.get("phase") == "checkout")


def end(vault: Path, now: dt.datetime, outcome: str) -> None:
    write(folder(vault) / "last.json", {"time": _utc(now), "outcome": outcome})
    (folder(vault) / "sync.json").unlink(missing_ok=True)


def _utc(now: dt.datetime) -> str:
    return now.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class SyncState:
    """Doctor's view: `state` is one of not-git, no-remote, interrupted, diverged, ahead, behind, in-sync."""

    state: str
    ahead: int
    behind: int
    last_sync: str | None
    interrupted: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "state": self.state,
            "ahead": self.ahead,
            "behind": self.behind,
            "last_sync": self.last_sync,
            "interrupted": self.interrupted,
        }


def describe(vault: Path, device: str) -> SyncState:
    """The state as of the last fetch (no network): commits ahead and behind, an interrupted sync."""
    if not is_git_vault(vault):
        return SyncState("not-git", 0, 0, None, False)
    git = Git(vault, device)
    last = read(folder(vault) / "last.json")
    last_time = str(last["time"]) if last and isinstance(last.get("time"), str) else None
    interrupted = running(vault) is not None or any(
        (vault / ".git" / name).exists() for name in ("rebase-merge", "rebase-apply", "MERGE_HEAD")
    )
    remote = git.probe(["config", "--get", "remote.origin.url"])
    if remote.returncode != 0:
        return SyncState("no-remote", 0, 0, last_time, interrupted)
    head, tracking = git.rev(HEAD_REF), git.rev(TRACKING)
    ahead = behind = 0
    if head and tracking:
        counts = git.text(["rev-list", "--left-right", "--count", f"{head}...{tracking}"]).split()
        ahead, behind = int(counts[0]), int(counts[1])
    elif head:
        ahead = int(git.text(["rev-list", "--count", head]) or "0")
    if interrupted:
        word = "interrupted"
    elif ahead and behind:
        word = "diverged"
    elif ahead:
        word = "ahead"
    elif behind:
        word = "behind"
    else:
        word = "in-sync"
    return SyncState(word, ahead, behind, last_time, interrupted)


def interrupted_line(vault: Path, device: str) -> str:
    """What a sync stopped by Ctrl-C left, in one sentence for the person (read from the records)."""
    phase = (running(vault) or {}).get("phase")
    seen = describe(vault, device)
    where = {
        "commit": "while committing this computer's changes",
        "integrate": "while bringing in the remote's commits",
        "checkout": "while updating the vault's files",
    }.get(str(phase), "before it began" if phase is None and not seen.interrupted else "part way")
    if phase == "commit":
        waiting = "this computer's changes may not be committed yet"
    elif seen.ahead:
        waiting = f"{seen.ahead} commit(s) of this computer may not have reached the remote"
    else:
        waiting = "no commit of this computer was waiting to be pushed"
    return (
        f"interrupted {where}: {waiting}; nothing is lost, and the next 'lifecycle sync' finishes or undoes "
        "what this one began"
    )
