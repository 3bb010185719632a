"""One error family, each class bound to one documented exit code, and the one funnel that words it.

Every surface turns a failure into one line through `describe`: the command line (`cli.funnel`), the
MCP server (`server.tool`) and doctor's crashed check alike. Anything that is not ours is a bug and is
reported the same way (with a traceback only under CONTINUITY_DEBUG=1, which the surface prints).
Messages never carry note content or secret values: they name files, line numbers and detectors, and
say what to do next.

Core code never names a command-line flag for the input that failed: it raises with `field=` (the
input's own name, `"type"`) and writes `{field}` where the message names it. Each surface says it in
its own word (`Surface.word`): `--type` on the command line, `type` for a tool's argument.
"""

from __future__ import annotations

import os

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_NOT_CONNECTED = 3
EXIT_LEASE_HELD = 4
EXIT_REJECTED = 5
# Stopped by Ctrl-C (SIGINT), as shells report it: 128 + the signal's number 2.
EXIT_INTERRUPTED = 130

FIELD = "{field}"  # where a message names the input that failed; each surface puts its own word there


class ContinuityError(Exception):
    """Base of every expected failure; `exit_code` is what the process returns.

    `field` is the input that failed (a note's `type`, its `title`), named in the message by `FIELD`;
    `str()` gives it by its own name. `advice` is what the person may do about it when that means
    overriding a safeguard (taking another computer's lease): the command line prints it after the
    message, while the MCP server, whose reader is the model, gives the message alone. A model is
    never told how to get around a lease or the gate.
    """

    exit_code = EXIT_PROBLEMS

    def __init__(self, *args: object, advice: str | None = None, field: str | None = None) -> None:
        super().__init__(*args)
        self.advice = advice
        self.field = field

    def worded(self, word: str | None = None) -> str:
        """The message, with the failed field named `word` (its own name when None)."""
        text = super().__str__()
        if self.field is None:
            return text
        return text.replace(FIELD, self.field if word is None else word)

    def __str__(self) -> str:
        return self.worded()


class UsageError(ContinuityError):
    exit_code = EXIT_USAGE


class NotConnected(ContinuityError):
    """No connection, an unreachable vault, or sibling worktrees that disagree."""

    exit_code = EXIT_NOT_CONNECTED


class LeaseHeld(ContinuityError):
    """Another device holds an unexpired writer lease."""

    exit_code = EXIT_LEASE_HELD


class InputRejected(ContinuityError):
    """Secret-like content, an exceeded cap, invalid frontmatter or id, a refused overwrite."""

    exit_code = EXIT_REJECTED


class NoteError(InputRejected):
    """A note that cannot be used as it is; `reason` is one of the brief's source reasons."""

    def __init__(self, message: str, reason: str = "invalid", *, advice: str | None = None) -> None:
        super().__init__(message, advice=advice)
        self.reason = reason


# ------------------------------------------------------------------------------------ the funnel


class Surface:
    """Where a failure is told: how it names a field, and whether it gives the person's advice.

    A field's word is `prefix` + the field (underscores as hyphens when there is a prefix), unless
    `renamed` names it otherwise (the command line reads a body `--from` a file)."""

    __slots__ = ("advice", "prefix", "renamed")

    def __init__(self, *, prefix: str = "", renamed: dict[str, str] | None = None, advice: bool = False) -> None:
        self.prefix = prefix
        self.renamed = renamed or {}
        self.advice = advice

    def word(self, field: str) -> str:
        if field in self.renamed:
            return self.renamed[field]
        return self.prefix + field.replace("_", "-") if self.prefix else field


COMMAND_LINE = Surface(prefix="--", renamed={"body": "--from"}, advice=True)
TOOL_CALL = Surface()  # the MCP server: an argument's own name, and never the advice (see ContinuityError)


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def message(exc: BaseException, surface: Surface) -> str:
    """The failure's own text as `surface` names its field, without advice (several lines stay several)."""
    if isinstance(exc, ContinuityError) and exc.field is not None:
        return exc.worded(surface.word(exc.field))
    return str(exc)


def trace() -> None:
    """The traceback of the failure being handled, on stderr, when CONTINUITY_DEBUG=1 asks for it:
    every surface prints one there and nowhere else."""
    if os.environ.get("CONTINUITY_DEBUG") == "1":
        import traceback  # lazy: only a debugging run prints one

        traceback.print_exc()


def describe(exc: BaseException, surface: Surface, label: str = "lifecycle") -> tuple[str, int]:
    """The one error line (`label: error: …`) and exit code of any failure, ours, the system's or a bug."""
    if isinstance(exc, ContinuityError):
        advice = f"; {exc.advice}" if surface.advice and exc.advice else ""
        return f"{label}: error: {one_line(message(exc, surface) + advice)}", exc.exit_code
    if isinstance(exc, OSError):
        name = os.path.basename(str(exc.filename)) if exc.filename else ""
        where = f": {name}" if name else ""
        return f"{label}: error: {one_line(exc.strerror or str(exc))}{where}", EXIT_PROBLEMS
    bug = f"unexpected {type(exc).__name__}; rerun with CONTINUITY_DEBUG=1 for details"
    return f"{label}: error: {bug}", EXIT_PROBLEMS
