"""What the command modules share: the options several commands take, declared once so that their flags
and help read alike, and the printing helpers (one JSON document, or plain lines; warnings withheld
of secret-like words)."""

from __future__ import annotations

import json
from enum import Enum
from typing import Annotated, Any

import typer

from continuity import names

JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
SessionOption = Annotated[
    str | None,
    typer.Option(help="The agent session id (default: $CODEX_SESSION_ID or $CLAUDE_SESSION_ID)."),
]


class Event(str, Enum):
    SessionStart = names.SESSION_START
    SubagentStart = names.SUBAGENT_START


class Format(str, Enum):
    text = "text"
    json = "json"


class Harness(str, Enum):
    codex = names.CODEX
    claude = names.CLAUDE


class Scope(str, Enum):
    user = "user"
    project = "project"


def json_text(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, indent=2)


def emit_json(document: dict[str, Any]) -> None:
    emit(json_text(document))


def report(document: dict[str, Any], as_json: bool, text: str) -> None:
    """A command's result: its JSON document with --json, else its line of text.

    Results name files (`archived ID: FROM -> TO`), and a file name a person pasted a token into must
    not carry it to the terminal or a JSON report: secret-like names and words are withheld here.
    """
    from continuity.gate.secrets import redact

    emit(json_text(_withheld(document)) if as_json else redact(text))


def _withheld(value: Any) -> Any:
    """A JSON document with every secret-like string withheld (a path keeps its folder)."""
    from continuity.gate.secrets import WITHHELD, scan_text, shown_path

    if isinstance(value, dict):
        return {key: _withheld(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_withheld(item) for item in value]
    if isinstance(value, str) and scan_text(value):
        return shown_path(value) if "/" in value and " " not in value else WITHHELD
    return value


def emit(text: str) -> None:
    typer.echo(text)


def warn(text: str) -> None:
    """A line for stderr; warnings name files, so secret-like words in names are withheld."""
    from continuity.gate.secrets import redact

    typer.echo(redact(text), err=True)
