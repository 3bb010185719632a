#!/usr/bin/env python3
"""artifactctl: deliver, inspect and sweep the repository's expiring outbox (`output/`).

The same tool as `lifecycle outbox …`, runnable from a checkout without installing the package: the
checkout's `src/` goes first on `sys.path`. `sweep --hook`, the form the session-start hook and the
scheduler entry run, takes a short path that needs only the standard library, prints nothing and
always exits 0; every other form needs typer.
"""

from __future__ import annotations

import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if str(SRC) not in sys.path[:1]:
        sys.path.insert(0, str(SRC))
    if args == ["sweep", "--hook"]:
        try:
            from continuity.outbox_sweeper import hook_sweep

            hook_sweep(Path.cwd())
        except Exception:  # noqa: S110 (a hook must never fail or print)
            pass
        return 0
    from continuity.cli.outbox import standalone_app

    standalone_app()(args=args, prog_name="artifactctl")
    return 0


if __name__ == "__main__":
    sys.exit(main())
