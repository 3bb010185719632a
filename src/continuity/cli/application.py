"""The `lifecycle` application: every command module registered on one funnel group."""

from __future__ import annotations

from continuity.cli import doctor, edit, handoff, hooks, lease, mcp, memory, outbox, preserve, recall, review, setup
from continuity.cli.funnel import new_app

app = new_app(
    "Keep a coding agent's private, reviewed memory in a synchronized vault and restore a bounded brief "
    "at every session start."
)


def _register() -> None:
    """In this order, the order `lifecycle --help` lists them in."""
    for module in (setup, outbox, lease, handoff, memory, review, edit, hooks, doctor, recall, preserve, mcp):
        module.register(app)


_register()
