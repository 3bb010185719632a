"""`lifecycle sync`: the vault through a private Git remote (commit, fetch, integrate, push)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from continuity.cli.options import JsonOption
from continuity.cli.output import emit, emit_json, warn

if TYPE_CHECKING:
    from continuity.sync.engine import SyncResult


def _text(result: SyncResult) -> list[str]:
    lines = list(result.recovered)
    files = len(result.staged) + len(result.removed)
    lines.append(f"committed {files} file(s)" if result.committed else "nothing new to commit")
    for item in result.conflicts:
        lines.append(f"both computers changed {item.path}: the remote's version stays, ours is {item.copy}")
    if result.offline:
        lines.append(f"offline: {result.offline}; the commit waits for the next sync")
    elif result.pushed:
        lines.append(f"pushed ({result.integrated}, {result.attempts} attempt(s))")
    elif result.integrated == "theirs":
        lines.append("brought in the remote's commits; nothing to push")
    else:
        lines.append("up to date with the remote")
    if result.privacy == "unknown":
        lines.append("note: whether the remote is private could not be told (offline); make sure it is")
    return lines


def sync(
    remote: Annotated[
        str | None, typer.Option("--remote", help="Make this vault a Git vault with that remote (once).")
    ] = None,
    install_hourly: Annotated[
        bool, typer.Option("--install-hourly", help="Install an hourly pinned 'lifecycle sync' (cron).")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="With --install-hourly: show the entry only.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="Print nothing unless something fails.")] = False,
    json_out: JsonOption = False,
) -> None:
    """Commit this computer's changes (secret-gated), fetch, integrate, push (exit 5 if a file was held back)."""
    from continuity.errors import EXIT_NOT_CONNECTED, EXIT_REJECTED
    from continuity.local import connection
    from continuity.sync import engine

    conn = connection.discover(Path.cwd())
    vault = connection.require_vault(conn)
    if install_hourly:
        from continuity.local.repo import find_repo_root
        from continuity.sync import schedule

        installed = schedule.install(find_repo_root(Path.cwd()) or Path.cwd(), dry_run=dry_run)
        if json_out:
            emit_json(
                {
                    "version": 1,
                    "scheduler": installed.scheduler,
                    "entry": installed.entry,
                    "sha256": installed.sha256,
                    "changed": installed.changed,
                    "dry_run": installed.dry_run,
                }
            )
        else:
            emit(
                installed.entry
                if dry_run
                else f"{'installed' if installed.changed else 'already installed'}: hourly sync"
            )
        return
    if remote is not None:
        result = engine.connect_remote(vault, conn.device, remote)
    else:
        result = engine.sync(vault, conn.device, on_wait=warn)
    if json_out:
        emit_json(result.to_json())
    elif not quiet:
        for line in _text(result):
            emit(line)
    for item in result.held:
        warn(f"lifecycle: held back: {item.message()}")
    if result.held:
        raise typer.Exit(EXIT_REJECTED)
    if result.offline:
        if not json_out:
            warn(f"lifecycle: error: the remote could not be reached ({result.offline})")
        raise typer.Exit(EXIT_NOT_CONNECTED)


def register(app: typer.Typer) -> None:
    app.command()(sync)
