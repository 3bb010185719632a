"""`lifecycle doctor`, `lifecycle budget` and `lifecycle scan`: the health check, the storage review, and
the secret gate over notes.

`scan [PATH…]` serves people and pre-commit: given paths, it needs no connection (pre-commit runs it
inside a vault's own repository with the staged files' names, and people run it on a folder of
drafts). Without paths it checks the whole connected vault (exit 3 when there is none). Anything
found ends with exit 5 after the report.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from continuity import limits
from continuity.cli.common import JsonOption, emit, emit_json, report, warn
from continuity.cli.review import doctor_check
from continuity.errors import InputRejected

if TYPE_CHECKING:
    from continuity.health.report import Check, Report

_MIN = 1


def table(report: Report, width: int = 100, omit: Check | None = None) -> list[str]:
    """A plain-text table (level, check, message), each message wrapped under its column."""
    from continuity.health.report import printable

    id_width = max((len(c.id) for c in report.checks), default=5)
    indent = 7 + id_width + 2
    rows = [item for item in report.checks if item is not omit]
    lines = [f"{'LEVEL':<7}{'CHECK':<{id_width}}  MESSAGE"] if rows else []
    for item in rows:
        wrapped = textwrap.wrap(item.message, max(40, width - indent), break_on_hyphens=False) or [""]
        lines.append(f"{item.level:<7}{item.id:<{id_width}}  {wrapped[0]}")
        lines.extend(" " * indent + rest for rest in wrapped[1:])
    result = report.scan
    scanned = "scan: not run"
    if result is not None:
        done = "complete" if result.complete else "incomplete"
        scanned = f"scan: {result.entries:,} entries, {result.dirs:,} folders, {done}"
    resolved = report.resolved
    via = f" ({resolved['found_via']})" if resolved["found_via"] else ""
    env = ", ".join(f"{k}={v if v is not None else '(unset)'}" for k, v in resolved["environment"].items())
    lines += [
        *([""] if rows else []),
        f"doctor: {report.count('error')} error(s), {report.count('warn')} warning(s); {scanned}",
        f"resolved: connection {resolved['connection'] or '(none)'}{via}; vault {resolved['vault'] or '(none)'}; "
        f"startup cache {resolved['startup_cache']}",
        printable(f"environment: {env}"),
    ]
    return lines


def doctor(
    json_out: JsonOption = False,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 on any warning or an incomplete scan, too.")] = False,
    fix: Annotated[
        bool,
        typer.Option("--fix", help="First remove temporary files this tool's writers left (older than ten minutes)."),
    ] = False,
) -> None:
    """Check whether startup restoration is ready here, and say what to do when it is not.

    Exit 0 without errors, 1 with any error (with --strict also on warnings or an incomplete scan),
    3 when this checkout is not connected or the vault is unreachable; with --fix, 4 while another
    device holds the writer lease.
    """
    from continuity.health import doctor as core

    if fix:
        from continuity.store import cleanup

        for rel in cleanup.fix(Path.cwd(), on_wait=warn):
            warn(f"removed leftover temporary file {rel}")

    report = core.run(Path.cwd(), extra=(doctor_check,))  # what waits on the person, naming `lifecycle review`
    for trace in report.tracebacks:
        warn(trace.rstrip("\n"))
    failed = None
    if not report.connected:
        failed = next(c for c in report.checks if c.level == "error")
        warn(f"lifecycle: error: {failed.message}")
    if json_out:
        emit_json(report.to_json())
    else:
        width = shutil.get_terminal_size((100, 24)).columns
        # Said once: the check that failed is the error line on stderr, so the table leaves it out.
        for line in table(report, max(80, width), omit=failed):
            emit(line)
    raise typer.Exit(report.exit_code(strict))


def budget(
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 on a warning, an over-limit or an incomplete walk.")
    ] = False,
    json_out: JsonOption = False,
    working_set_bytes: Annotated[
        int, typer.Option("--working-set-bytes", min=_MIN, help="Working-set byte limit.")
    ] = limits.BUDGET_WORKING_SET_BYTES,
    working_set_files: Annotated[
        int, typer.Option("--working-set-files", min=_MIN, help="Working-set file limit.")
    ] = limits.BUDGET_WORKING_SET_FILES,
    file_bytes: Annotated[
        int, typer.Option("--file-bytes", min=_MIN, help="Limit for any one working-set file.")
    ] = limits.BUDGET_FILE_BYTES,
    vault_bytes: Annotated[
        int, typer.Option("--vault-bytes", min=_MIN, help="Whole-vault byte limit.")
    ] = limits.BUDGET_VAULT_BYTES,
    vault_files: Annotated[
        int, typer.Option("--vault-files", min=_MIN, help="Whole-vault file limit.")
    ] = limits.BUDGET_VAULT_FILES,
    warn_ratio: Annotated[
        float, typer.Option("--warn-ratio", help="Warn from this share of a limit (above 0, at most 1).")
    ] = limits.BUDGET_WARN_RATIO,
) -> None:
    """Review storage against its budgets: aggregate figures only, never a file name.

    Read-only and advisory: exit 0 unless --strict, then 1 on warning, over or incomplete.
    Spare capacity is never a reason to create memory.
    """
    from continuity.local import connection
    from continuity.vault import budget as core

    thresholds = core.Thresholds(
        working_set_bytes=working_set_bytes,
        working_set_files=working_set_files,
        file_bytes=file_bytes,
        vault_bytes=vault_bytes,
        vault_files=vault_files,
        warn_ratio=warn_ratio,
    )
    root = connection.require_vault(connection.discover(Path.cwd()))
    report = core.walk(root, thresholds)
    if json_out:
        emit_json(report.to_json())
    else:
        for line in core.lines(report):
            emit(line)
    raise typer.Exit(report.exit_code(strict))


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
    app.command()(doctor)
    app.command()(budget)
    app.command()(scan)
