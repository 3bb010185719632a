"""Doctor's check of a Git vault: ahead, behind, diverged, interrupted, and when it last synced.

It reads only what is on this computer (the branch, the remote-tracking ref of the last fetch, the
sync's own records in `.git/continuity/`), so doctor stays offline and quick; "behind" therefore means
behind what the last sync saw. A vault that is not a Git vault gets no check at all.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from continuity import limits
from continuity.health.report import Check, check

if TYPE_CHECKING:
    from continuity.health.doctor import Context

_ADVICE = {
    "interrupted": (
        "warn",
        "a sync was interrupted or a git operation is in progress; run 'lifecycle sync' to finish it",
    ),
    "diverged": ("warn", "this computer and the remote both have commits the other lacks; run 'lifecycle sync'"),
    "ahead": ("warn", "commits are waiting to be pushed; run 'lifecycle sync'"),
    "behind": ("warn", "the remote had newer commits at the last fetch; run 'lifecycle sync'"),
    "no-remote": ("warn", "the vault is a Git repository without a remote; run 'lifecycle sync --remote URL'"),
    "in-sync": ("ok", "in step with the remote as of the last sync"),
}


OVERLAP_ADVICE = (
    "check that the two computers' work fits together, then run 'lifecycle lease overlaps --reviewed' "
    "(and 'lifecycle sync') so every computer stops reporting it"
)


def sync_checks(ctx: Context) -> list[Check]:
    from continuity.store import overlaps
    from continuity.sync.state import describe

    seen = describe(ctx.root, ctx.conn.device)
    if seen.state == "not-git":
        return []
    found = [
        check("lease.overlap", "warn", f"{item.describe()}; {OVERLAP_ADVICE}")
        for item in overlaps.open_overlaps(ctx.root)
    ]
    level, advice = _ADVICE[seen.state]
    last = f"last sync {seen.last_sync}" if seen.last_sync else "never synced from this computer"
    counts = f"{seen.ahead} ahead, {seen.behind} behind"
    found.insert(0, check("sync", level, f"git vault {seen.state} ({counts}; {last}): {advice}"))
    if seen.last_sync and level == "ok":
        then = dt.datetime.strptime(seen.last_sync, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
        now = ctx.now or dt.datetime.now(dt.timezone.utc)
        if (now - then).total_seconds() > limits.SYNC_STALE_AFTER_SECONDS:
            found.append(check("sync.age", "warn", f"the last sync was at {seen.last_sync}; run 'lifecycle sync'"))
    return found
