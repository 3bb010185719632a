"""Which Python a hook command runs: a real interpreter, or a version manager's shim in front of one.

pyenv (and asdf, mise, rtx…) put on PATH a `python3` that is a small shell script: it works out which
version applies to the folder and then runs the real binary. That costs a shell, the manager's own
start and a few file reads at every run, and hooks run at every session start and after every tool
call, so the checked-in project hooks (which name `python3`, since they are shared) pay it each time.
User-scope hooks name this interpreter instead (`hook_interpreter`).

A shim is recognised by what it is, not where it lives: a file that starts with `#!` is a script,
and no real interpreter is one. The manager's name is only for the message.
"""

from __future__ import annotations

import os
import shutil
import sys

SCRIPT_MAGIC = b"#!"
MANAGERS = (("/.pyenv/", "pyenv"), ("/.asdf/", "asdf"), ("/mise/", "mise"), ("/.rtx/", "rtx"))


def is_script(path: str) -> bool:
    """True when `path` is a script (`#!` first), as every version manager's shim is."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(SCRIPT_MAGIC)) == SCRIPT_MAGIC
    except OSError:
        return False


def manager(path: str) -> str:
    """The version manager a shim belongs to, by its path, for messages."""
    for part, name in MANAGERS:
        if part in path.replace(os.sep, "/"):
            return name
    return "a version manager"


def on_path(name: str = "python3", path: str | None = None) -> str | None:
    """What `bash -c 'name …'` would run: the first `name` on PATH (`path`, default $PATH)."""
    return shutil.which(name, path=os.environ.get("PATH", os.defpath) if path is None else path)


def hook_interpreter() -> str:
    """The interpreter a user-scope hook names: this one, by its absolute path.

    Never a shim: `sys.executable` is the binary that is running, which a shim has already found.
    Symbolic links are kept, not resolved: a virtual environment (pipx's included) is recognised by
    the `pyvenv.cfg` beside the path it is started by, so the resolved base interpreter would run
    without the environment's packages.
    """
    return os.path.abspath(sys.executable)
