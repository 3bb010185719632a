"""Sweeping the outbox, and the hourly scheduler entry that runs the sweep pinned to a script digest.

The sweep permanently deletes the direct children of `output/` whose time has come: delivered packages
seven days after delivery, anything else seven days after a sweep first saw it (enrollment). It acts
only on direct children of that one folder, never follows a link (a link is deleted as a link), and
does nothing at all to an outbox that was never activated, holds legacy data, or whose record this
computer's tool did not make (`activation.owned`: a record a repository carries is not the person's).

The scheduler entry and the session-start hook do not trust the script they run: their command
carries the SHA-256 of `scripts/artifactctl.py` and a few lines of standard-library Python check it
before anything runs, so an edited script is refused instead of executed. The session-start form
first asks the script's own `quiet` whether anything is due, so a sweep runs only when one would
change something.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from continuity import limits
from continuity.errors import ContinuityError, InputRejected
from continuity.local.repo import find_repo_root
from continuity.outbox.activation import activate, foreign_error, owned
from continuity.outbox.folder import (
    LIFETIME,
    Scheduled,
    entries,
    legacy_error,
    locked,
    outbox_exists,
    outbox_path,
    read_state,
    remove_entry,
    utc_now,
    write_state,
)

# --- sweep -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepResult:
    outbox: Path
    now: datetime
    activated: bool
    dry_run: bool
    deleted_packages: tuple[str, ...] = ()
    deleted_unmanaged: tuple[str, ...] = ()
    enrolled: tuple[str, ...] = ()
    pending: int = 0
    failed: tuple[str, ...] = ()
    next_expiry: datetime | None = None


def sweep(repo: Path, *, now: datetime | None = None, dry_run: bool = False, wait: bool = True) -> SweepResult:
    """Delete what has expired, enroll what is new; a dry run reports the same without changing anything."""
    moment = now or utc_now()
    outbox = outbox_path(repo)
    if not outbox_exists(outbox):
        return SweepResult(outbox, moment, False, dry_run)
    if read_state(outbox) is None:
        found = entries(outbox)
        if found:
            raise legacy_error(outbox, len(found))
        return SweepResult(outbox, moment, False, dry_run)
    with locked(outbox, wait=wait):
        state = read_state(outbox)
        if state is None:  # removed while we waited for the lock: behave as never activated
            return SweepResult(outbox, moment, False, dry_run)
        if not owned(repo, state):  # a record from elsewhere never leads to a deletion, nor a write
            raise foreign_error(repo)
        present = set(entries(outbox))
        gone = [n for n in (*state.packages, *state.enrolled) if n not in present]
        for name in gone:
            state.packages.pop(name, None)
            state.enrolled.pop(name, None)
        deleted_packages: list[str] = []
        deleted_unmanaged: list[str] = []
        enrolled: list[str] = []
        failed: list[str] = []
        for name in sorted(present):
            due = state.packages.get(name) or state.enrolled.get(name)
            if due is None:
                when = moment.replace(microsecond=0)
                state.enrolled[name] = Scheduled(when, when + LIFETIME)
                enrolled.append(name)
                continue
            if moment < due.expires:
                continue
            if not dry_run:
                try:
                    remove_entry(outbox / name)
                except FileNotFoundError:
                    pass
                except OSError:
                    failed.append(name)
                    continue
            (deleted_packages if name in state.packages else deleted_unmanaged).append(name)
            state.packages.pop(name, None)
            state.enrolled.pop(name, None)
        if not dry_run and (gone or enrolled or deleted_packages or deleted_unmanaged):
            write_state(outbox, state)
    waiting = [s.expires for s in (*state.packages.values(), *state.enrolled.values())]
    return SweepResult(
        outbox,
        moment,
        True,
        dry_run,
        tuple(deleted_packages),
        tuple(deleted_unmanaged),
        tuple(enrolled),
        len(waiting),
        tuple(failed),
        min(waiting) if waiting else None,
    )


def hook_sweep(start: Path) -> None:
    """The session-start and scheduler sweep: quick when there is nothing to do, silent, never raising.

    A missing outbox costs one `lstat`; a busy lock means another sweep is already at work.
    """
    try:
        repo = find_repo_root(start)
        if repo is not None:
            sweep(repo, wait=False)
    except Exception:  # a hook never fails: the next run or the scheduler tries again
        return


# --- the pinned command ------------------------------------------------------------------------------

SWEEPER_MARKER = "continuity-outbox-sweeper"
# Standard-library Python that runs a script only when its SHA-256 matches. It holds no quote, `%`
# or `$`, so the same text works inside sh, cron (where `%` is special), cmd and PowerShell.
# argv: SCRIPT DIGEST ARGS…  A mismatch exits with the value of `sys.exit(...)` below.
_PIN_CHECK = (
    "import hashlib,pathlib,subprocess,sys;p,d=sys.argv[1:3];"
    "hashlib.sha256(pathlib.Path(p).read_bytes()).hexdigest()==d or sys.exit({mismatch});"
    "sys.exit(subprocess.call([sys.executable,p]+sys.argv[3:]))"
)
# The scheduler's refusal names the script on stderr, so cron mails it; that text needs quotes, which
# is fine there: cron's line is sh-quoted and a scheduled task's arguments are quoted for CreateProcess.
# (The session-start sweep handler is pinned by `hookcommand` like every other handler.)
PIN_CHECK_LOUD = _PIN_CHECK.format(
    mismatch='"artifactctl sweeper: "+p+" changed since install-sweeper pinned it; review it, '
    'then run install-sweeper again"'
)


def script_digest(script: Path) -> str:
    return hashlib.sha256(script.read_bytes()).hexdigest()


def packaged_script(name: str) -> Path:
    """One of the scripts the schedulers run: the installed package's own copy (`continuity/_scripts/`),
    else, for an editable install, the `scripts/` folder of the checkout this package runs from."""
    package = Path(__file__).resolve().parents[1]
    packaged = package / "_scripts" / name
    if packaged.is_file():
        return packaged
    return package.parents[1] / "scripts" / name


def default_script() -> Path:
    """`artifactctl.py` of this installation (see `packaged_script`)."""
    return packaged_script("artifactctl.py")


# --- the hourly scheduler entry ----------------------------------------------------------------------


@dataclass(frozen=True)
class SweeperInstall:
    outbox: Path
    scheduler: str  # "cron" or "schtasks"
    entry: str
    marker: str
    script: Path
    sha256: str
    activated: bool
    changed: bool
    dry_run: bool


def marker_for(repo: Path) -> str:
    """One entry per repository: the marker names the repository by a digest of its path."""
    return f"{SWEEPER_MARKER}:{hashlib.sha256(str(repo).encode('utf-8')).hexdigest()[:12]}"


def cron_line(repo: Path, script: Path, digest: str, python: str) -> str:
    for part in (str(repo), str(script), python):
        if "%" in part or "\n" in part or "\r" in part:
            raise InputRejected(f"{part!r} contains '%' or a line break, which a crontab line cannot carry")
    marker = marker_for(repo)
    minute = int(marker.rsplit(":", 1)[1], 16) % 60  # spread repositories over the hour
    q = shlex.quote
    return (
        f"{minute} * * * * cd {q(str(repo))} && {q(python)} -c {q(PIN_CHECK_LOUD)} {q(str(script))} "
        f"{digest} sweep --quiet # {marker}"
    )


def merge_crontab(table: str, line: str, marker: str) -> str:
    """`table` with our one marked entry replaced in place (or appended); every other line kept."""
    tag = f"# {marker}"
    out: list[str] = []
    placed = False
    for existing in table.splitlines():
        if existing.rstrip().endswith(tag):
            if not placed:
                out.append(line)
                placed = True
            continue
        out.append(existing)
    if not placed:
        out.append(line)
    return "\n".join(out) + "\n"


def _run(command: list[str], what: str, job: str = "artifactctl sweep") -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=limits.OUTBOX_SCHEDULER_TIMEOUT_SECONDS,
            check=False,
        )
    except FileNotFoundError:
        raise ContinuityError(f"{command[0]} was not found; install {what}, or run '{job}' some other way") from None
    except subprocess.TimeoutExpired:
        raise ContinuityError(f"{command[0]} did not answer; nothing was changed") from None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "no message")


def read_crontab(job: str = "artifactctl sweep", *, dry_run: bool = False) -> str:
    """The person's crontab; with `dry_run` and no `crontab` command, an empty one (nothing is written)."""
    if dry_run and shutil.which("crontab") is None:
        return ""
    proc = _run(["crontab", "-l"], "cron", job)
    if proc.returncode == 0:
        return proc.stdout
    if "no crontab" in proc.stderr.lower():
        return ""
    # Never treat an unreadable table as empty: writing ours would erase the person's other entries.
    raise ContinuityError(f"crontab -l failed ({_first_line(proc.stderr)}); nothing was changed")


def _write_temp(data: bytes, suffix: str) -> Path:
    fd, name = tempfile.mkstemp(prefix="continuity-", suffix=suffix)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return Path(name)


def write_crontab(table: str, job: str = "artifactctl sweep") -> None:
    path = _write_temp(table.encode("utf-8"), ".crontab")
    try:
        proc = _run(["crontab", str(path)], "cron", job)
    finally:
        path.unlink()
    if proc.returncode != 0:
        raise ContinuityError(f"crontab refused the new table ({_first_line(proc.stderr)})")


def task_xml(repo: Path, script: Path, digest: str, python: str, marker: str) -> str:
    """A Task Scheduler definition: hourly, catching up after the computer was off."""
    from xml.sax.saxutils import escape  # lazy (30 ms): only the Windows scheduler needs it

    arguments = subprocess.list2cmdline(["-c", PIN_CHECK_LOUD, str(script), digest, "sweep", "--quiet"])
    minute = int(marker.rsplit(":", 1)[1], 16) % 60
    return f"""<?xml version="1.0" encoding="UTF-16"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo>
    <Description>{escape(marker)}: delete expired outbox deliveries</Description>
  </RegistrationInfo>
  <Triggers><TimeTrigger><StartBoundary>2000-01-01T00:{minute:02d}:00</StartBoundary>
    <Repetition><Interval>PT1H</Interval></Repetition><Enabled>true</Enabled></TimeTrigger></Triggers>
  <Settings><StartWhenAvailable>true</StartWhenAvailable><MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <ExecutionTimeLimit>PT10M</ExecutionTimeLimit></Settings>
  <Actions Context="Author"><Exec><Command>{escape(python)}</Command>
    <Arguments>{escape(arguments)}</Arguments>
    <WorkingDirectory>{escape(str(repo))}</WorkingDirectory></Exec></Actions>
</Task>
"""


def _task_python(python: str) -> str:
    """pythonw.exe beside python.exe, so an hourly task does not flash a console window."""
    candidate = Path(python).with_name("pythonw.exe")
    return str(candidate) if Path(python).name.lower() == "python.exe" and candidate.is_file() else python


def install_sweeper(
    repo: Path,
    *,
    script: Path | None = None,
    python: str | None = None,
    scheduler: str | None = None,
    dry_run: bool = False,
    now: datetime | None = None,
) -> SweeperInstall:
    """Activate an empty outbox and install (or replace) this repository's hourly pinned sweep."""
    script = script or default_script()
    if not script.is_file() or script.is_symlink():
        raise ContinuityError(
            f"{script} is missing or a link; install-sweeper pins the artifactctl.py of this continuity "
            "installation; reinstall continuity"
        )
    digest = script_digest(script)
    python = python or sys.executable
    scheduler = scheduler or ("schtasks" if sys.platform == "win32" else "cron")
    marker = marker_for(repo)
    moment = now or utc_now()
    activate(repo, moment, dry_run=True, adopt=True)  # legacy data stops us before anything is read or written
    if scheduler == "cron":
        entry = cron_line(repo, script, digest, python)
        table = read_crontab(dry_run=dry_run)  # an unreadable table stops us before activation
        merged = merge_crontab(table, entry, marker)
        changed = merged != table
        _, activated = activate(repo, moment, dry_run=dry_run, adopt=True)
        if changed and not dry_run:
            write_crontab(merged)
    else:
        python = _task_python(python)
        task = marker.replace(":", "-")
        xml = task_xml(repo, script, digest, python, marker)
        args = subprocess.list2cmdline(["-c", PIN_CHECK_LOUD, str(script), digest, "sweep", "--quiet"])
        entry = f"{task}: {subprocess.list2cmdline([python])} {args} (in {repo})"
        changed = True  # /F replaces the task of the same name: still exactly one
        _, activated = activate(repo, moment, dry_run=dry_run, adopt=True)
        if not dry_run:
            path = _write_temp(xml.encode("utf-16"), ".xml")
            try:
                proc = _run(["schtasks", "/Create", "/F", "/TN", task, "/XML", str(path)], "Task Scheduler")
            finally:
                path.unlink()
            if proc.returncode != 0:
                raise ContinuityError(f"schtasks refused the task ({_first_line(proc.stderr or proc.stdout)})")
    return SweeperInstall(outbox_path(repo), scheduler, entry, marker, script, digest, activated, changed, dry_run)
