"""`lifecycle recall …` without typer: the command an agent runs in the middle of a task.

Loading typer, click and every command module costs a warm recall more than the search itself, so
`main` answers a plain recall on its own: `recall`, then terms and the options `--for main|subagent`,
`--limit N` (N at least 1) and `--json`, in any order, as `--option value` or `--option=value`, a
repeated option's last value winning, as click reads them. Anything else (help, `--`, an unknown or
malformed option, a value click would refuse, no term, an output stream click would re-encode,
Windows) returns None, and the typer application answers, so every message about the command line
is click's. A plain recall prints what the typer command prints (both call `recall_output`), and its
failures go through the same funnel (`continuity.cli.failure`): the same line, the same exit code.
"""

from __future__ import annotations

import sys
from pathlib import Path

from continuity import limits
from continuity.errors import EXIT_OK, EXIT_USAGE

LABEL = "lifecycle"


def connected() -> tuple[Path, str, str]:
    """The connected vault, this device and this project (NotConnected, exit 3, when there is none)."""
    from continuity import connection

    conn = connection.discover(Path.cwd())
    return connection.require_vault(conn), conn.device, conn.project


def recall_output(terms: list[str], audience: str, limit: int, as_json: bool) -> str:
    """What `lifecycle recall` prints: the wrapped notes, or one JSON document."""
    from continuity import recall as core
    from continuity.cli.output import json_text

    root, device, project = connected()
    found = core.recall(root, device, project, terms, audience=audience, limit=limit)
    return json_text(found.to_json()) if as_json else found.text


def parse_recall(args: list[str]) -> tuple[list[str], str, int, bool] | None:
    """(terms, audience, limit, as_json) of a plain recall's arguments, else None."""
    terms: list[str] = []
    audience, limit, as_json = "main", limits.RECALL_DEFAULT_LIMIT, False
    rest = iter(args)
    for arg in rest:
        if not arg.startswith("-"):
            terms.append(arg)
            continue
        if arg == "--json":
            as_json = True
            continue
        name, equals, value = arg.partition("=")
        if name not in ("--for", "--limit"):
            return None
        if not equals:
            following = next(rest, None)  # click takes the next argument as the value, whatever it is
            if following is None:
                return None
            value = following
        if name == "--for":
            from continuity.recall import AUDIENCES  # here: `recall --help` should not load the search

            if value not in AUDIENCES:
                return None
            audience = value
        elif value.isascii() and value.isdigit() and len(value) < 10 and int(value) >= 1:
            limit = int(value)
        else:
            return None
    return (terms, audience, limit, as_json) if terms else None


def _plain_streams() -> bool:
    """True when click would write to stdout and stderr as they are (it re-encodes an ASCII stream)."""
    import codecs

    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        if not encoding or codecs.lookup(encoding).name == "ascii":
            return False
    return True


def main(argv: list[str]) -> int | None:
    """Answer a plain `recall` command line and return its exit code; None for everything else."""
    if not argv or argv[0] != "recall" or sys.platform == "win32" or not _plain_streams():
        return None
    parsed = parse_recall(argv[1:])
    if parsed is None:
        return None
    from continuity.cli import failure

    try:
        text = recall_output(*parsed)
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except (EOFError, KeyboardInterrupt):
        sys.stderr.write(f"\n{LABEL}: error: aborted\n")  # click's empty line, then the funnel's
        return EXIT_USAGE
    except Exception as exc:
        line, code = failure(exc, LABEL)
        sys.stderr.write(line + "\n")
        return code
    return EXIT_OK
