"""Printing helpers shared by the command modules: one JSON document, or plain lines."""

from __future__ import annotations

from typing import Any

import typer


def emit_json(document: dict[str, Any]) -> None:
    import json

    typer.echo(json.dumps(document, ensure_ascii=False, indent=2))


def emit(text: str) -> None:
    typer.echo(text)


def warn(text: str) -> None:
    """A line for stderr; warnings name files, so secret-like words in names are withheld."""
    from continuity.secrets import redact

    typer.echo(redact(text), err=True)
