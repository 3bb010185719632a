"""`lifecycle lease acquire|release|status`: the advisory writer lease."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from continuity import tunables
from continuity.cli.common import JsonOption, emit, emit_json, warn
from continuity.cli.memory import interactive
from continuity.errors import UsageError

if TYPE_CHECKING:
    from continuity.records.leases import LeaseStatus
    from continuity.sync.leases import Published

lease_app = typer.Typer(
    help="The advisory writer lease: one writing computer at a time (exit 4 when another holds it).",
    no_args_is_help=True,
)

MAX_TTL_DAYS = tunables.LEASE_MAX_TTL_SECONDS // 86400
VIEW_NOTE = (
    "this is what this computer can see of the synchronized vault; another computer's lease may not have synced yet"
)


def _report(current: LeaseStatus, json_out: bool, extra: dict[str, object] | None = None) -> None:
    for rel, message in current.invalid:
        warn(f"lifecycle: warning: ignored {rel}: {message}")
    if json_out:
        document = current.to_json()
        if extra:
            document.update(extra)
        emit_json(document)
    else:
        emit(current.line())


def _publish(vault: Path, device: str, releasing: bool, removed: tuple[str, ...] = ()) -> Published:
    """With a Git vault, push the lease change (exit 4 when another lease landed first); say when only local."""
    from continuity.sync import leases

    published = leases.publish(vault, device, releasing=releasing, removed=removed)
    warn(f"note: {published.note}")
    return published


@lease_app.command()
def acquire(
    ttl: Annotated[str, typer.Option(help=f"How long: 90s, 30m, 2h, 1h30m, 7d (at most {MAX_TTL_DAYS}d).")] = "2h",
    task: Annotated[str | None, typer.Option(help="A few words on what this computer is doing.")] = None,
    json_out: JsonOption = False,
) -> None:
    """Take this computer's lease, or extend it (exit 4 while another device holds one)."""
    from continuity.records.leases import status as lease_status
    from continuity.store import lease, writer
    from continuity.sync import leases

    seconds = lease.parse_duration(ttl)
    _conn, ctx = writer.connect(Path.cwd(), on_wait=warn)
    # With a remote, judge by what the remote records now: a lease released elsewhere is gone there.
    leases.refresh(ctx.vault, ctx.device)
    taken = writer.acquire_lease(ctx, seconds, task)
    published = _publish(ctx.vault, ctx.device, releasing=False)
    _report(lease_status(ctx.vault, ctx.device) if published.remote else taken, json_out)


@lease_app.command()
def release(
    force: Annotated[
        bool,
        typer.Option("--force", help="Also remove other devices' lease files (when that device is gone)."),
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", help="With --force: remove another device's unexpired lease without asking.")
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """Give the lease back (exit 4 for another device's unexpired lease unless --force).

    Removing another device's unexpired lease asks first on a terminal (or needs --yes); it is
    journaled, and that device is told in its `lease status` and `doctor`.
    """
    from continuity.records import leases
    from continuity.store import writer

    _conn, ctx = writer.connect(Path.cwd(), on_wait=warn)
    if force:
        _confirm_removal(leases.status(ctx.vault, ctx.device, ctx.clock()), yes)
    result = writer.release_lease(ctx, force)
    _publish(ctx.vault, ctx.device, releasing=True, removed=tuple(item.rel for item in result.released))
    if not json_out:
        for item in result.released:
            emit(f"released device={item.device}")
    _report(result.left, json_out, {"released": [item.device for item in result.released]})


def _confirm_removal(current: LeaseStatus, yes: bool) -> None:
    """Another device's unexpired lease is removed only with the person's say-so (UsageError otherwise)."""
    from continuity.records.leases import utcnow
    from continuity.vault import notes

    moment = utcnow()
    held = [item for item in current.leases if item.device != current.device and not item.expired(moment)]
    if not held or yes:
        return
    names = ", ".join(
        f"{item.device} (until {notes.format_utc(item.expires)}{', ' + item.task if item.task else ''})"
        for item in held
    )
    if not interactive():
        raise UsageError(
            f"--force would remove the unexpired lease of {names}; no terminal to confirm on: add --yes "
            "if that device has stopped writing"
        )
    warn(f"the writer lease of {names} has not expired: that device may still be writing the vault")
    if not typer.confirm("remove it anyway? it will be told when it next looks", default=False, err=True):
        raise UsageError("nothing was removed")


@lease_app.command()
def status(json_out: JsonOption = False) -> None:
    """Print lock=none|held|foreign|stale as this computer sees the synchronized vault."""
    from continuity.records import leases, removals
    from continuity.store import writer

    _conn, ctx = writer.connect(Path.cwd())
    current = leases.status(ctx.vault, ctx.device)
    own = current.own()
    removed = removals.seen_by(ctx.vault, ctx.device, own.acquired if own else None, ctx.clock())
    _report(current, json_out, {"removed": removed.to_json() if removed else None})
    if not json_out:
        if removed is not None:
            emit(f"removed: {removed.describe()}")
        warn(f"note: {VIEW_NOTE}")


@lease_app.command()
def overlaps(
    reviewed: Annotated[
        bool, typer.Option("--reviewed", help="Mark every write listed here as reviewed, on every computer.")
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """List writes made while another computer held the lease (found at sync), until they are reviewed."""
    from continuity.records import overlaps as found_overlaps
    from continuity.store import lease, records, writer

    _conn, ctx = writer.connect(Path.cwd(), on_wait=warn)
    listed = found_overlaps.open_overlaps(ctx.vault)
    if reviewed and listed:
        with lease.local_lock(ctx.vault, on_wait=warn):
            records.mark_reviewed(ctx.vault, ctx.device, [item.id for item in listed])
    if json_out:
        emit_json({"version": 1, "overlaps": [item.to_json() for item in listed], "reviewed": reviewed})
        return
    for item in listed:
        emit(item.describe())
    if not listed:
        emit("no write made under another computer's lease is waiting for review")
    elif reviewed:
        emit(f"marked {len(listed)} as reviewed; run 'lifecycle sync' so the other computers see it")


def register(app: typer.Typer) -> None:
    app.add_typer(lease_app, name="lease")
