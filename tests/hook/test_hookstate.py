"""Hook state, compaction recovery, the Stop nudge, tool classification and delivery receipts.

These call `continuity.hook.hookstate` in process with the payloads the harnesses send; the state folder is
the per-test XDG_STATE_HOME set up by conftest. End-to-end runs through a shell are in test_hook_e2e.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import unicodedata
from pathlib import Path

import pytest
from conftest import use_connection, write_connection
from typer.testing import CliRunner

from continuity import limits, names
from continuity.brief import build, render
from continuity.brief.render import SourceView
from continuity.cli import app
from continuity.hook import hookstate, nudge, receipts, tool_events
from continuity.local import connection

SESSION = "codex-session-7f3a"


@pytest.fixture
def connected(tmp_path: Path) -> Path:
    """Make the connection override (set by conftest) a valid connection; return the session's cwd."""
    vault = tmp_path / "vault"
    vault.mkdir()
    target = Path(os.environ[connection.ENV_CONNECTION])
    write_connection(target, connection.render_connection(vault, "dev-a", "demo", None))
    return tmp_path


def event(name: str, cwd: Path, session: str = SESSION, **extra: object) -> dict[str, object]:
    return {"session_id": session, "transcript_path": None, "cwd": str(cwd), "hook_event_name": name,
            "model": "m", **extra}  # fmt: skip


def tool(cwd: Path, name: str = "apply_patch", turn: str | None = "t1", **tool_input: object) -> str:
    extra: dict[str, object] = {"tool_name": name, "tool_input": tool_input or {"command": "*** Begin Patch"}}
    if turn is not None:
        extra["turn_id"] = turn
    return nudge.handle(event("PostToolUse", cwd, **extra), "codex")


def stop(cwd: Path, turn: str | None = "t1", active: bool = False) -> str:
    extra: dict[str, object] = {"stop_hook_active": active, "last_assistant_message": "done"}
    if turn is not None:
        extra["turn_id"] = turn
    return nudge.handle(event("Stop", cwd, **extra), "codex")


def brief(event_name: str = names.SESSION_START, body: str = "remember this", harness: str = "codex") -> render.Brief:
    view = SourceView("project", "10-project/demo/PROJECT.md", len(body), "0" * 64, True, None, body)
    return render.render(event_name, harness, [view])


def state_file() -> Path:
    return Path(hookstate.state_path(SESSION))


# --- compaction ------------------------------------------------------------------------------------


def test_pre_compact_prints_nothing_and_the_note_appears_once(tmp_path: Path) -> None:
    assert nudge.handle(event("PreCompact", tmp_path, turn_id="t1", trigger="auto"), "codex") == ""
    assert hookstate.load(str(state_file())).compact_pending

    plain = brief()
    noted = hookstate.after_start(event("SessionStart", tmp_path, source="compact"), plain, "codex")
    assert hookstate.RECOVERY_NOTE in noted.text and noted.text.endswith("\n</private-memory>")
    assert noted.sha256 != plain.sha256 and noted.status == plain.status
    folded = unicodedata.normalize("NFKC", noted.text)
    assert folded.count("<private-memory") == 1 and folded.count("</private-memory") == 1
    assert folded.count("<source") == folded.count("</source") == 1
    assert not hookstate.load(str(state_file())).compact_pending

    again = hookstate.after_start(event("SessionStart", tmp_path, source="compact"), plain, "codex")
    assert again.text == plain.text


def test_the_note_needs_the_flag_and_a_compact_start(tmp_path: Path) -> None:
    plain = brief()
    assert hookstate.after_start(event("SessionStart", tmp_path, source="compact"), plain, "codex") == plain
    nudge.handle(event("PreCompact", tmp_path, trigger="manual"), "codex")
    for source in ("startup", "resume", "clear"):
        assert hookstate.after_start(event("SessionStart", tmp_path, source=source), plain, "codex") == plain
    sub = brief(names.SUBAGENT_START)
    assert hookstate.after_start(event("SubagentStart", tmp_path, agent_type="w"), sub, "codex") == sub
    assert hookstate.load(str(state_file())).compact_pending  # still waiting for the compact start


def test_the_note_never_pushes_a_brief_past_its_ceiling(tmp_path: Path) -> None:
    room = limits.SESSION_START_CEILING_BYTES - brief(body="").bytes
    full = brief(body="x" * (room - 20))
    assert full.status == "restored" and render.fits(full.text, full.event, "codex")
    nudge.handle(event("PreCompact", tmp_path), "codex")
    assert hookstate.after_start(event("SessionStart", tmp_path, source="compact"), full, "codex") == full
    unavailable = render.unavailable(names.SESSION_START, "codex", "test")
    nudge.handle(event("PreCompact", tmp_path), "codex")
    assert hookstate.after_start(event("SessionStart", tmp_path, source="compact"), unavailable, "codex") == unavailable


# --- the Stop nudge --------------------------------------------------------------------------------


def test_stop_waits_for_four_mutations(connected: Path) -> None:
    for _ in range(limits.STOP_NUDGE_MUTATIONS - 1):
        assert tool(connected) == ""
    assert stop(connected) == ""
    for _ in range(limits.STOP_NUDGE_MUTATIONS):
        tool(connected, turn="t2")
    answer = json.loads(stop(connected, turn="t2"))
    assert answer == {"decision": "block", "reason": nudge.STOP_REASON}
    assert "lifecycle note new" in answer["reason"] and "Writing nothing is a valid answer" in answer["reason"]


def test_stop_after_ten_tool_events_and_only_once_per_turn(connected: Path) -> None:
    for _ in range(limits.STOP_NUDGE_TOOL_EVENTS - 1):
        tool(connected, name="Read", file_path="x")
    assert stop(connected) == ""
    for _ in range(limits.STOP_NUDGE_TOOL_EVENTS):
        tool(connected, name="Bash", turn="t2", command="ls -la")
    assert json.loads(stop(connected, turn="t2"))["decision"] == "block"
    assert stop(connected, turn="t2", active=True) == ""
    for _ in range(limits.STOP_NUDGE_TOOL_EVENTS):
        tool(connected, name="Bash", turn="t2", command="ls")
    assert stop(connected, turn="t2") == ""  # the same turn is never asked twice


def test_stop_never_blocks_while_stop_hook_active(connected: Path) -> None:
    for _ in range(20):
        tool(connected)
    assert stop(connected, active=True) == ""


def test_a_turn_that_wrote_a_handoff_or_candidate_is_not_asked(connected: Path) -> None:
    for command in ("lifecycle handoff new --title 'x' --from -", ".venv/bin/lifecycle note new --type fact"):
        for _ in range(6):
            tool(connected, turn=command)
        tool(connected, name="Bash", turn=command, command=command)
        assert stop(connected, turn=command) == ""
    stored = state_file().read_text()
    assert "lifecycle" not in stored and "handoff" not in stored


def test_claude_turns_end_at_stop_and_at_a_new_prompt(connected: Path) -> None:
    for _ in range(3):
        tool(connected, name="Edit", turn=None, file_path="a.py")
    assert stop(connected, turn=None) == ""  # the turn ended below the threshold
    tool(connected, name="Write", turn=None, file_path="b.py")
    assert stop(connected, turn=None) == ""
    for _ in range(3):
        tool(connected, name="MultiEdit", turn=None)
    nudge.handle(event("UserPromptSubmit", connected, prompt="next"), "claude")
    tool(connected, name="NotebookEdit", turn=None)
    assert stop(connected, turn=None) == ""
    for _ in range(4):
        tool(connected, name="Edit", turn=None)
    assert json.loads(stop(connected, turn=None))["decision"] == "block"


def test_no_nudge_in_an_unconnected_checkout(tmp_path: Path) -> None:
    for _ in range(12):
        tool(tmp_path)
    assert stop(tmp_path) == ""


# --- state privacy and failing open ----------------------------------------------------------------


def test_state_file_is_named_by_a_hash_and_holds_counts_only(connected: Path) -> None:
    tool(connected, name="Bash", command="echo secret-prompt-words > notes.txt")
    nudge.handle(event("PreCompact", connected), "codex")
    path = state_file()
    assert path.name == hashlib.sha256(SESSION.encode()).hexdigest() + ".json"
    assert path.parent == Path(os.environ["XDG_STATE_HOME"]) / "continuity" / "hooks"
    text = path.read_text()
    assert SESSION not in text and "secret-prompt-words" not in text and str(connected) not in text
    doc = json.loads(text)
    assert set(doc) == {"version", "turn", "tool_events", "mutations", "wrote_memory", "nudged", "compact_pending"}
    assert all(isinstance(v, (int, bool)) for v in doc.values())
    assert doc["mutations"] == 1 and doc["compact_pending"] is True
    assert os.stat(path).st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[]", b'{"version": 1, "mutations": "4"}', b'{"version": 99}', b"\xff\xfe", b"{" * 5000],
)
def test_corrupt_state_fails_open(connected: Path, content: bytes) -> None:
    path = state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    plain = brief()
    assert hookstate.after_start(event("SessionStart", connected, source="compact"), plain, "codex") == plain
    assert tool(connected) == ""
    assert stop(connected) == ""
    assert json.loads(path.read_text())["version"] == hookstate.STATE_VERSION


def test_a_state_path_that_is_a_link_or_folder_fails_open(connected: Path, tmp_path: Path) -> None:
    path = state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    decoy = tmp_path / "decoy.json"
    decoy.write_text(json.dumps({"version": 1, "turn": 0, "tool_events": 99, "mutations": 99, "wrote_memory": False,
                                 "nudged": False, "compact_pending": True}))  # fmt: skip
    path.symlink_to(decoy)
    assert hookstate.load(str(path)) == hookstate.HookState()
    path.unlink()
    path.mkdir()
    assert tool(connected) == "" and stop(connected) == ""
    plain = brief()
    assert hookstate.after_start(event("SessionStart", connected, source="compact"), plain, "codex") == plain


def test_old_state_files_are_pruned(tmp_path: Path) -> None:
    tool(tmp_path, turn="t")
    old, fresh = Path(hookstate.state_path("old-session")), state_file()
    hookstate.save(str(old), hookstate.HookState(mutations=1))
    stale = time.time() - limits.HOOK_STATE_MAX_AGE_SECONDS - 60
    os.utime(old, (stale, stale))
    keep = old.parent / "unrelated.txt"
    keep.write_text("not ours")
    os.utime(keep, (stale, stale))
    hookstate.after_start(event("SessionStart", tmp_path, source="startup"), brief(), "codex")
    assert not old.exists() and fresh.exists() and keep.exists()


def test_events_without_a_session_or_of_other_kinds_print_nothing(tmp_path: Path) -> None:
    assert nudge.handle({"hook_event_name": "Stop", "cwd": str(tmp_path)}, "codex") == ""
    assert nudge.handle(event("Notification", tmp_path), "claude") == ""
    assert not Path(hookstate.state_dir()).exists()


# --- receipts --------------------------------------------------------------------------------------


def test_receipts_record_the_last_delivery_per_harness_and_event(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    first, second = brief(body="one"), brief(body="two")
    receipts.record(first, "startup", repo, False, now=1_000)
    receipts.record(second, "compact", repo, True, now=2_000)
    receipts.record(brief(names.SUBAGENT_START, harness="claude"), None, repo, False, now=3_000)
    receipts.record(brief(body="elsewhere"), "startup", tmp_path / "other", False, now=4_000)
    mine = receipts.last_deliveries(repo)
    assert [(d["harness"], d["event"]) for d in mine] == [("claude", "SubagentStart"), ("codex", "SessionStart")]
    codex = mine[1]
    assert set(codex) == set(receipts.FIELDS)
    assert codex["sha256"] == second.sha256 and codex["bytes"] == second.bytes and codex["recovery_note"] is True
    assert codex["time"] == "1970-01-01T00:33:20Z" and codex["source"] == "compact"
    assert codex["tokens_estimate"] == second.tokens_estimate
    assert receipts.last_deliveries()[1]["sha256"] == brief(body="elsewhere").sha256
    stored = receipts.stored_text()
    assert "remember" not in stored and "two" not in stored and str(repo) not in stored


def test_after_start_records_a_receipt_from_the_payload(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    delivered = hookstate.after_start(event("SessionStart", repo / "sub", source="resume"), brief(), "codex")
    [receipt] = receipts.last_deliveries(repo)
    assert receipt["sha256"] == delivered.sha256 and receipt["source"] == "resume"


def test_a_corrupt_receipt_file_is_ignored_and_replaced(tmp_path: Path) -> None:
    receipts.record(brief(), "startup", None, False)
    [path] = receipts.receipts_dir().iterdir()
    path.write_text("{oops")
    assert receipts.last_deliveries() == []
    receipts.record(brief(), "startup", None, False)
    assert len(receipts.last_deliveries()) == 1


# --- tool classification ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "mutation", "memory"),
    [
        ("ls -la && git status", False, False),
        ("grep -rn x src > /dev/null 2>&1", False, False),
        ('echo "a > b" | wc -l', False, False),
        ("sed -n 1,20p file.py", False, False),
        ("echo hi > out.txt", True, False),
        ("cat <<EOF >> notes.md\nline\nEOF", True, False),
        ("rm -rf build", True, False),
        ("sed -i 's/a/b/' f.py", True, False),
        ("git -C repo commit -m 'x'", True, False),
        ("pip install requests", True, False),
        ("bash -lc 'mkdir -p out'", True, False),
        ("FOO=1 .venv/bin/lifecycle handoff new --title t --from -", False, True),
        ("python -m continuity note new --type lesson --title t", False, True),
        ("lifecycle handoff list", False, False),
        ("echo 'unbalanced", False, False),
    ],
)
def test_shell_classification(command: str, mutation: bool, memory: bool) -> None:
    assert tool_events.classify("Bash", {"command": command}) == (mutation, memory)


def test_edit_tools_are_mutations_and_others_are_not() -> None:
    for name in ("apply_patch", "Edit", "Write", "MultiEdit", "NotebookEdit"):
        assert tool_events.classify(name, {}) == (True, False)
    assert tool_events.classify("Read", {"file_path": "x"}) == (False, False)
    assert tool_events.classify("mcp__memory__create", {"command": "rm -rf /"}) == (False, False)
    assert tool_events.classify("Bash", {"command": ["bash", "-lc", "touch x"]}) == (True, False)
    assert tool_events.classify("Bash", {"command": ["echo", ">", "f"]}) == (False, False)  # a word, not a redirection
    assert tool_events.classify(None, None) == (False, False)


def test_render_explain_lists_sources_and_compares_with_the_last_delivery(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_connection(monkeypatch, repo)
    assert CliRunner().invoke(app, ["init", "--vault", str(tmp_path / "vault"), "--new"]).exit_code == 0
    before = CliRunner().invoke(app, ["render", "--explain"])
    assert before.exit_code == 0, before.output
    assert "no delivery of this event is recorded" in before.output
    lines = before.output.splitlines()
    assert lines[0] == "event SessionStart, harness codex: status restored"
    assert any(line.split()[:2] == ["soul", "included"] and "sha256" in line for line in lines)
    assert any(line.split()[:4] == ["handoff", "left", "out", "(missing)"] for line in lines)
    built = build.build(repo, names.SESSION_START, "codex")
    assert built is not None
    now = hookstate.after_start(event("SessionStart", repo, source="startup"), built, "codex")
    after = CliRunner().invoke(app, ["render", "--explain"]).output
    assert f"sha256 {now.sha256} (same as now)" in after
    assert f"brief: {now.bytes} bytes of {limits.SESSION_START_CEILING_BYTES}" in after
    assert after.rstrip("\n").endswith("</private-memory>")
