"""The hook events of a turn: PreCompact, PostToolUse, UserPromptSubmit and Stop (the Stop nudge).

- PreCompact records that a compaction is pending (`hookstate.after_start` adds the recovery note).
- PostToolUse counts the turn's tool events and mutations (see `tool_events`) and notices a
  `lifecycle handoff new` or `lifecycle note new`.
- Stop asks once per turn, after four mutations or ten tool events, whether a handoff or candidate
  is worth writing: `{"decision": "block", "reason": …}` and no other key. Never while
  `stop_hook_active` is true, never when the turn already wrote one, never in an unconnected checkout.
  A Stop that does not ask ends the turn; Codex's `turn_id` and Claude Code's UserPromptSubmit
  also start a new one (Claude Code sends no turn id).

PostToolUse runs after every tool call, so this path imports what the warm start path does and
`tool_events`, not the renderer, YAML or site-packages. Hooks never write the vault.
"""

from __future__ import annotations

import json
import os

from continuity import limits, names
from continuity.hook.hookstate import HookState, digest, load, save, session_path

STOP_REASON = (
    "Before you finish: this turn changed files or ran many tools. Decide whether a later session would "
    "otherwise have to rediscover anything from it. If so, write a handoff: `lifecycle handoff new --title "
    '"..." --from -` with the sections `## Goal and status`, `## Completed work` (with evidence: files, '
    "commits, tests), `## Risks and decisions` and `## Next actions` (one to three). If the turn taught a "
    "durable, reusable fact, decision or lesson, propose it as a candidate: `lifecycle note new --type "
    'fact|decision|lesson --title "..." --from -` (a person approves it later). Writing nothing is a '
    "valid answer: if nothing qualifies, finish without writing and without mentioning this check."
)


def turn_fingerprint(payload: dict[str, object]) -> int:
    turn = payload.get("turn_id")
    if not isinstance(turn, str) or not turn:
        return 0
    return int(digest(turn)[:8], 16) or 1


def _current_turn(state: HookState, payload: dict[str, object]) -> HookState:
    turn = turn_fingerprint(payload)
    if turn and turn != state.turn:
        return state.new_turn(turn)
    return state


def _connected(payload: dict[str, object]) -> bool:
    """Whether a connection reaches the session's directory (the nudge talks about `lifecycle`)."""
    from pathlib import Path

    from continuity.errors import ContinuityError
    from continuity.local import connection

    cwd = payload.get("cwd")
    try:
        connection.discover(Path(cwd) if isinstance(cwd, str) and cwd else Path.cwd())
    except (ContinuityError, OSError):
        return False
    return True


def on_post_tool_use(state: HookState, payload: dict[str, object]) -> HookState:
    from continuity.hook import tool_events

    state = _current_turn(state, payload)
    mutation, memory = tool_events.classify(payload.get("tool_name"), payload.get("tool_input"))
    return state.but(
        tool_events=min(state.tool_events + 1, 2**31),
        mutations=min(state.mutations + int(mutation), 2**31),
        wrote_memory=state.wrote_memory or memory,
    )


def should_nudge(state: HookState) -> bool:
    busy = state.mutations >= limits.STOP_NUDGE_MUTATIONS or state.tool_events >= limits.STOP_NUDGE_TOOL_EVENTS
    return busy and not state.nudged and not state.wrote_memory


def _ended(state: HookState) -> HookState:
    """After a Stop that lets the turn end: counts start over; a known turn keeps its `nudged`."""
    if not state.turn:
        return state.new_turn()
    return state.new_turn(state.turn).but(nudged=state.nudged)


def on_stop(state: HookState, payload: dict[str, object]) -> tuple[HookState, str]:
    """The state after a Stop and what to print ('' lets the turn end)."""
    state = _current_turn(state, payload)
    if payload.get("stop_hook_active") is not True and should_nudge(state) and _connected(payload):
        block = json.dumps({"decision": "block", "reason": STOP_REASON})
        return state.but(nudged=True), block
    return _ended(state), ""


def handle(payload: dict[str, object], harness: str) -> str:
    """Stdout for a non-start event: a Stop block, or nothing. Never raises (fails open)."""
    try:
        event = payload.get("hook_event_name")
        if event not in names.STATE_EVENTS:
            return ""
        path = session_path(payload)
        if path is None:
            return ""
        state = load(path)
        out = ""
        if event == names.PRE_COMPACT:
            state = state.but(compact_pending=True)
        elif event == names.POST_TOOL_USE:
            state = on_post_tool_use(state, payload)
        elif event == names.USER_PROMPT_SUBMIT:
            state = state.new_turn(turn_fingerprint(payload))
        else:
            state, out = on_stop(state, payload)
        save(path, state)
        return out
    except Exception:
        if os.environ.get("CONTINUITY_DEBUG") == "1":
            raise
        return ""
