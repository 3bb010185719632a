"""Sync-engine conflict copies: how each engine names the second version of a file it could not merge.

A conflict copy is the one sign a synchronized vault gives that two computers wrote the same note: the
sync engine keeps both and renames one. Left alone, the copy is read by nobody and the original may be
the wrong half, so doctor names every copy it sees. The rules look at a name (and its folder) only:

* Google Drive `name (1).md`; Dropbox `name (conflicted copy …).md` (also `(X's conflicted copy …)`);
  Syncthing `name.sync-conflict-<date>-<time>-<id>.md`: recognised by name alone;
* OneDrive `name-<HOSTNAME>.md` and iCloud `name 2.md`: only when `name.md` exists in the same folder,
  because hyphenated and numbered names are ordinary otherwise; for OneDrive the suffix must also look
  like a host name with at least one capital letter (this tool writes lower-case names only, so a
  handoff `…-laptop-fix-login.md` beside `…-laptop.md` is never taken for a copy).

Standard library only: the startup hook's bounded scan uses it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

ENGINES = ("google-drive", "dropbox", "syncthing", "onedrive", "icloud")

_GOOGLE_DRIVE = re.compile(r"^.*\S \([0-9]{1,4}\)$")
_DROPBOX = re.compile(r"\([^()]{0,200}conflicted copy[^()]{0,200}\)", re.IGNORECASE)
_SYNCTHING = re.compile(r"\.sync-conflict-[0-9]{8}-[0-9]{6}(?:-[A-Z0-9]{1,16})?(?:\.|$)")
_ICLOUD = re.compile(r"^(.*\S) [0-9]{1,4}$")
_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,62}$")


def split_name(name: str) -> tuple[str, str]:
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        return name, ""
    return stem, "." + ext


def conflict_engine(name: str, exists: Callable[[str], bool]) -> str | None:
    """Which sync engine's conflict-copy pattern `name` matches, or None.

    `exists(name)` tells whether a sibling of that name is in the same folder; it is asked only for
    the two patterns that are ambiguous without the original beside the copy.
    """
    if name.startswith("."):
        return None
    if ".sync-conflict-" in name and _SYNCTHING.search(name):
        return "syncthing"
    stem, ext = split_name(name)
    if "conflicted copy" in stem.lower() and _DROPBOX.search(stem):
        return "dropbox"
    if stem.endswith(")") and _GOOGLE_DRIVE.match(stem):
        return "google-drive"
    match = _ICLOUD.match(stem)
    if match and exists(match.group(1) + ext):
        return "icloud"
    position = stem.find("-")
    while position > 0:
        suffix = stem[position + 1 :]
        if suffix != suffix.lower() and _HOST.match(suffix) and exists(stem[:position] + ext):
            return "onedrive"
        position = stem.find("-", position + 1)
    return None
