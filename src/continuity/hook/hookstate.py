"""A session's machine-local hook state, and what a session start adds to the brief.

- PreCompact cannot add context, so it only records a pending flag (`nudge.handle`). The next
  SessionStart with `source=compact` appends a short recovery note to the brief (background, not a
  new task) and clears the flag, so the note appears once.
- After each SessionStart or SubagentStart, a receipt records what was delivered (`receipts`).
- The counts behind the Stop nudge live in the same state (`nudge`).

State lives in `$XDG_STATE_HOME/continuity/hooks/<sha256 of the session id>.json`: counts, booleans
and a 32-bit fingerprint of the turn id, nothing else (no prompt, message, path, tool input or
content), replaced atomically, mode 0600. A missing, corrupt or unreadable file is a fresh state:
the hook fails open. Concurrent tool events may lose a count, which only moves a heuristic. Hooks
never write the vault.

"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from typing import TYPE_CHECKING

from continuity import limits, names, safeio
from continuity.local import userdirs

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from continuity.brief.render import Brief

STATE_VERSION = 1
RECOVERY_NOTE = (
    "Background after compaction: the conversation above was summarized, so details of the work so far "
    "may be missing from it. Carry on with the task you were doing; this note is not a new task. If it "
    "helps, re-read the current handoff (`lifecycle handoff current`). If the work so far settled "
    "something a later session would otherwise have to rediscover, it can be recorded with `lifecycle "
    "handoff new` or proposed as a candidate with `lifecycle note new`; recording nothing is fine."
)
FIELDS: dict[str, type] = {
    "turn": int,  # 32-bit fingerprint of the current turn id (0: unknown)
    "tool_events": int,
    "mutations": int,
    "wrote_memory": bool,
    "nudged": bool,
    "compact_pending": bool,
}


class HookState:
    """One session's counts and flags."""

    __slots__ = tuple(FIELDS)

    def __init__(
        self,
        turn: int = 0,
        tool_events: int = 0,
        mutations: int = 0,
        wrote_memory: bool = False,
        nudged: bool = False,
        compact_pending: bool = False,
    ) -> None:
        self.turn, self.tool_events, self.mutations = turn, tool_events, mutations
        self.wrote_memory, self.nudged, self.compact_pending = wrote_memory, nudged, compact_pending

    def as_dict(self) -> dict[str, int | bool]:
        return {name: getattr(self, name) for name in FIELDS}

    def but(self, **changes: int | bool) -> HookState:
        """A copy with `changes` applied."""
        return HookState(**{**self.as_dict(), **changes})  # type: ignore[arg-type]

    def new_turn(self, turn: int = 0) -> HookState:
        return HookState(turn=turn, compact_pending=self.compact_pending)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HookState) and self.as_dict() == other.as_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "HookState(" + ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items()) + ")"


def state_dir() -> str:
    return os.path.join(userdirs.state_dir(), "hooks")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()


def state_path(session_id: str) -> str:
    return os.path.join(state_dir(), f"{digest(session_id)}.json")


def session_path(payload: dict[str, object]) -> str | None:
    session = payload.get("session_id")
    return state_path(session) if isinstance(session, str) and session else None


def load(path: str) -> HookState:
    """The stored state, or a fresh one for anything missing, corrupt, oversized or of another shape."""
    try:
        doc = json.loads(safeio.read_regular(path, limits.HOOK_STATE_CAP_BYTES))
    except (OSError, ValueError, RecursionError):
        return HookState()
    if not isinstance(doc, dict) or doc.get("version") != STATE_VERSION:
        return HookState()
    values: dict[str, int | bool] = {}
    for name, kind in FIELDS.items():
        value = doc.get(name)
        valid = isinstance(value, bool) if kind is bool else type(value) is int and 0 <= value < 2**32
        if not valid:
            return HookState()
        values[name] = value  # type: ignore[assignment]
    return HookState(**values)  # type: ignore[arg-type]


def save(path: str, state: HookState) -> None:
    """Replace the state file atomically, without fsync (a crash only restarts the heuristics)."""
    text = json.dumps({"version": STATE_VERSION, **state.as_dict()})
    with contextlib.suppress(OSError):  # state that cannot be kept only means the heuristics start over
        safeio.write_private(path, (text + "\n").encode())


def prune(now: float | None = None) -> None:
    """Remove state files of sessions untouched for a month (bounded, best effort)."""
    import time

    cutoff = (time.time() if now is None else now) - limits.HOOK_STATE_MAX_AGE_SECONDS
    try:
        with os.scandir(state_dir()) as entries:
            for count, entry in enumerate(entries):
                if count >= limits.HOOK_STATE_PRUNE_MAX_ENTRIES:
                    break
                ours = (len(entry.name) == 69 and entry.name.endswith(".json")) or safeio.is_tmp_name(entry.name)
                if (
                    ours
                    and entry.is_file(follow_symlinks=False)
                    and entry.stat(follow_symlinks=False).st_mtime < cutoff
                ):
                    os.unlink(entry.path)
    except OSError:
        pass


# --- the session starts ---------------------------------------------------------------------------


def with_recovery_note(brief: Brief) -> Brief:
    """The brief with the recovery note before its closing line, or unchanged when it would not fit."""
    from continuity.brief import render

    closing = "\n</private-memory>"
    if brief.status == "unavailable" or not brief.text.endswith(closing):
        return brief
    text = brief.text[: -len(closing)] + "\n\n" + RECOVERY_NOTE + closing
    if not render.fits(text, brief.event, brief.harness):
        return brief
    return brief._replace(text=text)


def after_start(payload: dict[str, object], brief: Brief, harness: str) -> Brief:
    """The brief as delivered for this start: the recovery note after compaction, and a receipt."""
    from pathlib import Path

    source = payload.get("source") if isinstance(payload.get("source"), str) else None
    delivered = brief
    try:
        path = session_path(payload)
        if path is not None and brief.event == names.SESSION_START:
            if source == "compact":
                state = load(path)
                if state.compact_pending:
                    save(path, state.but(compact_pending=False))
                    delivered = with_recovery_note(brief)
            elif source in ("startup", None):
                prune()
    except Exception:
        if os.environ.get("CONTINUITY_DEBUG") == "1":
            raise
    try:
        from continuity.hook import receipts
        from continuity.local.repo import find_repo_root

        cwd = payload.get("cwd")
        checkout = find_repo_root(Path(cwd)) if isinstance(cwd, str) and cwd else None
        receipts.record(delivered, str(source) if source else None, checkout, delivered is not brief)
    except Exception:
        if os.environ.get("CONTINUITY_DEBUG") == "1":
            raise
    return delivered


def last_deliveries(checkout: Path | None = None) -> list[dict[str, Any]]:
    """The last delivery per harness and event (see `receipts.last_deliveries`), for doctor."""
    from continuity.hook import receipts

    return receipts.last_deliveries(checkout)
