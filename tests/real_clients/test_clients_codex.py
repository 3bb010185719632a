"""The real Codex CLI (npm `@openai/codex` 0.171.0) in a copy of this checkout, against a scripted model.

Every assertion is about the requests the model received (`mockmodel.py` records them), since only
they show what reached the model. Each session is `codex exec` in a loopback-only network namespace,
with a custom provider (`model_provider`, `wire_api = "responses"`) pointing at the mock, and the
hooks of the copy's own `.codex/hooks.json` trusted the way a person's `/hooks` trusts them.

What Codex 0.171.0 does, as these tests pin it:

- Trust: `codex app-server`'s `hooks/list` lists each handler with `key`
  `<abs path>/.codex/hooks.json:<event_snake_case>:<group>:<handler>` and `currentHash` `sha256:…`;
  `[hooks.state."<key>"] trusted_hash = "<currentHash>"` in `$CODEX_HOME/config.toml` trusts it. An
  untrusted hook is skipped without a word: the model gets no brief.
- The brief is one `developer` message (one `input_text`), after the user message holding AGENTS.md
  and `<environment_context>`, before the prompt.
- A subagent is spawned with the `spawn_agent` function of the `multi_agent_v1` namespace tool (the
  call carries `"namespace": "multi_agent_v1"`). The child's first request ends with its task as a
  user message and holds the SubagentStart brief as a developer message, without the soul.
- The Stop reason comes back as a user message `<hook_prompt hook_run_id="stop:…">REASON</hook_prompt>`.
- `"async": true` on a SessionStart command handler is honoured: `hooks/list` reports `async: true`
  with no warning (the flag is part of the trusted hash), Codex starts the handler at session start
  and sends the first request without waiting for it (measured: about 0.2 s after the handler
  started, while it still slept). Async handlers still running when the session shuts down are
  ended: in a short `codex exec` a 3 s handler was killed (SIGKILL, seen with strace) before its
  last line ran, so an async sweep may be cut short in a one-shot session.
- MCP: a server in `[mcp_servers.continuity]` of `config.toml` is started in the session's folder; its
  tools reach the model as the namespace tool `mcp__continuity` (its description is the server's
  instructions), from the first request on: Codex waits for an optional server up to its shared
  `mcp_optional_startup_grace_ms` (1 s by default) and the server answers its handshake in tens of
  milliseconds (with the SDK's one-second import the first request often went out without them). A
  call is a `function_call` with `"namespace": "mcp__continuity"`; its result comes back as a
  `function_call_output` holding the tool's text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from clients import (
    CODEX,
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
from continuity.trust import hookcommand

pytestmark = pytest.mark.clients
SUBTASK = "SUBAGENT-TASK-41d9"


@pytest.fixture(scope="module")
def codex() -> Path:
    reason = missing_tools()
    if reason:
        pytest.skip(reason)
    return install(CODEX)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return Site(tmp_path_factory.mktemp("codex-site"))


@pytest.fixture(scope="module")
def checkout(site: Site, codex: Path) -> Path:
    """The shared copy: trusted, connected, and left unchanged by the tests that use it."""
    clone = site.clone("main")
    site.trust_codex(codex, clone)
    return clone


def codex_exec(site: Site, codex: Path, clone: Path, prompt: str, rules: list[dict[str, Any]]) -> Run:
    run = site.run(clone, [str(codex), "exec", prompt], rules)
    assert run.returncode == 0, run.describe()
    assert run.requests, run.describe()
    return run


def items(body: dict[str, Any]) -> list[dict[str, Any]]:
    value = body["input"]
    assert isinstance(value, list)
    return value


def prompt_index(body: dict[str, Any], prompt: str) -> int:
    [index] = [i for i, item in enumerate(items(body)) if item.get("role") == "user" and text_of(item) == prompt]
    return index


def handlers(clone: Path) -> list[tuple[str, int, int, dict[str, Any]]]:
    """(event, group index, handler index, handler) for every handler in the copy's `.codex/hooks.json`."""
    doc = json.loads((clone / ".codex" / "hooks.json").read_text(encoding="utf-8"))
    return [
        (event, g, h, handler)
        for event, groups in doc["hooks"].items()
        for g, group in enumerate(groups)
        for h, handler in enumerate(group["hooks"])
    ]


def snake(event: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", event).lower()


def test_codex_lists_every_project_hook_and_runs_none_until_trusted(site: Site, codex: Path) -> None:
    """The control: without our trust entries no brief arrives, so the other tests' briefs come from them."""
    clone = site.clone("untrusted")
    listing = site.trust_codex(codex, clone, hooks=False)  # the folder only
    assert listing["warnings"] == [] and listing["errors"] == []
    ours = {hook["key"]: hook for hook in listing["hooks"] if Path(hook["sourcePath"]).is_relative_to(clone)}
    expected = {f"{clone}/.codex/hooks.json:{snake(e)}:{g}:{h}": handler for e, g, h, handler in handlers(clone)}
    assert sorted(ours) == sorted(expected)
    for key, hook in ours.items():
        assert hook["command"] == expected[key]["command"] and hook["source"] == "project"
        assert hook["currentHash"].startswith("sha256:") and hook["trustStatus"] == "untrusted"

    run = site.run(clone, [str(codex), "exec", "Say hello."], [])
    assert run.returncode == 0 and run.requests, run.describe()
    assert occurrences(run.requests, "<private-memory event=") == 0, "an untrusted hook ran"

    site.trust_codex(codex, clone)
    after = site.codex_hooks(codex, clone)["hooks"]
    assert {h["key"]: h["trustStatus"] for h in after if h["key"] in ours} == dict.fromkeys(ours, "trusted")


def test_codex_gives_the_brief_once_as_a_developer_message_after_the_environment(
    site: Site, codex: Path, checkout: Path
) -> None:
    """Where and how often the brief reaches the model: a second copy or another role would be a regression."""
    run = codex_exec(site, codex, checkout, "Say hello.", [])
    first = run.requests[0]
    assert occurrences(first, "<private-memory event=") == 1
    [at] = with_text(items(first), opening("SessionStart"))
    brief = items(first)[at]
    assert brief["type"] == "message" and brief["role"] == "developer"
    [part] = brief["content"]
    assert part["type"] == "input_text"
    assert part["text"].startswith(opening("SessionStart") + "\n") and part["text"].endswith("\n</private-memory>")
    assert occurrences(first, SOUL_CANARY) == 1 and occurrences(first, HANDOFF_CANARY) == 1
    assert SOUL_CANARY in part["text"] and HANDOFF_CANARY in part["text"]
    [environment] = with_text(items(first), "<environment_context>")
    assert items(first)[environment]["role"] == "user" and "AGENTS.md" in text_of(items(first)[environment])
    assert environment < at < prompt_index(first, "Say hello.")


def test_codex_subagent_gets_the_subagent_brief_and_no_soul(site: Site, codex: Path, checkout: Path) -> None:
    """A spawned subagent gets project memory only: the soul stays with the session the person talks to."""
    task = f"{SUBTASK}: reply with one word."
    rules = [
        {"match": SUBTASK, "reply": {"text": "Subagent finished."}},
        {"match": "Delegate", "reply": {"tool": "spawn_agent", "namespace": "multi_agent_v1",
                                        "input": {"message": task}}},
        {"await": SUBTASK, "reply": {"text": "Parent finished."}},  # end only after the child asked
    ]  # fmt: skip
    run = codex_exec(site, codex, checkout, "Delegate one small check to a subagent.", rules)
    spawn = [t for t in run.requests[0]["tools"] if t.get("name") == "multi_agent_v1"]
    assert spawn and "spawn_agent" in [tool["name"] for tool in spawn[0]["tools"]]
    children = [body for body in run.requests if text_of(last_turn(items(body))) == task]
    assert children, f"no request from the subagent; {run.describe()}"
    child = children[0]
    assert occurrences(child, "<private-memory event=") == 1
    [at] = with_text(items(child), opening("SubagentStart"))
    assert items(child)[at]["role"] == "developer"
    assert at < prompt_index(child, task)
    assert occurrences(child, HANDOFF_CANARY) == 1
    assert occurrences(child, SOUL_CANARY) == 0 and occurrences(child, 'event="SessionStart"') == 0


def test_codex_one_byte_change_to_the_script_gives_only_the_notice(site: Site, codex: Path) -> None:
    """The pin in the trusted command refuses an unreviewed script: the model gets the notice, no private text."""
    clone = site.clone("changed")
    script = clone / "scripts" / "agent-startup-context.py"
    script.write_bytes(script.read_bytes() + b"\n")  # not re-pinned: the trusted command must refuse it
    site.trust_codex(codex, clone)
    run = codex_exec(site, codex, clone, "Say hello.", [])
    first = run.requests[0]
    assert occurrences(first, "<private-memory event=") == 0
    [at] = with_text(items(first), hookcommand.CHANGED_NOTICE)
    assert items(first)[at]["role"] == "developer" and text_of(items(first)[at]) == hookcommand.CHANGED_NOTICE
    for needle in (SOUL_CANARY, HANDOFF_CANARY, "<source "):
        assert occurrences(run.requests, needle) == 0, needle


def test_codex_stop_continuation_reaches_the_model_after_four_writes(site: Site, codex: Path, checkout: Path) -> None:
    """After four mutations the Stop handler's question reaches the model once, as Codex continues the turn."""
    writes = [{"tool": "exec_command", "input": {"cmd": f"touch busy-{n}.txt"}} for n in range(1, 5)]
    rules = [{"match": "Make four files", "reply": writes[0]}]
    rules += [{"match": "function_call_output", "reply": reply} for reply in writes[1:]]
    rules += [{"match": "function_call_output", "reply": {"text": "Four files made."}}]
    run = codex_exec(site, codex, checkout, "Make four files.", rules)
    assert all((checkout / f"busy-{n}.txt").exists() for n in range(1, 5)), run.describe()
    asked = [i for i, body in enumerate(run.requests) if nudge.STOP_REASON in text_of(last_turn(items(body)))]
    assert len(asked) == 1, f"the Stop reason should reach the model once; {run.describe()}"
    continuation = last_turn(items(run.requests[asked[0]]))
    assert isinstance(continuation, dict) and continuation["role"] == "user"
    assert re.fullmatch(r'<hook_prompt hook_run_id="stop:[^"]*">(.*)</hook_prompt>', text_of(continuation), re.S)
    assert with_text(items(run.requests[asked[0]]), "Four files made.")  # after the turn's last answer


def test_codex_runs_an_async_session_start_handler_without_waiting(site: Site, codex: Path) -> None:
    """Decides how the outbox sweep may be registered: an async handler must not delay the first request."""
    clone = site.clone("async")
    group, started, done = async_probe(site.root / "async-stamps")
    hooks_file = clone / ".codex" / "hooks.json"
    doc = json.loads(hooks_file.read_text(encoding="utf-8"))
    doc["hooks"]["SessionStart"].append(group)
    hooks_file.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    listing = site.trust_codex(codex, clone)
    assert listing["warnings"] == [] and listing["errors"] == []
    [probe] = [h for h in listing["hooks"] if h["command"] == group["hooks"][0]["command"]]
    assert probe["async"] is True and probe["eventName"] == "sessionStart"

    rules = [
        {"match": "Wait for", "reply": {"tool": "exec_command", "input": {"cmd": wait_for_file(done)}}},
        {"match": "function_call_output", "reply": {"text": "Waited."}},
    ]
    run = codex_exec(site, codex, clone, "Wait for the probe.", rules)
    first = run.model_calls[0]["time"]
    assert occurrences(run.requests[0], opening("SessionStart")) == 1  # the synchronous brief still came first
    assert stamp(started) < stamp(done)  # it ran, to its end, while the turn waited for it
    assert first < stamp(done) - 1.0, "the first request waited for the async handler"


# --- the MCP server --------------------------------------------------------------------------------------

MCP_CANARY = "MCP-NOTE-CANARY-3a8f61"
MCP_NAMESPACE = "mcp__continuity"  # how Codex names the tools of the server registered as `continuity`


def mcp_call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"match": "function_call_output", "reply": {"tool": tool, "namespace": MCP_NAMESPACE, "input": arguments}}


def test_codex_calls_the_recall_tool_and_the_model_gets_the_note_wrapped_then_the_notice(
    site: Site, codex: Path
) -> None:
    """The server registered in config.toml as `setup codex` writes it (user scope: `python -I -m
    continuity mcp`): a recall through it reaches the model wrapped, and past the session's allowance
    the model gets the notice instead of notes.

    Codex waits for its optional MCP servers up to its shared startup grace (1 s by default) before the
    first request; the server answers its handshake in tens of milliseconds, so the very first request
    already offers the tools (the namespace `mcp__continuity`) without the server being `required`."""
    clone = site.clone("mcp")
    write_note(site.vault, "fact-mcp-canary", f"mcpcanaryterm: {MCP_CANARY} is where recall through MCP lands.")
    for number in range(3):
        write_note(site.vault, f"fact-mcp-big-{number}", f"mcpbigterm{number} " + "lorem " * 900)
    site.trust_codex(codex, clone)
    site.register_codex_mcp()
    try:
        rules = [
            {**mcp_call("recall", {"terms": "mcpcanaryterm"}), "match": "Recall"},
            mcp_call("recall", {"terms": "mcpbigterm0 mcpbigterm1", "limit": 2}),
            mcp_call("recall", {"terms": "mcpbigterm2"}),
            {"match": "function_call_output", "reply": {"text": "Recalled."}},
        ]
        run = codex_exec(site, codex, clone, "Recall what the vault says.", rules)
    finally:
        site.register_codex_mcp_off()
    first_tools = [tool.get("name") for tool in run.requests[0]["tools"]]
    assert MCP_NAMESPACE in first_tools, run.describe()
    # The request right after the tool call is the first to hold the note (later ones repeat the history).
    first = min(i for i, body in enumerate(run.requests) if occurrences(body, MCP_CANARY))
    result = [item for item in items(run.requests[first]) if item.get("type") == "function_call_output"][-1]
    text = json.dumps(result)
    assert MCP_CANARY in text and '<private-memory kind=\\"recall\\" for=\\"main\\"' in text, text[:2000]
    assert text.count("</private-memory>") == 1
    last = run.requests[-1]
    outputs = [item for item in items(last) if item.get("type") == "function_call_output"]
    assert "continuity: no notes returned" in json.dumps(outputs[-1]), json.dumps(outputs[-1])[:2000]
    assert occurrences(outputs[-1], "mcpbigterm2 lorem") == 0
    notice = json.dumps(outputs[-1])
    assert re.search(r"the startup brief's [1-9][0-9]* included", notice), "the hook's brief was not counted"


def write_note(vault: Path, note_id: str, body: str) -> None:
    head = f'---\nid: "{note_id}"\ntype: fact\nstatus: approved\ntitle: "{note_id}"\nscope: global\n'
    head += 'verified: "2026-11-01"\nrevalidate_by: "2099-01-01"\n---\n'
    (vault / "30-memory" / "facts" / f"{note_id}.md").write_text(head + body + "\n", encoding="utf-8")
