"""`lifecycle hook pin [--check]`, `lifecycle hooks install`, `lifecycle hooks show`, and `lifecycle setup`
and `lifecycle uninstall`, which register (and remove) the hooks, the MCP server and the instruction pointer
of one harness in one step (`trust.setup`).

User-scope hooks serve every repository, so `hooks install --scope user` points them at the running
installation (`trust.installation`): a package installation's own copy of the scripts, with its real
interpreter, or, from an editable install, the checkout, which it then says the hooks depend on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from continuity import tunables
from continuity.cli.common import Harness, JsonOption, Scope, emit, emit_json, warn

if TYPE_CHECKING:
    from continuity.trust import registered

hook_app = typer.Typer(
    help="The startup hook's pin: digests that tie a trusted hook to its code.", no_args_is_help=True
)
hooks_app = typer.Typer(
    help="Install the hook handlers into a harness's configuration, and show what is registered.",
    no_args_is_help=True,
)


@hook_app.command("pin")
def pin_command(
    check: Annotated[bool, typer.Option("--check", help="Only check; exit 1 when the pin is stale.")] = False,
    json_out: JsonOption = False,
) -> None:
    """Rewrite the startup hook's digests in this checkout (then trust the hook again in Codex)."""
    from continuity.trust import pin

    checkout = pin.find_checkout(Path.cwd())
    if check:
        found = pin.problems(checkout)
        if json_out:
            emit_json({"version": 1, "ok": not found, "checkout": str(checkout), "problems": found})
        else:
            for line in found:
                emit(f"stale: {line}")
            emit("the hook pin is stale; run 'lifecycle hook pin'" if found else "the hook pin is current")
        raise typer.Exit(1 if found else 0)
    result = pin.pin(checkout)
    if json_out:
        emit_json(result.to_json())
        return
    if not result.changed:
        emit(f"the hook pin is current (script sha256 {result.script_sha256[:12]}…, {result.modules} modules)")
        return
    for rel in result.changed:
        emit(f"rewrote {rel}")
    emit(f"pinned {pin.SCRIPT_REL} (sha256 {result.script_sha256[:12]}…) and {result.modules} modules")
    emit(pin.TRUST_AGAIN)


@hooks_app.command("install")
def install_command(
    harness_name: Annotated[Harness, typer.Option("--harness", help="Which harness's configuration.")],
    scope: Annotated[
        Scope, typer.Option(help="user: your harness settings, for any repository; project: this checkout.")
    ] = Scope.user,
    both: Annotated[
        bool,
        typer.Option(
            "--both", help="Register even when the other scope already has the handlers (the brief then comes twice)."
        ),
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the resulting file; change nothing.")] = False,
    json_out: JsonOption = False,
) -> None:
    """Merge the pinned handlers into Codex's hooks.json or Claude Code's settings.json (idempotent)."""
    from continuity.local.repo import find_repo_root
    from continuity.trust import harness, installation, pin

    where: harness.Location | None = None
    found: installation.Installation | None = None
    if scope is Scope.project:
        checkout = pin.find_checkout(Path.cwd())
    else:
        found = installation.find()
        checkout = found.scripts.parent
        where = harness.Location(found.scripts, "user", found.python)
    repo = find_repo_root(Path.cwd())
    result = harness.install(
        harness_name.value, scope.value, checkout, dry_run=dry_run, repo=repo, both=both, where=where
    )
    if json_out:
        emit_json({**result.to_json(), "installation": None if found is None else found.to_json()})
        return
    if found is not None and result.duplicate_of is None and not dry_run:
        (warn if found.kind == installation.CHECKOUT_KIND else emit)(found.describe())
        _warn_if_long(result.text)
    if result.duplicate_of is not None:
        other = "project" if scope is Scope.user else "user"
        emit(
            f"{result.duplicate_of} already registers continuity's handlers at {other} scope, and {harness_name.value} "
            f"runs both scopes: the model would get the brief twice. Nothing changed (--both installs anyway)."
        )
        return
    if dry_run:
        typer.echo(result.text, nl=False)
        return
    if not result.changed:
        emit(f"{result.path} already holds the current handlers; nothing changed")
        return
    emit(f"wrote {result.path}")
    if harness_name is Harness.codex:
        emit("Codex runs a new or changed hook only after you trust it: open /hooks in Codex and trust it.")


def _warn_if_long(text: str) -> None:
    """A user-scope command holds the installation's paths; a very long one is hard to review."""
    from continuity.trust import harness, hookcommand

    longest = max((len(c) for c in harness.our_commands(json.loads(text)) if hookcommand.too_long(c)), default=0)
    if longest:
        warn(
            f"warning: a hook command is {longest} characters (more than {tunables.HOOK_COMMAND_MAX_CHARS}) because "
            "of the installation's path; read it in full before trusting it"
        )


@hooks_app.command("show")
def show_command(json_out: JsonOption = False) -> None:
    """For each harness and scope: what is registered, from which file, pinned to which digest, and if current."""
    from continuity.local.repo import find_repo_root
    from continuity.trust import registered

    found = registered.show(find_repo_root(Path.cwd()))
    if json_out:
        emit_json({"version": 1, "registrations": [item.to_json() for item in found]})
        return
    for item in found:
        emit(_summary(item))
        for line in _handler_lines(item.handlers):
            emit(f"  {line}")


def _summary(item: registered.Registration) -> str:
    where = f"{item.harness} {item.scope}: {item.file}"
    if item.error is not None:
        return f"{where}: cannot be read ({item.error})"
    if not item.exists:
        return f"{where}: no such file"
    if not item.handlers:
        return f"{where}: nothing of continuity's is registered"
    return f"{where}: {len(item.handlers)} handlers"


def _handler_lines(handlers: list[registered.Handler]) -> list[str]:
    """One line per script, digest and state, naming the events that run it."""
    groups: dict[tuple[str, str, str | None, str], list[str]] = {}
    for handler in handlers:
        groups.setdefault((handler.script, handler.python, handler.sha256, handler.state), []).append(handler.event)
    lines = []
    for (script, python, digest, state), events in groups.items():
        if state == "unreadable":
            lines.append(f"{', '.join(events)}: a command that names no script and digest (edited by hand?)")
            continue
        short = f"{digest[:12]}…" if digest else "none"
        lines.append(f"{', '.join(events)}: {script} with {python}, sha256 {short}: {state}")
    return lines


HarnessArgument = Annotated[Harness, typer.Argument(help="Which harness: codex or claude.", show_default=False)]
ScopeOption = Annotated[
    Scope, typer.Option(help="user: your harness settings, for any repository; project: this checkout.")
]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Say what would change; change nothing.")]


def setup_command(
    harness_name: HarnessArgument, scope: ScopeOption = Scope.user, dry_run: DryRunOption = False,
    json_out: JsonOption = False,
) -> None:  # fmt: skip
    """Register the hooks, the MCP server and a pointer in AGENTS.md / CLAUDE.md for one harness (idempotent)."""
    from continuity.trust import setup

    result = setup.setup(harness_name.value, scope.value, Path.cwd(), dry_run=dry_run)
    if json_out:
        emit_json(result.to_json())
        return
    if result.served_by is not None:
        emit(
            f"{harness_name.value} already gets continuity's handlers from {result.served_by}; setting them up "
            f"again would give the model the brief twice. Nothing changed (remove that one first to switch)."
        )
        return
    if result.installation and "warning" in result.installation:
        warn(result.installation["warning"])
    verb = "would write" if dry_run else "wrote"
    for change in result.changes:
        state = f"{verb} {change.path}" if change.changed else f"{change.path} is already set up"
        emit(f"{change.part}: {state}")
    if not result.changed:
        emit("nothing changed")
    for line in result.next_steps:
        emit(f"next: {line}")


def uninstall_command(
    harness_name: HarnessArgument, scope: ScopeOption = Scope.user, dry_run: DryRunOption = False,
    json_out: JsonOption = False,
) -> None:  # fmt: skip
    """Remove what 'lifecycle setup' wrote for one harness (and Codex's trust of those hooks); nothing else."""
    from continuity.trust import setup

    result = setup.uninstall(harness_name.value, scope.value, Path.cwd(), dry_run=dry_run)
    if json_out:
        emit_json(result.to_json())
        return
    for change in result.changes:
        if change.changed:
            verb = (
                ("would remove" if dry_run else "removed")
                if change.removed
                else ("would edit" if dry_run else "took continuity's part out of")
            )
            emit(f"{change.part}: {verb} {change.path}")
    if not result.changed:
        emit(f"nothing of continuity's is set up for {harness_name.value} at {scope.value} scope; nothing changed")


def register(app: typer.Typer) -> None:
    app.command("setup")(setup_command)
    app.command("uninstall")(uninstall_command)
    app.add_typer(hook_app, name="hook")
    app.add_typer(hooks_app, name="hooks")
