"""`lifecycle recall` (warm notes for the task at hand) and `lifecycle log` (the write history)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from continuity import tunables
from continuity.cli.common import JsonOption, emit, emit_json, report, warn

if TYPE_CHECKING:
    from continuity.recall.journal_search import LogSearch
    from continuity.records.journal import Entry


def _connected() -> tuple[Path, str, str]:
    """The connected vault, this device and this project (NotConnected, exit 3, when there is none)."""
    from continuity.local import connection

    conn = connection.discover(Path.cwd())
    return connection.require_vault(conn), conn.device, conn.project


class Audience(str, Enum):
    main = "main"
    subagent = "subagent"


def recall(
    terms: Annotated[
        list[str],
        typer.Argument(
            metavar="TERMS...",
            help="Words to look for; put a phrase in double quotes inside the argument: '\"write path\"'.",
            show_default=False,
        ),
    ],
    audience: Annotated[
        Audience, typer.Option("--for", help="Whose allowance: main (12 KiB) or subagent (8 KiB).")
    ] = Audience.main,
    limit: Annotated[
        int, typer.Option("--limit", min=1, help="At most this many whole notes.")
    ] = tunables.RECALL_DEFAULT_LIMIT,
    as_json: JsonOption = False,
) -> None:
    """Print the approved notes that best match TERMS, whole, inside the warm allowance.

    TERMS are words, matched with their inflections (migration finds migrations, caching finds
    cache) and at identifier boundaries (cache finds cache_dir and cacheDir, never cacheable); put a
    phrase in double quotes inside one argument: '"write path"'. A word that starts with "-" and is
    not one of the options below is a term too (--max-errors, sed -i). Notes matching more and rarer
    terms come first; when no note fits enough of the terms, nothing is returned.
    """
    from continuity.recall import search as core

    root, device, project = _connected()
    found = core.recall(root, device, project, terms, audience=audience.value, limit=limit)
    report(found.to_json(), as_json, found.text)
    for skipped in found.skipped:
        if skipped.reason != "secret":
            warn(f"lifecycle: note: {skipped.describe()}; 'lifecycle doctor' checks every note")
            continue
        warn(
            f"lifecycle: note: {skipped.path} was left out for secret-like content; remove it, or mark a "
            "false positive with 'pragma: allowlist secret' on that line (see 'lifecycle scan')"
        )


def _clean(value: str) -> str:
    """Journal text comes from other computers: no control characters or tag shapes reach the screen."""
    from continuity.brief.escape import escape_text

    return " ".join(escape_text(value).split()) or "-"


def _line(entry: Entry) -> str:
    parts = [_clean(entry.ts), _clean(entry.device), _clean(entry.op), _clean(entry.id or "-"), _clean(entry.path)]
    if entry.sha256:
        parts.append("sha256:" + _clean(entry.sha256)[:12])
    return "  ".join(parts)


def _summary(found: LogSearch) -> str:
    count = len(found.results)
    noun = "entry" if count == 1 else "entries"
    journals = "journal" if found.journals == 1 else "journals"
    text = f"{count} {noun}, newest first, from the last {found.used_window_lines} lines of {found.journals} {journals}"
    if found.truncated:
        text += "; more may match (raise --limit or --window)"
    if found.malformed:
        text += f"; {found.malformed} malformed {'line' if found.malformed == 1 else 'lines'} skipped"
    return text


def log(
    query: Annotated[
        str | None,
        typer.Argument(
            metavar="[QUERY]",
            help="A literal substring of a field value, or /REGEX/. Without it: the newest entries.",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, help="At most this many entries.")
    ] = tunables.LOG_DEFAULT_LIMIT,
    window: Annotated[
        int,
        typer.Option(
            "--window",
            min=1,
            max=tunables.LOG_MAX_WINDOW_LINES,
            help="Lines read from the end of each journal first (grows fourfold while too few match).",
        ),
    ] = tunables.LOG_DEFAULT_WINDOW_LINES,
    as_json: JsonOption = False,
) -> None:
    """Search every device's write journal, newest entries first.

    QUERY is a literal, case-sensitive substring of a field value (device, op, id, path, sha256), or a
    regular expression written /REGEX/. Without QUERY the newest entries are listed.
    """
    from continuity.recall import journal_search

    journal_search.compile_query(query)  # a bad expression is a usage error, before anything is read
    root, _device, _project = _connected()
    found = journal_search.search(root, query, limit=limit, window=window)
    if as_json:
        emit_json(found.to_json())
        return
    for entry in found.results:
        emit(_line(entry))
    emit(_summary(found))


def register(app: typer.Typer) -> None:
    # A query word may start with `-` (`--max-errors`, `sed -i`): whatever is not one of recall's own
    # options is a term; `--` still ends the options.
    app.command(context_settings={"ignore_unknown_options": True})(recall)
    app.command()(log)
