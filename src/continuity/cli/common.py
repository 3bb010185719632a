"""What the command modules share: the options several commands take, declared once so that their flags
and help read alike, and the printing helpers (one JSON document, or plain lines; warnings withheld
of secret-like words)."""

from __future__ import annotations

import json
from enum import Enum
from typing import Annotated, Any

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


def json_text(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, indent=2)


def emit_json(document: dict[str, Any]) -> None:
    emit(json_text(document))


def report(document: dict[str, Any], as_json: bool, text: str) -> None:
    """A command's result: its JSON document with --json, else its line of text."""
    emit(json_text(document) if as_json else text)


def emit(text: str) -> None:
    typer.echo(text)


def warn(text: str) -> None:
    """A line for stderr; warnings name files, so secret-like words in names are withheld."""
    from continuity.gate.secrets import redact

    typer.echo(redact(text), err=True)
