"""`lifecycle doctor`: is startup restoration ready on this computer, and if not, what to do about it.

Doctor runs the very same gathering, validation and rendering as the startup brief (`sources.gather`,
`sources.validate`, `render.render`), so the two can never disagree about a source; it only adds what
a session start has no room for: a per-source verdict, the rendered sizes against every ceiling, the
handoff set, the lease, and the bounded metadata scan of `scan.py`. The checks are read-only: no lease,
no lock, no cache, nothing written anywhere, and nothing of `health` imports the write path (`store`).
Only `fix` (`doctor --fix`, in the CLI) writes, as an ordinary vault write (local lock, lease check,
journal).

Each check is an id, a level and one line that says what to do (`doctor_report`). Errors:
whatever leaves a hot source out (missing except the handoff, invalid, too large, secret, link, label
mismatch, the rendered ceiling), a secret or cap breach in INDEX.md or MEMORY_POLICY.md, no connection
or an unreachable vault, a check that failed to run. Warnings: budget findings, conflict copies,
several current handoffs, invalid handoffs, a current handoff that names an outbox path
(`outbox_paths`), the token target exceeded, stale or foreign leases,
unusable lease files, leftover temporary files, links, an incomplete scan. A list of files names
`MAX_NAMED` of them and counts the rest. Secrets are named by line and detector, never by value;
vault names are shown with control characters escaped so a crafted file name cannot drive the terminal.

Once the connection and the vault are found, every check has one shape, a function of the resolved
`Context` returning its checks, and is listed once, in report order, in `CHECKS` (a check a caller
adds, such as the CLI's review count, comes after them through `run(extra=...)`). A check that raises
instead is an error (`provider.<name>`, with the exception's first line): a check that did not run
cannot vouch for anything, and a stale pin, the hook pin check's subject, stops the hook. Under
CONTINUITY_DEBUG=1 the report also carries the traceback, which the CLI prints on stderr.
"""

from __future__ import annotations

import datetime as dt
import os
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from continuity import names
from continuity.brief import sources
from continuity.errors import NotConnected
from continuity.health import brief_checks, lease_state, mcp_servers, outbox_paths, project_identity, python_path
from continuity.health.context import CheckFn, Context
from continuity.health.memory_notes import note_checks
from continuity.health.report import Check, Report, check
from continuity.health.sync_state import sync_checks
from continuity.hook import receipts
from continuity.local import connection, userdirs
from continuity.local.connection import Connection
from continuity.local.repo import find_repo_root
from continuity.trust import harness, pin
from continuity.vault import registry, scan

# Environment variables doctor (and what it calls) reads; `resolved.environment` shows their values.
_ENV = "HOME XDG_CACHE_HOME XDG_STATE_HOME CONTINUITY_NO_CACHE CONTINUITY_DEBUG"
ENV_READ: tuple[str, ...] = (connection.ENV_CONNECTION, *_ENV.split())
MAX_CRASH_CHARS = 200  # of a crashed check's exception message (its first line) in the check's message
_FOUND_VIA = {
    "env": f"via {connection.ENV_CONNECTION}",
    "checkout": "in this checkout",
    "worktree": "in a sibling worktree",
}
# The remedy for a false positive is the person's to apply: the brief's notice never carries it.
FALSE_POSITIVE_REMEDY = "remove it, or mark a false positive with 'pragma: allowlist secret' on that line"


@dataclass
class _Run:
    """Checks collected one `add` at a time: what `run` and the source check, with their many
    branches, build their lists with."""

    checks: list[Check] = field(default_factory=list)

    def add(self, ident: str, level: str, message: str) -> None:
        self.checks.append(check(ident, level, message))


def _crashed(name: str, exc: Exception, debug: bool) -> str:
    """The message of a check whose provider raised: what, why (as `errors.message` words it), what to do."""
    from continuity.errors import COMMAND_LINE, message  # only a crashed check needs the wording

    lines = message(exc, COMMAND_LINE).strip().splitlines()
    reason = lines[0] if lines else ""
    if len(reason) > MAX_CRASH_CHARS:
        reason = reason[:MAX_CRASH_CHARS] + " …"
    what = f"{type(exc).__name__}: {reason}" if reason else type(exc).__name__
    where = "the traceback is on stderr" if debug else "rerun with CONTINUITY_DEBUG=1 to see where it failed"
    return (
        f"the {name.lstrip('_')} check failed to run ({what}), so doctor cannot say whether it passes; "
        f"{where}, fix the cause or report it"
    )


def resolve(cwd: Path, env: Mapping[str, str], conn: Connection | None) -> dict[str, Any]:
    """The paths and environment variables doctor read, for the person to compare with what they meant."""
    repo = conn.repo if conn is not None else find_repo_root(cwd)
    return {
        "cwd": str(cwd),
        "repo": str(repo) if repo else None,
        "connection": str(conn.file) if conn else None,
        "found_via": conn.found_via if conn else None,
        "vault": str(conn.vault) if conn else None,
        "device": conn.device if conn else None,
        "project": conn.project if conn else None,
        "python": conn.python if conn else None,
        "startup_cache": os.path.join(userdirs.cache_dir(), "startup"),
        "environment": {name: env.get(name) for name in ENV_READ},
    }


def run(
    cwd: Path,
    environ: Mapping[str, str] | None = None,
    now: dt.datetime | None = None,
    extra: Sequence[CheckFn] = (),
) -> Report:
    """Every check of `CHECKS`, then `extra`, in that order; never writes anything."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    out = _Run()
    try:
        conn = connection.discover(cwd, dict(env))
    except NotConnected as exc:
        out.add("connection", "error", str(exc))
        return Report(tuple(out.checks), resolve(cwd, env, None), connected=False)
    where = _FOUND_VIA.get(conn.found_via, conn.found_via)
    out.add(
        "connection",
        "ok",
        f"found {where}: {conn.file}; device {conn.device!r} and project {conn.project!r} are valid ids",
    )
    resolved = resolve(cwd, env, conn)
    try:
        root = connection.require_vault(conn)
    except NotConnected as exc:
        out.add("vault", "error", str(exc))
        return Report(tuple(out.checks), resolved, connected=False)
    out.add("vault", "ok", f"{root} is reachable")

    result = scan.scan(root, conn.project, conn.device)
    gathered = sources.gather(root, conn.project, conn.device, names.SESSION_START)
    views, policy_notices = sources.validate(gathered)
    context = Context(cwd, env, conn, root, now, result, gathered, views, policy_notices)
    debug = env.get("CONTINUITY_DEBUG") == "1"
    tracebacks: list[str] = []
    for each in (*CHECKS, *extra):
        try:
            out.checks.extend(each(context))
        except Exception as exc:  # a broken check is one error, not a crashed doctor
            name = getattr(each, "__name__", "provider")
            out.add(f"provider.{name}", "error", _crashed(name, exc, debug))
            if debug:
                tracebacks.append(traceback.format_exc())
    return Report(tuple(out.checks), resolved, connected=True, scan=result, tracebacks=tuple(tracebacks))


def _source_checks(ctx: Context) -> list[Check]:
    """Each hot source of a session start: loaded, or why not and what to do (the remedies are part of
    each source's record in the registry)."""
    conn, out = ctx.conn, _Run()
    for view in ctx.views:
        ident, source = f"source.{view.name}", registry.BY_NAME[view.name]
        if view.included:
            out.add(ident, "ok", f"{view.path}: valid, {view.size or 0:,} bytes (cap {source.cap_bytes:,}), no secrets")
        elif source.may_be_missing and view.reason == "missing":
            out.add(ident, "ok", f"no current handoff for project {conn.project!r} (nothing to resume)")
        elif view.reason == "missing":
            out.add(ident, "error", f"{source.at(conn.project, conn.device)} is missing; {source.missing_hint}")
        elif view.reason == "placeholder":
            out.add(ident, "warn", f"{view.notice}; {source.placeholder_hint}")
        elif view.reason == "secret":
            out.add(ident, "error", f"{view.notice}; {FALSE_POSITIVE_REMEDY}")
        else:
            out.add(ident, "error", view.notice or f"{view.path} is left out ({view.reason})")
    return out.checks


def _scan_verdicts(ctx: Context) -> list[Check]:
    """The bounded scan's findings: conflict copies, temporary files, links, the budget, completeness."""
    return [check(ident, level, message) for ident, level, message in scan.verdicts(ctx.scan)]


def _hook_pin(ctx: Context) -> list[Check]:
    """A stale pin makes the startup hook refuse to run, so restoration is not ready: an error."""
    ok, message = pin.check_for(ctx.cwd)
    return [check("hook.pin", "ok" if ok else "error", message)]


def _deliveries(ctx: Context) -> list[Check]:
    """Proof of delivery: what the hook last gave each harness, to compare with `render --explain`."""
    found = receipts.last_deliveries(ctx.conn.repo)
    if not found:
        return [check("hook.delivery", "ok", "no hook delivery recorded for this checkout on this computer yet")]
    return [
        check(
            f"hook.delivery.{item['harness']}.{item['event']}",
            "ok",
            f"last {item['harness']} {item['event']} at {item['time']}: {item['status']}, {item['bytes']} bytes, "
            f"sha256 {str(item['sha256'])[:12]}",
        )
        for item in found
    ]


def _hook_scopes(ctx: Context) -> list[Check]:
    """Our handlers at both user and project scope of one harness: every brief and Stop comes twice."""
    found = []
    for name in harness.HARNESSES:
        places = harness.registrations(name, ctx.repo)
        if len(places) > 1:
            files = " and ".join(str(path) for path in places.values())
            found.append(
                check(
                    f"hooks.scopes.{name}",
                    "warn",
                    f"{name} runs continuity's handlers from both {files}: the model gets the brief twice and Stop "
                    "runs twice; remove them from one file (project scope in a continuity checkout, user scope "
                    "everywhere else)",
                )
            )
        else:
            where = next(iter(places.values()), None)
            message = f"registered in {where}" if where else "not registered (lifecycle hooks install)"
            found.append(check(f"hooks.scopes.{name}", "ok", f"{name} handlers: {message}"))
    return found


def _hook_python(ctx: Context) -> list[Check]:
    return python_path.checks(ctx.repo)


def _project_identity(ctx: Context) -> list[Check]:
    return project_identity.checks(ctx.conn, ctx.root)


def _mcp_servers(ctx: Context) -> list[Check]:
    return mcp_servers.checks(ctx.repo, ctx.environ)


# Every check after the connection and the vault, in the order the report shows them.
CHECKS: tuple[CheckFn, ...] = (
    _source_checks,
    brief_checks.policy_checks,
    brief_checks.session_brief,
    brief_checks.subagent_brief,
    brief_checks.handoff_checks,
    outbox_paths.outbox_checks,
    lease_state.lease_checks,
    _scan_verdicts,
    _hook_pin,
    _deliveries,
    _hook_scopes,
    _hook_python,
    _project_identity,
    _mcp_servers,
    sync_checks,
    note_checks,
)
