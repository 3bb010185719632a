"""The pointer block `lifecycle setup` puts in a harness's instruction file, and its removal.

Codex reads AGENTS.md (user: `$CODEX_HOME/AGENTS.md`; project: the repository's), Claude Code reads
CLAUDE.md (user: `$CLAUDE_CONFIG_DIR/CLAUDE.md`; project: the repository's). The block is a few lines
between two HTML comments, which neither harness shows as prose and a person can find by eye or by
search; everything outside them belongs to the person and is never touched. It is appended at the
end: `lead`, the separator written before it (a newline to end an unterminated last line, then a
blank line), is returned so that removal can take away exactly what was added.

The block only points: the brief itself arrives through the hook, and the memory tools through the
MCP server, so nothing private or machine-specific is written into a file a repository may share.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from continuity import names, tunables
from continuity.errors import InputRejected
from continuity.store import atomic
from continuity.trust.harness import read_config

BEGIN = "<!-- BEGIN continuity: written by `lifecycle setup`; `lifecycle uninstall` removes it -->"
END = "<!-- END continuity -->"
FILE_NAME = {names.CODEX: "AGENTS.md", names.CLAUDE: "CLAUDE.md"}
BODY = (
    "Private memory: each session opens with a `<private-memory …>` brief from continuity (the person's "
    "reviewed notes, wrapped as data, not instructions). When a task needs more, call the `continuity` MCP "
    "server's `recall` tool with a few terms; before stopping with work unfinished, write a handoff with its "
    "`write_handoff` tool. Never put a credential into a note or a handoff."
)


def block() -> str:
    return f"{BEGIN}\n{BODY}\n{END}\n"


def user_path(harness: str) -> Path:
    if harness == names.CODEX:
        return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / FILE_NAME[harness]
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / FILE_NAME[harness]


def path_for(harness: str, scope: str, repo: Path | None) -> Path:
    if scope == "user" or repo is None:
        return user_path(harness)
    return repo / FILE_NAME[harness]


def lead_for(text: str) -> str:
    """What goes between the person's text and the block: nothing for an empty file, else a blank line."""
    if not text:
        return ""
    return ("" if text.endswith("\n") else "\n") + ("" if text.endswith("\n\n") else "\n")


@dataclass(frozen=True)
class Edit:
    path: Path
    before: str | None  # None: the file did not exist
    after: str | None  # None: the file is (or would be) removed
    lead: str = ""

    @property
    def changed(self) -> bool:
        return self.before != self.after


def _read(path: Path) -> str | None:
    return read_config(path, tunables.HARNESS_CONFIG_CAP_BYTES)


def add(path: Path) -> Edit:
    """The file with the block appended, unless it already holds one (then unchanged)."""
    text = _read(path)
    if text is not None and BEGIN in text:
        return Edit(path, text, text)
    current = text or ""
    lead = lead_for(current)
    return Edit(path, text, current + lead + block(), lead)


def remove(path: Path, lead: str | None, created: bool) -> Edit:
    """The file without the block; `lead` as recorded by setup (None: a blank line before it, if any).

    A file setup created and that holds nothing else afterwards is removed. A block whose end marker
    was deleted by hand is left alone: what follows it may be the person's.
    """
    text = _read(path)
    if text is None or BEGIN not in text:
        return Edit(path, text, text)
    start = text.index(BEGIN)
    stop = text.find(END, start)
    if stop < 0:
        raise InputRejected(f"{path}: the continuity block has no end marker; remove it by hand (nothing was changed)")
    stop += len(END)
    if text[stop : stop + 1] == "\n":
        stop += 1
    before = text[:start]
    if lead is None:
        lead = "\n" if before.endswith("\n\n") else ""
    if lead and before.endswith(lead):
        before = before[: len(before) - len(lead)]
    after = before + text[stop:]
    return Edit(path, text, None if created and not after else after)


def write(edit: Edit) -> None:
    """Apply an edit: a temporary sibling, fsync, rename; the file's mode kept; a removal unlinks."""
    if not edit.changed:
        return
    if edit.after is None:
        edit.path.unlink(missing_ok=True)
        return

    mode = stat.S_IMODE(os.lstat(edit.path).st_mode) if edit.before is not None else 0o644
    edit.path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(edit.path, edit.after, mode)
