"""Doctor's check of the warm notes: approved memory and candidates that recall and review cannot use.

A note with broken frontmatter, one that cannot be read (permissions, a link, not a regular file),
one over its cap or one that holds secret-like text is left out of every recall and cannot be
reviewed, silently unless something says so. Doctor reads each note of `30-memory/` and
`20-state/candidates/` as `lifecycle scan` does (`notescan.check`), at most
`DOCTOR_NOTE_CHECK_MAX_FILES` of them in name order, so that doctor stays quick on a large vault; it
says when it stopped, and `lifecycle scan` checks every note.
"""

from __future__ import annotations

from continuity import tunables
from continuity.health import notescan, scanfiles
from continuity.health.context import Context
from continuity.health.report import Check, check
from continuity.vault import layout

FOLDERS = (layout.MEMORY, layout.CANDIDATES)
ADVICE = "recall and review leave each out until it is fixed ('lifecycle scan' names the line)"


def note_checks(ctx: Context) -> list[Check]:
    found: scanfiles.Found = []
    for folder in FOLDERS:
        if (ctx.root / folder).is_dir() and not (ctx.root / folder).is_symlink():
            scanfiles.walk(ctx.root / folder, found)
    limit = tunables.DOCTOR_NOTE_CHECK_MAX_FILES
    problems: list[str] = []
    for path, bad in found[:limit]:
        rel = path.relative_to(ctx.root).as_posix()
        report = notescan.check(scanfiles.Target(ctx.root, rel, rel, True, bad))
        for finding in report.findings:
            where = "" if finding.line is None else f" line {finding.line}"
            problems.append(f"{report.path}{where} ({finding.type})")
    out: list[Check] = []
    if problems:
        shown = ", ".join(problems[:10]) + (f" and {len(problems) - 10} more" if len(problems) > 10 else "")
        out.append(
            check("notes", "warn", f"{len(problems)} problem(s) in approved notes or candidates: {shown}; {ADVICE}")
        )
    else:
        out.append(check("notes", "ok", f"{min(len(found), limit)} approved note(s) and candidate(s) are usable"))
    if len(found) > limit:
        out.append(
            check("notes.scan", "warn", f"checked the first {limit} of {len(found)} notes; 'lifecycle scan' checks all")
        )
    return out
