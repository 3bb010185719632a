#!/usr/bin/env python3
"""continuity's startup hook, and the manual render when the hook is unavailable.

    agent-startup-context.py --hook --harness codex|claude     (reads the harness's JSON on stdin)
    agent-startup-context.py --render [--event SessionStart|SubagentStart]
                                      [--format text|json] [--harness codex|claude]

It runs from a checkout without installing the package: the checkout's `src/` goes first on
sys.path. In hook mode it always exits 0 and prints at most one JSON object. When the package's
dependencies cannot be imported it re-runs itself once with the `python` named in the connection
file, and failing that injects a notice that private memory was not restored and why.
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

USAGE = (
    "usage: agent-startup-context.py --hook --harness codex|claude\n"
    "       agent-startup-context.py --render [--event SessionStart|SubagentStart] "
    "[--format text|json] [--harness codex|claude]"
)


def _options(argv):
    mode, opts, rest = None, {"event": "SessionStart", "format": "text", "harness": "codex"}, list(argv)
    allowed = {"event": ("SessionStart", "SubagentStart"), "format": ("text", "json"), "harness": ("codex", "claude")}
    while rest:
        arg = rest.pop(0)
        if arg in ("--hook", "--render"):
            mode = arg[2:]
            continue
        name, _, value = arg[2:].partition("=")
        if not arg.startswith("--") or name not in allowed:
            return None, opts
        if not value:
            if not rest:
                return None, opts
            value = rest.pop(0)
        if value not in allowed[name]:
            return None, opts
        opts[name] = value
    return mode, opts


def _reexec(python, argv, data):
    """Run this script again with the connection's interpreter; its stdout, or None on failure."""
    import subprocess

    env = dict(os.environ, CONTINUITY_REEXEC="1")
    try:
        proc = subprocess.run(
            [python, os.path.abspath(__file__), *argv], input=data, capture_output=True, env=env, timeout=25
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _import_failure_output(harness, data, exc):
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


def hook_main(harness):
    data = b""
    try:
        from continuity import hook

        data = hook.read_stdin()
        out = hook.run_hook(harness, data)
    except ImportError as exc:
        if not data:
            try:
                data = sys.stdin.buffer.read(1 << 20)
            except (OSError, ValueError, AttributeError):
                data = b""
        out = None
        if os.environ.get("CONTINUITY_REEXEC") != "1":
            python = _connection_python(data)
            if python and os.path.realpath(python) != os.path.realpath(sys.executable):
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


def _connection_python(data):
    try:
        import json
        from pathlib import Path

        from continuity import connection

        payload = json.loads(data.decode("utf-8", errors="replace") or "null")
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
        conn = connection.discover(Path(cwd) if isinstance(cwd, str) and cwd else Path.cwd())
        return conn.python
    except Exception:
        return None


def main(argv):
    mode, opts = _options(argv)
    if mode == "hook":
        try:
            return hook_main(opts["harness"])
        except BaseException:
            return 0
    if mode != "render":
        sys.stderr.write(USAGE + "\n")
        return 2
    try:
        from pathlib import Path

        from continuity import hook
    except ImportError as exc:
        sys.stderr.write(f"agent-startup-context: error: cannot import {exc.name or 'continuity'}\n")
        return 3
    text, code = hook.render_command(Path.cwd(), opts["event"], opts["format"], opts["harness"])
    sys.stdout.write(text + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
