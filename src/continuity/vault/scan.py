"""Doctor's bounded metadata scan of the working set, also run by the startup hook.

The scan looks at names and `lstat` results only; it never opens a file, so it cannot hydrate an
online-only file of a sync engine, never reads another device's notes, and costs the same on a vault of
a thousand files as on one of a million. It is bounded three ways (seed 003):

* at most `DOCTOR_SCAN_MAX_ENTRIES` (1,024) directory entries are visited;
* at most `DOCTOR_SCAN_MAX_DIRS` (512) directories are scheduled;
* it stops as soon as review is certain: once the working set is known to be over its file or byte
  limit, scanning further cannot change the verdict.

A stopped scan is reported as incomplete (a warning, never a failure). Folders are visited breadth
first, the ones that matter at session start first: `00-system`, this project's folder, the handoffs,
this device's folder, then the rest of the working set and the tool's own `.continuity/` state. Links
are reported and never followed, not even to check what they point at.

What it finds: sync-engine conflict copies (named by the rules of `conflicts.py`), leftover temporary
files from interrupted atomic writes (`.<name>.<12 hex>.tmp`), symbolic links and other non-regular
entries, and the working set's figures against the storage budget.

Standard library only (the startup hook imports it): no YAML, no secret scanner, no typer.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from continuity import limits
from continuity.safeio import is_tmp_name
from continuity.vault import layout
from continuity.vault.budget import Tally, Thresholds, human_size, is_working_set, worst
from continuity.vault.conflicts import conflict_engine

STOP_ENTRIES = "entries"
STOP_DIRS = "dirs"
STOP_REVIEW = "review"
STOP_UNREADABLE = "unreadable"


GIT_SYNC = "lifecycle sync"  # the engine doctor names for a Git vault's own conflict copies


@dataclass(frozen=True)
class Conflict:
    rel: str
    engine: str


@dataclass(frozen=True)
class ScanResult:
    """What one bounded scan saw; every list is sorted, so equal vaults give equal results."""

    entries: int
    dirs: int
    complete: bool
    stop: str | None  # why it stopped early: entries | dirs | review | unreadable
    tally: Tally
    conflicts: tuple[Conflict, ...] = ()
    temporary: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    special: tuple[str, ...] = ()  # FIFOs, sockets, devices: never opened
    unreadable: tuple[str, ...] = ()
    visited: tuple[str, ...] = ()  # folders listed, in order (the startup cache re-checks their stamps)


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except OSError:
        return None


def _real_dir_path(root: Path, rel: str) -> bool:
    """True when every component of `rel` is a real folder (no link anywhere on the way)."""
    current = root
    for part in rel.split("/"):
        current = current / part
        info = _lstat(current)
        if info is None or not stat.S_ISDIR(info.st_mode):
            return False
    return True


@dataclass
class _State:
    root: Path
    thresholds: Thresholds
    max_entries: int
    max_dirs: int
    entries: int = 0
    scheduled: set[str] = field(default_factory=set)
    queue: deque[str] = field(default_factory=deque)
    stop: str | None = None
    tally: Tally = field(default_factory=Tally)
    conflicts: list[Conflict] = field(default_factory=list)
    temporary: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    special: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)

    def schedule(self, rel: str) -> None:
        if rel in self.scheduled:
            return
        if len(self.scheduled) >= self.max_dirs:
            self.stop = self.stop or STOP_DIRS
            return
        self.scheduled.add(rel)
        self.queue.append(rel)

    def visit_dir(self, rel: str) -> None:
        """List one folder, counting every entry; stops mid-folder when a bound is reached."""
        folder = self.root / rel
        self.visited.append(rel)
        names: set[str] = set()
        files: list[str] = []
        truncated = False
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    if self.entries >= self.max_entries:
                        self.stop = STOP_ENTRIES
                        truncated = True
                        break
                    self.entries += 1
                    names.add(entry.name)
                    if self._entry(rel, entry):
                        files.append(entry.name)
                    if self.tally.review_certain(self.thresholds):
                        self.stop = STOP_REVIEW
                        truncated = True
                        break
        except OSError:
            self.unreadable.append(rel)
            self.stop = self.stop or STOP_UNREADABLE

        def exists(name: str) -> bool:
            return name in names or (truncated and _lstat(folder / name) is not None)

        for name in files:
            engine = conflict_engine(name, exists)
            if engine:
                self.conflicts.append(Conflict(f"{rel}/{name}", engine))

    def _entry(self, rel: str, entry: os.DirEntry[str]) -> bool:
        """Account for one entry; True for a regular file (a conflict-copy candidate)."""
        child = f"{rel}/{entry.name}"
        try:
            if entry.is_symlink():
                self.links.append(child)
                return False
            if entry.is_dir(follow_symlinks=False):
                self.schedule(child)
                return False
            if not entry.is_file(follow_symlinks=False):
                self.special.append(child)
                return False
            size = entry.stat(follow_symlinks=False).st_size
        except OSError:
            self.unreadable.append(child)
            return False
        if is_tmp_name(entry.name):
            self.temporary.append(child)
        if is_working_set(child):
            self.tally.add(size, True, self.thresholds)
        return True


def start_dirs(project: str | None, device: str | None) -> list[str]:
    """Folders in the order they are scanned first: what a session start reads comes first."""
    first = [layout.SYSTEM]
    if project:
        first.append(f"{layout.PROJECTS}/{project}")
    first.append(layout.HANDOFFS)
    if device:
        first.append(layout.device_dir(device))
    return first


def scan(
    root: Path,
    project: str | None = None,
    device: str | None = None,
    *,
    thresholds: Thresholds | None = None,
    max_entries: int = limits.DOCTOR_SCAN_MAX_ENTRIES,
    max_dirs: int = limits.DOCTOR_SCAN_MAX_DIRS,
) -> ScanResult:
    """The bounded, read-only metadata scan of the working set (and `.continuity/`)."""
    state = _State(root, thresholds or Thresholds(), max_entries, max_dirs)
    for rel in (*layout.WORKING_SET_DIRS, layout.TOOL_STATE):
        info = _lstat(root / rel)
        if info is None:
            continue
        if stat.S_ISLNK(info.st_mode):
            state.links.append(rel)
        elif not stat.S_ISDIR(info.st_mode):
            state.special.append(rel)
    for rel in start_dirs(project, device):
        if _real_dir_path(root, rel):
            state.schedule(rel)
    for rel in (*layout.WORKING_SET_DIRS, layout.TOOL_STATE):
        info = _lstat(root / rel)
        if info is not None and stat.S_ISDIR(info.st_mode):
            state.schedule(rel)
    while state.queue and state.stop not in (STOP_ENTRIES, STOP_REVIEW):
        state.visit_dir(state.queue.popleft())
    complete = state.stop is None
    if complete:
        _archive_temporaries(state)
    if state.conflicts and _lstat(root / ".git") is not None:
        # `lifecycle sync` names its copies as Syncthing does; in a Git vault they are its own.
        state.conflicts = [Conflict(c.rel, GIT_SYNC if c.engine == "syncthing" else c.engine) for c in state.conflicts]
    return ScanResult(
        entries=state.entries,
        dirs=len(state.scheduled),
        complete=complete,
        stop=state.stop,
        tally=state.tally,
        conflicts=tuple(sorted(set(state.conflicts), key=lambda c: c.rel)),
        temporary=tuple(sorted(set(state.temporary))),
        links=tuple(sorted(set(state.links))),
        special=tuple(sorted(set(state.special))),
        unreadable=tuple(sorted(set(state.unreadable))),
        visited=tuple(state.visited),
    )


def _archive_temporaries(state: _State) -> None:
    """Look for our temporary files in 90-archive/ with whatever the entry bound has left.

    `edit` and `archive` write there, so a killed writer can leave a `.tmp` sibling behind. The archive
    is not part of the working set: its files are not tallied, and running out of budget here does
    not make the scan incomplete (doctor's working-set findings are whole either way).
    """
    queue = [layout.ARCHIVE] if _real_dir_path(state.root, layout.ARCHIVE) else []
    dirs = len(state.scheduled)
    while queue and state.entries < state.max_entries and dirs < state.max_dirs:
        rel = queue.pop(0)
        state.visited.append(rel)
        try:
            with os.scandir(state.root / rel) as listing:
                for entry in listing:
                    if state.entries >= state.max_entries:
                        return
                    state.entries += 1
                    if entry.is_dir(follow_symlinks=False):
                        queue.append(f"{rel}/{entry.name}")
                        dirs += 1
                    elif is_tmp_name(entry.name) and entry.is_file(follow_symlinks=False):
                        state.temporary.append(f"{rel}/{entry.name}")
        except OSError:
            return


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def notices(result: ScanResult) -> list[str]:
    """At most two short notices for the startup brief (counts only, never a name), or []."""
    parts = []
    if result.conflicts:
        parts.append(_count(len(result.conflicts), "sync-conflict copy", "sync-conflict copies"))
    if result.temporary:
        parts.append(_count(len(result.temporary), "leftover temporary file", "leftover temporary files"))
    if result.links:
        parts.append(_count(len(result.links), "symbolic link", "symbolic links"))
    if result.special:
        parts.append(_count(len(result.special), "special file", "special files"))
    if result.unreadable:
        parts.append(_count(len(result.unreadable), "unreadable entry", "unreadable entries"))
    if result.stop in (STOP_ENTRIES, STOP_DIRS):
        parts.append("the check stopped at its bounds")
    out = []
    if parts:
        out.append("vault check: " + ", ".join(parts) + "; run 'lifecycle doctor'")
    if result.stop == STOP_REVIEW:
        out.append(
            "vault check: the working set is over its review limit; curate it (archive or merge notes) "
            "before adding memory, and run 'lifecycle budget'"
        )
    return out


def startup_notices(root: Path, project: str, *, device: str | None = None) -> list[str]:
    """The startup path's bounded vault check: a few short notices, or [] when the scan is clean.

    Never raises: at session start a failure here is a notice, never a traceback, and it never
    changes the brief's status.
    """
    try:
        return notices(scan(root, project, device))
    except Exception as exc:  # fail open: the session must start regardless
        return [f"vault check could not run ({type(exc).__name__}); run 'lifecycle doctor'"]


# ------------------------------------------------------------------------------- doctor's verdicts

Verdict = tuple[str, str, str]  # (check id, level ok|warn|error, message)
MAX_NAMED = 10


def _names(items: list[str]) -> str:
    more = len(items) - MAX_NAMED
    return ", ".join(items[:MAX_NAMED]) + (f" and {more} more" if more > 0 else "")


def verdicts(result: ScanResult) -> list[Verdict]:
    """Doctor's checks from one scan. Findings are named; budget figures are aggregates only."""
    out: list[Verdict] = []
    if result.conflicts:
        named = [f"{c.rel} ({c.engine})" for c in result.conflicts]
        out.append(
            (
                "scan.conflicts",
                "warn",
                f"{len(named)} sync-conflict copies: {_names(named)}; 'lifecycle review' keeps one side of each "
                "or merges the two (the other side is archived), or compare and merge by hand",
            )
        )
    else:
        out.append(("scan.conflicts", "ok", "no sync-conflict copies seen"))
    if result.temporary:
        out.append(
            (
                "scan.temporary",
                "warn",
                f"{len(result.temporary)} leftover temporary file(s) from interrupted writes: "
                f"{_names(list(result.temporary))}; delete them while no lifecycle command is running",
            )
        )
    else:
        out.append(("scan.temporary", "ok", "no leftover temporary files seen"))
    odd = [f"{rel} (symbolic link, never followed)" for rel in result.links]
    odd += [f"{rel} (not a regular file)" for rel in result.special]
    if odd:
        out.append(
            (
                "scan.links",
                "warn",
                f"{len(odd)} entries that are not regular files: {_names(odd)}; "
                "replace them with real files or folders",
            )
        )
    else:
        out.append(("scan.links", "ok", "no symbolic links or special files seen"))
    out.append(_budget_verdict(result))
    out.append(_complete_verdict(result))
    return out


def _budget_verdict(result: ScanResult) -> Verdict:
    limit = Thresholds()
    tally = result.tally
    least = "" if result.complete else "at least "
    figures = (
        f"working set {least}{tally.ws_files:,} files and {human_size(tally.ws_bytes)} "
        f"(limits {limit.working_set_files:,} files, {human_size(limit.working_set_bytes)})"
    )
    per_file = ""
    if tally.files_over or tally.files_warning:
        per_file = f"; {tally.files_over} file(s) over {human_size(limit.file_bytes)} and {tally.files_warning} near it"
    state = worst(tally.working_set_state(limit), tally.file_state())
    if result.stop == STOP_REVIEW:
        return ("scan.budget", "warn", f"{figures}: over its review limit{per_file}; run 'lifecycle budget'")
    if state != "ok":
        return (
            "scan.budget",
            "warn",
            f"{figures}: {state}{per_file}; review (summarize, split or archive), run 'lifecycle budget'",
        )
    return ("scan.budget", "ok", figures)


def _complete_verdict(result: ScanResult) -> Verdict:
    seen = f"visited {result.entries:,} entries in {result.dirs:,} scheduled folders"
    if result.complete:
        return ("scan.complete", "ok", f"{seen}: complete")
    why = {
        STOP_ENTRIES: f"stopped at its bound of {limits.DOCTOR_SCAN_MAX_ENTRIES:,} entries",
        STOP_DIRS: f"stopped scheduling at its bound of {limits.DOCTOR_SCAN_MAX_DIRS:,} folders",
        STOP_REVIEW: "stopped once review was certain (the working set is over its limit)",
        STOP_UNREADABLE: f"could not list {_names(list(result.unreadable))}",
    }.get(result.stop or "", "did not finish")
    return ("scan.complete", "warn", f"{seen}: {why}; the rest was not checked, run 'lifecycle budget'")
