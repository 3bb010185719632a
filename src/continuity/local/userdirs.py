"""The user's folders for continuity's machine-local files, resolved in this one place.

* cache: `$XDG_CACHE_HOME/continuity`, else `~/.cache/continuity` (the startup cache, the recall index);
* state: `$XDG_STATE_HOME/continuity`, else `~/.local/state/continuity` (hook state, receipts, locks).

A relative XDG value is ignored, as the XDG Base Directory specification requires, and a relative
`HOME` gives way to the password database's home. Either, taken relative to the session's folder,
would let a repository supply this computer's cached brief or hook state. With no absolute home at
all the folders lie under /dev/null, where nothing can be read or created: nothing is cached or
recorded, and everything else still works. (`os.path.expanduser` returns a relative HOME as it is,
which is why it is not used on POSIX.)
"""

from __future__ import annotations

import os

APP = "continuity"
NO_HOME = "/dev/null"


def home() -> str:
    """HOME when it is absolute, else the password database's home, else NO_HOME; never relative."""
    value = os.environ.get("HOME", "")
    if os.path.isabs(value):
        return value
    if os.name == "nt":  # pragma: no cover - the profile folder, as Windows defines it
        value = os.path.expanduser("~")
    else:
        try:
            import pwd

            value = pwd.getpwuid(os.getuid()).pw_dir
        except (ImportError, KeyError):
            value = ""
    return value if os.path.isabs(value) else NO_HOME


def _folder(variable: str, *fallback: str) -> str:
    base = os.environ.get(variable, "")
    if not os.path.isabs(base):
        base = os.path.join(home(), *fallback)
    return os.path.join(base, APP)


def cache_dir() -> str:
    """Machine-local data that can be rebuilt: losing it costs only speed."""
    return _folder("XDG_CACHE_HOME", ".cache")


def state_dir() -> str:
    """Machine-local bookkeeping that should survive a restart but belongs to no vault."""
    return _folder("XDG_STATE_HOME", ".local", "state")
