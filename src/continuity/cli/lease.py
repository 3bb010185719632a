"""`lifecycle lease acquire|release|status`: the advisory writer lease."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from continuity.cli.options import JsonOption
from continuity.cli.output import emit, emit_json, warn

if TYPE_CHECKING:
    from continuity.store.lease import LeaseStatus
    from continuity.sync.leases import Published

lease_app = typer.Typer(
    help="The advisory writer lease: one writing computer at a time (exit 4 when another holds it).",
    no_args_is_help=True,
)

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
    ttl: Annotated[str, typer.Option(help="How long: a whole number and s, m, h or d (90s, 30m, 2h, 7d).")] = "2h",
    task: Annotated[str | None, typer.Option(help="A few words on what this computer is doing.")] = None,
    json_out: JsonOption = False,
) -> None:
    """Take this computer's lease, or extend it (exit 4 while another device holds one)."""
    from continuity.store import lease, writer

    seconds = lease.parse_duration(ttl)
    _conn, ctx = writer.connect(Path.cwd(), on_wait=warn)
    taken = writer.acquire_lease(ctx, seconds, task)
    published = _publish(ctx.vault, ctx.device, releasing=False)
    _report(lease.status(ctx.vault, ctx.device) if published.remote else taken, json_out)


@lease_app.command()
def release(
    force: Annotated[
        bool,
        typer.Option("--force", help="Also remove other devices' lease files (when that device is gone)."),
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """Give the lease back (exit 4 for another device's unexpired lease unless --force)."""
    from continuity.store import writer

    _conn, ctx = writer.connect(Path.cwd(), on_wait=warn)
    result = writer.release_lease(ctx, force)
    _publish(ctx.vault, ctx.device, releasing=True, removed=tuple(item.rel for item in result.released))
    if not json_out:
        for item in result.released:
            emit(f"released device={item.device}")
    _report(result.left, json_out, {"released": [item.device for item in result.released]})


@lease_app.command()
def status(json_out: JsonOption = False) -> None:
    """Print lock=none|held|foreign|stale as this computer sees the synchronized vault."""
    from continuity.store import lease, writer

    _conn, ctx = writer.connect(Path.cwd())
    current = lease.status(ctx.vault, ctx.device)
    _report(current, json_out)
    if not json_out:
        warn(f"note: {VIEW_NOTE}")


def register(app: typer.Typer) -> None:
    app.add_typer(lease_app, name="lease")
