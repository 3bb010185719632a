"""Which files `lifecycle scan` checks, and under which root each one is named and opened.

A file inside a vault is named by its vault-relative path and opened from the vault root one
component at a time without following links, as the loader opens it; a file outside any vault is
named relative to the current folder when it lies below it, else relative to the folder it was found
in (its bare name for a file given on its own). A vault is recognised by its `00-system/` folder (a
real folder, not a link), so pre-commit, which runs in the vault's own repository, and a person who
names a note by hand both get vault-relative paths without any connection.

Which files count as notes: in a folder, every `*.md` file, at any depth, except hidden names (a
leading dot: `.git/`, `.continuity/`, `.obsidian/`, the writers' `.<name>.<random>.tmp` files),
which the loader never reads either; a link met in a folder is listed so that it is reported (links
are never followed, so what one points at is never checked). A file named on the command line is
checked whatever its name, hidden or not Markdown: whoever names a file wants it checked, and
pre-commit's own `types: [markdown]` filter already decides which files it passes.

Nothing here reads a file's content; only an error message about a path a person typed goes
through the gate, so that it cannot echo a pasted token.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from continuity.errors import NotConnected, UsageError
from continuity.gate.secrets import redact
from continuity.vault import layout

NOTE_SUFFIX = ".md"


@dataclass(frozen=True)
class Target:
    """One file to check: opened as `rel` below `root`, shown as `shown`; `in_vault` picks the rules."""

    root: Path
    rel: str
    shown: str
    in_vault: bool
    unlisted: bool = False  # a folder that could not be listed: reported as unreadable


def is_vault_root(folder: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(folder / layout.SYSTEM).st_mode)
    except OSError:
        return False


def vault_root_of(path: Path, seen: dict[Path, bool] | None = None) -> Path | None:
    """The nearest folder at or above `path` (absolute, links not resolved) that is a vault.

    `seen` remembers the answer for each folder during one scan, so thousands of notes in a few
    folders cost a few `lstat` calls, not one per note and level.
    """
    known = {} if seen is None else seen
    for folder in (path, *path.parents):
        if folder not in known:
            known[folder] = is_vault_root(folder)
        if known[folder]:
            return folder
    return None


def _relative(path: Path, base: Path) -> str | None:
    try:
        rel = path.relative_to(base)
    except ValueError:
        return None
    return rel.as_posix() if rel.parts else None


def _target(path: Path, cwd: Path, fallback: Path, seen: dict[Path, bool], unlisted: bool = False) -> Target:
    """How `path` (absolute, unresolved) is opened and named."""
    vault = vault_root_of(path.parent, seen)
    if vault is not None:
        rel = _relative(path, vault)
        assert rel is not None  # the vault is one of path's parents
        return Target(vault, rel, rel, True, unlisted)
    shown = _relative(path, cwd) or _relative(path, fallback) or path.name
    return Target(path.parent, path.name, shown, False, unlisted)


Found = list[tuple[Path, bool]]  # (path, True when it is a folder that could not be listed)


def walk(folder: Path, found: Found) -> None:
    """Every non-hidden `*.md` entry and every non-hidden link below `folder`, links not followed.

    Depth first in name order, with an explicit stack rather than recursion: a folder nested a few
    thousand levels deep (as anyone can make) must be listed, not end the scan with a RecursionError.
    """
    stack: list[tuple[Path, Iterator[os.DirEntry[str]]]] = []

    def enter(path: Path) -> None:
        try:
            entries = sorted(os.scandir(path), key=lambda entry: entry.name)
        except OSError:
            found.append((path, True))
            return
        stack.append((path, iter(entries)))

    enter(folder)
    while stack:
        parent, pending = stack[-1]
        entry = next(pending, None)
        if entry is None:
            stack.pop()
            continue
        if entry.name.startswith("."):
            continue
        path = parent / entry.name
        try:
            if entry.is_symlink():
                found.append((path, False))
            elif entry.is_dir(follow_symlinks=False):
                enter(path)
            elif entry.name.endswith(NOTE_SUFFIX):
                found.append((path, False))
        except OSError:
            found.append((path, False))


def targets(paths: list[str], cwd: Path) -> list[Target]:
    """The files named by `paths` (files or folders, relative to `cwd`), each once, in a stable order.

    A path that does not exist is a usage error (exit 2): a typo must not pass as a clean scan.
    """
    out: dict[tuple[Path, str], Target] = {}
    seen: dict[Path, bool] = {}
    for given in paths:
        path = Path(os.path.abspath(cwd / given))
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            raise UsageError(
                redact(f"{given}: no such file or folder")
            ) from None  # a mistyped path may hold a pasted token
        except OSError as exc:
            raise UsageError(redact(f"{given}: cannot be examined ({exc.strerror})")) from None
        if stat.S_ISDIR(info.st_mode):
            found: Found = []
            walk(path, found)
            # A folder that could not be listed is named relative to the folder above it.
            listed = [_target(item, cwd, path if item != path else path.parent, seen, bad) for item, bad in found]
        else:
            listed = [_target(path, cwd, path.parent, seen)]
        for target in listed:
            out.setdefault((target.root, target.rel), target)
    return list(out.values())


def vault_targets(vault: Path) -> list[Target]:
    """Every note of a whole vault, named by its vault-relative path."""
    found: Found = []
    walk(vault, found)
    out = []
    for path, bad in found:
        rel = _relative(path, vault)
        if rel is None:
            raise NotConnected(f"the vault {vault} cannot be listed; is the sync folder mounted and readable?")
        out.append(Target(vault, rel, rel, True, bad))
    return out
