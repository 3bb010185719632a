"""The flat-frontmatter reader agrees with ruamel.yaml's safe loader wherever it answers at all."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from ruamel.yaml import YAML

from continuity.vault import flatyaml, notes


def ruamel_load(front: str) -> Any:
    yaml = YAML(typ="safe", pure=True)
    yaml.allow_duplicate_keys = False
    return yaml.load(front)


def same(a: object, b: object) -> bool:
    """Equal values of equal types, down to the time zone's name of a datetime."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dt.datetime) and isinstance(b, dt.datetime):
        return a == b and a.tzinfo == b.tzinfo and str(a.tzinfo) == str(b.tzinfo)
    return a == b


TYPICAL = (
    "id: note-000001\ntype: fact\nstatus: approved\ntitle: The cache lives outside the vault\n"
    "tags: [cache, recall, sqlite]\nscope: global\ncreated: 2025-03-01T10:00:00Z\n"
    "verified: 2025-03-01\nrevalidate_by: 2025-05-30\nconfidence: high\nsuperseded_by: null\n"
    "provenance: 'lifecycle note new'\nevidence: \"tests/recall/test_recall.py passes\"\n"
)


def test_typical_frontmatter_is_read_without_ruamel_and_agrees() -> None:
    flat = flatyaml.parse(TYPICAL)
    assert flat is not None
    assert same(flat, ruamel_load(TYPICAL))
    assert flat["created"] == dt.datetime(2025, 3, 1, 10, tzinfo=dt.timezone.utc)
    assert flat["superseded_by"] is None


@pytest.mark.parametrize(
    "front",
    [
        "a: 1\n",  # numbers are left to ruamel.yaml
        "a: x # comment\n",
        "a: b: c\n",
        "a:b\n",
        "  a: x\n",
        "a:\n  - x\n",
        "a:\n- x\n",
        "a: &x y\n",
        "a: *x\n",
        "a: !!str x\n",
        "a: 'it''s'\n",
        'a: "tab\\t"\n',
        "a: x\na: y\n",
        "true: x\n",
        "a: [x, [y]]\n",
        "a: [x,]\n",
        "a: 2025-02-30\n",
        "a: 2025-03-01T10:00:00+02:00\n",
        "a: 2025-03-01 10:00:00\n",
        "a: =\n",
        "a:\tx\n",
        "a: é\n",
        "%YAML 1.1\n",
        "- a\n",
        "a: x\n   \n",
    ],
)
def test_everything_else_is_declined(front: str) -> None:
    assert flatyaml.parse(front) is None


def test_declined_blocks_still_parse_or_fail_as_before() -> None:
    assert notes.parse_frontmatter("a: 1\nb: [x, y]\n", "n.md") == {"a": 1, "b": ["x", "y"]}
    with pytest.raises(Exception, match="duplicate key"):
        notes.parse_frontmatter("a: x\na: y\n", "n.md")
    with pytest.raises(Exception, match="invalid frontmatter"):
        notes.parse_frontmatter("a: 2025-02-30\n", "n.md")


FRAGMENTS = [
    "x",
    "X y",
    "null",
    "Null",
    "NULL",
    "nUll",
    "true",
    "True",
    "TRUE",
    "tRue",
    "false",
    "FALSE",
    "yes",
    "No",
    "on",
    "~",
    "",
    "1",
    "0o7",
    "0x1f",
    ".5",
    "1e3",
    "1_0",
    "-",
    "- a",
    "?",
    "x:",
    "x: y",
    "x #c",
    "x#c",
    "'q'",
    "'q''r'",
    '"q"',
    '"q\\n"',
    "[a, b]",
    "[]",
    "[ a , b ]",
    "[a,,b]",
    "[true, null]",
    "[1]",
    "[a",
    "a]",
    "2025-03-01",
    "2025-3-1",
    "2025-13-01",
    "2025-03-01T10:00:00Z",
    "2025-03-01T25:00:00Z",
    "2025-03-01t10:00:00z",
    "x/y(z)",
    "a=b",
    "x;y",
    "x,y",
    "é",
    "'é'",
    "&a x",
    "*a",
    "!t x",
    "|",
    ">",
    "%",
    "@x",
    "`x`",
    "{a: b}",
    "x  ",
    "Infinity",
    ".inf",
    "NaN",
    "<<",
    "=",
    "\t",
    "x\ty",
    "a - b",
    "--",
    "...",
]
KEYS = ["a", "b_c", "d-e", "true", "null", "1", "_x", "é", "a b", "<<", "?"]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(KEYS), st.sampled_from([": ", ":", ":  ", " : "]), st.sampled_from(FRAGMENTS)),
        max_size=4,
    )
)
def test_whatever_it_answers_ruamel_answers_the_same(lines: list[tuple[str, str, str]]) -> None:
    front = "".join(f"{key}{sep}{value}\n" for key, sep, value in lines)
    flat = flatyaml.parse(front)
    if flat is None:
        return
    loaded = ruamel_load(front)
    assert same(flat, loaded if loaded is not None else {}), front
