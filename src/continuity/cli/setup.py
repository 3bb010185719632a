"""`lifecycle init`, `lifecycle render` and `lifecycle sync` (the vault through a private Git remote)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from continuity.cli.common import Event, Format, Harness, JsonOption, emit, emit_json, warn
from continuity.errors import EXIT_INTERRUPTED, EXIT_NOT_CONNECTED, EXIT_REJECTED, UsageError

if TYPE_CHECKING:
    from continuity.brief.render import Brief
    from continuity.sync.engine import SyncResult


def init(
    vault: Annotated[Path, typer.Option("--vault", help="The vault folder (absolute or relative to here).")],
    new: Annotated[
        bool, typer.Option("--new", help="Create the vault from the template (folder absent or empty).")
    ] = False,
    device: Annotated[str | None, typer.Option(help="This computer's id (default: host name + suffix).")] = None,
    project: Annotated[
        str | None,
        typer.Option(help="The project id (default: the vault's project for this repository, else the folder's name)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing, different connection.")] = False,
    clone: Annotated[
        str | None, typer.Option("--clone", help="First clone the vault from this private Git remote into --vault.")
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Connect this checkout to a vault on this computer (idempotent)."""
    from continuity.store import onboard

    if clone is not None:
        from continuity.sync import engine

        if new:
            raise UsageError("--clone and --new exclude each other: a cloned vault already exists")
        engine.clone(
            clone,
            Path(vault).expanduser().absolute(),
            device or "new-computer",
            on_refused=lambda why: warn(f"lifecycle: held back: {why}"),
        )
    result = onboard.init(Path.cwd(), vault, new=new, device=device, project=project, force=force)
    if json_out:
        emit_json(
            {
                "version": 1,
                "connection": str(result.connection_file),
                "vault": str(result.vault),
                "device": result.device,
                "project": result.project,
                "project_found_by": result.found_by,
                "repository": result.identity.repository,
                "root_commit": result.identity.root_commit,
                "created_vault": result.created_vault,
                "created": result.created,
                "changed": result.changed_connection or bool(result.created) or result.created_vault,
            }
        )
        return
    if result.created_vault:
        emit(f"created a new vault at {result.vault}")
    for other in result.neighbours:
        warn(f"lifecycle: note: {other} beside it is also a vault; a second vault is synchronized on its own")
    found = FOUND_BY.get(result.found_by)
    if found:
        emit(found.format(project=result.project, identity=result.identity.describe()))
    for rel in result.created:
        emit(f"created {rel}")
    state = "connected" if result.changed_connection else "already connected"
    emit(f"{state}: device {result.device}, project {result.project} -> {result.vault}")
    if result.exclude_added:
        emit(f"git now ignores {result.connection_file.name} (via .git/info/exclude)")
    if result.created_vault:
        emit(
            "next: fill in the ## Brief sections with 'lifecycle edit device' (this computer's DEVICE.md), "
            "'lifecycle edit project' (PROJECT.md), 'lifecycle edit soul' and 'lifecycle edit preferences', "
            "then run 'lifecycle render' or 'lifecycle doctor'"
        )
        return
    for line in _joined(onboard.profiles_filled(result.vault, result.project, result.device)):
        emit(line)
    if clone is not None:
        emit("then run 'lifecycle sync' to publish this computer's device profile")


_SHARED = {"soul": "the soul", "preferences": "the preferences", "project": "the project profile"}


def _joined(filled: dict[str, bool | None]) -> list[str]:
    """What a computer joining a vault finds there, and what is left for it: its own device profile.

    The shared profiles are written once, on any computer; inviting each new computer to fill them in
    again would invite two conflicting edits of one file."""
    state = {True: "", False: " (not filled in yet)", None: " (missing or unusable: see 'lifecycle doctor')"}
    there = [_SHARED[name] + state[filled[name]] for name in _SHARED]
    lines = [f"already in the vault: {', '.join(there)}"]
    if filled["device"]:
        lines.append("nothing is left for this computer: its device profile is filled in")
    else:
        lines.append(
            "left for this computer: its device profile (what an agent must know here): 'lifecycle edit device'"
        )
    return lines


# What init says about how it chose the project (nothing when it was given or already connected).
FOUND_BY = {
    "repository": "this repository ({identity}) is already known to the vault as project {project}: connecting to it",
    "root_commit": "this repository ({identity}) is already known to the vault as project {project}: connecting to it",
    "folder": "connecting to the vault's project {project}, named like this checkout (no identity to compare)",
    "new": "new project {project} for this repository ({identity})",
}


def render(
    event: Annotated[Event, typer.Option(help="Which start to render for.")] = Event.SessionStart,
    fmt: Annotated[
        Format, typer.Option("--format", help="text: the brief; json: the brief with its figures.")
    ] = Format.text,
    harness: Annotated[Harness, typer.Option(help="Whose limits to respect.")] = Harness.codex,
    explain: Annotated[
        bool, typer.Option("--explain", help="Also list each source and compare with the last delivery.")
    ] = False,
) -> None:
    """Print the startup brief (exit 0 restored, 1 partial, 3 unavailable)."""
    from continuity.brief import build

    if explain:
        if fmt is Format.json:
            raise UsageError("--explain prints text; for the figures as JSON use --format json without --explain")
        explain_command(event.value, harness.value)
    text, code = build.render_command(Path.cwd(), event.value, fmt.value, harness.value)
    emit(text)
    raise typer.Exit(code)


def explain(brief: Brief) -> str:
    """Each source with its bytes, digest, inclusion and reason; the brief's digest; the last deliveries."""
    from continuity.hook import receipts
    from continuity.local.repo import find_repo_root

    lines = [f"event {brief.event}, harness {brief.harness}: status {brief.status}"]
    for s in brief.sources:
        state = "included" if s.included else f"left out ({s.reason})"
        digest = s.sha256[:16] if s.sha256 else "-"
        size = "-" if s.size is None else f"{s.size} bytes"
        lines.append(f"  {s.name:<12} {state:<24} {size:>12}  sha256 {digest}  {s.path or '(missing)'}")
    lines.append(
        f"brief: {brief.bytes} bytes of {brief.ceiling_bytes}, ~{brief.tokens_estimate} tokens, sha256 {brief.sha256}"
    )
    checkout = find_repo_root(Path.cwd())
    delivered = [d for d in receipts.last_deliveries(checkout) if d["event"] == brief.event]
    for item in delivered:
        same = "same as now" if item["sha256"] == brief.sha256 else "differs from now"
        note = ", with the compaction note" if item["recovery_note"] else ""
        lines.append(
            f"last delivered to {item['harness']} at {item['time']} ({item['source'] or brief.event}{note}): "
            f"{item['status']}, {item['bytes']} bytes, sha256 {item['sha256']} ({same})"
        )
    if not delivered:
        lines.append("no delivery of this event is recorded on this computer for this checkout")
    lines.append("")
    lines.append(brief.text)
    return "\n".join(lines)


def explain_command(event: str, harness_name: str) -> None:
    """`lifecycle render --explain`: print the explanation and leave with render's exit code."""
    from continuity.brief import build, render

    brief = build.build_safely(Path.cwd(), event, harness_name)
    if brief is None:
        brief = render.unavailable(event, harness_name, build.unconnected(Path.cwd()))
    emit(explain(brief))
    raise typer.Exit(build.EXIT_FOR_STATUS[brief.status])


def _conflict_line(path: str, copy: str) -> str:
    return f"both computers changed {path}: the remote's version stays, ours is {copy}; compare the two and keep one"


def _text(result: SyncResult, waiting: int = 0) -> list[str]:
    lines = list(result.recovered)
    files = len(result.staged) + len(result.removed)
    lines.append(f"committed {files} file(s)" if result.committed else "nothing new to commit")
    for item in result.conflicts:
        lines.append(_conflict_line(item.path, item.copy))
    if result.offline:
        lines.append(f"offline: {result.offline}; the commit waits for the next sync")
    elif result.pushed:
        lines.append(f"pushed ({result.integrated}, {result.attempts} attempt(s))")
    elif result.integrated == "theirs":
        lines.append("brought in the remote's commits; nothing to push")
    else:
        lines.append("up to date with the remote")
    if waiting:  # proposed here or on another computer (an agent's propose_note): the person hears of them
        lines.append(f"{waiting} candidate(s) wait for review: 'lifecycle review'")
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
    try:
        if remote is not None:
            result = engine.connect_remote(vault, conn.device, remote)
        else:
            result = engine.sync(vault, conn.device, on_wait=warn)
    except KeyboardInterrupt:
        from continuity.sync import state

        warn(f"lifecycle: error: {state.interrupted_line(vault, conn.device)}")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if json_out:
        emit_json(result.to_json())
    elif not quiet:
        from continuity.memory import inbox

        for line in _text(result, len(inbox.candidates(vault))):
            emit(line)
    else:  # the hourly entry: cron mails what reaches stderr, and a conflict copy waits on the person
        for conflict in result.conflicts:
            warn(f"lifecycle: warning: {_conflict_line(conflict.path, conflict.copy)}")
    for overlap in result.under_lease:  # on stderr, so the hourly entry (--quiet) mails it too
        warn(
            f"lifecycle: warning: {overlap.describe()}; it was pushed and nothing is lost: 'lifecycle doctor' "
            "reports it on every computer until you review it ('lifecycle lease overlaps')"
        )
    for item in result.held:
        warn(f"lifecycle: held back: {item.message()}")
    if result.held:
        raise typer.Exit(EXIT_REJECTED)
    if result.offline:
        if not json_out:
            warn(f"lifecycle: error: the remote could not be reached ({result.offline})")
        raise typer.Exit(EXIT_NOT_CONNECTED)


def register(app: typer.Typer) -> None:
    app.command()(init)
    app.command()(render)
    app.command()(sync)
