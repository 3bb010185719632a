"""The checked-in `.codex/hooks.json` commands, run through a real shell in a copy of the checkout.

Each command runs as Codex runs it: `bash -c "<command>"` in the session's directory (a subfolder of
the repository), one JSON object on stdin. The copy is a real git repository connected to a real
vault by `lifecycle init`, so these tests cover the pin check inside the command, the script's own
module check, the brief, compaction recovery and the Stop nudge end to end.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from pathlib import Path

import pytest
from hookkit import command, connect, context_of, hooks_doc, lifecycle, make_checkout, payload, run_shell

from continuity.hook import hookstate, receipts
from continuity.trust import hookcommand


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    repo = make_checkout(tmp_path / "work" / "demo")
    connect(repo, tmp_path / "vault")
    return repo


@pytest.fixture
def session_dir(checkout: Path) -> Path:
    sub = checkout / "src" / "continuity"  # Codex runs hooks in the session's cwd, maybe a subfolder
    assert sub.is_dir()
    return sub


def start(checkout: Path, cwd: Path, source: str = "startup", session: str = "session-1") -> str:
    cmd = command(hooks_doc(checkout), "SessionStart")
    done = run_shell(cmd, payload("SessionStart", cwd, session, source=source, permission_mode="default"), cwd)
    assert done.returncode == 0, done.stderr
    return context_of(done.stdout, "SessionStart")


def test_the_checked_in_command_delivers_the_brief_from_a_subfolder(checkout: Path, session_dir: Path) -> None:
    text = start(checkout, session_dir)
    assert text.startswith('<private-memory event="SessionStart" status="restored">')
    assert text.endswith("</private-memory>")
    assert '<source name="soul"' in text and '<source name="project"' in text
    [receipt] = receipts.last_deliveries(checkout)
    assert receipt["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert receipt["harness"] == "codex" and receipt["source"] == "startup" and receipt["status"] == "restored"
    assert "private-memory" not in receipts.stored_text()


def test_subagent_start_gets_the_subagent_brief(checkout: Path, session_dir: Path) -> None:
    cmd = command(hooks_doc(checkout), "SubagentStart")
    data = payload("SubagentStart", session_dir, turn_id="t1", agent_id="a1", agent_type="worker")
    done = run_shell(cmd, data, session_dir)
    text = context_of(done.stdout, "SubagentStart")
    assert 'event="SubagentStart"' in text and '<source name="soul"' not in text


def test_a_one_byte_change_to_the_script_stops_the_brief_until_it_is_pinned(checkout: Path, session_dir: Path) -> None:
    old_cmd = command(hooks_doc(checkout), "SessionStart")
    script = checkout / "scripts" / "agent-startup-context.py"
    script.write_bytes(script.read_bytes() + b"\n")
    data = payload("SessionStart", session_dir, source="startup")

    done = run_shell(old_cmd, data, session_dir)
    assert done.returncode == 0
    assert done.stdout == hookcommand.CHANGED_NOTICE + "\n"  # plain text: both harnesses inject it
    assert "changed since this hook was reviewed" in done.stdout and "not restored" in done.stdout

    assert lifecycle(session_dir, "hook", "pin", "--check").returncode == 1
    pinned = lifecycle(session_dir, "hook", "pin")
    assert pinned.returncode == 0 and "/hooks" in pinned.stdout
    assert lifecycle(session_dir, "hook", "pin", "--check").returncode == 0

    # The previously trusted command still refuses; the re-pinned one (trusted again) delivers.
    assert run_shell(old_cmd, data, session_dir).stdout == hookcommand.CHANGED_NOTICE + "\n"
    assert 'status="restored"' in start(checkout, session_dir)


def test_a_changed_module_is_refused_by_the_script_itself(checkout: Path, session_dir: Path) -> None:
    module = checkout / "src" / "continuity" / "brief" / "render.py"
    module.write_bytes(module.read_bytes() + b"# changed\n")
    text = start(checkout, session_dir)
    assert 'status="unavailable"' in text and "src/continuity/brief/render.py" in text
    assert "<source" not in text
    assert lifecycle(checkout, "hook", "pin", "--check").returncode == 1
    # Other events stay silent when the code changed.
    cmd = command(hooks_doc(checkout), "Stop")
    done = run_shell(cmd, payload("Stop", session_dir, turn_id="t", stop_hook_active=False), session_dir)
    assert done.returncode == 0 and done.stdout == ""


def test_compaction_adds_the_recovery_note_once(checkout: Path, session_dir: Path) -> None:
    doc = hooks_doc(checkout)
    first = start(checkout, session_dir)
    assert hookstate.RECOVERY_NOTE not in first
    pre = run_shell(
        command(doc, "PreCompact"), payload("PreCompact", session_dir, turn_id="t1", trigger="auto"), session_dir
    )
    assert pre.returncode == 0 and pre.stdout == ""

    noted = start(checkout, session_dir, source="compact")
    assert hookstate.RECOVERY_NOTE in noted
    folded = unicodedata.normalize("NFKC", noted)
    assert folded.count("<private-memory") == 1 and folded.count("</private-memory") == 1
    assert folded.count("<source") == folded.count("</source")

    again = start(checkout, session_dir, source="compact")
    assert hookstate.RECOVERY_NOTE not in again
    assert again == first
    [receipt] = receipts.last_deliveries(checkout)
    assert receipt["recovery_note"] is False and receipt["source"] == "compact"


def test_stop_asks_once_after_the_signals(checkout: Path, session_dir: Path) -> None:
    doc = hooks_doc(checkout)
    post, stop = command(doc, "PostToolUse"), command(doc, "Stop")
    assert doc["hooks"]["PostToolUse"][0]["matcher"] == "*"

    def tool(turn: str) -> None:
        data = payload(
            "PostToolUse", session_dir, turn_id=turn, tool_name="apply_patch", tool_use_id="u",
            tool_input={"command": "*** Begin Patch\n*** End Patch"}, tool_response="ok", permission_mode="default",
        )  # fmt: skip
        done = run_shell(post, data, session_dir)
        assert done.returncode == 0 and done.stdout == ""

    def stopping(turn: str, active: bool = False) -> str:
        data = payload("Stop", session_dir, turn_id=turn, stop_hook_active=active, last_assistant_message="done")
        done = run_shell(stop, data, session_dir)
        assert done.returncode == 0
        return done.stdout

    for _ in range(3):
        tool("t1")
    assert stopping("t1") == ""
    for _ in range(4):
        tool("t2")
    answer = json.loads(stopping("t2"))
    assert sorted(answer) == ["decision", "reason"] and answer["decision"] == "block"
    assert "lifecycle handoff new" in answer["reason"] and "Writing nothing is a valid answer" in answer["reason"]
    assert stopping("t2", active=True) == ""


def test_an_unconnected_checkout_gets_nothing(tmp_path: Path) -> None:
    repo = make_checkout(tmp_path / "work" / "bare")
    done = run_shell(command(hooks_doc(repo), "SessionStart"), payload("SessionStart", repo, source="startup"), repo)
    assert done.returncode == 0 and done.stdout == ""


def test_the_sweep_handler_prints_nothing(checkout: Path, session_dir: Path) -> None:
    handlers = hooks_doc(checkout)["hooks"]["SessionStart"][0]["hooks"]
    if len(handlers) < 2:
        pytest.skip("no outbox sweep handler in this checkout")
    assert "artifactctl.py" in handlers[1]["command"]
    done = run_shell(handlers[1]["command"], payload("SessionStart", session_dir, source="startup"), session_dir)
    assert done.returncode == 0 and done.stdout == ""
