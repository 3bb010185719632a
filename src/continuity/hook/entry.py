"""The startup script's full path: option parsing, the cold hook, the manual render.

`scripts/agent-startup-context.py` stays small and pinned: it checks the digests of the modules it
loads, reads the harness's JSON once and serves an unchanged vault through `warm`, and hands
everything else to `main` here, with the parsed JSON and the digest of the pinned code that keys the
startup cache. It lives apart from `run` so that the part that may fail to import (the renderer and
its dependencies) is one import that can be caught. Standard library only at import time; when a
dependency cannot be imported, `reexec` decides what happens next.
"""

from __future__ import annotations

import os
import sys

from continuity import names

USAGE = (
    "usage: agent-startup-context.py --hook --harness codex|claude\n"
    "       agent-startup-context.py --render [--event SessionStart|SubagentStart] "
    "[--format text|json] [--harness codex|claude]"
)


def parse_options(argv: list[str]) -> tuple[str | None, dict[str, str]]:
    """(mode, options); mode is None for bad input, with the reason in options["error"]."""
    mode, opts, rest = None, {"event": names.SESSION_START, "format": "text", "harness": names.CODEX}, list(argv)
    allowed = {"event": names.START_EVENTS, "format": ("text", "json"), "harness": names.HARNESSES}
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


def hook_full(harness: str, payload: dict[str, object] | None, code: str) -> int:
    """The full hook path (the warm path missed): validate, render, record; always exit 0.

    `payload` is the harness's JSON object as `warm.read_payload` parsed it; None (over the cap, not
    JSON, not an object) has no answer. The events other than a start (PostToolUse follows every tool
    call) only update the session's counters, so they skip site-packages and the renderer.
    """
    if payload is None:
        return 0
    if payload.get("hook_event_name") in names.STATE_EVENTS:
        from continuity.hook import nudge

        out = nudge.handle(payload, harness)
        if out:
            sys.stdout.write(out + "\n")
        return 0
    site_packages()
    try:
        out = _brief_or_retry(harness, payload, code)
    except ImportError as exc:
        from continuity.hook import reexec

        out = reexec.answer(harness, payload, exc, code)
    except Exception:
        if os.environ.get("CONTINUITY_DEBUG") == "1":
            raise
        out = ""
    if out:
        sys.stdout.write(out + "\n")
    return 0


def _brief_or_retry(harness: str, payload: dict[str, object], code: str) -> str:
    """`run.run_hook`, once more with every `.pth` file run when a dependency cannot be imported."""
    try:
        from continuity.hook import run

        return run.run_hook(harness, payload, code)
    except ImportError:
        if not sys.flags.no_site:
            raise
    site_packages(complete=True)
    from continuity.hook import run

    return run.run_hook(harness, payload, code)


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


def main(argv: list[str], payload: dict[str, object] | None, code: str) -> int:
    """Everything after the pinned checks; `payload` is the harness's JSON object as the script read it
    (hook mode only), and `code` the digest of the pinned code."""
    mode, opts = parse_options(argv)
    if mode == "hook":
        return hook_full(opts["harness"], payload, code)
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
