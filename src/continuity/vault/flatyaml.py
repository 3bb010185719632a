"""The frontmatter most notes have, read without ruamel.yaml: flat `key: value` lines.

Recall builds its index by reading every approved note, and the pure-Python YAML parser cost about
1.7 ms a note, most of a cold build. Nearly every note the tool or a person writes has flat
frontmatter: one `key: value` per line, values that are words, quoted text, a date, a UTC time or
a flow list of words. `parse` reads exactly that subset and returns None for anything else (a
comment, an indented line, a block list, a tag, an anchor, a number, a duplicate key, any character
YAML treats as an indicator), and the caller then hands the block to ruamel.yaml, which gives the
answer or the precise error. So this module can only ever agree with ruamel.yaml's safe loader
(YAML 1.2): what it accepts it resolves as that loader does (`null`/`Null`/`NULL`, `true`/`True`/
`TRUE`, `false`/`False`/`FALSE`, a date, a time with `Z`), and whatever it cannot resolve with
certainty it declines. tests/vault/test_flatyaml.py checks the agreement on a corpus of tricky lines.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# A plain scalar we can resolve: starts with a letter, then only characters that are never YAML
# indicators in block or flow context; no ':' or '#', so no mapping and no comment can hide in it.
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9 _.,/()+;=-]*")
_FLOW_WORD = re.compile(r"[A-Za-z][A-Za-z0-9 _./()+;=-]*")
_DATE = re.compile(r"(\d{4})-(\d\d)-(\d\d)")
_TIME = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z")
_QUOTED = re.compile(r"'([^'\x00-\x1f\x7f]*)'|\"([^\"\\\x00-\x1f\x7f]*)\"")
_SPECIAL = {"null": None, "Null": None, "NULL": None, "true": True, "True": True, "TRUE": True}
_SPECIAL.update({"false": False, "False": False, "FALSE": False})
_UTC = dt.timezone(dt.timedelta(0), "Z")  # what ruamel.yaml attaches to a time written with `Z`
_DECLINE = object()


def _plain(text: str, pattern: re.Pattern[str]) -> object:
    if not pattern.fullmatch(text):
        return _DECLINE
    return _SPECIAL.get(text, text)


def _scalar(raw: str) -> object:
    """One block value (already stripped), or _DECLINE."""
    if not raw:
        return None
    first = raw[0]
    if first in "'\"":
        quoted = _QUOTED.fullmatch(raw)
        if quoted is None or not raw.isprintable():
            return _DECLINE
        return quoted.group(1) if first == "'" else quoted.group(2)
    if first.isdigit():
        return _moment(raw)
    if first == "[":
        return _flow_list(raw)
    return _plain(raw, _WORD) if raw.isascii() else _DECLINE


def _moment(raw: str) -> object:
    try:
        if found := _TIME.fullmatch(raw):
            year, month, day, hour, minute, second = (int(part) for part in found.groups())
            return dt.datetime(year, month, day, hour, minute, second, tzinfo=_UTC)
        if found := _DATE.fullmatch(raw):
            year, month, day = (int(part) for part in found.groups())
            return dt.date(year, month, day)
    except ValueError:  # 2025-02-30: ruamel.yaml raises, and its message is the one to show
        return _DECLINE
    return _DECLINE  # numbers and every other time format


def _flow_list(raw: str) -> object:
    if not raw.endswith("]") or not raw.isascii():
        return _DECLINE
    inner = raw[1:-1].strip()
    if not inner:
        return []
    items: list[object] = []
    for part in inner.split(","):
        value = _plain(part.strip(), _FLOW_WORD)
        if value is _DECLINE:
            return _DECLINE
        items.append(value)
    return items


def parse(front: str) -> dict[str, Any] | None:
    """The mapping of a flat frontmatter block, or None when ruamel.yaml must read it."""
    meta: dict[str, Any] = {}
    for line in front.split("\n"):
        if not line:
            continue
        key, colon, rest = line.partition(":")
        if not colon or not _KEY.fullmatch(key) or key in _SPECIAL or key in meta or "\t" in rest:
            return None
        if rest and rest[0] != " ":
            return None
        value = _scalar(rest.strip(" "))
        if value is _DECLINE:
            return None
        meta[key] = value
    return meta
