"""What the hook prints for a start event: the one JSON envelope, and the one "not restored" text.

Codex validates the envelope strictly: `hookSpecificOutput` with `hookEventName` and
`additionalContext`, and no other key anywhere, or the whole output is dropped. Claude Code reads the
same shape. Every answer the package gives a start event goes through `hook_output`: the brief
(`hook.run`, the startup cache) and the notice after an import failure (`hook.reexec`); every notice
that private memory was not restored is worded by `unavailable_text`. The startup script keeps its own
notice for changed code, since it must answer before any module is checked (a test holds the two
alike), and the pinned hook command its own fixed line.
"""

from __future__ import annotations

import json

NOT_RESTORED = (
    "Private memory was not restored{why}. Continue under AGENTS.md and the repository's instructions, "
    "and do not claim that private identity, preferences or handoffs were restored."
)
ASK_DOCTOR = " The person can run `lifecycle doctor` to see what is wrong."


def unavailable_text(event: str, why: str = "", hint: str = ASK_DOCTOR) -> str:
    """The whole context of a brief with no private content; `why` is " (reason)" or empty."""
    opening = f'<private-memory event="{event}" status="unavailable">'
    return "\n".join([opening, NOT_RESTORED.format(why=why) + hint, "</private-memory>"])


def hook_output(event: str, context: str) -> str:
    """The hook's stdout for a start event: compact, ASCII-only JSON."""
    payload = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
    return json.dumps(payload, ensure_ascii=True, separators=(",", ":"))
