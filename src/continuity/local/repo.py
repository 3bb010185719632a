"""Where the repository of a folder begins: the nearest folder at or above it holding `.git`.

One walk for every caller: the hook's warm path (which must not import `pathlib`, about 4 ms), the
connection's discovery, the outbox and the pin. A `.git` entry may be a folder or a worktree's file;
the walk starts from the real path, so a link to a folder inside a repository finds that repository.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: importing typing costs about 4 ms of every session start
if TYPE_CHECKING:
    from pathlib import Path


def top_level(start: str | os.PathLike[str]) -> str | None:
    """The repository's top folder for `start`, or None outside any repository."""
    try:
        here = os.path.realpath(start)
    except (OSError, ValueError):  # ValueError: a NUL in a path that arrived in the harness's JSON
        return None
    while not os.path.lexists(os.path.join(here, ".git")):
        if os.path.dirname(here) == here:
            return None
        here = os.path.dirname(here)
    return here


def find_repo_root(start: Path) -> Path | None:
    """`top_level` as a Path, for the callers that work with paths."""
    from pathlib import Path

    found = top_level(start)
    return None if found is None else Path(found)
