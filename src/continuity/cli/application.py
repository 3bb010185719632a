"""The `lifecycle` application: every command module registered on one funnel group."""

from __future__ import annotations

from continuity.cli.funnel import new_app

app = new_app(
    "Keep a coding agent's private, reviewed memory in a synchronized vault and restore a bounded brief "
    "at every session start."
)


def _register() -> None:
    from continuity.cli import setup

    setup.register(app)
    from continuity.cli import outbox

    outbox.register(app)
    from continuity.cli import edit, handoff, lease, memory, review

    lease.register(app)
    handoff.register(app)
    memory.register(app)
    review.register(app)
    edit.register(app)
    from continuity.cli import hooks

    hooks.register(app)
    from continuity.cli import doctor

    doctor.register(app)
    from continuity.cli import recall

    recall.register(app)
    from continuity.cli import preserve

    preserve.register(app)
    from continuity.cli import mcp

    mcp.register(app)


_register()
