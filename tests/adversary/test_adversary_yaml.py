"""Whatever frontmatter the vault holds, the YAML work of one note and of one hook run is bounded.

The adversary is text in the vault: a note, a clip or a handoff another agent wrote can hold any
frontmatter up to FRONTMATTER_CAP_BYTES. The parser's work is measured here in tokens scanned
(`notes.tokens_scanned`), never in seconds: every nesting shape past FRONTMATTER_MAX_DEPTH and every
block past FRONTMATTER_MAX_TOKENS is refused within the caps, while random frontmatter within the
caps parses exactly as the YAML library alone reads it. (The time the worst vault takes is in
`bench/bench_yaml_caps.py`.)
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings, strategies as st
from ruamel.yaml import YAML

from continuity import limits
from continuity.errors import NoteError
from continuity.vault import notes

# Every way YAML nests, `n` levels deep: flow sequence and mapping, block
# sequence and mapping (indented), the compact block sequence, and a flow value inside a block map.
SHAPES = {
    "flow-seq": lambda n: "x: " + "[" * n + "1" + "]" * n,
    "flow-map": lambda n: "x: " + "{a: " * n + "1" + "}" * n,
    "block-seq": lambda n: "x:\n" + "".join(" " * (2 * i) + "-\n" for i in range(1, n)) + " " * (2 * n) + "- 1",
    "block-map": lambda n: "x:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, n)) + " " * n + "end: 1",
    "compact-seq": lambda n: "x: \n  " + "- " * n + "1",
    "mixed": lambda n: (
        "x:\n"
        + "".join(" " * (2 * i) + ("- " if i % 2 else "k:") + "\n" for i in range(1, n))
        + " " * (2 * n)
        + "[[[1]]]"
    ),
}


def spent(front: str) -> tuple[int, str | None]:
    """(tokens scanned, error or None) for one block."""
    before = notes.tokens_scanned()
    try:
        notes.parse_frontmatter(front, "n.md")
        error = None
    except NoteError as exc:
        error = str(exc)
    return notes.tokens_scanned() - before, error


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_nesting_shape_past_the_depth_cap_is_refused_within_the_caps(shape: str) -> None:
    for depth in (limits.FRONTMATTER_MAX_DEPTH + 1, 200, 5000):
        front = SHAPES[shape](depth)
        if len(front.encode()) > limits.FRONTMATTER_CAP_BYTES:
            front = front[: limits.FRONTMATTER_CAP_BYTES]  # the largest block that reaches YAML at all
        tokens, error = spent(front)
        assert error is not None, (shape, depth)
        assert tokens <= limits.FRONTMATTER_MAX_TOKENS + 1, (shape, depth, tokens)


def test_a_block_of_many_tokens_stops_at_the_token_cap() -> None:
    for front in (
        "x: [" + ",".join(["a"] * 8000) + "]",
        "x: [[" + ",".join(["a"] * 8000) + "]]",
        "# a comment sends the block to YAML\n" + "\n".join(f"k{i}: v" for i in range(1800)),
    ):
        front = front[: limits.FRONTMATTER_CAP_BYTES]
        tokens, _error = spent(front)
        assert tokens <= limits.FRONTMATTER_MAX_TOKENS + 1


def test_one_run_spends_at_most_its_allowance_however_many_notes_it_reads() -> None:
    worst = "# comment\nx: " + "[" * 15 + ",".join(["a"] * 600) + "]" * 15
    before = notes.tokens_scanned()
    errors = []
    with notes.run_allowance():
        for _ in range(40):
            errors.append(spent(worst)[1])
    assert notes.tokens_scanned() - before <= limits.FRONTMATTER_RUN_MAX_TOKENS + 40
    assert errors[0] is None and errors[-1] is not None and "allowance" in errors[-1]
    assert spent(worst)[1] is None  # outside a run, each note is held to its own caps only


# --- random frontmatter within the caps: read exactly as the YAML library reads it --------------

scalars = st.one_of(
    st.integers(-(10**6), 10**6),
    st.booleans(),
    st.none(),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12),
)
keys = st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1, max_size=8)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4), max_leaves=40
)


def depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    return 0


def dumped(meta: dict[str, Any], flow: bool) -> str:
    import io

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = flow
    out = io.StringIO()
    yaml.dump(meta, out)
    return "# generated\n" + out.getvalue()


@settings(max_examples=150, deadline=None)
@given(meta=st.dictionaries(keys, values, min_size=1, max_size=6), flow=st.booleans())
def test_frontmatter_within_the_caps_reads_as_yaml_reads_it(meta: dict[str, Any], flow: bool) -> None:
    front = dumped(meta, flow)
    try:
        plain = YAML(typ="safe", pure=True).load(front)
    except Exception:  # the library cannot read its own output (e.g. `{a: ?0}`): not a case here
        assume(False)
    within = 1 + depth_of(meta) <= limits.FRONTMATTER_MAX_DEPTH and len(front.encode()) <= limits.FRONTMATTER_CAP_BYTES
    tokens, error = spent(front)
    assert tokens <= limits.FRONTMATTER_MAX_TOKENS + 1
    if within and tokens <= limits.FRONTMATTER_MAX_TOKENS:
        assert error is None, error
        assert notes.parse_frontmatter(front, "n.md") == plain
