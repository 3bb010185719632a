"""The vault's ignore rules belong to the tool: no rule may keep a memory file from the remote.

A `.gitignore` travels with the vault, so whoever can push to the remote (another computer, a person
with git, a compromised remote) can write one; a line such as `20-state/` or `*.md` would silently
stop notes from syncing while every sync reported success. So before each commit `tidy` rewrites the
vault's `.gitignore`: the tool's own lines (`OWN_LINES`: local state and sync-engine debris) are
always present, and a line someone added is kept only when it cannot ignore anything under the
folders that hold memory (`PROTECTED`: `00-` to `50-` and the lease files). A line is judged by its
shape, not by the files there today: it must name a path from the top (a slash before its last
character) whose leading literal segments are neither one of those folders, nor inside one, nor a
folder holding one; a negation, an escape or a glob before that point is dropped. The dropped lines are
returned so the sync can name them.

And since rules can also come from a `.gitignore` inside a folder or from `.git/info/exclude`,
`unignored_files` lists every file under the protected folders that only such rules hide (the tool's
own lines still apply), so the commit considers it like any other: a note either reaches the remote
or the sync names it as held.
"""

from __future__ import annotations

import os
from pathlib import Path

from continuity import tunables
from continuity.errors import InputRejected
from continuity.store import atomic
from continuity.sync.git import Git
from continuity.vault import layout

GITIGNORE = ".gitignore"
# Tool-local state and sync-engine or editor debris that must stay on each computer.
OWN_LINES = (
    "# continuity: what stays on this computer (each line is local state, never memory)",
    ".*.tmp",
    "*.tmp",
    ".continuity/*.lock",
    ".continuity/locks/",
    ".obsidian/workspace.json",
    ".obsidian/workspace-mobile.json",
    ".trash/",
    ".DS_Store",
    "Thumbs.db",
    "desktop.ini",
    ".stfolder",
    ".stversions/",
    ".dropbox",
    ".dropbox.attr",
    ".tmp.drivedownload/",
    ".tmp.driveupload/",
    "*.icloud",
)
PROTECTED = (
    layout.SYSTEM,
    layout.PROJECTS,
    layout.STATE,
    layout.MEMORY,
    layout.DOCUMENTS,
    layout.DEVICES,
    layout.LEASES,
)
_GLOB = frozenset("*?[")


def harmless(line: str) -> bool:
    """Whether a line someone added to `.gitignore` provably ignores nothing under `PROTECTED`."""
    if not line.strip() or line.startswith("#"):
        return True
    if line.startswith("!") or "\\" in line or line != line.strip():
        return False  # negations, escapes and significant spaces: not worth the risk of misreading
    body = line.rstrip("/")
    if "/" not in body:
        return False  # a bare name or glob matches at every depth, inside the memory folders too
    parts = [part for part in body.strip("/").split("/") if part]
    literal: list[str] = []
    for part in parts:
        if _GLOB & set(part) or part in (".", ".."):
            break
        literal.append(part.casefold())  # a case-insensitive file system matches `20-STATE/` too
    if not literal:
        return False
    for folder in PROTECTED:
        guarded = folder.casefold().split("/")
        shared = min(len(guarded), len(literal))
        if guarded[:shared] == literal[:shared]:
            return False  # the line names a protected folder, something inside one, or a folder above one
    return True


def tidy(vault: Path) -> tuple[bool, tuple[str, ...]]:
    """Rewrite the vault's `.gitignore` as the module docstring says; (changed, dropped lines)."""
    path = vault / GITIGNORE
    if path.is_symlink() or (os.path.lexists(path) and not path.is_file()):
        raise InputRejected(f"{GITIGNORE} in the vault is a symbolic link or not a file; links are never followed")
    old = ""
    if path.is_file():
        if path.stat().st_size > tunables.SYNC_FILE_MAX_BYTES:
            raise InputRejected(f"{GITIGNORE} in the vault is larger than {tunables.SYNC_FILE_MAX_BYTES} bytes")
        old = path.read_bytes().decode("utf-8", "replace")
    lines = old.splitlines()
    kept = [line for line in lines if line in OWN_LINES or harmless(line)]
    dropped = tuple(line for line in lines if line not in kept)
    kept += [line for line in OWN_LINES if line not in kept]
    text = "\n".join(kept) + "\n"
    if text == old:
        return False, dropped
    atomic.write_text(path, text)
    return True, dropped


def unignored_files(git: Git) -> list[str]:
    """Untracked files under `PROTECTED` that only rules other than the tool's own lines hide."""
    own = git.git_dir() / "continuity" / "own-ignore"
    own.parent.mkdir(mode=0o700, exist_ok=True)
    wanted = "\n".join(OWN_LINES) + "\n"
    if not own.is_file() or own.read_text("utf-8", "replace") != wanted:
        atomic.write_text(own, wanted)
    listed = git.run(["ls-files", "-z", "--others", f"--exclude-from={own}", "--", *PROTECTED])
    return sorted(raw.decode("utf-8", "surrogateescape") for raw in listed.split(b"\0") if raw)
