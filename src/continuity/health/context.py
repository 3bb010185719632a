"""What every doctor check is given: the `Context` doctor resolved once, and the shape of a check.

A check is a function `(Context) -> list[Check]`, listed once in `doctor.CHECKS` in the order the
report shows. The context carries what doctor found before any check ran (the connection, the vault,
the bounded scan, the startup sources gathered and validated for a session start) so that no check
discovers them again and all of them judge the same reading. It lives apart from `doctor` so that
the modules with checks import it, and doctor imports them, without a cycle.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from continuity.brief import render, sources
from continuity.health.report import Check
from continuity.local.connection import Connection
from continuity.local.repo import find_repo_root
from continuity.vault.scan import ScanResult


@dataclass(frozen=True)
class Context:
    """Everything doctor resolved; nothing a check has to re-discover."""

    cwd: Path
    environ: Mapping[str, str]
    conn: Connection
    root: Path
    now: dt.datetime | None
    scan: ScanResult
    gathered: sources.Gathered  # the session start's sources, as the brief gathers them
    views: list[render.SourceView]  # the same, validated
    policy_notices: list[str]  # what validation said of INDEX.md and MEMORY_POLICY.md

    @property
    def repo(self) -> Path | None:
        """The checkout doctor runs in: the connection's, else the repository around `cwd`."""
        return self.conn.repo or find_repo_root(self.cwd)


CheckFn = Callable[[Context], list[Check]]
