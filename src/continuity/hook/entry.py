"""The startup script's full path: option parsing, the cold hook, the manual render.

`scripts/agent-startup-context.py` stays small and pinned: it checks the digests of the modules it
loads, serves an unchanged vault from `fastpath`, and hands everything else to `main` here, with the
digest of the pinned code that keys the startup cache. Standard library only at import time; when a
dependency cannot be imported, `reexec` decides what happens next.
"""

from __future__ import annotations

import os
import sys

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


def site_packages(*, complete: bool = False) -> None:
    """The hook command runs Python with -S; the full path needs site-packages back.

    First the interpreter's site-packages folders are appended as they are, without running their
    `.pth` files as `site.main()` would: that costs about 5 ms of every cold start, mostly for the
    editable install's own import hook, which the pinned finder makes useless here, and none of the
    hook's dependencies needs one. `complete` runs `site.main()` for an installation whose packages do
    (the full path asks for it when an import fails). The startup script's finder, which serves the
    package only from checked bytes, stays first either way.
    """
    if sys.flags.no_site:
        import site

        if complete:
            site.main()
        else:
            sys.path.extend(folder for folder in site.getsitepackages() if folder not in sys.path)
    pinned = [finder for finder in sys.meta_path if getattr(finder, "continuity_pinned", False)]
    sys.meta_path[:] = pinned + [finder for finder in sys.meta_path if finder not in pinned]


STATE_EVENTS = ("PreCompact", "PostToolUse", "Stop", "UserPromptSubmit")


def state_event(harness: str, data: bytes) -> str | None:
    """The answer to an event other than a start (PostToolUse follows every tool call), or None.

    These only update the session's counters, so they skip site-packages and the renderer; anything
    that is not one of these events takes the full path.
    """
    from continuity.hook.warm import parse_payload

    payload = parse_payload(data)
    if payload is None or payload.get("hook_event_name") not in STATE_EVENTS:
        return None
    from continuity.hook import nudge

    return nudge.handle(payload, harness)


def hook_full(harness: str, data: bytes | None, code: str) -> int:
    """The full hook path (the warm path missed): validate, render, record; always exit 0."""
    if data is None:
        from continuity.hook.warm import read_stdin

        data = read_stdin()
    out = state_event(harness, data)
    if out is not None:
        if out:
            sys.stdout.write(out + "\n")
        return 0
    site_packages()
    try:
        out = _brief_or_retry(harness, data, code)
    except ImportError as exc:
        from continuity.hook import reexec

        out = reexec.answer(harness, data, exc, code)
    except Exception:
        if os.environ.get("CONTINUITY_DEBUG") == "1":
            raise
        out = ""
    if out:
        sys.stdout.write(out + "\n")
    return 0


def _brief_or_retry(harness: str, data: bytes, code: str) -> str:
    """`run.run_hook`, once more with every `.pth` file run when a dependency cannot be imported."""
    try:
        from continuity.hook import run

        return run.run_hook(harness, data, code)
    except ImportError:
        if not sys.flags.no_site:
            raise
    site_packages(complete=True)
    from continuity.hook import run

    return run.run_hook(harness, data, code)


def render_main(opts: dict[str, str], code: str) -> int:
    site_packages(complete=True)  # a person waits here only when the hook is unavailable
    try:
        from pathlib import Path

        from continuity.brief import build
    except ImportError as exc:
        sys.stderr.write(f"agent-startup-context: error: cannot import {exc.name or 'continuity'}\n")
        return 3
    text, status = build.render_command(Path.cwd(), opts["event"], opts["format"], opts["harness"], code)
    sys.stdout.write(text + "\n")
    return status


def main(argv: list[str], data: bytes | None, code: str) -> int:
    """Everything after the pinned checks; `data` is stdin when the warm path already read it, and
    `code` the digest of the pinned code."""
    mode, opts = parse_options(argv)
    if mode == "hook":
        return hook_full(opts["harness"], data, code)
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
    return render_main(opts, code)
