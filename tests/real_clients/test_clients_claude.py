"""The real Claude Code CLI (npm `@anthropic-ai/claude-code` 2.1.337) in a copy of this checkout.

Every assertion is about the requests the model received (`mockmodel.py` records them). Each session
is `claude -p` in a loopback-only network namespace with `ANTHROPIC_BASE_URL` pointing at the mock,
and the copy's `.claude/settings.json` written by `lifecycle hooks install --harness claude --scope
project`; `claude -p` runs project hooks without a trust prompt.

What Claude Code 2.1.337 does, as these tests pin it (2.1.332 did the same):

- The brief arrives in a `system`-role entry of `messages`, right after the user message that ends
  with the prompt; its text begins `SessionStart hook additional context: <private-memory …>` and
  goes on, after the brief, with Claude Code's own environment notes in the same text.
- A subagent is spawned with the `Agent` tool (`subagent_type: general-purpose`, in the foreground);
  its first request ends with its task, and a `system` entry begins `SubagentStart hook additional
  context: <private-memory event="SubagentStart" …>`, without the soul.
- A Stop block reaches the model twice in the next request: in a user message (`Stop hook
  feedback:\\nREASON` inside a `<system-reminder>`) and in a `system` entry `Stop hook blocking error
  from command: "<the whole hook command>": REASON`, so the model also reads the command (about 2 KB).
- `"async": true` on a SessionStart command hook is honoured: the first request went out about 0.3 s
  after the handler started, while it still slept. A handler still running when `claude -p` exits
  is ended: Claude Code sent SIGTERM to its process group (seen with strace), so a 3 s handler in a
  one-second session never wrote its last line.
- MCP: a server in the checkout's `.mcp.json`, enabled by `enabledMcpjsonServers` in
  `.claude/settings.json` and allowed with `--allowedTools mcp__continuity__recall`, is started before
  the first request; its tools are deferred behind `ToolSearch` (not in the tool list: their names
  only, in a list of deferred tools, and the server's instructions under "MCP Server Instructions" of
  the system prompt), yet a direct `tool_use` of `mcp__continuity__recall` runs, and the result comes
  back as a `tool_result` block.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from clients import (
    CLAUDE,
    HANDOFF_CANARY,
    SOUL_CANARY,
    Run,
    Site,
    async_probe,
    install,
    missing_tools,
    opening,
    stamp,
    wait_for_file,
)
from mockmodel import last_turn, occurrences, text_of, with_text

from continuity.hook import nudge
from continuity.server import catalog, stdio
from continuity.trust import hookcommand

pytestmark = pytest.mark.clients
SUBTASK = "SUBAGENT-TASK-8c07"
SESSION_PREFIX = "SessionStart hook additional context: "
SUBAGENT_PREFIX = "SubagentStart hook additional context: "


@pytest.fixture(scope="module")
def claude() -> Path:
    reason = missing_tools()
    if reason:
        pytest.skip(reason)
    return install(CLAUDE)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return Site(tmp_path_factory.mktemp("claude-site"))


@pytest.fixture(scope="module")
def checkout(site: Site, claude: Path) -> Path:
    """The shared copy: connected, with the project hooks installed, unchanged by its tests."""
    return site.clone("main", claude=True)


def claude_p(site: Site, claude: Path, clone: Path, prompt: str, rules: list[dict[str, Any]]) -> Run:
    run = site.run(clone, [str(claude), "-p", prompt, "--allowedTools", "Bash"], rules)
    assert run.returncode == 0, run.describe()
    assert run.requests, run.describe()
    return run


def messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    value = body["messages"]
    assert isinstance(value, list)
    return value


def ends_with_prompt(message: dict[str, Any], prompt: str) -> bool:
    content = message.get("content")
    last = content[-1] if isinstance(content, list) and content else content
    return message.get("role") == "user" and text_of(last).strip() == prompt


def test_claude_gives_the_brief_once_as_a_system_entry_after_the_prompt(
    site: Site, claude: Path, checkout: Path
) -> None:
    """Where and how often the brief reaches the model: a second copy or another role would be a regression."""
    run = claude_p(site, claude, checkout, "Say hello.", [])
    first = run.requests[0]
    assert occurrences(first, "<private-memory event=") == 1
    [at] = with_text(messages(first), opening("SessionStart"))
    entry = messages(first)[at]
    assert entry["role"] == "system"
    text = text_of(entry)
    assert text.startswith(SESSION_PREFIX + opening("SessionStart") + "\n")
    brief = text[len(SESSION_PREFIX) : text.index("\n</private-memory>") + len("\n</private-memory>")]
    assert SOUL_CANARY in brief and HANDOFF_CANARY in brief
    assert occurrences(first, SOUL_CANARY) == 1 and occurrences(first, HANDOFF_CANARY) == 1
    assert at >= 1 and ends_with_prompt(messages(first)[at - 1], "Say hello.")


def test_claude_subagent_gets_the_subagent_brief_and_no_soul(site: Site, claude: Path, checkout: Path) -> None:
    """A subagent started by the Agent tool gets project memory only, never the soul."""
    task = f"{SUBTASK}: reply with one word."
    agent = {"description": "One small check", "prompt": task, "subagent_type": "general-purpose",
             "run_in_background": False}  # fmt: skip
    rules = [
        {"match": SUBTASK, "reply": {"text": "Subagent finished."}},
        {"match": "Delegate", "reply": {"tool": "Agent", "input": agent}},
        {"match": "tool_result", "reply": {"text": "Parent finished."}},
    ]
    run = claude_p(site, claude, checkout, "Delegate one small check to a subagent.", rules)
    assert "Agent" in [tool["name"] for tool in run.requests[0]["tools"]]
    children = [body for body in run.requests if ends_with_prompt(last_turn(messages(body)) or {}, task)]
    assert children, f"no request from the subagent; {run.describe()}"
    child = children[0]
    assert occurrences(child, "<private-memory event=") == 1
    [at] = with_text(messages(child), opening("SubagentStart"))
    assert messages(child)[at]["role"] == "system"
    assert text_of(messages(child)[at]).startswith(SUBAGENT_PREFIX + opening("SubagentStart") + "\n")
    assert ends_with_prompt(messages(child)[at - 1], task)
    assert occurrences(child, HANDOFF_CANARY) == 1
    assert occurrences(child, SOUL_CANARY) == 0 and occurrences(child, 'event="SessionStart"') == 0


def test_claude_one_byte_change_to_the_script_gives_only_the_notice(site: Site, claude: Path) -> None:
    """The pin in the installed command refuses an unreviewed script: the model gets the notice, no private text."""
    clone = site.clone("changed", claude=True)
    script = clone / "scripts" / "agent-startup-context.py"
    script.write_bytes(script.read_bytes() + b"\n")  # not re-pinned: the installed command must refuse it
    run = claude_p(site, claude, clone, "Say hello.", [])
    first = run.requests[0]
    assert occurrences(first, "<private-memory event=") == 0
    [at] = with_text(messages(first), hookcommand.CHANGED_NOTICE)
    notice = text_of(messages(first)[at])
    # Plain stdout (the command prints the notice without JSON) comes with Claude Code's own prefix.
    assert messages(first)[at]["role"] == "system"
    assert notice.startswith("SessionStart:startup hook success: " + hookcommand.CHANGED_NOTICE)
    for needle in (SOUL_CANARY, HANDOFF_CANARY, "<source "):
        assert occurrences(run.requests, needle) == 0, needle


def test_claude_stop_continuation_reaches_the_model_after_four_writes(site: Site, claude: Path, checkout: Path) -> None:
    """After four mutations the Stop handler's question reaches the model once, and how Claude Code words it."""
    writes = [{"tool": "Bash", "input": {"command": f"touch busy-{n}.txt", "description": "Make a file"}}
              for n in range(1, 5)]  # fmt: skip
    rules = [{"match": "Make four files", "reply": writes[0]}]
    rules += [{"match": "tool_result", "reply": reply} for reply in writes[1:]]
    rules += [{"match": "tool_result", "reply": {"text": "Four files made."}}]
    run = claude_p(site, claude, checkout, "Make four files.", rules)
    assert all((checkout / f"busy-{n}.txt").exists() for n in range(1, 5)), run.describe()
    reason = nudge.STOP_REASON
    asked = [i for i, body in enumerate(run.requests) if reason in text_of(last_turn(messages(body)))]
    assert len(asked) == 1, f"the Stop reason should reach the model once; {run.describe()}"
    body = run.requests[asked[0]]
    feedback = with_text(messages(body), "Stop hook feedback:\n" + reason)
    assert [messages(body)[i]["role"] for i in feedback] == ["user"]
    echoed = [i for i in with_text(messages(body), reason) if messages(body)[i]["role"] == "system"]
    assert [text_of(messages(body)[i]).startswith("Stop hook blocking error from command: ") for i in echoed] == [True]
    assert with_text(messages(body), "Four files made.")  # after the turn's last answer


def test_claude_runs_an_async_session_start_hook_without_waiting(site: Site, claude: Path) -> None:
    """Decides how the outbox sweep may be registered: an async hook must not delay the first request."""
    clone = site.clone("async", claude=True)
    group, started, done = async_probe(site.root / "async-stamps")
    settings = clone / ".claude" / "settings.json"
    doc = json.loads(settings.read_text(encoding="utf-8"))
    doc["hooks"]["SessionStart"].append(group)
    settings.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    wait = {"tool": "Bash", "input": {"command": wait_for_file(done), "description": "Wait for a file"}}
    rules = [
        {"match": "Wait for", "reply": wait},
        {"match": "tool_result", "reply": {"text": "Waited."}},
    ]
    run = claude_p(site, claude, clone, "Wait for the probe.", rules)
    first = run.model_calls[0]["time"]
    assert occurrences(run.requests[0], opening("SessionStart")) == 1  # the synchronous brief still came first
    assert stamp(started) < stamp(done)  # it ran, to its end, while the turn waited for it
    assert first < stamp(done) - 1.0, "the first request waited for the async handler"


# --- the MCP server --------------------------------------------------------------------------------------

MCP_CANARY = "MCP-NOTE-CANARY-c41e07"
RECALL_TOOL = "mcp__continuity__recall"  # Claude Code's name for the tool `recall` of the server `continuity`


def write_note(vault: Path, note_id: str, body: str) -> None:
    head = f'---\nid: "{note_id}"\ntype: fact\nstatus: approved\ntitle: "{note_id}"\nscope: global\n'
    head += 'verified: "2026-11-01"\nrevalidate_by: "2099-01-01"\n---\n'
    (vault / "30-memory" / "facts" / f"{note_id}.md").write_text(head + body + "\n", encoding="utf-8")


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in messages(body)
        if message.get("role") == "user" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def test_claude_calls_the_recall_tool_and_the_model_gets_the_note_wrapped_then_the_notice(
    site: Site, claude: Path
) -> None:
    """The server registered in the checkout's `.mcp.json`: a recall through it reaches the model wrapped,
    and past the session's allowance the model gets the notice instead of notes."""
    clone = site.clone("mcp", claude=True)
    site.register_claude_mcp(clone)
    write_note(site.vault, "fact-mcp-canary", f"mcpcanaryterm: {MCP_CANARY} is where recall through MCP lands.")
    for number in range(3):
        write_note(site.vault, f"fact-mcp-big-{number}", f"mcpbigterm{number} " + "lorem " * 900)
    rules = [
        {"match": "Recall", "reply": {"tool": RECALL_TOOL, "input": {"terms": "mcpcanaryterm"}}},
        {"match": "tool_result", "reply": {"tool": RECALL_TOOL, "input": {"terms": "mcpbigterm0 mcpbigterm1",
                                                                          "limit": 2}}},
        {"match": "tool_result", "reply": {"tool": RECALL_TOOL, "input": {"terms": "mcpbigterm2"}}},
        {"match": "tool_result", "reply": {"text": "Recalled."}},
    ]  # fmt: skip
    argv = [str(claude), "-p", "Recall what the vault says.", "--allowedTools", RECALL_TOOL]
    run = site.run(clone, argv, rules)
    assert run.returncode == 0 and run.requests, run.describe()
    # Claude Code (2.1.332 on) defers MCP tools behind its ToolSearch tool (not listed up front) and still
    # runs a direct call of one that the session may use.
    assert "ToolSearch" in [tool.get("name") for tool in run.requests[0]["tools"]], run.describe()
    # What the model has before any ToolSearch: every tool's name and the server's instructions, which
    # say when to use each one and that what they return is data.
    first_request = json.dumps(run.requests[0])
    assert all(f"mcp__continuity__{tool.name}" in first_request for tool in catalog.TOOLS), run.describe()
    assert json.dumps(stdio.INSTRUCTIONS)[1:-1] in first_request
    first = min(i for i, body in enumerate(run.requests) if occurrences(body, MCP_CANARY))
    result = json.dumps(tool_results(run.requests[first])[-1])
    assert MCP_CANARY in result and '<private-memory kind=\\"recall\\" for=\\"main\\"' in result, result[:2000]
    assert result.count("</private-memory>") == 1
    last = tool_results(run.requests[-1])[-1]
    assert "continuity: no notes returned" in json.dumps(last), json.dumps(last)[:2000]
    assert occurrences(last, "mcpbigterm2 lorem") == 0
    assert re.search(r"the startup brief's [1-9][0-9]* included", json.dumps(last)), "the hook's brief was not counted"
