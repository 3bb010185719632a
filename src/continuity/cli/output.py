"""Printing helpers shared by the command modules: one JSON document, or plain lines."""

from __future__ import annotations

import json
from typing import Any

import typer


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
