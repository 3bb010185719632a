"""The connection file's format: `.agent-vault`, one `key: scalar` per line.

The file is a tiny YAML mapping (`vault`, `device`, `project`, optional `python`) that `init` writes
in a strict subset of YAML, strings double-quoted as JSON (`ids` checks its ids). It is read by hand
rather than by ruamel.yaml, which costs 60-80 ms to import, because the startup hook reads it at every session
start; a file outside the subset is refused, never guessed at. `connection` (discovery, checks) and
the hook's warm path both read it through `parse`.
"""

from __future__ import annotations

from continuity import lightjson

NAME = ".agent-vault"
KEYS = ("vault", "device", "project", "python")
_NOT_PLAIN = ("[", "{", "&", "*", "!", "|", ">", "%", "@", "`")


def _scalar(raw: str) -> str:
    raw = raw.strip()
    if raw.startswith('"'):
        try:
            value = lightjson.loads(raw)
        except ValueError:
            value = None
        if not isinstance(value, str):
            raise ValueError("a quoted value is malformed")
        return value
    if raw.startswith("'"):
        if len(raw) < 2 or not raw.endswith("'"):
            raise ValueError("a quoted value is malformed")
        return raw[1:-1].replace("''", "'")
    raw = raw.split(" #", 1)[0].rstrip()
    if raw.startswith(_NOT_PLAIN):
        raise ValueError("only plain or quoted scalars are allowed in a connection file")
    return raw


def parse(text: str, name: str = NAME) -> dict[str, str]:
    """The file's values by key; ValueError naming the line for anything outside the subset."""
    values: dict[str, str] = {}
    for number, line in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped in ("---", "..."):
            continue
        key, colon, rest = line.partition(":")
        where = f"{name} line {number}"
        if not colon or line[:1].isspace() or key.strip() != key:
            raise ValueError(f"{where}: expected 'key: value'")
        if key in values:
            raise ValueError(f"{where}: duplicate key {key!r}")
        if key not in KEYS:
            continue  # newer tools may add keys; unknown ones are ignored, not fatal
        try:
            values[key] = _scalar(rest)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    return values
