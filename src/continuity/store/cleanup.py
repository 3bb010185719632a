"""`lifecycle doctor --fix`: remove the temporary files this tool's own writers left behind.

It is the one write `doctor` offers, so it lives with the write path rather than with the checks,
which never write.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

from continuity import tunables
from continuity.safeio import is_tmp_name
from continuity.store import writer
from continuity.vault import scan


def fix(cwd: Path, *, now: float | None = None, on_wait: Callable[[str], None] | None = None) -> list[str]:
    """Remove the temporary files this tool's own writers left behind; return their vault paths.

    Only names of the writers' exact shape (`.<name>.<12 hex>.tmp`, regular files, no links) that the
    bounded scan found and that are older than `TEMP_FILE_STALE_SECONDS` go, so a write still in flight
    here or on another computer is never cut short. It is a vault write like any other: it holds the
    local lock, refuses while another device holds the lease (exit 4) and journals each removal.
    """
    conn, ctx = writer.connect(cwd, on_wait=on_wait)
    found = scan.scan(ctx.vault, conn.project, conn.device).temporary
    cutoff = (time.time() if now is None else now) - tunables.TEMP_FILE_STALE_SECONDS
    removed: list[str] = []
    with writer.transaction(ctx) as tx:
        for rel in found:
            try:
                info = os.lstat(ctx.vault / rel)
            except OSError:
                continue
            if is_tmp_name(Path(rel).name) and stat.S_ISREG(info.st_mode) and info.st_mtime < cutoff:
                tx.remove(rel, op="doctor.fix", note_id=None)
                removed.append(rel)
    return removed
