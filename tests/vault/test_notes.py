"""Notes: the one frontmatter loader, safe vault reads, compact parts, and the choice of the handoff."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from pathlib import Path

import pytest
from briefkit import handoff_note
from hypothesis import given, strategies as st

from continuity import limits
from continuity.errors import InputRejected, NoteError
from continuity.memory import handoff
from continuity.vault import access, notes

# ----------------------------------------------------------------------------------------- decoding


def test_bom_and_crlf_and_lone_cr_are_normalized() -> None:
    data = b"\xef\xbb\xbf---\r\ntype: soul\r\n---\r\nline one\rline two\r\n"
    note = notes.parse_note(data, "SOUL.md")
    assert note.meta == {"type": "soul"}
    assert note.body == "line one\nline two\n"
    assert "\r" not in note.text and not note.text.startswith("\ufeff")


def test_unicode_line_separators_become_newlines() -> None:
    assert notes.normalize_newlines("a\u2028b\u2029c\x85d") == "a\nb\nc\nd"


@pytest.mark.parametrize(
    ("data", "line"),
    [(b"\xff", 1), (b"ok\n\xc3\x28", 2), (b"---\ntype: x\n---\n\n\xe2\x82", 5), (b"a\nb\nc\x80", 3)],
)
def test_invalid_utf8_is_rejected_with_file_and_line(data: bytes, line: int) -> None:
    with pytest.raises(NoteError) as info:
        notes.parse_note(data, "00-system/SOUL.md")
    assert info.value.reason == "invalid"
    assert str(info.value).startswith("00-system/SOUL.md")
    assert f"line {line}" in str(info.value) and "UTF-8" in str(info.value)


def test_overlong_and_surrogate_encodings_are_invalid_utf8() -> None:
    for bad in (b"\xc0\xbc", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"):
        with pytest.raises(NoteError):
            notes.decode(b"---\n---\n" + bad, "x.md")


# -------------------------------------------------------------------------------------- frontmatter


@pytest.mark.parametrize(
    ("front", "words"),
    [
        ("type: a\ntype: b\n", "duplicate"),
        ("a:\n  x: 1\n  x: 2\n", "duplicate"),
        ("type: &a soul\nb: *a\n", "anchor"),
        ("a: &x [1, 2]\n", "anchor"),
        ("a: *undefined\n", ""),
        ("base: &b {x: 1}\nother:\n  <<: *b\n", "anchor"),
        ("- a\n- b\n", "mapping"),
        ("just a string\n", "mapping"),
        ("42\n", "mapping"),
        ("1: one\n", "text keys"),
        ("[a, b]: x\n", ""),
        ("a: [unclosed\n", "invalid frontmatter"),
        ("a: !!python/object:os.system x\n", ""),
        ("\t- tab\n", ""),
    ],
)
def test_bad_frontmatter_is_rejected_and_named(front: str, words: str) -> None:
    with pytest.raises(NoteError) as info:
        notes.parse_note(f"---\n{front}---\nbody\n".encode(), "10-project/x/PROJECT.md")
    assert info.value.reason == "invalid"
    assert str(info.value).startswith("10-project/x/PROJECT.md")
    assert words in str(info.value)
    assert "\n" not in str(info.value)


def test_duplicate_key_line_counts_from_the_top_of_the_file() -> None:
    with pytest.raises(NoteError) as info:
        notes.parse_note(b"---\nid: a\ntype: x\ntype: y\n---\n", "n.md")
    assert "line 4" in str(info.value)


def test_nesting_and_size_limits() -> None:
    deep = "a: " + "[" * (limits.FRONTMATTER_MAX_DEPTH + 1) + "]" * (limits.FRONTMATTER_MAX_DEPTH + 1) + "\n"
    with pytest.raises(NoteError, match="nested"):
        notes.parse_note(f"---\n{deep}---\n".encode(), "n.md")
    ok = "a: " + "[" * (limits.FRONTMATTER_MAX_DEPTH - 1) + "]" * (limits.FRONTMATTER_MAX_DEPTH - 1) + "\n"
    notes.parse_note(f"---\n{ok}---\n".encode(), "n.md")
    big = "a: " + "x" * limits.FRONTMATTER_CAP_BYTES + "\n"
    with pytest.raises(NoteError, match="over"):
        notes.parse_note(f"---\n{big}---\n".encode(), "n.md")


def test_billion_laughs_is_refused_quickly() -> None:
    lol = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
    )
    with pytest.raises(NoteError, match="anchor"):
        notes.parse_note(f"---\n{lol}---\n".encode(), "n.md")


@pytest.mark.parametrize(
    ("text", "meta", "body", "start"),
    [
        ("---\ntype: x\n---\nbody\n", {"type": "x"}, "body\n", 4),
        ("---\ntype: x\n...\nbody\n", {"type": "x"}, "body\n", 4),
        ("---\n---\nbody", {}, "body", 3),
        ("---\n\n\n---\n", {}, "", 5),
        ("---\ntype: x\n--- \nbody\n", {"type": "x"}, "body\n", 4),
    ],
)
def test_frontmatter_blocks(text: str, meta: dict[str, str], body: str, start: int) -> None:
    note = notes.parse_note(text.encode(), "n.md")
    assert (note.meta, note.body, note.body_start_line) == (meta, body, start)


def test_missing_or_unclosed_frontmatter() -> None:
    with pytest.raises(NoteError, match="no frontmatter"):
        notes.parse_note(b"# just markdown\n", "n.md")
    assert notes.parse_note(b"# just markdown\n", "n.md", require_frontmatter=False).meta == {}
    with pytest.raises(NoteError, match="closing"):
        notes.parse_note(b"---\ntype: x\nbody without end\n", "n.md")
    with pytest.raises(NoteError):
        notes.parse_note(b"----\ntype: x\n----\n", "n.md")


@given(st.binary(max_size=300))
def test_any_bytes_either_parse_or_raise_a_note_error(data: bytes) -> None:
    for prefix in (b"", b"---\n"):
        try:
            note = notes.parse_note(prefix + data, "n.md")
        except NoteError as exc:
            assert exc.reason == "invalid"
        else:
            assert isinstance(note.meta, dict)


@given(st.text(max_size=200))
def test_any_text_in_frontmatter_either_parses_or_raises_a_note_error(front: str) -> None:
    with contextlib.suppress(NoteError):
        notes.parse_note(f"---\n{front}\n---\n".encode("utf-8", "surrogatepass"), "n.md")


def test_times_quoted_or_unquoted_mean_the_same() -> None:
    moment = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    for value in (
        "2025-01-02T03:04:05Z",
        '"2025-01-02T03:04:05Z"',
        "'2025-01-02T03:04:05Z'",
        "2025-01-02T05:04:05+02:00",
        '"2025-01-02T05:04:05+02:00"',
        "2025-01-02 03:04:05Z",
    ):
        meta = notes.parse_note(f"---\ncreated: {value}\n---\n".encode(), "n.md").meta
        assert notes.as_utc(meta["created"]) == moment, value
    assert notes.as_utc("2025-01-02") == dt.datetime(2025, 1, 2, tzinfo=dt.timezone.utc)
    assert notes.as_utc("yesterday") is None and notes.as_utc(5) is None
    assert notes.format_utc(moment) == "2025-01-02T03:04:05Z"


# ----------------------------------------------------------------------------------------- sections


def test_brief_section_any_case_until_the_next_level_one_or_two_heading() -> None:
    body = "# T\n\nintro\n\n## BRIEF\n\nkept\n### sub\nkept too\n\n## Notes\nwarm\n"
    assert notes.compact_part(body) == "kept\n### sub\nkept too"
    assert notes.compact_part("# T\n## brief  \nx\n# Next top\ny\n") == "x"


def test_brief_heading_inside_a_fence_is_not_a_heading() -> None:
    body = "intro\n```\n## Brief\nfenced\n```\n\n## Brief\nreal\n"
    assert notes.compact_part(body) == "real"


def test_whole_body_without_a_brief_section() -> None:
    assert notes.compact_part("\n\nall of it\n\n## Other\nmore\n") == "all of it\n\n## Other\nmore"


def test_heading_rules() -> None:
    assert notes.section("    ## Brief\nindented code\n", "Brief") is None
    assert notes.section("##Brief\nno space\n", "Brief") is None
    assert notes.section("## Brief ##\nclosing hashes\n", "Brief") == "closing hashes"
    assert notes.section("##  Goal   and  status\nx\n", "Goal and status") == "x"


# -------------------------------------------------------------------------------------- vault reads


def test_read_capped_reads_at_most_cap_plus_one(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"x" * 10)
    assert access.read_capped(tmp_path, "a.md", 10) == b"x" * 10
    with pytest.raises(NoteError) as info:
        access.read_capped(tmp_path, "a.md", 9)
    assert info.value.reason == "too_large"
    assert "10 bytes" in str(info.value) and "9" in str(info.value)


def test_read_capped_refuses_a_sparse_giant_by_its_size(tmp_path: Path) -> None:
    with open(tmp_path / "huge.md", "wb") as handle:
        handle.truncate(6 * 1024**3)
    with pytest.raises(NoteError) as info:
        access.read_capped(tmp_path, "huge.md", limits.LIFECYCLE_TEXT_CAP_BYTES)
    assert info.value.reason == "too_large"


def test_read_capped_missing_link_folder_fifo(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "n.md").write_text("x")
    (tmp_path / "link.md").symlink_to(tmp_path / "real" / "n.md")
    (tmp_path / "linkdir").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "dangling.md").symlink_to(tmp_path / "nowhere")
    os.mkfifo(tmp_path / "pipe.md")
    cases = {
        "absent.md": "missing",
        "real/absent.md": "missing",
        "link.md": "link",
        "dangling.md": "link",
        "linkdir/n.md": "link",
        "real": "invalid",
        "pipe.md": "invalid",
        "real/n.md/x": "link",
    }
    for rel, reason in cases.items():
        with pytest.raises(NoteError) as info:
            access.read_capped(tmp_path, rel, 100)
        assert info.value.reason == reason, rel
    assert access.read_capped(tmp_path, "real/n.md", 100) == b"x"


def test_safe_rel() -> None:
    assert access.safe_rel("30-memory/facts/a.md") == "30-memory/facts/a.md"
    for bad in ("", "/etc/passwd", "../x", "a/../../x", "a/./b", "a//b", "a\\b", "a\x00b", "."):
        with pytest.raises(InputRejected):
            access.safe_rel(bad)


def test_list_notes_skips_hidden_and_non_markdown_and_reports_links(tmp_path: Path) -> None:
    folder = tmp_path / "20-state" / "handoffs"
    folder.mkdir(parents=True)
    (folder / "b.md").write_text("x")
    (folder / "a.md").write_text("x")
    (folder / ".a.md.0123456789ab.tmp").write_text("x")
    (folder / ".hidden.md").write_text("x")
    (folder / "notes.txt").write_text("x")
    (folder / "l.md").symlink_to(folder / "a.md")
    names = [rel for rel, _ in access.list_notes(tmp_path, "20-state/handoffs")]
    assert names == ["20-state/handoffs/a.md", "20-state/handoffs/b.md", "20-state/handoffs/l.md"]
    assert access.list_notes(tmp_path, "absent") == []


# --------------------------------------------------------------------------------- handoff selection


def files(*items: tuple[str, str | bytes]) -> list[tuple[str, bytes | NoteError]]:
    return [(f"20-state/handoffs/{name}", text.encode() if isinstance(text, str) else text) for name, text in items]


def test_selection_by_created_time() -> None:
    chosen = handoff.select(
        files(
            ("c.md", handoff_note("2025-01-01T00:00:00Z", hid="h-old")),
            ("a.md", handoff_note("2025-03-01T00:00:00Z", hid="h-new")),
            ("b.md", handoff_note("2025-02-01T00:00:00Z", hid="h-mid")),
        ),
        "demo-app",
    ).chosen
    assert chosen is not None and chosen.id == "h-new"


def test_selection_tie_broken_by_the_later_name() -> None:
    selection = handoff.select(
        files(
            ("b.md", handoff_note("2025-01-01T00:00:00Z", hid="h-b")),
            ("a.md", handoff_note("2025-01-01T00:00:00Z", hid="h-a")),
        ),
        "demo-app",
    )
    assert selection.chosen is not None and selection.chosen.id == "h-b"
    assert [h.id for h in selection.current] == ["h-a", "h-b"]


def test_selection_ignores_other_projects_statuses_and_broken_files() -> None:
    listed = files(
        ("1.md", handoff_note("2025-01-01T00:00:00Z", hid="h-ok")),
        ("2.md", handoff_note("2030-01-01T00:00:00Z", hid="h-sup", status="superseded")),
        ("3.md", handoff_note("2030-01-01T00:00:00Z", hid="h-other", project="other")),
        ("4.md", handoff_note("2030-01-01T00:00:00Z", hid="h-none").replace("## ", "#### ")),
        ("5.md", b"\xff\xfe"),
        ("6.md", "---\nid: [\n---\n"),
    )
    listed.append(("20-state/handoffs/7.md", NoteError("7.md is a symbolic link", "link")))
    selection = handoff.select(listed, "demo-app")
    assert selection.chosen is not None and selection.chosen.id == "h-ok"
    assert sorted(rel.rsplit("/", 1)[1] for rel, _ in selection.invalid) == ["4.md", "5.md", "6.md", "7.md"]


def test_handoff_compact_part_leaves_completed_work_warm() -> None:
    text = handoff_note(goal="the goal", next_actions="- one\n- two", extra_meta={"commit": "abc123"})
    item = handoff.parse_handoff(text.encode(), "20-state/handoffs/x.md")
    brief = handoff.brief_text(item)
    assert "the goal" in brief and "- one\n- two" in brief and "## Risks and decisions" in brief
    assert "## Completed work" not in brief and "warmonlymarker" not in brief
    assert brief.endswith(handoff.COMPLETED_ELSEWHERE.format(id="x"))  # it says where, by the command that shows it
    assert "created 2025-01-02T03:04:05Z" in brief and "commit abc123" in brief


def test_a_handoff_with_only_one_brief_section_is_valid_for_loading() -> None:
    text = "---\nid: h\ntype: handoff\nstatus: current\nproject: p\ndevice: d\ncreated: 2025-01-01T00:00:00Z\n---\n"
    item = handoff.parse_handoff((text + "## Next actions\n- go\n").encode(), "x.md")
    assert handoff.brief_text(item).endswith("## Next actions\n- go")
    with pytest.raises(NoteError):
        handoff.parse_handoff((text + "## Completed work\n- done\n").encode(), "x.md")


def test_a_newer_handoff_over_the_lifecycle_cap_is_chosen_then_left_out(tmp_path: Path) -> None:
    """Never an older plan in its place: a huge newest handoff is selected by its head, then rejected."""
    from briefkit import DEFAULT_HANDOFF, HANDOFF_DIR, handoff_note, make_vault

    from continuity import limits
    from continuity.brief import sources

    root = make_vault(tmp_path / "vault")
    huge = root / HANDOFF_DIR / "20990101T000000Z-dev-a-huge.md"
    text = handoff_note("2099-01-01T00:00:00Z", hid="h-huge")
    with open(huge, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.truncate(limits.LIFECYCLE_TEXT_CAP_BYTES + 4096)  # the rest reads as NUL bytes
    views, _notices = sources.validate(sources.gather(root, "demo-app", "dev-a", "SessionStart"))
    [view] = [v for v in views if v.name == "handoff"]
    assert view.path == f"{HANDOFF_DIR}/{huge.name}" and view.reason == "too_large" and not view.included
    assert view.sha256 is None and view.size == limits.LIFECYCLE_TEXT_CAP_BYTES + 4096
    assert DEFAULT_HANDOFF.rsplit("/", 1)[1] not in (view.notice or "")


plain_line = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="#`~\r\n\x85\u2028\u2029"), max_size=40
)


@given(st.text(max_size=400))
def test_compact_part_never_raises_and_never_invents_text(body: str) -> None:
    part = notes.compact_part(body)
    assert len(part) <= len(body)
    assert all(line in body for line in part.split("\n"))


@given(st.lists(plain_line, max_size=6), st.lists(plain_line, max_size=6), st.lists(plain_line, max_size=6))
def test_compact_part_is_exactly_the_brief_section(before: list[str], inside: list[str], after: list[str]) -> None:
    body = "\n".join([*before, "## brief", *inside, "## Next", *after])
    assert notes.compact_part(body) == "\n".join(inside).strip("\n")


@given(st.binary(max_size=400))
def test_the_handoff_parser_accepts_only_whole_handoffs(data: bytes) -> None:
    from continuity.memory import handoff

    for prefix in (b"", b"---\nid: h\ntype: handoff\nstatus: current\nproject: p\ndevice: d\n"):
        try:
            parsed = handoff.parse_handoff(prefix + data, "20-state/handoffs/h.md")
        except NoteError:
            continue
        assert parsed.note.meta["type"] == "handoff" and parsed.created.tzinfo is not None


@given(
    st.lists(
        st.tuples(st.integers(0, 50), st.sampled_from(["current", "superseded"]), st.sampled_from(["p", "q"])),
        max_size=8,
    )
)
def test_selection_picks_the_newest_valid_current_handoff_of_the_project(specs: list[tuple[int, str, str]]) -> None:
    from continuity.memory import handoff

    files: list[tuple[str, bytes | NoteError]] = []
    for index, (day, status, project) in enumerate(specs):
        text = (
            f"---\nid: h{index}\ntype: handoff\nstatus: {status}\nproject: {project}\ndevice: d\n"
            f'created: "2026-01-{1 + day % 28:02d}T00:00:{day % 60:02d}Z"\n---\n## Next actions\n- go\n'
        )
        files.append((f"20-state/handoffs/{index:02d}.md", text.encode()))
    chosen = handoff.select(files, "p").chosen
    wanted = [
        (1 + day % 28, day % 60, f"20-state/handoffs/{i:02d}.md")
        for i, (day, status, project) in enumerate(specs)
        if status == "current" and project == "p"
    ]
    if not wanted:
        assert chosen is None
    else:
        assert chosen is not None and chosen.rel == max(wanted)[2]
