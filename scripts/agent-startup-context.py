#!/usr/bin/env python3
"""continuity's startup hook, and the manual render when the hook is unavailable.

    agent-startup-context.py --hook --harness codex|claude     (reads the harness's JSON on stdin)
    agent-startup-context.py --render [--event SessionStart|SubagentStart]
                                      [--format text|json] [--harness codex|claude]

It runs from a checkout without installing the package: the checkout's `src/` goes first on
sys.path. In hook mode it always exits 0 and prints at most one JSON object. When the package's
dependencies cannot be imported it re-runs itself once with the `python` named in the connection
file, and failing that injects a notice that private memory was not restored and why.

Pinning: Codex trusts a hook by the hash of its definition, which covers the command string but
not this file. So the command checks this file's SHA-256 before running it, and this file checks
the SHA-256 of every package module the hook may load (PINNED_MODULES below, written by
`lifecycle hook pin`) before importing any of them. A mismatch injects only a notice that the
startup code changed since it was reviewed; nothing else runs. Compiled bytecode is kept under the
user's cache directory, not in the checkout, so a planted `__pycache__` file cannot stand in for a
reviewed module.
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
sys.path.insert(0, SRC)

# BEGIN PINNED MODULES (written by `lifecycle hook pin`; edit the code, then run it again)
PINNED_MODULES = {
    "continuity/__init__.py": "1778d1865c0b43376fe93ddcb9266a8eb16816ad4bb10647b427514a1e0e2ace",
    "continuity/atomic.py": "c4d8d181dab5313b5a10452fe101d7184251e068b6dd734e6398c51ed14c188c",
    "continuity/connection.py": "8b43e9a883f9aabaa4598e52d013b0998c89f0f8d2ad405cb141791f08fce19f",
    "continuity/errors.py": "4346b587ecccd1522fa385c6d74c9e5dca45cf8debdac7c4afd2b9a3da7de7ba",
    "continuity/escape.py": "54c351d6316419e4003de5a6af7022964011ef1f30145a341252dac72fc6d393",
    "continuity/handoff.py": "656043ccba0aad7754394fd16a7ed7d9b76ac7149397e469e95fe0c5b790a4c8",
    "continuity/hook.py": "e15c154b3c44b953cf30f0d32b5f0ddb15dc005315a35ec6346a229fba622d16",
    "continuity/hookstate.py": "2189d59b488c6618a47bee0fd2446ec0270638df373db40cb7ebafb310bebf05",
    "continuity/journal.py": "1d849efb3cb5721d8883832de6439978f327311dfed236080548d73f1490c3e0",
    "continuity/lease.py": "366e16832c9ddaed472790eb9b24163163cdc73a752f2e2dc0a75deda904d3ef",
    "continuity/limits.py": "055c821130cb3ef090bebbec0add640d0e471e18d40076919c3d3196414817ad",
    "continuity/notes.py": "4a7831a20a42c6b15bda3a17ab8c5bb4433c700b608b0bf1373077ac61f93867",
    "continuity/receipts.py": "93bd20517130cc6d58d7c319097533493b59f7df8eba5fc0ad6e962ad04e3d18",
    "continuity/render.py": "8295544859fd06e3422657a21e0e908988d1478e23ce663fe1d9dbf0062d1e69",
    "continuity/secret_rules.py": "b95fbf7e622fa142c9dbb5f4bdac38436dadc848aab608e42303451ff22adcb2",
    "continuity/secrets.py": "0c4077ae1a76f9ed0354de727eaa556486a0692acb3f7c118094b5ecd38033db",
    "continuity/sources.py": "df04d5ee5c878f1e7524e6789fdb8215a5965dc9e91f41e31feb95c7e7594582",
    "continuity/startup_cache.py": "f2153e8ede1ca53803f44be4d4b561648a9eb518217c007ad4ae2f2f1927b6c6",
    "continuity/tool_events.py": "a00c930c4a8f3ed0cd561bd058e36a53c86e043d3a8432d076a5242c112d391f",
    "continuity/vault.py": "a61084ab2aa02e7f69fca6b1c5a8eabd65fb8b931161156ad29de0fe476e598f",
    "continuity/writer.py": "0e8a80c5ba4bb88f087dcb16c0383742448ccf6834e71654482e5c678a5ff00a",
}
# END PINNED MODULES
START_EVENTS = ("SessionStart", "SubagentStart")

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


def _pin_mismatch():
    """The first pinned module whose bytes differ from its digest (or that is missing), else None."""
    import hashlib

    if not PINNED_MODULES:
        return "the module digests (none are pinned)"
    for rel, digest in sorted(PINNED_MODULES.items()):
        try:
            with open(os.path.join(SRC, *rel.split("/")), "rb") as handle:
                data = handle.read()
        except OSError:
            return "src/" + rel
        if hashlib.sha256(data).hexdigest() != digest:
            return "src/" + rel
    return None


def _private_bytecode():
    """Read and write compiled modules under the user's cache directory, never the checkout's."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    sys.pycache_prefix = os.path.join(base, "continuity", "pycache")


def _changed_text(event, what):
    return (
        f'<private-memory event="{event}" status="unavailable">\n'
        f"Private memory was not restored (the startup code changed since it was reviewed: {what} does "
        "not match the digest pinned in scripts/agent-startup-context.py). Continue under AGENTS.md and "
        "the repository's instructions, and do not claim that private identity, preferences or handoffs "
        "were restored. After reviewing the change, the person can run `lifecycle hook pin` and trust "
        "the hook again (in Codex: /hooks).\n</private-memory>"
    )


def _changed_output(what):
    """Valid hook JSON for a start event (nothing for others) when the pinned code changed."""
    import json

    try:
        data = sys.stdin.buffer.read(1 << 20)
        payload = json.loads(data.decode("utf-8", errors="replace") or "null")
    except (OSError, ValueError, AttributeError):
        return ""
    event = payload.get("hook_event_name") if isinstance(payload, dict) else None
    if event not in START_EVENTS:
        return ""
    text = _changed_text(event, what)
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


def hook_main(harness):
    data = b""
    changed = _pin_mismatch()
    if changed:
        out = _changed_output(changed)
        if out:
            sys.stdout.write(out + "\n")
        return 0
    _private_bytecode()
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
    changed = _pin_mismatch()
    if changed:
        sys.stdout.write(_changed_text(opts["event"], changed) + "\n")
        return 3
    _private_bytecode()
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
