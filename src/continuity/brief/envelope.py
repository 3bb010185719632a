"""The hook envelope: the one JSON shape both harnesses read a start event's context from.

Codex validates it strictly: `hookSpecificOutput` with `hookEventName` and `additionalContext`, and
no other key anywhere, or the whole output is dropped. Claude Code reads the same shape.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from continuity.brief.render import Brief


def hook_output(event: str, brief: Brief) -> str:
    """The brief as the hook prints it: compact, ASCII-only JSON."""
    payload = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": brief.text}}
    return json.dumps(payload, ensure_ascii=True, separators=(",", ":"))
