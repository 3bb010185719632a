"""`lifecycle scan [PATH…]`: the secret gate over notes, for people and for pre-commit.

Given paths, it needs no connection: pre-commit runs it inside a vault's own repository with the
staged files' names, and people run it on a folder of drafts. Without paths it checks the whole
connected vault (exit 3 when there is none). Anything found ends with exit 5 after the report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from continuity.cli.options import JsonOption
from continuity.cli.output import emit, report


def scan(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[PATH]...",
            help="Files or folders to check (default: the whole connected vault).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Check notes for secret-like content, caps and frontmatter, as the loader and the write path do.

    A folder's *.md files are checked at every depth (hidden names skipped, links reported and never
    followed); a file named here is checked whatever its name. Each finding is shown as its path
    (vault-relative inside a vault), line and detector, never the value. Exit 0 when nothing is
    found, 5 when anything is.
    """
    from continuity.errors import InputRejected
    from continuity.health import notescan, scanfiles

    cwd = Path.cwd()
    if paths:
        targets = scanfiles.targets(paths, cwd)
    else:
        from continuity.local import connection

        targets = scanfiles.vault_targets(connection.require_vault(connection.discover(cwd)))
    result = notescan.scan(targets)
    if as_json:
        report(result.to_json(), True, "")
    else:
        for line in result.lines():
            emit(line)
    if not result.clean:
        count = len(result.files)
        raise InputRejected(f"{count} of {result.scanned} files would be left out by the loader or refused on write")


def register(app: typer.Typer) -> None:
    app.command()(scan)
