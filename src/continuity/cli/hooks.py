"""`lifecycle hook pin [--check]`, `lifecycle hooks install`, and the text of `render --explain`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from continuity.cli.options import Harness, JsonOption, Scope
from continuity.cli.output import emit, emit_json

hook_app = typer.Typer(
    help="The startup hook's pin: digests that tie a trusted hook to its code.", no_args_is_help=True
)
hooks_app = typer.Typer(help="Install the hook handlers into a harness's configuration.", no_args_is_help=True)


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
    from continuity.trust import harness, pin

    if scope is Scope.project:
        checkout = pin.find_checkout(Path.cwd())
    else:
        from continuity.store.onboard import CHECKOUT

        checkout = CHECKOUT
    repo = find_repo_root(Path.cwd())
    result = harness.install(harness_name.value, scope.value, checkout, dry_run=dry_run, repo=repo, both=both)
    if json_out:
        emit_json(result.to_json())
        return
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


def register(app: typer.Typer) -> None:
    app.add_typer(hook_app, name="hook")
    app.add_typer(hooks_app, name="hooks")
