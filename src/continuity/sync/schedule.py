"""The optional hourly `lifecycle sync`, installed through the same scheduler code as the outbox sweeper.

The entry runs this installation's `vault-sync.py` (the installed package's `continuity/_scripts/`
copy, or a checkout's `scripts/` for an editable install) in this checkout, but only after a few
lines of standard-library Python have checked the script's SHA-256 against the digest written into the
entry, exactly as the sweeper's entry does: an edited script is refused (cron mails the refusal),
never run. One entry per checkout (its marker names the checkout by a digest of its path), replaced
in place on a re-install; every other line of the crontab is kept. On Windows the entry is a Task Scheduler task.
"""

from __future__ import annotations

import hashlib
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from continuity import tunables
from continuity.errors import FIELD, ContinuityError, InputRejected
from continuity.outbox import sweep

MARKER = "continuity-sync"
PIN_CHECK = (
    "import hashlib,pathlib,subprocess,sys;p,d=sys.argv[1:3];"
    'hashlib.sha256(pathlib.Path(p).read_bytes()).hexdigest()==d or sys.exit("lifecycle sync: "+p+'
    '" changed since it was pinned; review it, then run lifecycle sync --install-hourly again");'
    "sys.exit(subprocess.call([sys.executable,p]+sys.argv[3:]))"
)


@dataclass(frozen=True)
class Installed:
    scheduler: str
    entry: str
    script: Path
    sha256: str
    changed: bool
    dry_run: bool


SCRIPT = "vault-sync.py"
JOB = "lifecycle sync"


def default_script() -> Path:
    """`vault-sync.py` of this installation: the installed package's copy, else the checkout's."""
    return sweep.packaged_script(SCRIPT)


def marker_for(repo: Path) -> str:
    return f"{MARKER}:{hashlib.sha256(str(repo).encode('utf-8')).hexdigest()[:12]}"


def cron_line(repo: Path, script: Path, digest: str, python: str) -> str:
    for part in (str(repo), str(script), python):
        if "%" in part or "\n" in part or "\r" in part:
            raise InputRejected(f"{part!r} contains '%' or a line break, which a crontab line cannot carry")
    marker = marker_for(repo)
    minute = int(marker.rsplit(":", 1)[1], 16) % 60
    hours = max(1, tunables.SYNC_SCHEDULE_INTERVAL_SECONDS // 3600)
    q = shlex.quote
    return (
        f"{minute} */{hours} * * * cd {q(str(repo))} && {q(python)} -c {q(PIN_CHECK)} {q(str(script))} {digest} "
        f"# {marker}"
    )


def install(repo: Path, *, script: Path | None = None, python: str | None = None, dry_run: bool = False) -> Installed:
    """Install (or replace) this checkout's hourly pinned sync in the user's crontab."""
    script = script or default_script()
    if not script.is_file() or script.is_symlink():
        raise ContinuityError(
            f"{script} is missing or a link; {FIELD} pins the {SCRIPT} of this continuity installation; "
            "reinstall continuity",
            field="install_hourly",
        )
    if sys.platform == "win32":
        raise ContinuityError(
            f"{FIELD} installs a cron entry; on Windows schedule 'lifecycle sync' yourself", field="install_hourly"
        )
    digest = sweep.script_digest(script)
    entry = cron_line(repo, script, digest, python or sys.executable)
    table = sweep.read_crontab(JOB, dry_run=dry_run)
    merged = sweep.merge_crontab(table, entry, marker_for(repo))
    changed = merged != table
    if changed and not dry_run:
        sweep.write_crontab(merged, JOB)
    return Installed("cron", entry, script, digest, changed, dry_run)
