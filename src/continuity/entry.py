"""The startup script's full path: option parsing, the cold hook, the manual render, re-execution.

`scripts/agent-startup-context.py` stays small (a compiled module is cached, a script is compiled at
every run) and pinned: it checks the digests of the modules it loads, serves an unchanged vault from
`fastpath`, and hands everything else to `main` here. Standard library only at import time.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: the tool-event path imports as little as it can
if TYPE_CHECKING:
    from pathlib import Path

START_EVENTS = ("SessionStart", "SubagentStart")

USAGE = (
    "usage: agent-startup-context.py --hook --harness codex|claude\n"
    "       agent-startup-context.py --render [--event SessionStart|SubagentStart] "
    "[--format text|json] [--harness codex|claude]"
)


def parse_options(argv: list[str]) -> tuple[str | None, dict[str, str]]:
    """(mode, options); mode is None for bad input, with the reason in options["error"]."""
    mode, opts, rest = None, {"event": "SessionStart", "format": "text", "harness": "codex"}, list(argv)
    allowed = {"event": ("SessionStart", "SubagentStart"), "format": ("text", "json"), "harness": ("codex", "claude")}
    while rest:
        arg = rest.pop(0)
        if arg in ("--hook", "--render"):
            mode = arg[2:]
            continue
        if arg in ("-h", "--help"):
            return "help", opts
        name, _, value = arg[2:].partition("=")
        if not arg.startswith("--") or name not in allowed:
            return None, {**opts, "error": f"unknown option {arg!r}"}
        if not value:
            if not rest:
                return None, {**opts, "error": f"--{name} needs a value"}
            value = rest.pop(0)
        if value not in allowed[name]:
            return None, {**opts, "error": f"invalid value {value!r} for --{name} ({' or '.join(allowed[name])})"}
        opts[name] = value
    return mode, opts


def _reexec(python: str, argv: list[str], data: bytes) -> bytes | None:
    """Run the startup script (argv[0]) again with the connection's interpreter; its stdout, or None."""
    import subprocess

    env = dict(os.environ, CONTINUITY_REEXEC="1")
    try:
        proc = subprocess.run(
            [python, os.path.abspath(sys.argv[0]), *argv], input=data, capture_output=True, env=env, timeout=25
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _import_failure_output(harness: str, data: bytes, exc: ImportError) -> str:
    """Valid hook JSON that says private memory was not restored because an import failed."""
    import json

    try:
        payload = json.loads(data.decode("utf-8", errors="replace") or "null")
    except ValueError:
        return ""
    if not isinstance(payload, dict) or payload.get("hook_event_name") not in ("SessionStart", "SubagentStart"):
        return ""
    event = payload["hook_event_name"]
    name = getattr(exc, "name", None) or "a dependency"
    text = (
        f'<private-memory event="{event}" status="unavailable">\n'
        f"Private memory was not restored (the startup code could not import {name} with this Python; "
        "set `python` in the checkout's .agent-vault to an interpreter that has continuity installed). "
        "Continue under AGENTS.md and the repository's instructions, and do not claim that private "
        "identity, preferences or handoffs were restored.\n</private-memory>"
    )
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


def site_packages() -> None:
    """The hook command runs Python with -S for speed; the full path needs site-packages back.

    Adding them may add import finders (an editable install adds one for `continuity` itself); the
    startup script's finder, which serves the package only from checked bytes, stays first.
    """
    if sys.flags.no_site:
        import site

        site.main()
    pinned = [finder for finder in sys.meta_path if getattr(finder, "continuity_pinned", False)]
    sys.meta_path[:] = pinned + [finder for finder in sys.meta_path if finder not in pinned]


STATE_EVENTS = ("PreCompact", "PostToolUse", "Stop", "UserPromptSubmit")


def state_event(harness: str, data: bytes) -> str | None:
    """The answer to an event other than a start (PostToolUse follows every tool call), or None.

    These only update the session's counters, so they skip site-packages and the renderer: the
    payload is read with the warm path's small JSON reader, and anything it cannot read takes the
    full path, which answers the same way.
    """
    from continuity.fastpath import parse_payload

    payload = parse_payload(data)
    if payload is None or payload.get("hook_event_name") not in STATE_EVENTS:
        return None
    from continuity import hookstate

    return hookstate.handle(payload, harness)


def hook_full(harness: str, data: bytes | None) -> int:
    """The full hook path (the warm path missed): validate, render, record; always exit 0."""
    if data is None:
        from continuity.fastpath import read_stdin

        data = read_stdin()
    out = state_event(harness, data)
    if out is not None:
        if out:
            sys.stdout.write(out + "\n")
        return 0
    site_packages()
    try:
        from continuity import hook

        out = hook.run_hook(harness, data)
    except ImportError as exc:
        if os.environ.get("CONTINUITY_REEXEC") != "1":
            python = _connection_python(data)
            if python and os.path.abspath(python) != os.path.abspath(sys.executable):
                again = _reexec(python, ["--hook", "--harness", harness], data)
                if again is not None:
                    sys.stdout.write(again.decode("utf-8", errors="replace"))
                    return 0
        out = _import_failure_output(harness, data, exc)
    except Exception:
        if os.environ.get("CONTINUITY_DEBUG") == "1":
            raise
        out = ""
    if out:
        sys.stdout.write(out + "\n")
    return 0


def _connection_python(data: bytes) -> str | None:
    """The connection's `python`, when it may be run (see `trusted_interpreter`), else None."""
    try:
        import json
        from pathlib import Path

        from continuity import connection

        payload = json.loads(data.decode("utf-8", errors="replace") or "null")
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
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


def render_main(opts: dict[str, str], code_digest: str) -> int:
    site_packages()
    try:
        from pathlib import Path

        from continuity import fastpath, hook

        fastpath.CODE = code_digest
    except ImportError as exc:
        sys.stderr.write(f"agent-startup-context: error: cannot import {exc.name or 'continuity'}\n")
        return 3
    text, code = hook.render_command(Path.cwd(), opts["event"], opts["format"], opts["harness"])
    sys.stdout.write(text + "\n")
    return code


def main(argv: list[str], data: bytes | None, code_digest: str) -> int:
    """Everything after the pinned checks; `data` is stdin when the warm path already read it."""
    mode, opts = parse_options(argv)
    if mode == "hook":
        from continuity import fastpath

        fastpath.CODE = code_digest
        return hook_full(opts["harness"], data)
    if mode == "help":
        sys.stdout.write(USAGE + "\n")
        return 0
    if mode is None and "--hook" in argv:
        return 0  # a hook never fails the session, even when its command line is wrong
    if mode != "render":
        if "error" in opts:
            sys.stderr.write(f"agent-startup-context: error: {opts['error']}\n")
        sys.stderr.write(USAGE + "\n")
        return 2
    return render_main(opts, code_digest)
