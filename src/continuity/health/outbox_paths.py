"""Doctor's check that no current handoff depends on the delivery outbox.

A package in `output/` is deleted seven days after delivery, so a handoff that names one points at
something that will be gone when the next task resumes (the seed: "a handoff must not depend on an
expiring path"). The remedy is `lifecycle preserve`, which keeps the exact file in `40-documents/`.

Only current handoffs of the project are read: they are what a later task resumes, and superseded or
historical ones are history, left as they are. A package folder is recognised by the shape of its
name (`<UTC time>-<label>-<6 hex digits>` after `output/`), this checkout's own outbox also by its
absolute path. The check is a warning, and appears only when there is something to say.
"""

from __future__ import annotations

import os
import re

from continuity.health.context import Context
from continuity.health.report import Check, check, names
from continuity.memory import handoff

PACKAGE_PATH = re.compile(r"(?<![\w.-])output[/\\](\d{8}T\d{6}Z-[a-z0-9][a-z0-9-]*-[0-9a-f]{6})(?![\w-])")


def outbox_checks(ctx: Context) -> list[Check]:
    """`handoffs.outbox` (warn) naming each current handoff that points into the outbox, or nothing."""
    conn, gathered = ctx.conn, ctx.gathered
    outbox = os.path.join(str(conn.repo), "output") if conn.repo else None
    named: list[str] = []
    for item in handoff.select(list(gathered.handoffs), conn.project).current:
        text = item.data.decode("utf-8", "replace")
        packages = sorted(set(PACKAGE_PATH.findall(text)))
        if not packages and outbox and re.search(re.escape(outbox) + r"(?:[/\\]|\s|$)", text):
            packages = ["output/"]
        if packages:
            named.append(f"{item.rel} ({', '.join(packages)})")
    if not named:
        return []
    listed = names(named)
    return [
        check(
            "handoffs.outbox",
            "warn",
            f"{listed}: a current handoff names the outbox, whose packages are deleted seven days after "
            "delivery, so it must not depend on them; keep an exact file with 'lifecycle preserve PACKAGE "
            "[FILE]' and name the preserved copy in 40-documents/ instead",
        )
    ]
