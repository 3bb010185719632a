"""Hook events other than the session starts, and what the starts add after rendering.

SessionStart and SubagentStart are answered with the brief; every other event this script may be
registered for is answered with nothing, which every harness reads as success.
"""

from __future__ import annotations

from continuity.render import Brief


def after_start(payload: dict[str, object], brief: Brief, harness: str) -> Brief:
    """The brief as delivered for this start."""
    return brief


def handle(payload: dict[str, object], harness: str) -> str:
    """Stdout for a non-start event."""
    return ""
