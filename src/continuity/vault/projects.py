"""The vault's projects and the repositories they record, and which one a checkout belongs to.

Each `10-project/<project>/PROJECT.md` may record `repository` (the normalized `origin` URL) and
`root_commit` (the first commit's id), written by `lifecycle init` from `local.identity`. `choose` is
the decision `init` makes for a checkout that names no project, kept pure (the entries and the
checkout's identity are passed in) so that every case is tested without a vault:

1. a project whose identity matches the checkout's is the one, whatever the clone's folder is called.
   Both URLs known and equal match; otherwise equal root commits match unless both URLs are known and
   differ (a fork shares its upstream's first commit but is another repository);
2. several matches, or a project named like the folder that records another repository, or projects
   that record no identity at all (so any of them could be this one): cannot tell, and the person is
   asked for `--project` with the vault's projects listed, rather than a new project being made;
3. otherwise the folder's name: an existing project of that name that records no identity (written
   before identities were kept), or a new project.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from continuity import ids
from continuity.errors import FIELD, NoteError, UsageError
from continuity.vault import access, layout, notes, registry

MAX_LISTED = 20  # projects named in one "cannot tell" message before "and N more"


class Project(NamedTuple):
    id: str
    repository: str | None
    root_commit: str | None

    @property
    def known(self) -> bool:
        return bool(self.repository or self.root_commit)

    def describe(self) -> str:
        if self.repository:
            return f"{self.id} ({self.repository})"
        if self.root_commit:
            return f"{self.id} (root commit {self.root_commit[:12]})"
        return f"{self.id} (records no repository)"


class Choice(NamedTuple):
    project: str
    found_by: str  # "repository", "root_commit", "folder" or "new"


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def read_project(root: Path, project: str) -> Project | None:
    """The identity PROJECT.md records; None when there is no readable, valid profile."""
    try:
        data = access.read_capped(root, registry.PROJECT.at(project), registry.PROJECT.cap_bytes)
        meta = notes.parse_note(data, registry.PROJECT.at(project)).meta
    except NoteError:
        return None
    repository = _text(meta.get("repository"))
    return Project(project, repository.lower() if repository else None, _text(meta.get("root_commit")))


def list_projects(root: Path) -> list[Project]:
    """Every project folder of the vault with a valid id (a folder with no valid profile records nothing)."""
    folder = root / layout.PROJECTS
    try:
        if folder.is_symlink() or not folder.is_dir():
            return []
        names = sorted(entry.name for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False))
    except OSError:
        return []
    return [read_project(root, name) or Project(name, None, None) for name in names if ids.is_valid_id(name)]


def matches(entry: Project, repository: str | None, root_commit: str | None) -> bool:
    if entry.repository and repository:
        return entry.repository == repository
    return bool(entry.root_commit and root_commit and entry.root_commit == root_commit)


def _listing(entries: list[Project]) -> str:
    shown = ", ".join(entry.describe() for entry in entries[:MAX_LISTED])
    more = len(entries) - MAX_LISTED
    return shown + (f" and {more} more" if more > 0 else "")


def _cannot_tell(why: str, entries: list[Project]) -> UsageError:
    return UsageError(
        f"cannot tell which project this checkout belongs to: {why}; the vault's projects: {_listing(entries)}; "
        f"rerun with {FIELD} ID (one of them, or a new id for a new project)",
        field="project",
    )


def choose(entries: list[Project], repository: str | None, root_commit: str | None, folder_default: str) -> Choice:
    """The project for a checkout (see the module's rules); UsageError (exit 2) when it cannot tell."""
    found = [entry for entry in entries if matches(entry, repository, root_commit)]
    if len(found) == 1:
        entry = found[0]
        by_url = bool(entry.repository and repository)
        return Choice(entry.id, "repository" if by_url else "root_commit")
    if found:
        raise _cannot_tell(f"{len(found)} projects record this repository", found)
    known = bool(repository or root_commit)
    named = next((entry for entry in entries if entry.id == folder_default), None)
    if named is not None:
        if named.known and known:
            raise _cannot_tell(f"the project {named.id!r} belongs to another repository", entries)
        return Choice(named.id, "folder")
    unrecorded = [entry for entry in entries if not entry.known]
    if known and unrecorded:
        raise _cannot_tell(
            f"{len(unrecorded)} of the vault's projects record no repository, so one of them may be this one",
            entries,
        )
    return Choice(folder_default, "new")
