"""When the startup hook cannot import a dependency: run again with the connection's Python, or say so.

The hook command runs `python3` from PATH, which may lack ruamel.yaml or detect-secrets. The
connection file may name the interpreter that has the package (`python`, written by `lifecycle
init`); the hook runs once more with it, and failing that injects a notice that private memory was
not restored and why. Only this rare path imports this module.

The second run is held to the first one's pin. It never reads the startup script or the checkout
again (a file swapped after the first run hashed it, or a module planted beside it, would run
unchecked): it runs `python -I -S -c BOOTSTRAP`, a fixed program in this pinned module, and receives
on stdin one JSON line (the harness's JSON object as the first run parsed it, among the rest), then
exactly the module bytes the first run checked, which the same kind of finder serves. `-I -S` keeps
PYTHONPATH, the current folder, the user's site folder and `sitecustomize`/`usercustomize` out, as
the hook command does for the first run; the interpreter's site-packages come back as they do there
(`entry.site_packages`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from continuity import names
from continuity.brief.envelope import hook_output, unavailable_text


def answer(harness: str, payload: dict[str, object], exc: ImportError, code: str = "") -> str:
    """The hook's stdout after an import failure: the re-run's answer, or the notice."""
    if os.environ.get("CONTINUITY_REEXEC") != "1":
        python = _connection_python(payload)
        if python and os.path.abspath(python) != os.path.abspath(sys.executable):
            again = _reexec(python, ["--hook", "--harness", harness], payload, code)
            if again is not None:
                return again.decode("utf-8", errors="replace").rstrip("\n")
    return _import_failure_output(payload, exc)


# The second run's whole program. It trusts only what its parent hands it on stdin: one JSON line
# (the module files with their lengths, the pinned-code digest, argv, the harness's JSON object) and
# the checked module bytes. Its finder serves `continuity` from those bytes alone, like the startup
# script's.
BOOTSTRAP = """import json, sys
from importlib.machinery import ModuleSpec
raw = sys.stdin.buffer.read()
line, _, rest = raw.partition(b"\\n")
head = json.loads(line)
sources = {}
for rel, size in head["modules"]:
    sources[rel], rest = rest[:size], rest[size:]
class Loader:
    def __init__(self, path, data):
        self.path, self.data = path, data
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        exec(compile(self.data, self.path, "exec", dont_inherit=True), module.__dict__)
class Finder:
    continuity_pinned = True
    def find_spec(self, name, path=None, target=None):
        if name != "continuity" and not name.startswith("continuity."):
            return None
        base = name.replace(".", "/")
        for rel, package in ((base + ".py", False), (base + "/__init__.py", True)):
            if rel in sources:
                where = head["src"] + "/" + rel
                spec = ModuleSpec(name, Loader(where, sources[rel]), origin=where, is_package=package)
                spec.has_location = True
                if package:
                    spec.submodule_search_locations = []
                return spec
        raise ImportError(name + " is not among the reviewed startup modules", name=name)
sys.meta_path.insert(0, Finder())
from continuity.hook import entry
sys.exit(entry.main(head["argv"], head["payload"], head["code"]))
"""


def pinned_sources() -> tuple[str, dict[str, bytes]] | None:
    """(src folder, {rel: bytes}) that the startup script's finder checked in this run, or None."""
    for finder in sys.meta_path:
        sources = getattr(finder, "sources", None)
        if getattr(finder, "continuity_pinned", False) and isinstance(sources, dict) and sources:
            origin = getattr(sys.modules.get("continuity"), "__file__", None) or ""
            src = os.path.dirname(os.path.dirname(origin))
            return src, {str(rel): bytes(data) for rel, data in sources.items()}
    return None


def bootstrap_input(
    src: str, sources: dict[str, bytes], argv: list[str], code: str, payload: dict[str, object]
) -> bytes:
    """What the second run reads on stdin: the header line, then the module bytes."""
    import json

    order = sorted(sources)
    modules = [[rel, len(sources[rel])] for rel in order]
    head = {"src": src, "modules": modules, "code": code, "argv": argv, "payload": payload}
    return json.dumps(head).encode("utf-8") + b"\n" + b"".join(sources[rel] for rel in order)


def _reexec(python: str, argv: list[str], payload: dict[str, object], code: str) -> bytes | None:
    """Run the checked modules again with the connection's interpreter, isolated; its stdout, or None."""
    import subprocess

    found = pinned_sources()
    if found is None:  # not started by the pinned script: there are no checked bytes to hand on
        return None
    env = dict(os.environ, CONTINUITY_REEXEC="1")
    try:
        proc = subprocess.run(
            [python, "-I", "-S", "-c", BOOTSTRAP],
            input=bootstrap_input(*found, argv, code, payload),
            capture_output=True,
            env=env,
            timeout=25,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _import_failure_output(payload: dict[str, object], exc: ImportError) -> str:
    """Valid hook JSON that says private memory was not restored because an import failed."""
    event = payload.get("hook_event_name")
    if event not in names.START_EVENTS:
        return ""
    name = getattr(exc, "name", None) or "a dependency"
    why = (
        f" (the startup code could not import {name} with this Python; set `python` in the checkout's "
        ".agent-vault to an interpreter that has continuity installed)"
    )
    return hook_output(event, unavailable_text(event, why, hint=""))


def _connection_python(payload: dict[str, object]) -> str | None:
    """The connection's `python`, when it may be run (see `trusted_interpreter`), else None."""
    try:
        from continuity.local import connection

        cwd = payload.get("cwd")
        conn = connection.discover(Path(cwd) if isinstance(cwd, str) and cwd else Path.cwd())
        if conn.python and trusted_interpreter(conn.python, conn.file, conn.repo):
            return conn.python
    except Exception:
        return None
    return None


def _tracked(repo: Path, path: str) -> bool:
    """Whether git tracks `path` in `repo` (then a clone, not this computer, chose it)."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "ls-files", "--error-unmatch", "--", path],
            capture_output=True, timeout=10, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return True  # cannot tell: do not trust it
    return done.returncode == 0


def trusted_interpreter(python: str, conn_file: Path, repo: Path | None) -> bool:
    """Whether the hook may re-run itself with the connection's `python`.

    The connection file sits in the checkout, where a repository or an agent in it can write, and the
    program it names would run outside every pin. So it must be an absolute path to an executable
    regular file that this user or root owns and nobody else can write, and when the checkout holds
    it, or the connection file, git must not track either (a committed program or connection is the
    repository's choice, not this computer's). `lifecycle init` writes a path that passes.
    """
    import stat

    if not os.path.isabs(python):
        return False
    real = os.path.realpath(python)
    try:
        info = os.stat(real)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode) or not os.access(real, os.X_OK) or info.st_mode & 0o022:
        return False
    if hasattr(os, "getuid") and info.st_uid not in (0, os.getuid()):
        return False
    if repo is None:
        return True
    top = os.path.realpath(repo)
    for candidate in (str(conn_file), python, real):
        candidate = os.path.abspath(candidate)
        for root in (str(repo), top):
            if candidate.startswith(root.rstrip(os.sep) + os.sep) and _tracked(repo, candidate):
                return False
    return True
