"""The editor flow of `lifecycle edit`: a private working copy, the person's editor, and what is kept.

As `visudo` and `crontab -e` do, the person never edits the vault's file in place: the current file
(or, when it does not exist yet, its template) is copied to a working file, the editor named by
`$VISUAL`, else `$EDITOR`, else `vi` runs on that copy, and only a copy that passes the frontmatter
and the secret gate is installed by `edits.apply_edit`. The command line is split with `shlex`, as git
splits `core.editor`, so `EDITOR="code --wait"` works; it runs as a real process with the terminal.

The working file lives on this computer, outside the vault (`<state dir>/edits/<NAME>.<UTC time>.md`,
mode 0600 in a 0700 folder): what the person typed may hold exactly the secret the gate refuses, and
the vault is synchronized to other computers, so a refused edit must never land there. A refused edit
keeps its working file and names it, so no typing is lost; a written or abandoned one removes it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shlex
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from continuity import limits, tunables
from continuity.errors import FIELD, InputRejected, NoteError, UsageError
from continuity.local import userdirs
from continuity.store import atomic
from continuity.vault import access

DEFAULT_EDITOR = "vi"


@dataclass(frozen=True)
class WorkingCopy:
    """The file the person edits, and the vault file's bytes it started from (None: from a template)."""

    path: Path
    base: bytes | None


def editor_command(environ: dict[str, str] | None = None) -> list[str]:
    """`$VISUAL`, else `$EDITOR`, else vi, split as a shell would split it (but never run by one)."""
    env = os.environ if environ is None else environ
    value = (env.get("VISUAL") or "").strip() or (env.get("EDITOR") or "").strip() or DEFAULT_EDITOR
    try:
        words = shlex.split(value)
    except ValueError:
        raise UsageError(
            f"cannot split the editor command {value!r} (an unclosed quote?); fix $VISUAL/$EDITOR"
        ) from None
    if not words:
        raise UsageError("$VISUAL/$EDITOR names no program")
    return words


def edits_dir() -> Path:
    return Path(userdirs.state_dir()) / "edits"


def start(vault_root: Path, rel: str, template: str, now: dt.datetime) -> WorkingCopy:
    """Copy the vault's `rel` (or `template` when it is missing) to a new private working file."""
    try:
        base: bytes | None = access.read_capped(vault_root, rel, limits.LIFECYCLE_TEXT_CAP_BYTES)
    except NoteError as exc:
        if exc.reason != "missing":
            raise
        base = None
    folder = edits_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    stem = rel.rpartition("/")[2].removesuffix(".md")
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    for attempt in range(1, tunables.HANDOFF_NAME_ATTEMPTS + 1):
        path = folder / f"{stem}.{stamp}{'' if attempt == 1 else f'-{attempt}'}.md"
        try:
            atomic.write_bytes(path, template.encode("utf-8") if base is None else base, exclusive=True)
        except FileExistsError:
            continue
        return WorkingCopy(path, base)
    raise InputRejected(f"could not find a free name for a working copy in {folder}")


def run_editor(copy: WorkingCopy, command: list[str]) -> None:
    """Run the editor on the working copy and wait; UsageError when it cannot start or it fails."""
    try:
        done = subprocess.run([*command, str(copy.path)], check=False)
    except OSError as exc:
        raise UsageError(
            f"cannot run the editor {command[0]!r} ({exc.strerror}); set $VISUAL or $EDITOR, or use {FIELD} FILE",
            field="body",
        ) from None
    if done.returncode != 0:
        raise UsageError(
            f"the editor exited with status {done.returncode}; nothing was written (your text is in {copy.path})"
        )


def read(copy: WorkingCopy) -> str:
    """The edited text, its size checked before it is read; the editor may have replaced the file."""
    try:
        info = os.lstat(copy.path)
    except FileNotFoundError:
        raise InputRejected(f"the working copy {copy.path} is gone; nothing was written") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputRejected(f"the working copy {copy.path} is no longer a regular file; nothing was written")
    if info.st_size > limits.LIFECYCLE_TEXT_CAP_BYTES:
        raise InputRejected(f"the edited text is over {limits.LIFECYCLE_TEXT_CAP_BYTES} bytes; nothing was written")
    with open(copy.path, "rb") as handle:
        data = handle.read(limits.LIFECYCLE_TEXT_CAP_BYTES + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputRejected(f"the edited text line {line} is not valid UTF-8; nothing was written") from None


def unchanged(copy: WorkingCopy, text: str) -> bool:
    return copy.base is not None and copy.base == text.encode("utf-8")


def discard(copy: WorkingCopy) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(copy.path)
