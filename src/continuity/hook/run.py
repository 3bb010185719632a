"""The full hook, once the warm path missed: a start event's brief, or a turn event's answer.

It prints at most one JSON object (see `envelope`), nothing for a checkout that no connection
reaches, and never raises for the session; the startup script always exits 0.
"""

from __future__ import annotations

import json
from pathlib import Path

from continuity import limits
from continuity.brief import build, render
from continuity.brief.envelope import hook_output


def parse_stdin(data: bytes) -> dict[str, object] | None:
    try:
        value = json.loads(data.decode("utf-8", errors="replace") or "null")
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def run_hook(harness: str, data: bytes, code: str | None = None) -> str:
    """The hook's stdout for one harness call ('' for nothing)."""
    payload = parse_stdin(data)
    if payload is None or len(data) > limits.HOOK_STDIN_CAP_BYTES:
        return ""
    event = payload.get("hook_event_name")
    raw_cwd = payload.get("cwd")
    cwd = Path(raw_cwd) if isinstance(raw_cwd, str) and raw_cwd else Path.cwd()
    if event in render.EVENTS:
        assert isinstance(event, str)
        from continuity.vault import notes

        with notes.run_allowance():  # whatever the vault holds, YAML costs this run a bounded time
            brief = build.build_safely(cwd, event, harness, code=code)
        if brief is None:
            return ""
        from continuity.hook import hookstate

        brief = hookstate.after_start(payload, brief, harness)
        return hook_output(event, brief)
    from continuity.hook import nudge

    return nudge.handle(payload, harness)
