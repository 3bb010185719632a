"""Doctor's check that the connection's project is this repository's project.

A checkout connected (by hand, by an old init that named projects after folders, or by `--project`)
to a project whose PROJECT.md records another repository would load another project's profile and
handoff into every session; a project that records no repository cannot be found again by a clone on
another computer. Both are warnings that say what to do; a match is ok.
"""

from __future__ import annotations

from pathlib import Path

from continuity.health.report import Check, check
from continuity.local import identity
from continuity.local.connection import Connection
from continuity.vault import projects, registry

ID = "project.identity"


def checks(conn: Connection, root: Path) -> list[Check]:
    if conn.repo is None:
        return [check(ID, "ok", "no checkout here, so there is no repository to compare the project with")]
    ours = identity.of_repo(conn.repo)
    if not ours.known:
        return [check(ID, "ok", "this repository has no origin remote and no commit yet: nothing to compare")]
    recorded = projects.read_project(root, conn.project)
    profile = registry.PROJECT.at(conn.project)
    others = [
        entry.id
        for entry in projects.list_projects(root)
        if entry.id != conn.project and projects.matches(entry, ours.repository, ours.root_commit)
    ]
    elsewhere = f"; the vault's project {others[0]!r} records this repository" if others else ""
    if recorded is None:
        return [check(ID, "ok", f"{profile} cannot be read; its source check says why")]
    if not recorded.known:
        fields = [f'repository: "{ours.repository}"'] if ours.repository else []
        fields += [f'root_commit: "{ours.root_commit}"'] if ours.root_commit else []
        return [
            check(
                ID,
                "warn",
                f"{profile} records no repository, so a clone on another computer cannot find this project"
                f"{elsewhere}; add {' and '.join(fields)} to its frontmatter",
            )
        ]
    if projects.matches(recorded, ours.repository, ours.root_commit):
        return [check(ID, "ok", f"project {conn.project!r} is this repository's ({ours.describe()})")]
    return [
        check(
            ID,
            "warn",
            f"this checkout's repository is {ours.describe()}, but {profile} records {recorded.describe()}: "
            f"the connection may name the wrong project{elsewhere}; reconnect with "
            "'lifecycle init --vault VAULT --project ID --force'",
        )
    ]
