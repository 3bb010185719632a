"""`lifecycle outbox …` and `scripts/artifactctl.py …`: one set of commands, two entries.

The commands are defined once by `add_commands`, which both the `outbox` group of `lifecycle` and the
standalone `artifactctl` app call, so the two can never drift apart. Core modules are imported inside
each command to keep `--help` cheap.
"""

from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from continuity.cli.common import JsonOption, emit_json
from continuity.cli.funnel import new_app
from continuity.errors import ContinuityError

HELP = (
    "The delivery outbox: output/ is a git-ignored folder whose packages are deleted for good seven days "
    "after delivery. It is not memory."
)

NowOpt = Annotated[
    str | None,
    typer.Option("--now", metavar="ISO", help="Act as if the time were ISO (UTC; 'Z' accepted).", hidden=True),
]


def _now(value: str | None) -> datetime | None:
    from continuity.outbox.folder import parse_time

    return parse_time(value) if value else None


def _emit(doc: dict[str, Any]) -> None:
    emit_json({"version": 1, **doc})


def _plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


def deliver(
    files: Annotated[list[Path], typer.Argument(metavar="FILE...", help="Final files to hand over.")],
    name: Annotated[
        str | None, typer.Option("--name", help="A label for the package (default: the first file's name).")
    ] = None,
    as_json: JsonOption = False,
    now: NowOpt = None,
) -> None:
    """Copy FILEs into a new package under output/ and print its absolute path and exact expiry."""
    from continuity.outbox.folder import format_time, require_repo
    from continuity.outbox.package import deliver as run

    result = run(require_repo(Path.cwd()), files, name=name, now=_now(now))
    if as_json:
        _emit(
            {
                "package": result.package,
                "path": str(result.path),
                "files": [{"name": f.name, "bytes": f.bytes, "sha256": f.sha256} for f in result.files],
                "created": format_time(result.created),
                "expires": format_time(result.expires),
            }
        )
        return
    if result.activated:
        typer.echo(f"activated {result.path.parent}: everything in it now expires seven days after arrival")
    typer.echo(f"delivered {_plural(len(result.files), 'file')} to {result.path}")
    typer.echo(f"expires {format_time(result.expires)} (then it is permanently deleted)")


def inspect(
    package: Annotated[str, typer.Argument(help="A package name in output/, or the path to one.")],
    as_json: JsonOption = False,
) -> None:
    """Show a package's recorded evidence and whether each file is still intact (exit 1 when not)."""
    from continuity.outbox.folder import format_time
    from continuity.outbox.package import inspect as run, locate_package

    repo, name = locate_package(Path.cwd(), package)
    result = run(repo, name)
    if as_json:
        _emit(
            {
                "package": result.package,
                "path": str(result.path),
                "managed": result.managed,
                "created": format_time(result.created),
                "expires": format_time(result.expires),
                "intact": result.intact,
                "files": [
                    {"name": f.name, "bytes": f.bytes, "sha256": f.sha256, "status": f.status} for f in result.files
                ],
                "unexpected": list(result.unexpected),
            }
        )
    else:
        typer.echo(f"package  {result.package}")
        typer.echo(f"path     {result.path}")
        typer.echo(f"created  {format_time(result.created)}")
        typer.echo(f"expires  {format_time(result.expires)}{'' if result.managed else ' (not delivered here)'}")
        typer.echo(f"intact   {'yes' if result.intact else 'no'}")
        for f in result.files:
            typer.echo(f"  {f.status:<10} {f.bytes:>12}  sha256:{f.sha256}  {f.name}")
        for extra in result.unexpected:
            typer.echo(f"  {'unexpected':<10} {extra}")
    if not result.intact:
        raise typer.Exit(1)


def list_(as_json: JsonOption = False) -> None:
    """List the outbox's packages (newest first) and other entries, with when each is deleted."""
    from continuity.outbox.folder import format_time, require_repo
    from continuity.outbox.listing import list_outbox

    found = list_outbox(require_repo(Path.cwd()))
    if as_json:
        _emit(
            {
                "outbox": str(found.outbox),
                "activated": format_time(found.activated) if found.activated else None,
                "entries": [entry.to_json() for entry in found.entries],
            }
        )
        return
    if found.foreign:
        typer.echo(f"not swept: {found.foreign}", err=True)
    if not found.entries:
        typer.echo(f"{found.outbox} holds no packages")
        return
    for entry in found.entries:
        when = f"expires {format_time(entry.expires)}" if entry.expires else "not scheduled (outbox not activated)"
        if entry.problem:
            what = f"unreadable manifest: {entry.problem}"
        elif entry.files is not None:
            what = f"{_plural(entry.files, 'file')}, {entry.bytes:,} bytes"
        else:
            what = entry.kind
        typer.echo(f"{entry.name}  {when}  {what}")


def sweep(
    now: Annotated[
        str | None,
        typer.Option("--now", metavar="ISO", help="Act as if the time were ISO (UTC; 'Z' accepted)."),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what would happen; change nothing.")] = False,
    as_json: JsonOption = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="Print nothing unless something fails.")] = False,
    hook: Annotated[
        bool,
        typer.Option("--hook", help="For hooks and schedulers: never print, never fail, never wait."),
    ] = False,
) -> None:
    """Delete expired packages; enroll other entries of output/ for deletion seven days after discovery."""
    if hook:
        from continuity.outbox.sweep import hook_sweep

        hook_sweep(Path.cwd())
        return
    from continuity.outbox.folder import format_time, require_repo
    from continuity.outbox.sweep import sweep as run

    result = run(require_repo(Path.cwd()), now=_now(now), dry_run=dry_run)
    if as_json:
        _emit(
            {
                "outbox": str(result.outbox),
                "now": format_time(result.now),
                "activated": result.activated,
                "dry_run": result.dry_run,
                "deleted_packages": len(result.deleted_packages),
                "deleted_unmanaged": len(result.deleted_unmanaged),
                "enrolled": len(result.enrolled),
                "pending": result.pending,
                "failed": len(result.failed),
                "deleted": sorted((*result.deleted_packages, *result.deleted_unmanaged)),
                "next_expiry": format_time(result.next_expiry) if result.next_expiry else None,
            }
        )
    elif not quiet:
        if not result.activated:
            typer.echo(f"{result.outbox} is not activated; nothing to sweep")
        else:
            verb = "would delete" if result.dry_run else "deleted"
            typer.echo(
                f"{verb} {_plural(len(result.deleted_packages), 'package')} and "
                f"{_plural(len(result.deleted_unmanaged), 'other entry', 'other entries')}; "
                f"{'would enroll' if result.dry_run else 'enrolled'} {len(result.enrolled)}; "
                f"{result.pending} waiting in {result.outbox}"
            )
            if result.next_expiry:
                typer.echo(f"next expiry {format_time(result.next_expiry)}")
    if result.failed:
        raise ContinuityError(f"could not delete {', '.join(result.failed)} in {result.outbox}")


def install_sweeper(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print what would be installed; change nothing.")] = False,
    as_json: JsonOption = False,
    now: NowOpt = None,
) -> None:
    """Activate an empty outbox and install an hourly sweep pinned to artifactctl.py's SHA-256."""
    from continuity.outbox.folder import require_repo
    from continuity.outbox.sweep import install_sweeper as run

    result = run(require_repo(Path.cwd()), dry_run=dry_run, now=_now(now))
    if as_json:
        _emit(
            {
                "outbox": str(result.outbox),
                "scheduler": result.scheduler,
                "entry": result.entry,
                "marker": result.marker,
                "script": str(result.script),
                "sha256": result.sha256,
                "activated": result.activated,
                "changed": result.changed,
                "dry_run": result.dry_run,
            }
        )
        return
    would = result.dry_run
    if result.activated:
        typer.echo(f"{'would activate' if would else 'activated'} {result.outbox}")
    where = "crontab" if result.scheduler == "cron" else "Task Scheduler"
    if not result.changed:
        typer.echo(f"the hourly sweeper is already installed in your {where}:")
    else:
        typer.echo(f"{'would install' if would else 'installed'} this hourly entry in your {where}:")
    typer.echo(f"  {result.entry}")
    typer.echo(f"pinned to {result.script} sha256 {result.sha256}")


def add_commands(target: typer.Typer) -> None:
    target.command("deliver")(deliver)
    target.command("inspect")(inspect)
    target.command("list")(list_)
    target.command("sweep")(sweep)
    target.command("install-sweeper")(install_sweeper)


def standalone_app() -> typer.Typer:
    """The `artifactctl` app: the same commands at the top level."""
    app = new_app(HELP)
    add_commands(app)
    return app


outbox_app = typer.Typer(
    help=HELP,
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
add_commands(outbox_app)


def register(app: typer.Typer) -> None:
    app.add_typer(outbox_app, name="outbox")
