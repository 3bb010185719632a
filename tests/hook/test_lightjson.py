"""`lightjson` reads and writes exactly as `json` does: the same value, or the same kind of error.

Generated over every JSON value shape (with whitespace around it, text in any Unicode, numbers at
their limits), over arbitrary text and bytes (which are mostly not JSON), and over flat objects such
as the receipt, since the warm path reads the harness's input and the cache's records with it.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from continuity import lightjson

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4), max_leaves=20
)
SPACE = st.text(alphabet=" \t\n\r", max_size=3)


def same(a: object, b: object) -> bool:
    """Equal, with NaN equal to itself (json reads NaN as a float that is not equal to itself)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def outcome(read: object, text: str | bytes) -> tuple[str, object]:
    try:
        return "value", read(text)  # type: ignore[operator]
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def check(text: str | bytes) -> None:
    ours, theirs = outcome(lightjson.loads, text), outcome(json.loads, text)
    assert ours[0] == theirs[0], (text, ours, theirs)
    assert same(ours[1], theirs[1]), (text, ours, theirs)


@settings(max_examples=400)
@given(VALUES, SPACE, SPACE, st.booleans(), st.booleans())
def test_every_json_document_reads_as_json_reads_it(
    value: object, before: str, after: str, ascii: bool, raw: bool
) -> None:
    text = before + json.dumps(value, ensure_ascii=ascii) + after
    check(text.encode("utf-8") if raw else text)


@settings(max_examples=400)
@given(st.text(max_size=40) | st.binary(max_size=40))
def test_anything_else_is_refused_as_json_refuses_it(text: str | bytes) -> None:
    check(text)


@pytest.mark.parametrize(
    "text",
    ['{"a": 1} x', "\ufeff{}", b"\xef\xbb\xbf{}", '{"a": 1}{', "[1,]", "NaN", "-Infinity", "1\x00", b"1\x00",
     "{}".encode("utf-16"), "[" * 100_000 + "]" * 100_000, "", " ", '"\\ud800"', b'"\xed\xa0\x80"'],
)  # fmt: skip
def test_the_edges_read_as_json_reads_them(text: str | bytes) -> None:
    check(text)


@settings(max_examples=300)
@given(st.dictionaries(st.text(), st.none() | st.booleans() | st.integers() | st.text(), max_size=8))
def test_a_flat_object_is_written_as_json_writes_it(doc: dict[str, object]) -> None:
    assert lightjson.dumps(doc) == json.dumps(doc)


@pytest.mark.parametrize("doc", [{"a": 1.5}, {"a": [1]}, {"a": {"b": None}}, {1: "x"}, {"n": float("nan")}])
def test_anything_else_is_written_by_json(doc: dict[str, object]) -> None:
    assert lightjson.dumps(doc) == json.dumps(doc)


def test_a_broken_document_is_refused_as_json_refuses_it_before_json_is_imported() -> None:
    """The C scanner finds `json.decoder`'s error class only once `json` is imported: in a fresh
    interpreter (as the hook and the MCP server run), every broken document must still be refused with
    `json`'s own error, never a SystemError."""
    texts = ["{", '{"a"', '{"a":', '{"a":1', '{"a":1,', '{"a" 1}', "{1:2}", '{"a":{' * 3, "[1,", "[{", '{"a":[}']
    program = (
        "import sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from continuity import lightjson\n"
        "texts = sys.argv[2:]\n"
        "def outcome(read, text):\n"
        "    try:\n"
        "        return repr(read(text))\n"
        "    except Exception as exc:\n"
        "        return type(exc).__name__ + ': ' + str(exc)\n"
        "assert 'json' not in sys.modules\n"
        "ours = [outcome(lightjson.loads, text) for text in texts]\n"
        "import json\n"
        "theirs = [outcome(json.loads, text) for text in texts]\n"
        "print(ours == theirs, ours, theirs)\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", program, str(Path(lightjson.__file__).parents[1]), *texts],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.startswith("True"), done.stdout


@settings(max_examples=400)
@given(VALUES | st.tuples(VALUES, VALUES), st.booleans(), st.sampled_from([(", ", ": "), (",", ":")]))
def test_every_json_value_is_written_as_json_writes_it(value: object, ascii: bool, separators: tuple[str, str]) -> None:
    """Any text (lone surrogates included), numbers at their limits, NaN and the infinities, nesting."""
    ours = lightjson.dumps(value, separators=separators, ensure_ascii=ascii)
    assert ours == json.dumps(value, separators=separators, ensure_ascii=ascii)


def test_what_it_does_not_write_itself_json_writes_or_refuses() -> None:
    """Deep nesting, keys that are not strings, other objects, a circular list: `json`'s answer."""
    circular: list[object] = []
    circular.append(circular)
    deep: object = 1
    for _ in range(150):
        deep = [deep]
    for value in (deep, {1: "x", None: 2}, {"a": object()}, circular):
        try:
            expected: object = json.dumps(value)
        except (TypeError, ValueError) as exc:
            expected = type(exc)
        try:
            ours: object = lightjson.dumps(value)
        except (TypeError, ValueError) as exc:
            ours = type(exc)
        assert ours == expected


def test_subclasses_and_wrong_types_are_treated_as_json_treats_them() -> None:
    """A float or str subclass is written by its value, not by what it says of itself; a document
    that is neither text nor bytes is refused with json's TypeError."""

    class Odd(float):
        def __ne__(self, other: object) -> bool:
            return True

        def __repr__(self) -> str:
            return "odd"

    class Loud(str):
        def __str__(self) -> str:
            return "LOUD"

    for value in ([Odd(1.5), Odd("nan")], {"k": Loud("quiet")}, {Loud("key"): 1}):
        assert lightjson.dumps(value) == json.dumps(value)
    for document in (None, 1, 1.5, ["[]"]):
        with pytest.raises(TypeError):
            lightjson.loads(document)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            json.loads(document)  # type: ignore[arg-type]
