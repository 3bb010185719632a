"""`lifecycle scan`: the secret gate over notes, exactly as the loader and the write path apply it.

Each file is opened as the loader opens a source (no link followed at any component below its root,
a regular file only, its size checked before a byte is read, at most cap + 1 bytes read), decoded
as notes are (a leading BOM dropped, every line ending made `\\n`, so line numbers count from the
file's first line, frontmatter included), its frontmatter parsed when it has one, and its text given
to `gate.secrets.scan_text`, which honours `pragma: allowlist secret` line by line. Its name is
gated too, as a handoff's is, because paths are shown where bodies are not: a path with a
secret-like name is reported with the name withheld.

What counts as a finding, with its `type`:

* a detector of the gate (`github-token`, `private-key`…): `secret` is true; `line` is null when the
  file's name, not its text, holds the value;
* `too-large`: over the cap the loader or the write path applies there, so the file was not read:
  the hot sources' own caps (soul, preferences, project and device profiles 20 KiB, handoffs 32 KiB),
  64 KiB for candidates and approved memory (what recall loads and review writes), the preserved
  originals' cap in `40-documents/`, 1 MiB for any other text and for every file outside a vault;
* `invalid-frontmatter`: a frontmatter block that does not parse as the loader requires (duplicate
  keys, anchors, too deep, not a mapping, never closed); a note with no frontmatter block at all is
  no finding here (policy files and inbox clips have none; `doctor` checks what each source needs).
  Preserved originals in `40-documents/` are kept byte for byte and are not parsed;
* `invalid-utf8`, which the loader refuses; the text is still scanned with the bad bytes replaced,
  so a secret in a file with one stray byte is reported as well;
* `link`, `not-a-file` and `unreadable`: what the loader would leave out without reading.

No value is ever kept: a finding is a line number and a detector's name. Anything found makes the
scan fail (exit 5), since the loader would leave that file out of every session and a pre-commit
hook should stop it before it reaches a remote.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from continuity import limits, tunables
from continuity.errors import NoteError
from continuity.gate.secrets import scan_text, withheld_name
from continuity.health.scanfiles import NOTE_SUFFIX, Target
from continuity.vault import access, layout, notes, registry

JSON_VERSION = 1
TOO_LARGE = "too-large"
INVALID_FRONTMATTER = "invalid-frontmatter"
INVALID_UTF8 = "invalid-utf8"
LINK = "link"
NOT_A_FILE = "not-a-file"
UNREADABLE = "unreadable"
# What `access.read_capped` refuses, as the finding's type.
_READ_REFUSALS = {"too_large": TOO_LARGE, "link": LINK, "invalid": NOT_A_FILE}


@dataclass(frozen=True)
class FileFinding:
    line: int | None  # 1-based, frontmatter included; None when the whole file (or its name) is meant
    type: str
    secret: bool


@dataclass(frozen=True)
class FileReport:
    path: str
    findings: tuple[FileFinding, ...]

    @property
    def secret(self) -> bool:
        return any(finding.secret for finding in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "secret": self.secret,
            "findings": [{"line": f.line, "type": f.type} for f in self.findings],
        }


@dataclass(frozen=True)
class ScanReport:
    """Every file with a finding, sorted by path, and how many files were checked in all."""

    files: tuple[FileReport, ...]
    scanned: int

    @property
    def clean(self) -> bool:
        return not self.files

    def to_json(self) -> dict[str, Any]:
        return {"version": JSON_VERSION, "files": [item.to_json() for item in self.files], "scanned": self.scanned}

    def lines(self) -> list[str]:
        """`path:line: type` for each finding (`path: type` for the whole file), then a summary."""
        out = []
        for item in self.files:
            path = printable(item.path)
            for finding in item.findings:
                where = "" if finding.line is None else f":{finding.line}"
                out.append(f"{path}{where}: {finding.type}")
        out.append(self.summary())
        return out

    def summary(self) -> str:
        checked = f"{self.scanned} file{'' if self.scanned == 1 else 's'} scanned"
        if self.clean:
            return f"{checked}: nothing found"
        secret = sum(1 for item in self.files if item.secret)
        found = f"{checked}: {len(self.files)} with findings ({secret} secret-like); no value is shown. "
        if not secret:
            return found + "Fix each file named above (the loader leaves it out until then)"
        return found + (
            "Remove a secret (and rotate it if it was shared) or mark a false positive with "
            "'pragma: allowlist secret' on its line"
        )


def printable(path: str) -> str:
    """A path for the terminal: a newline or control character in a file name becomes `\\uXXXX`, so a
    name cannot forge report lines or move the cursor (the JSON report escapes them by itself)."""
    return "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in path)


def cap_for(target: Target) -> int:
    """The byte cap the loader or the write path applies to this file (section 5 of the spec)."""
    if not target.in_vault:
        return limits.LIFECYCLE_TEXT_CAP_BYTES
    rel = target.rel
    source = registry.holding(rel)
    if source is not None:
        return source.cap_bytes
    if rel.startswith((layout.CANDIDATES + "/", layout.MEMORY + "/")):
        return tunables.RECALL_NOTE_CAP_BYTES
    if rel.startswith(layout.DOCUMENTS + "/"):
        return tunables.PRESERVE_TEXT_MAX_BYTES
    return limits.LIFECYCLE_TEXT_CAP_BYTES


def has_frontmatter_rules(target: Target) -> bool:
    """Notes are parsed by the loader and the write path; originals kept byte for byte are not."""
    if not target.rel.endswith(NOTE_SUFFIX):
        return False
    return not (target.in_vault and target.rel.startswith(layout.DOCUMENTS + "/"))


def _line_in(message: str, name: str) -> int | None:
    """The line a NoteError names (`<name> line N: …`), the only place the loader puts it."""
    found = re.match(r" line (\d+):", message[len(name) :]) if message.startswith(name) else None
    return int(found.group(1)) if found else None


def _read(target: Target) -> bytes | FileFinding:
    if target.unlisted:
        return FileFinding(None, UNREADABLE, False)
    try:
        return access.read_capped(target.root, target.rel, cap_for(target))
    except NoteError as exc:
        return FileFinding(None, _READ_REFUSALS.get(exc.reason, UNREADABLE), False)


def _text(data: bytes, name: str) -> tuple[str, list[FileFinding]]:
    try:
        return notes.decode(data, name), []
    except NoteError as exc:
        text = notes.normalize_newlines(data.decode("utf-8", "replace").removeprefix("\ufeff"))
        return text, [FileFinding(_line_in(str(exc), name), INVALID_UTF8, False)]


def _frontmatter(text: str, name: str) -> list[FileFinding]:
    if not text.startswith("---"):
        return []
    try:
        front, _body, _start = notes.split_frontmatter(text, name)
        if front is not None:
            notes.parse_frontmatter(front, name)
    except NoteError as exc:
        return [FileFinding(_line_in(str(exc), name) or 1, INVALID_FRONTMATTER, False)]
    return []


def check(target: Target) -> FileReport:
    """What the loader and the write path would say about one file; an empty report when nothing."""
    shown = target.shown
    findings: list[FileFinding] = []
    named = withheld_name(shown)
    if named is not None:
        shown = named[0] if not scan_text(named[0]) else "(path withheld: it holds secret-like text)"
        findings.append(FileFinding(None, named[1].detector, True))
    data = _read(target)
    if isinstance(data, FileFinding):
        return FileReport(shown, (*findings, data))
    text, problems = _text(data, shown)
    findings.extend(problems)
    if has_frontmatter_rules(target):
        findings.extend(_frontmatter(text, shown))
    findings.extend(FileFinding(found.line, found.detector, True) for found in scan_text(text))
    ordered = sorted(findings, key=lambda f: (f.line or 0, f.type))
    return FileReport(shown, tuple(ordered))


def workers_for(files: int) -> int:
    """How many processes check `files` files: one below `SCAN_PARALLEL_MIN_FILES`, else one per core."""
    if files < tunables.SCAN_PARALLEL_MIN_FILES:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, tunables.SCAN_MAX_WORKERS, files // tunables.SCAN_PARALLEL_MIN_FILES))


def _check_all(targets: list[Target], workers: int) -> list[FileReport]:
    """Every target checked, in order; in worker processes when asked, serially when they cannot start.

    Frontmatter is parsed in pure Python (about a millisecond a note), so five thousand notes take
    seconds on one core; workers divide that by the cores there are. A pool that cannot be started
    or breaks (a sandbox without process creation) costs speed, never a result: the checks then run
    here, one after another.
    """
    if workers <= 1:
        return [check(target) for target in targets]

    try:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(check, targets, chunksize=max(1, len(targets) // (workers * 4))))
    except (OSError, BrokenProcessPool):
        return [check(target) for target in targets]


def scan(targets: list[Target], workers: int | None = None) -> ScanReport:
    """Check every target; the report lists the files with a finding, sorted by the path shown.

    `workers` defaults to `workers_for(len(targets))`; the report is the same whatever it is.
    """
    count = workers_for(len(targets)) if workers is None else workers
    reports = _check_all(targets, count)
    flagged = sorted((item for item in reports if item.findings), key=lambda item: item.path)
    return ScanReport(tuple(flagged), len(targets))
