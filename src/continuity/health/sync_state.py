"""Doctor's check of a Git vault: ahead, behind, diverged, interrupted, and when it last synced.

It reads only what is on this computer (the branch, the remote-tracking ref of the last fetch, the
sync's own records in `.git/continuity/`), so doctor stays offline and quick; "behind" therefore means
behind what the last sync saw. A vault that is not a Git vault gets no check at all.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import TYPE_CHECKING

from continuity import tunables
from continuity.health.context import Context
from continuity.health.report import Check, check
from continuity.records import overlaps
from continuity.sync import commit
from continuity.sync.git import Git, GitFailed
from continuity.sync.state import describe

if TYPE_CHECKING:
    from continuity.sync.commit import Held

_ADVICE = {
    "interrupted": (
        "warn",
        "a sync was interrupted or a git operation is in progress; run 'lifecycle sync' to finish it",
    ),
    "diverged": ("warn", "this computer and the remote both have commits the other lacks; run 'lifecycle sync'"),
    "ahead": ("warn", "commits are waiting to be pushed; run 'lifecycle sync'"),
    "behind": ("warn", "the remote had newer commits at the last fetch; run 'lifecycle sync'"),
    "no-remote": ("warn", "the vault is a Git repository without a remote; run 'lifecycle sync --remote URL'"),
    "uncommitted": ("warn", "changes on this computer are not committed yet; run 'lifecycle sync'"),
    "in-sync": ("ok", "in step with the remote as of the last sync"),
}
HELD_ADVICE = "it stays on this computer until it is fixed ('lifecycle scan' names the line)"


def _local_changes(ctx: Context) -> tuple[list[str], list[Held]]:
    """The files this computer changed since its last commit, and those the sync's gate holds back."""
    git = Git(ctx.root, ctx.conn.device)
    try:
        changed = commit.changed_paths(git)
    except GitFailed:
        return [], []
    present = [rel for rel in changed[: tunables.DOCTOR_NOTE_CHECK_MAX_FILES] if os.path.lexists(ctx.root / rel)]
    held = [item for rel in present if (item := commit.gate_file(git, rel))]
    return changed, held


OVERLAP_ADVICE = (
    "check that the two computers' work fits together, then run 'lifecycle lease overlaps --reviewed' "
    "(and 'lifecycle sync') so every computer stops reporting it"
)


def sync_checks(ctx: Context) -> list[Check]:
    seen = describe(ctx.root, ctx.conn.device)
    if seen.state == "not-git":
        return []
    found = [
        check("lease.overlap", "warn", f"{item.describe()}; {OVERLAP_ADVICE}")
        for item in overlaps.open_overlaps(ctx.root)
    ]
    changed, held = _local_changes(ctx)
    state = "uncommitted" if seen.state == "in-sync" and len(changed) > len(held) else seen.state
    level, advice = _ADVICE[state]
    last = f"last sync {seen.last_sync}" if seen.last_sync else "never synced from this computer"
    counts = f"{seen.ahead} ahead, {seen.behind} behind, {len(changed)} changed file(s) not committed"
    found.insert(0, check("sync", level, f"git vault {state} ({counts}; {last}): {advice}"))
    for item in held:
        found.append(
            check("sync.held", "warn", f"every sync holds back {item.message().split('; ')[0]}: {HELD_ADVICE}")
        )
    if seen.last_sync and level == "ok":
        then = dt.datetime.strptime(seen.last_sync, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
        now = ctx.now or dt.datetime.now(dt.timezone.utc)
        if (now - then).total_seconds() > tunables.SYNC_STALE_AFTER_SECONDS:
            found.append(check("sync.age", "warn", f"the last sync was at {seen.last_sync}; run 'lifecycle sync'"))
    return found
