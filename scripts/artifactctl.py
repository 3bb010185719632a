#!/usr/bin/env python3
"""artifactctl: deliver, inspect and sweep the repository's expiring outbox (`output/`).

The same tool as `lifecycle outbox …`, runnable from a checkout without installing the package: the
checkout's `src/` goes first on `sys.path`. Every form but one needs typer.

`sweep --hook` is the form the session-start hook runs (pinned by SHA-256 in the hook command, run in
the repository's top level, registered so that no session waits for it). It prints nothing and
always exits 0, and it first decides from the outbox's own small record whether a sweep would change
anything (`quiet`): in a repository without an outbox that costs one `lstat`, and otherwise one read
of `output/.outbox.json` and one listing, with the standard library alone, so that the package is
imported only when something is due.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(sys.argv[0]))
# A checkout keeps the package in src/ beside scripts/; an installed package carries this file in
# continuity/_scripts/, two folders below the folder that holds `continuity`.
SRC = (
    os.path.dirname(os.path.dirname(HERE))
    if os.path.basename(HERE) == "_scripts"
    else os.path.join(os.path.dirname(HERE), "src")
)
STATE_NAME = ".outbox.json"  # continuity.outbox.folder.STATE_NAME
STATE_CAP_BYTES = 1 << 20  # continuity.limits.OUTBOX_STATE_CAP_BYTES
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"  # continuity.outbox.folder.format_time


def quiet(repo: str, now: float | None = None) -> bool:
    """True when a sweep would change nothing now; anything unexpected is for the sweep to judge.

    Nothing to do: no `output/` (or one the sweep refuses: a link or a file), a record without an
    activation token (one from before tokens, or from elsewhere: the sweep never acts on it), or a
    record of this format whose entries are exactly the folder's children, none of them due. A new child (to be
    enrolled), a vanished one, a due one, a damaged or newer record: not quiet.
    """
    outbox = os.path.join(repo, "output")
    try:
        if not os.path.isdir(outbox) or os.path.islink(outbox):
            return True
        with open(os.path.join(outbox, STATE_NAME), "rb") as handle:
            state = json.loads(handle.read(STATE_CAP_BYTES + 1))
        names = {n for n in os.listdir(outbox) if n != STATE_NAME and not n.startswith(f".{STATE_NAME}.")}
        tables = [state["packages"], state["enrolled"]] if state.get("version") == 1 else None
        if tables is not None and not state.get("activation"):
            return True
    except FileNotFoundError:  # no record: the sweep leaves an outbox alone until it is activated
        return True
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return False
    if not tables or not all(isinstance(table, dict) for table in tables) or names != {*tables[0], *tables[1]}:
        return False
    moment = time.strftime(TIME_FORMAT, time.gmtime(now))
    expiries = [item.get("expires") if isinstance(item, dict) else None for t in tables for item in t.values()]
    return all(isinstance(e, str) and len(e) == len(moment) and e > moment for e in expiries)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["sweep", "--hook"] and quiet(os.getcwd()):
        return 0
    if SRC not in sys.path[:1]:
        sys.path.insert(0, SRC)
    if args == ["sweep", "--hook"]:
        try:
            from pathlib import Path

            from continuity.outbox.sweep import hook_sweep

            hook_sweep(Path.cwd())
        except Exception:  # noqa: S110 (a hook must never fail or print)
            pass
        return 0
    from continuity.cli.outbox import standalone_app

    standalone_app()(args=args, prog_name="artifactctl")
    return 0


if __name__ == "__main__":
    sys.exit(main())
