"""Is this path the vault, and if it is not, what is near it: the checks `init` makes before connecting.

A vault path that does not exist has two explanations that look the same from here: the person means
a new vault, or the existing vault has not arrived (a typo, or a sync engine that has not finished
copying it to this computer). Advising `--new` for the second would create a second vault for the
sync engine to merge, so the message gives both, and when the folders around the path already hold a
vault it names that vault and does not suggest `--new` at all.

The look around is bounded: the path's existing ancestors up to the nearest one that exists and two
more above it are each checked for being a vault (a path given inside a vault), and the nearest
existing ancestor's entries, at most `INIT_NEIGHBOUR_SCAN_MAX_ENTRIES` of them, are checked for
vaults beside the path. Links are not followed.
"""

from __future__ import annotations

import os
from pathlib import Path

from continuity import tunables
from continuity.errors import FIELD, InputRejected, NotConnected
from continuity.vault import layout

ANCESTORS_ABOVE = 2  # ancestors above the nearest existing one that are checked for being a vault


def is_vault(path: Path) -> bool:
    """A vault has its 00-system/ folder and at least one of the folders init makes beside it."""
    try:
        if path.is_symlink() or not (path / layout.SYSTEM).is_dir():
            return False
        return any((path / name).is_dir() for name in (layout.PROJECTS, layout.DEVICES, layout.STATE))
    except OSError:
        return False


def _nearest_existing(path: Path) -> Path:
    here = path
    while not os.path.lexists(here) and here.parent != here:
        here = here.parent
    return here


def neighbours(path: Path) -> list[Path]:
    """Vaults around `path` (itself excluded): ones it lies inside, then ones beside it, sorted."""
    nearest = _nearest_existing(path.parent if os.path.lexists(path) else path)
    found: list[Path] = []
    above = [nearest, *list(nearest.parents)[:ANCESTORS_ABOVE]]
    found.extend(folder for folder in above if folder != path and is_vault(folder))
    try:
        with os.scandir(nearest) as entries:
            names = []
            for count, entry in enumerate(entries):
                if count >= tunables.INIT_NEIGHBOUR_SCAN_MAX_ENTRIES:
                    break
                if entry.is_dir(follow_symlinks=False):
                    names.append(entry.name)
    except OSError:
        names = []
    found.extend(folder for folder in (nearest / name for name in sorted(names)) if folder != path and is_vault(folder))
    return found


def missing(path: Path) -> NotConnected:
    """Why `path` may be missing and what to do; a new vault (`new`) only when no vault is near."""
    near = neighbours(path)
    if near:
        return NotConnected(
            f"the vault {path} does not exist, and {near[0]} beside it is a vault: if that is your vault, "
            f"run init with {FIELD} {near[0]}; otherwise check the path, and that the sync engine has "
            "finished copying the vault to this computer",
            field="vault",
        )
    return NotConnected(
        f"the vault {path} does not exist: if it is your existing vault, check the path and that the sync "
        "engine has finished copying it to this computer; if you mean a new vault (the first computer "
        f"only), add {FIELD} to create it there",
        field="new",
    )


def check(path: Path) -> None:
    """NotConnected (exit 3) for a missing path, InputRejected (exit 5) for one that is not a vault."""
    if not os.path.lexists(path):
        raise missing(path)
    if not path.is_dir():
        raise InputRejected(f"{path} is not a folder; give the vault's folder")
    if not (path / layout.SYSTEM).is_dir():
        # A mistyped path must not be turned into half a vault: a vault has its 00-system/ folder.
        inside = next((folder for folder in list(path.parents)[:ANCESTORS_ABOVE] if is_vault(folder)), None)
        if inside is not None:
            raise InputRejected(
                f"{path} is a folder inside the vault {inside}; run init with {FIELD} {inside}", field="vault"
            )
        raise InputRejected(
            f"{path} is not a vault (it has no {layout.SYSTEM}/): check the path, and that the sync engine "
            f"has finished copying the vault; {FIELD} creates a vault only in an absent or empty folder",
            field="new",
        )
