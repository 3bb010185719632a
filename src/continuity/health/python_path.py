"""Doctor's look at the `python3` that the checked-in project hooks will run.

Project hook files are shared through the repository, so their commands name `python3` and the
harness finds it on PATH. When that is a version manager's shim (pyenv, asdf…: a script that picks a
version and then runs the real binary), every hook run pays for the shim: each session start, each
subagent start and every PostToolUse. The cost quoted is the one bench/bench_shim.py measured
(tunables.PYTHON_SHIM_COST_MS); doctor does not time anything itself. The PATH examined is doctor's
own, which is the harness's when both are started from the same shell.
"""

from __future__ import annotations

from pathlib import Path

from continuity import tunables
from continuity.health.report import Check, check
from continuity.local import interpreter
from continuity.trust import harness


def checks(repo: Path | None) -> list[Check]:
    """One check when `repo` registers our project hooks for some harness; none otherwise."""
    files = [
        str(p) for name in harness.HARNESSES for s, p in harness.registrations(name, repo).items() if s == "project"
    ]
    if repo is None or not files:
        return []
    found = interpreter.on_path("python3")
    if found is None:
        return [
            check("hooks.python", "error", f"the project hooks ({', '.join(files)}) run python3, and none is on PATH")
        ]
    if not interpreter.is_script(found):
        return [check("hooks.python", "ok", f"the project hooks run python3 from PATH: {found}")]
    manager = interpreter.manager(found)
    return [
        check(
            "hooks.python",
            "warn",
            f"the project hooks ({', '.join(files)}) run python3 from PATH, which is a {manager} shim ({found}): it "
            f"adds about {tunables.PYTHON_SHIM_COST_MS} ms to every hook run (each session start and every "
            "PostToolUse; measured by bench/bench_shim.py); put the real interpreter's folder first on PATH "
            "(pyenv: 'pyenv which python3' names it), or use user-scope hooks, which name a real interpreter",
        )
    ]
