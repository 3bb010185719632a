"""The text of each pinned hook command: the few lines of Python a person reads before trusting it.

Codex trusts a hook by the hash of its definition, which covers the command string but not the script
it runs, so the script's SHA-256 and the code that checks it both sit in the command. Codex shows the
command in its `/hooks` dialog, where the person decides whether to trust it, so it is written for that
reader: whole words, one job, at most HOOK_COMMAND_MAX_CHARS characters. In full, for a start event:

    python3 -I -S -c 'import hashlib, os, sys
    script, digest, *args = sys.argv[1:]
    while not os.path.isfile(script) and os.path.dirname(os.getcwd()) != os.getcwd():
        os.chdir("..")
    code = open(script, "rb").read()
    if hashlib.sha256(code).hexdigest() == digest:
        sys.argv = [script, *args]
        exec(compile(code, script, "exec"), {"__name__": "__main__"})
    else:
        print("Private memory was not restored: …")' scripts/agent-startup-context.py <sha256> --hook --harness codex

A user-scope command names the interpreter and the script by absolute paths, which in a virtual
environment (pipx's included) share a long folder; so that the command stays within the limit, that
folder is said once, as a shell variable, and both paths start from it:

    base=/home/alice/.local/pipx/venvs/continuity; "$base/bin/python" -I -S -c '…'
    "$base/lib/python3.12/site-packages/continuity/_scripts/agent-startup-context.py" <sha256> --hook …

It goes up to the nearest folder that holds the script (the session may start in a subfolder, or in a
repository nested inside the checkout, whose own `.git` is not where the script is; walking costs a
fraction of what running `git rev-parse` would at every session start), hashes the script and
on a match runs exactly the bytes it hashed, as `__main__` with the script's path as argv[0]; on a
mismatch a start handler prints a fixed notice that private memory was not restored, and every
other handler prints nothing. `-I -S` keeps the user's environment, site-packages and the current
folder out of the interpreter. A user-scope command names the script by its absolute path and does
not walk.

The PowerShell form (`commandWindows`) runs the same program with its quotes swapped, so that it fits
inside PowerShell's double quotes: the program holds no single quote, `$` or backtick. Every path in
it is a single-quoted PowerShell literal (`ps_literal`), where nothing is expanded: inside double
quotes a path holding `$(…)` would run it. PowerShell takes the typographic quotes ‘ ’ ‚ ‛ as single
quotes too, so each of them is doubled like `'`. The shared-folder form still says `"$base/…"`, and
uses it only for paths without `$`, a backtick or any double quote (typographic ones included).
"""

from __future__ import annotations

import shlex

from continuity import tunables

CHANGED_NOTICE = "Private memory was not restored: the startup script changed since this hook was reviewed."
_ARGS = """import hashlib, os, sys
script, digest, *args = sys.argv[1:]"""
_ARGS_ONLY = """import hashlib, sys
script, digest, *args = sys.argv[1:]"""
_TO_TOP_LEVEL = """
while not os.path.isfile(script) and os.path.dirname(os.getcwd()) != os.getcwd():
    os.chdir("..")"""
_READ = """
code = open(script, "rb").read()"""
_CHECK = """
if hashlib.sha256(code).hexdigest() == digest:
    sys.argv = [script, *args]
    exec(compile(code, script, "exec"), {"__name__": "__main__"})"""
_NOTICE = f"""
else:
    print("{CHANGED_NOTICE}")"""


def program(*, notice: bool, walk: bool) -> str:
    """The Python the command runs: argv SCRIPT DIGEST ARGS…

    `walk` first goes up to the repository's top level, for a script named relative to it. With
    `notice` (the SessionStart and SubagentStart handlers) a mismatch prints CHANGED_NOTICE as plain
    text, which both harnesses give the model as context at SessionStart and Codex also at
    SubagentStart; the other handlers answer a mismatch with nothing.
    """
    return (_ARGS + _TO_TOP_LEVEL if walk else _ARGS_ONLY) + _READ + _CHECK + (_NOTICE if notice else "")


def _absolute(script: str) -> bool:
    return script.startswith(("/", "\\\\")) or script[1:3] == ":\\"


BASE = "base"  # the shell variable that holds a user-scope command's shared folder


def _shared_base(python: str, script: str, sep: str) -> tuple[str, str, str] | None:
    """(folder, python, script), both relative to the folder they share, when saying it once helps."""
    if not (_absolute(python) and _absolute(script)):
        return None
    base = python
    while base and not script.startswith(base.rstrip(sep) + sep):
        base = base.rpartition(sep)[0]
    if base.count(sep) < 2 or any(c in python + script for c in '"$`\\\u201c\u201d\u201e' if c != sep):
        return None
    base = base.rstrip(sep)
    return base, python[len(base) + 1 :], script[len(base) + 1 :]


def posix_command(python: str, script: str, digest: str, args: list[str], *, notice: bool) -> str:
    """The command for `bash -c`; `python` unquoted, as a path or a program name."""
    code = program(notice=notice, walk=not _absolute(script))
    shared = _shared_base(python, script, "/")
    if shared is None:
        return f"{shlex.quote(python)} -I -S -c {shlex.quote(code)} {shlex.join([script, digest, *args])}"
    base, python_rel, script_rel = shared
    return (
        f'{BASE}={shlex.quote(base)}; "${BASE}/{python_rel}" -I -S -c {shlex.quote(code)} '
        f'"${BASE}/{script_rel}" {shlex.join([digest, *args])}'
    )


PS_SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"  # every character PowerShell reads as a single quote


def ps_literal(text: str) -> str:
    """`text` as a PowerShell single-quoted string: taken as it is, nothing expanded."""
    return "'" + "".join(c + c if c in PS_SINGLE_QUOTES else c for c in text) + "'"


def windows_command(python: str, script: str, digest: str, args: list[str], *, notice: bool) -> str:
    """The same command for PowerShell (Codex's `commandWindows`); `python` unquoted when it is a name."""
    code = program(notice=notice, walk=not _absolute(script)).replace('"', "'")
    sep = "\\" if "\\" in script else "/"
    shared = _shared_base(python, script, sep)
    rest = " ".join([digest, *args])
    if not _absolute(python):
        return f'{python} -I -S -c "{code}" {ps_literal(script)} {rest}'
    if shared is None:
        return f'& {ps_literal(python)} -I -S -c "{code}" {ps_literal(script)} {rest}'
    base, python_rel, script_rel = shared  # neither holds a character that double quotes act on
    exe, arg = f'"${BASE}{sep}{python_rel}"', f'"${BASE}{sep}{script_rel}"'
    return f'${BASE}={ps_literal(base)}; & {exe} -I -S -c "{code}" {arg} {rest}'


def split(command: str) -> tuple[str, str, str] | None:
    """(python, script, digest) of a POSIX command built here, the shared folder put back; else None."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    prefix = f"{BASE}="
    if words and words[0].startswith(prefix) and words[0].endswith(";"):
        base = words[0][len(prefix) : -1]
        words = [base + w[len(BASE) + 1 :] if w.startswith(f"${BASE}/") else w for w in words[1:]]
    if "-c" not in words or len(words) < words.index("-c") + 4:
        return None
    at = words.index("-c")
    return words[0], words[at + 2], words[at + 3]


def too_long(command: str) -> bool:
    return len(command) > tunables.HOOK_COMMAND_MAX_CHARS
