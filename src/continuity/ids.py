"""Ids, checked in one place: device and project ids, and the ids of notes.

Device and project ids name folders of the vault and live in the connection file; they match
`^[a-z0-9][a-z0-9-]{0,62}$`. Note ids match `[a-z0-9][a-z0-9._-]*` (at most NOTE_ID_MAX_CHARS); ids
a person types are checked here and looked up, never joined into a path. Standard library only: the
hook's warm path checks the connection's ids with these.
"""

from __future__ import annotations

from continuity import limits

_FIRST = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_REST = _FIRST | {"-"}
NOTE_ID_CHARS = _FIRST | {".", "_", "-"}


def is_valid_id(value: object) -> bool:
    """A device or project id: `^[a-z0-9][a-z0-9-]{0,62}$`."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= limits.ID_MAX_CHARS
        and value[0] in _FIRST
        and all(c in _REST for c in value)
    )


def make_id(text: str, fallback: str) -> str:
    """Turn a host or folder name into a device or project id: lower case, other runs become `-`."""
    out: list[str] = []
    for ch in text.lower():
        if ch in _FIRST:
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    ident = "".join(out).strip("-")[: limits.ID_MAX_CHARS].strip("-")
    return ident if is_valid_id(ident) else fallback


def is_note_id(value: object) -> bool:
    """A note id: `[a-z0-9][a-z0-9._-]*`, at most NOTE_ID_MAX_CHARS characters."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= limits.NOTE_ID_MAX_CHARS
        and value[0] in _FIRST
        and all(c in NOTE_ID_CHARS for c in value)
    )
