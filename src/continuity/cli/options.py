"""Options that several commands share, declared once so that their flags and help read alike."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
SessionOption = Annotated[
    str | None,
    typer.Option(help="The agent session id (default: $CODEX_SESSION_ID or $CLAUDE_SESSION_ID)."),
]


class Event(str, Enum):
    SessionStart = "SessionStart"
    SubagentStart = "SubagentStart"


class Format(str, Enum):
    text = "text"
    json = "json"


class Harness(str, Enum):
    codex = "codex"
    claude = "claude"


class Scope(str, Enum):
    user = "user"
    project = "project"
