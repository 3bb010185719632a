"""The full hook, once the warm path missed: a start event's brief, or a turn event's answer.

A module of its own because importing it is what may fail: it loads the renderer and, through it,
the package's dependencies (ruamel.yaml, detect-secrets), and `entry` answers an ImportError here by
running again with the connection's Python (`reexec`). It takes the harness's JSON as the startup
script parsed it, prints at most one JSON object (`brief.envelope`), nothing for a checkout that no
connection reaches, and never raises for the session; the startup script always exits 0.
"""

from __future__ import annotations

from pathlib import Path

from continuity import names
from continuity.brief import build
from continuity.brief.envelope import hook_output


def run_hook(harness: str, payload: dict[str, object], code: str | None = None) -> str:
    """The hook's stdout for one harness call ('' for nothing)."""
    event = payload.get("hook_event_name")
    raw_cwd = payload.get("cwd")
    cwd = Path(raw_cwd) if isinstance(raw_cwd, str) and raw_cwd else Path.cwd()
    if event in names.START_EVENTS:
        assert isinstance(event, str)
        from continuity.vault import notes

        with notes.run_allowance():  # whatever the vault holds, YAML costs this run a bounded time
            brief = build.build_safely(cwd, event, harness, code=code)
        if brief is None:
            return ""
        from continuity.hook import hookstate

        brief = hookstate.after_start(payload, brief, harness)
        return hook_output(event, brief.text)
    from continuity.hook import nudge

    return nudge.handle(payload, harness)
