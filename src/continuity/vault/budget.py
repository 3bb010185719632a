"""Storage budgets: is the vault growing past what a person can curate and a sync engine can carry?

Context limits control model-visible text; storage limits control curation and synchronization cost.
They are related but deliberately separate, so this module never looks at a note's contents: it walks
the vault's metadata (`lstat` of every entry), read-only, without a lease, without following a single
link, and caches nothing anywhere. Its report holds aggregate figures only. Not one file name leaves
this module, not even the largest file's, because a name can be as private as a note's body
(`divorce-lawyer.md`).

Scopes and defaults (seed 003):

* working set: regular files under `00-system`, `10-project`, `20-state`, `30-memory`, `50-devices`;
  1 MiB and 250 files;
* one working-set file: 16 KiB (a record that should be summarized or split during review);
* the whole vault: every regular file, hidden ones included (`.continuity/`, an editor's settings, a
  private Git remote's `.git`), because all of them are synchronized; 100 MiB and 1,000 files.

A figure is `ok` below the warning ratio (80%), `warning` from exactly the ratio up to and including the
limit, and `over` above it: 79% is ok, 80% and 100% warn, 101% is over. The ratio is compared exactly
(as a fraction), so `0.7` of 100 files warns at 70, not at 70.00000000000001. A walk that cannot read
a folder is `incomplete`: its figures are then lower bounds. The report is advisory; spare capacity
is never a reason to create memory.

Standard library only: doctor's bounded startup scan shares the thresholds and the state rule.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Any

from continuity import limits
from continuity.errors import FIELD, UsageError
from continuity.vault import layout

STATES = ("ok", "warning", "over", "incomplete")
_RANK = {"ok": 0, "warning": 1, "incomplete": 2, "over": 3}
ADVICE = "Spare capacity is never a reason to create memory: these limits say when to review, not how much to write."


@dataclass(frozen=True)
class Thresholds:
    """The review limits; every one of them has a command-line override."""

    working_set_bytes: int = limits.BUDGET_WORKING_SET_BYTES
    working_set_files: int = limits.BUDGET_WORKING_SET_FILES
    file_bytes: int = limits.BUDGET_FILE_BYTES
    vault_bytes: int = limits.BUDGET_VAULT_BYTES
    vault_files: int = limits.BUDGET_VAULT_FILES
    warn_ratio: float = limits.BUDGET_WARN_RATIO

    def __post_init__(self) -> None:
        for name in ("working_set_bytes", "working_set_files", "file_bytes", "vault_bytes", "vault_files"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                flag = "--" + name.replace("_", "-")
                raise UsageError(f"{flag} must be a whole number of at least 1")
        ratio = self.warn_ratio
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 < ratio <= 1:
            raise UsageError(f"{FIELD} must be a number above 0 and at most 1 (0.8 warns at 80%)", field="warn_ratio")

    @cached_property
    def ratio(self) -> Fraction:
        """The warning ratio as an exact fraction (0.8 -> 4/5), so boundaries are exact."""
        return Fraction(self.warn_ratio).limit_denominator(1_000_000)


def level(used: int, limit: int, ratio: Fraction) -> str:
    """`ok` below ratio x limit, `warning` from there up to the limit itself, `over` above it."""
    if used > limit:
        return "over"
    if used * ratio.denominator >= limit * ratio.numerator:
        return "warning"
    return "ok"


def worst(*states: str) -> str:
    return max(states, key=lambda state: _RANK[state]) if states else "ok"


def percent(used: int, limit: int) -> int:
    """Whole percent, rounded down, so 79.9% reads 79% and never looks like the 80% warning."""
    return used * 100 // limit


def is_working_set(rel: str) -> bool:
    top = rel.split("/", 1)[0]
    return top in layout.WORKING_SET_DIRS


@dataclass(frozen=True)
class Scope:
    """One scope's figures; `files` and `limit_files` are None for the single-file scope."""

    name: str
    bytes: int
    files: int | None
    limit_bytes: int
    limit_files: int | None
    state: str
    largest_bytes: int | None = None  # file scope only
    over: int | None = None  # file scope: how many working-set files are above the limit
    warning: int | None = None  # file scope: how many are at the warning ratio or above, within it

    def to_json(self) -> dict[str, Any]:
        if self.name == "file":
            return {
                "largest_bytes": self.largest_bytes,
                "over": self.over,
                "warning": self.warning,
                "limit_bytes": self.limit_bytes,
                "state": self.state,
            }
        return {
            "bytes": self.bytes,
            "files": self.files,
            "limit_bytes": self.limit_bytes,
            "limit_files": self.limit_files,
            "state": self.state,
        }


@dataclass(frozen=True)
class Report:
    state: str  # ok | warning | over | incomplete
    complete: bool
    working_set: Scope
    file: Scope
    vault: Scope
    thresholds: Thresholds
    links: int  # symbolic links seen (never followed, never counted)
    unreadable: int  # folders that could not be listed, entries that vanished before their lstat

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "state": self.state,
            "complete": self.complete,
            "warn_ratio": self.thresholds.warn_ratio,
            "scopes": {
                "working_set": self.working_set.to_json(),
                "file": self.file.to_json(),
                "vault": self.vault.to_json(),
            },
            "links": self.links,
            "unreadable": self.unreadable,
            "note": ADVICE,
        }

    def exit_code(self, strict: bool) -> int:
        """Advisory (0) unless strict, then 1 for anything but a complete `ok`."""
        return 1 if strict and self.state != "ok" else 0


@dataclass
class Tally:
    """Running aggregate figures; doctor's scan fills one too, for the working set only."""

    ws_files: int = 0
    ws_bytes: int = 0
    all_files: int = 0
    all_bytes: int = 0
    largest: int = 0
    files_over: int = 0
    files_warning: int = 0

    def add(self, size: int, working_set: bool, thresholds: Thresholds) -> None:
        self.all_files += 1
        self.all_bytes += size
        if not working_set:
            return
        self.ws_files += 1
        self.ws_bytes += size
        self.largest = max(self.largest, size)
        state = level(size, thresholds.file_bytes, thresholds.ratio)
        if state == "over":
            self.files_over += 1
        elif state == "warning":
            self.files_warning += 1

    def working_set_state(self, thresholds: Thresholds) -> str:
        ratio = thresholds.ratio
        return worst(
            level(self.ws_bytes, thresholds.working_set_bytes, ratio),
            level(self.ws_files, thresholds.working_set_files, ratio),
        )

    def file_state(self) -> str:
        return "over" if self.files_over else "warning" if self.files_warning else "ok"

    def review_certain(self, thresholds: Thresholds) -> bool:
        """True once the working set is known to be over a limit: more scanning cannot change that."""
        return self.ws_files > thresholds.working_set_files or self.ws_bytes > thresholds.working_set_bytes


def walk(root: Path, thresholds: Thresholds | None = None) -> Report:
    """Walk every folder of the vault (metadata only, links never followed) and sum it up."""
    limits_ = thresholds or Thresholds()
    tally = Tally()
    links = 0
    unreadable = 0
    # (absolute folder, is it inside the working set); the top level decides working-set membership.
    stack: list[tuple[str, bool | None]] = [(os.fspath(root), None)]
    while stack:
        folder, in_ws = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            unreadable += 1
            continue
        for entry in entries:
            working_set = in_ws if in_ws is not None else entry.name in layout.WORKING_SET_DIRS
            try:
                if entry.is_symlink():
                    links += 1
                elif entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, working_set))
                elif entry.is_file(follow_symlinks=False):
                    tally.add(entry.stat(follow_symlinks=False).st_size, working_set, limits_)
            except OSError:
                unreadable += 1  # vanished or unreadable between listing and lstat
    return report_from(tally, limits_, complete=unreadable == 0, links=links, unreadable=unreadable)


def report_from(tally: Tally, thresholds: Thresholds, *, complete: bool, links: int, unreadable: int) -> Report:
    ratio = thresholds.ratio
    working_set = Scope(
        "working_set",
        tally.ws_bytes,
        tally.ws_files,
        thresholds.working_set_bytes,
        thresholds.working_set_files,
        tally.working_set_state(thresholds),
    )
    file_scope = Scope(
        "file",
        tally.largest,
        None,
        thresholds.file_bytes,
        None,
        tally.file_state(),
        largest_bytes=tally.largest,
        over=tally.files_over,
        warning=tally.files_warning,
    )
    whole = Scope(
        "vault",
        tally.all_bytes,
        tally.all_files,
        thresholds.vault_bytes,
        thresholds.vault_files,
        worst(
            level(tally.all_bytes, thresholds.vault_bytes, ratio),
            level(tally.all_files, thresholds.vault_files, ratio),
        ),
    )
    state = worst(working_set.state, file_scope.state, whole.state)
    if not complete and state != "over":
        state = "incomplete"  # the figures are lower bounds: only `over` is certain
    return Report(state, complete, working_set, file_scope, whole, thresholds, links, unreadable)


# ------------------------------------------------------------------------------------ rendering


def human_size(size: int) -> str:
    if size < limits.KIB:
        return f"{size} B"
    if size < limits.MIB:
        return f"{size / limits.KIB:.1f} KiB"
    return f"{size / limits.MIB:.1f} MiB"


def lines(report: Report) -> list[str]:
    """The human report: aggregate figures only, never a file name."""
    ws, one, whole = report.working_set, report.file, report.vault
    assert ws.files is not None and ws.limit_files is not None
    assert whole.files is not None and whole.limit_files is not None
    largest = one.largest_bytes or 0
    out = [
        f"working set  {human_size(ws.bytes)} of {human_size(ws.limit_bytes)} "
        f"({percent(ws.bytes, ws.limit_bytes)}%), {ws.files:,} of {ws.limit_files:,} files "
        f"({percent(ws.files, ws.limit_files)}%): {ws.state}",
        f"one file     largest {human_size(largest)} of {human_size(one.limit_bytes)} "
        f"({percent(largest, one.limit_bytes)}%); {one.over} over, {one.warning} near the limit: {one.state}",
        f"whole vault  {human_size(whole.bytes)} of {human_size(whole.limit_bytes)} "
        f"({percent(whole.bytes, whole.limit_bytes)}%), {whole.files:,} of {whole.limit_files:,} files "
        f"({percent(whole.files, whole.limit_files)}%): {whole.state}",
    ]
    extras = []
    if report.links:
        extras.append(f"{report.links} symbolic link(s) skipped (never followed)")
    if report.unreadable:
        extras.append(f"{report.unreadable} unreadable folder(s) or entries: the figures are lower bounds")
    if extras:
        out.append("note         " + "; ".join(extras))
    pct = f"{float(report.thresholds.warn_ratio) * 100:g}%"
    out.append(f"state        {report.state} (advisory; warning at {pct} of each limit)")
    out.append(ADVICE)
    return out
