"""Doctor's check of the writer lease as this computer sees it, read through `records` (never the
write path): the state and what to do about it, a removal of this device's lease that another
device recorded, and lease files that cannot be used.
"""

from __future__ import annotations

from continuity.errors import ContinuityError
from continuity.health.context import Context
from continuity.health.report import Check, check, described
from continuity.records import leases, removals


def lease_checks(ctx: Context) -> list[Check]:
    root, device = ctx.root, ctx.conn.device
    try:
        status = leases.status(root, device, ctx.now)
    except ContinuityError as exc:
        return [check("lease", "warn", str(exc))]
    line = status.line()
    out: list[Check] = []
    if status.state == "none":
        out.append(check("lease", "ok", f"{line}: no writer lease is visible from this computer"))
    elif status.state == "held":
        out.append(check("lease", "ok", f"{line}: this device holds the writer lease"))
    elif status.state == "foreign":
        message = f"{line}: writes from this computer refuse until it expires or is released"
        out.append(check("lease", "warn", message))
    else:
        out.append(
            check(
                "lease",
                "warn",
                f"{line}: an expired lease is left behind; 'lifecycle lease acquire' takes over, "
                "'lifecycle lease release --force' removes it",
            )
        )
    own = status.own()
    removed = removals.seen_by(root, device, own.acquired if own else None, leases.utcnow(ctx.now))
    if removed is not None:
        out.append(check("lease.removed", "warn", f"{removed.describe()}; take a new lease before writing again"))
    if status.invalid:
        count = len(status.invalid)
        out.append(check("lease.invalid", "warn", f"{count} unusable lease file(s): {described(status.invalid)}"))
    return out
