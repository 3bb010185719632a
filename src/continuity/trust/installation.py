"""Where the running continuity is installed, which is what user-scope hooks point at.

User-scope hooks serve every repository, so they must not depend on one checkout: moving or deleting
it would silently end restoration everywhere. A package installation (pipx, or `pip install` into a
virtual environment) carries its own copy of the startup script and the outbox sweeper in
`continuity/_scripts/` beside the modules they pin, and that copy is what user-scope hooks run, with
the installation's interpreter. An editable install (`pip install -e` of a checkout) has no such copy:
its hooks run the checkout's `scripts/`, which ties them to that checkout, and `describe` says so.

After an upgrade the installed script has other bytes, so the hooks' digest no longer matches and
they inject only a notice; `lifecycle hooks install` writes the new digest (the person re-trusts).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from continuity.errors import UsageError
from continuity.local import interpreter

PACKAGE = Path(__file__).resolve().parents[1]
BRIEF_SCRIPT = "agent-startup-context.py"
SWEEP_SCRIPT = "artifactctl.py"
PACKAGED_SCRIPTS = "_scripts"
PACKAGE_KIND = "package"
CHECKOUT_KIND = "checkout"


@dataclass(frozen=True)
class Installation:
    kind: str  # PACKAGE_KIND or CHECKOUT_KIND
    scripts: Path  # the folder that holds the startup script and the outbox sweeper
    python: str  # the interpreter user-scope commands name

    def describe(self) -> str:
        """One sentence on what user-scope hooks written from here depend on."""
        if self.kind == PACKAGE_KIND:
            return (
                f"the hooks run the installed package's startup script ({self.scripts / BRIEF_SCRIPT}) with "
                f"{self.python}; they keep working when checkouts move, and after an upgrade "
                "'lifecycle hooks install' pins the new script"
            )
        return (
            f"this is an editable install: the hooks run {self.scripts / BRIEF_SCRIPT} with {self.python}, so "
            f"moving or deleting the checkout {self.scripts.parent} or its virtual environment ends restoration in "
            "every repository; install continuity as a package (pipx install, or pip install without -e) "
            "for hooks that follow the installation"
        )

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "scripts": str(self.scripts), "python": self.python}


def find(package: Path = PACKAGE) -> Installation:
    """The installation this code runs from: its packaged scripts, else its checkout's."""
    python = interpreter.hook_interpreter()
    packaged = package / PACKAGED_SCRIPTS
    if (packaged / BRIEF_SCRIPT).is_file():
        return Installation(PACKAGE_KIND, packaged, python)
    checkout = package.parents[1]
    if (checkout / "scripts" / BRIEF_SCRIPT).is_file() and package == checkout / "src" / "continuity":
        return Installation(CHECKOUT_KIND, checkout / "scripts", python)
    raise UsageError(f"cannot find {BRIEF_SCRIPT} in {packaged} or a checkout around {package}; reinstall continuity")
