"""Handoffs: strict creation, unique names, the supersede chain, selection agreement, and the CLI."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from briefkit import ROOT
from conftest import git
from writer_support import (
    FAKE_SECRET,
    HANDOFF_BODY,
    NOW,
    all_files,
    cli,
    connect,
    context,
    journal_lines,
    make_vault,
    write_lease,
)

from continuity import errors, ids, limits
from continuity.errors import InputRejected, LeaseHeld, UsageError
from continuity.memory import handoff, handoff_write
from continuity.vault import layout, notes

NAME = re.compile(r"^20-state/handoffs/\d{8}T\d{6}Z-laptop-[a-z0-9-]+\.md$")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault")


def meta_of(root: Path, rel: str) -> dict[str, object]:
    return notes.parse_note((root / rel).read_bytes(), rel).meta


def test_new_handoff_frontmatter_and_name(root: Path) -> None:
    ctx = context(root, now=NOW, session="sess-1")
    result = handoff_write.new_handoff(ctx, "Resume the parser", HANDOFF_BODY, commit="a" * 40)
    assert result.rel == "20-state/handoffs/20261130T035700Z-laptop-resume-the-parser.md"
    assert NAME.match(result.rel)
    meta = meta_of(root, result.rel)
    assert meta == {
        "id": "20261130t035700z-laptop-resume-the-parser",
        "type": "handoff",
        "status": "current",
        "title": "Resume the parser",
        "project": "demo",
        "device": "laptop",
        "session": "sess-1",
        "created": "2026-11-30T03:57:00Z",
        "commit": "a" * 40,
    }
    assert result.to_json() == {
        "version": 1,
        "id": result.id,
        "path": result.rel,
        "status": "current",
        "supersedes": None,
    }
    # The loader accepts what the writer wrote, and the body is kept as given.
    parsed = handoff.parse_handoff((root / result.rel).read_bytes(), result.rel)
    assert parsed.note.body == HANDOFF_BODY
    assert [line["op"] for line in journal_lines(root)] == ["handoff.new"]


def test_session_and_commit_are_omitted_when_unknown(root: Path) -> None:
    result = handoff_write.new_handoff(context(root, now=NOW), "No extras", HANDOFF_BODY)
    meta = meta_of(root, result.rel)
    assert "session" not in meta and "commit" not in meta


def test_same_second_handoffs_get_unique_names_and_chain(root: Path) -> None:
    ctx = context(root, now=NOW)
    first = handoff_write.new_handoff(ctx, "Same title", HANDOFF_BODY)
    second = handoff_write.new_handoff(ctx, "Same title", HANDOFF_BODY)
    third = handoff_write.new_handoff(ctx, "Same title", HANDOFF_BODY)
    assert len({first.rel, second.rel, third.rel}) == 3
    assert second.rel.endswith("-same-title-2.md") and third.rel.endswith("-same-title-3.md")
    assert second.supersedes == first.id and third.supersedes == second.id
    assert meta_of(root, first.rel)["status"] == "superseded"
    assert meta_of(root, first.rel)["superseded_by"] == second.id
    assert meta_of(root, second.rel)["superseded_by"] == third.id
    chosen = handoff.current(root, "demo").chosen
    assert chosen is not None and chosen.id == third.id
    assert [h.id for h in handoff.current(root, "demo").current] == [third.id]


def test_predecessor_is_per_project(root: Path) -> None:
    other = handoff_write.new_handoff(context(root, project="other", now=NOW), "Other project", HANDOFF_BODY)
    mine = handoff_write.new_handoff(context(root, now=NOW + dt.timedelta(seconds=1)), "Mine", HANDOFF_BODY)
    assert mine.supersedes is None
    assert meta_of(root, other.rel)["status"] == "current"


def test_the_template_alone_is_refused(root: Path) -> None:
    """Without --from the body would be the template's placeholders: refused, nothing written."""
    with pytest.raises(InputRejected) as caught:
        handoff_write.new_handoff(context(root, now=NOW), "From the template")
    assert caught.value.field == "body" and "pass --from FILE" in errors.message(caught.value, errors.COMMAND_LINE)
    assert not list((root / layout.HANDOFFS).glob("*.md"))


def test_a_body_that_is_still_the_template_is_refused(root: Path) -> None:
    template = (ROOT / "templates" / "handoff.md").read_text(encoding="utf-8")
    body = template.split("---\n", 2)[2]
    with pytest.raises(InputRejected, match="placeholder text") as caught:
        handoff_write.new_handoff(context(root, now=NOW), "Copied", body)
    assert all(f"## {title}" in str(caught.value) for title in handoff.SECTIONS)
    # One section still the template is refused too, naming that section only.
    done = "- src/lexer.py rewritten; `pytest tests/test_lexer.py` passes."
    partial = HANDOFF_BODY.replace(
        done, "What was done, with evidence a later task can check: files, commits, test runs."
    )
    assert partial != HANDOFF_BODY
    with pytest.raises(InputRejected, match="## Completed work still") as caught:
        handoff_write.new_handoff(context(root, now=NOW), "Half", partial)
    assert "## Goal and status" not in str(caught.value)
    assert not list((root / layout.HANDOFFS).glob("*.md"))


def test_input_frontmatter_is_replaced(root: Path) -> None:
    body = "---\nid: evil\nstatus: superseded\nproject: elsewhere\n---\n" + HANDOFF_BODY
    result = handoff_write.new_handoff(context(root, now=NOW), "Mine", body)
    meta = meta_of(root, result.rel)
    assert meta["status"] == "current" and meta["project"] == "demo" and meta["id"] != "evil"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (HANDOFF_BODY.replace("## Completed work", "## Done"), "Completed work"),
        (HANDOFF_BODY.replace("## Risks and decisions", "### Risks and decisions"), "Risks and decisions"),
        (HANDOFF_BODY.replace("1. Port the printer.\n2. Run the full suite.\n", "Nothing yet.\n"), "0 list items"),
        (HANDOFF_BODY.replace("2. Run the full suite.", "2. a\n3. b\n- c"), "4 list items"),
        ("just text\n", "missing the section"),
    ],
)
def test_strict_shape_is_required(root: Path, body: str, message: str) -> None:
    with pytest.raises(InputRejected, match=message) as caught:
        handoff_write.new_handoff(context(root, now=NOW), "Bad", body)
    assert caught.value.exit_code == 5
    assert list((root / layout.HANDOFFS).iterdir()) == []


def test_next_action_counting() -> None:
    text = "1. a\n   - nested\n2) b\n* c\n```\n- not an item\n```\n-not an item\n10. d\n"
    assert handoff_write.count_items(text) == 4


def test_secret_is_refused_with_input_line(root: Path) -> None:
    body = HANDOFF_BODY.replace("Port the printer.", f"Port the printer with {FAKE_SECRET}.")
    with pytest.raises(InputRejected) as caught:
        handoff_write.new_handoff(context(root, now=NOW), "Leaky", body)
    message = str(caught.value)
    assert FAKE_SECRET not in message
    line = body.splitlines().index(next(x for x in body.splitlines() if "Port the printer" in x)) + 1
    assert f"(line {line} of the input)" in message
    assert list((root / layout.HANDOFFS).iterdir()) == []


def test_cap_is_enforced(root: Path) -> None:
    body = HANDOFF_BODY + "\n" + "x" * limits.HANDOFF_CAP_BYTES
    with pytest.raises(InputRejected, match="cap"):
        handoff_write.new_handoff(context(root, now=NOW), "Huge", body)
    assert list((root / layout.HANDOFFS).iterdir()) == []


def test_foreign_lease_refuses(root: Path) -> None:
    write_lease(root, "desktop", NOW + dt.timedelta(hours=1))
    with pytest.raises(LeaseHeld):
        handoff_write.new_handoff(context(root, now=NOW), "Blocked", HANDOFF_BODY)
    assert list((root / layout.HANDOFFS).iterdir()) == []


def test_bad_title_and_session(root: Path) -> None:
    with pytest.raises(UsageError):
        handoff_write.new_handoff(context(root, now=NOW), "   ", HANDOFF_BODY)
    with pytest.raises(UsageError):
        handoff_write.new_handoff(context(root, now=NOW, session="x" * 500), "t", HANDOFF_BODY)
    with pytest.raises(InputRejected):
        handoff_write.new_handoff(context(root, project="", now=NOW), "t", HANDOFF_BODY)


def test_long_device_and_title_still_make_a_valid_id(root: Path) -> None:
    device = "d" * limits.ID_MAX_CHARS
    result = handoff_write.new_handoff(context(root, device=device, now=NOW), "word " * 39, HANDOFF_BODY)
    assert ids.is_note_id(result.id)


def test_current_agrees_with_the_brief_selection(root: Path) -> None:
    old = handoff_write.new_handoff(context(root, now=NOW), "Old", HANDOFF_BODY)
    # A newer current handoff that is broken, and one from another project: neither is chosen.
    broken = root / layout.HANDOFFS / "20991231T000000Z-laptop-broken.md"
    broken.write_text("---\nid: broken\ntype: handoff\nstatus: current\n---\n## Next actions\n- x\n")
    later = context(root, project="other", now=NOW + dt.timedelta(hours=1))
    foreign = handoff_write.new_handoff(later, "Other", HANDOFF_BODY)
    selection = handoff.select(handoff.read_all(root), "demo")
    assert handoff.current(root, "demo").chosen == selection.chosen
    assert selection.chosen is not None and selection.chosen.id == old.id
    assert foreign.id not in [h.id for h in selection.current]


def test_list_and_find(root: Path) -> None:
    first = handoff_write.new_handoff(context(root, now=NOW), "First", HANDOFF_BODY)
    second = handoff_write.new_handoff(context(root, now=NOW + dt.timedelta(minutes=1)), "Second", HANDOFF_BODY)
    assert [h.id for h in handoff.list_handoffs(root, "demo").handoffs] == [second.id, first.id]
    assert [h.id for h in handoff.list_handoffs(root, "demo", statuses=("current",)).handoffs] == [second.id]
    assert handoff.find(root, first.id).rel == first.rel
    summary = handoff.summary(handoff.find(root, second.id))
    assert summary["supersedes"] == first.id and summary["status"] == "current"
    for bad in ("../x", "X", "", "a/b"):
        with pytest.raises(InputRejected, match="not a valid id"):
            handoff.find(root, bad)
    with pytest.raises(InputRejected, match="no handoff"):
        handoff.find(root, "nothing-here")


def test_head_commit(repo: Path, tmp_path: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    assert handoff_write.head_commit(repo) == head
    assert handoff_write.head_commit(None) is None
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    assert handoff_write.head_commit(empty) is None


# ---------------------------------------------------------------------------------------- CLI


@pytest.fixture
def connected(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    connect(monkeypatch, tmp_path, root)
    return root


def test_cli_new_json_and_current(connected: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert json.loads(cli(["handoff", "current", "--json"]).stdout) == {"version": 1, "current": None}
    body = tmp_path / "body.md"
    body.write_text(HANDOFF_BODY)
    monkeypatch.setenv("CODEX_SESSION_ID", "codex-123")
    result = cli(["handoff", "new", "--title", "Parser", "--from", str(body), "--json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc) == {"version", "id", "path", "status", "supersedes"}
    assert doc["status"] == "current" and doc["supersedes"] is None
    assert meta_of(connected, doc["path"])["session"] == "codex-123"

    second = json.loads(cli(["handoff", "new", "--title", "Next", "--from", "-", "--json"], HANDOFF_BODY).stdout)
    assert second["supersedes"] == doc["id"]

    current = json.loads(cli(["handoff", "current", "--json"]).stdout)
    assert set(current) == {"version", "current"}
    assert set(current["current"]) == {
        "id",
        "path",
        "status",
        "project",
        "device",
        "created",
        "title",
        "session",
        "commit",
        "supersedes",
        "superseded_by",
        "reason",
    }
    assert current["current"]["id"] == second["id"] and current["current"]["reason"] is None

    text = cli(["handoff", "current"]).stdout
    assert second["id"] in text and "## Next actions" in text and "## Completed work" not in text


def test_cli_records_commit_of_the_checkout(
    connected: Path, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    doc = json.loads(cli(["handoff", "new", "--title", "With commit", "--from", "-", "--json"], HANDOFF_BODY).stdout)
    assert meta_of(connected, doc["path"])["commit"] == git(repo, "rev-parse", "HEAD").strip()


def test_cli_list_show(connected: Path) -> None:
    first = json.loads(cli(["handoff", "new", "--title", "One", "--from", "-", "--json"], HANDOFF_BODY).stdout)
    second = json.loads(cli(["handoff", "new", "--title", "Two", "--from", "-", "--json"], HANDOFF_BODY).stdout)
    listed = cli(["handoff", "list"]).stdout.splitlines()
    assert len(listed) == 1 and second["id"] in listed[0]
    assert len(cli(["handoff", "list", "--all"]).stdout.splitlines()) == 2
    doc = json.loads(cli(["handoff", "list", "--all", "--json"]).stdout)
    assert set(doc) == {"version", "handoffs", "invalid"}
    assert [h["id"] for h in doc["handoffs"]] == [second["id"], first["id"]]

    shown = cli(["handoff", "show", first["id"]])
    assert shown.exit_code == 0 and "status: superseded" in shown.stdout
    shown = json.loads(cli(["handoff", "show", first["id"], "--json"]).stdout)
    assert set(shown) == {"version", "handoff", "text"}


@pytest.mark.parametrize("bad", ["../x", "nothing-here", "UPPER"])
def test_cli_show_bad_ids_exit_5(connected: Path, bad: str) -> None:
    result = cli(["handoff", "show", bad])
    assert result.exit_code == 5
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("lifecycle: error:")


def test_cli_secret_never_printed(connected: Path) -> None:
    leaky = HANDOFF_BODY.replace("Port the printer.", f"Use {FAKE_SECRET}.")
    result = cli(["handoff", "new", "--title", "Leaky", "--from", "-"], leaky)
    assert result.exit_code == 5 and FAKE_SECRET not in result.output
    # A hand-written handoff with a secret: `show` refuses, `current` shows metadata only.
    rel = f"{layout.HANDOFFS}/20261130T000000Z-laptop-hand.md"
    meta = {"id": "hand", "type": "handoff", "status": "current", "project": "demo", "device": "laptop"}
    (connected / rel).write_text(notes.compose({**meta, "created": NOW}, leaky))
    result = cli(["handoff", "show", "hand"])
    assert result.exit_code == 5 and FAKE_SECRET not in result.output and "aws-access-key-id" in result.stderr
    result = cli(["handoff", "current"])
    assert result.exit_code == 0 and FAKE_SECRET not in result.output and "not shown: secret" in result.stdout
    assert json.loads(cli(["handoff", "current", "--json"]).stdout)["current"]["reason"] == "secret"


def test_cli_refusals(connected: Path) -> None:
    result = cli(["handoff", "new", "--title", "Bad", "--from", "-"], "no sections\n")
    assert result.exit_code == 5 and "nothing was written" in result.stderr
    result = cli(["handoff", "new", "--title", "Bad", "--from", "-"], "---\nid: [\n---\n" + HANDOFF_BODY)
    assert result.exit_code == 5 and result.stderr.count("\n") == 1 and "invalid frontmatter" in result.stderr
    assert cli(["handoff", "new", "--title", "Bad", "--from", "/nonexistent/x.md"]).exit_code == 2
    write_lease(connected, "desktop", dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1))
    result = cli(["handoff", "new", "--title", "Blocked", "--from", "-"], HANDOFF_BODY)
    assert result.exit_code == 4
    assert all_files(connected / layout.HANDOFFS) == set()
