"""One error family, each class bound to one documented exit code.

The CLI funnels every `ContinuityError` into a single stderr line; anything else is a bug and is
reported the same way (with a traceback only under CONTINUITY_DEBUG=1). Messages never carry note
content or secret values: they name files, line numbers and detectors, and say what to do next.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_NOT_CONNECTED = 3
EXIT_LEASE_HELD = 4
EXIT_REJECTED = 5
# Stopped by Ctrl-C (SIGINT), as shells report it: 128 + the signal's number 2.
EXIT_INTERRUPTED = 130


class ContinuityError(Exception):
    """Base of every expected failure; `exit_code` is what the process returns.

    `advice` is what the person may do about it when that means overriding a safeguard (taking
    another computer's lease): the command line prints it after the message, while the MCP server,
    whose reader is the model, gives the message alone. A model is never told how to get around a
    lease or the gate.
    """

    exit_code = EXIT_PROBLEMS

    def __init__(self, *args: object, advice: str | None = None) -> None:
        super().__init__(*args)
        self.advice = advice


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
