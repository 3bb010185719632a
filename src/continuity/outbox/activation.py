"""Activation: the moment an outbox comes under the seven-day policy, and who may say it did.

The record `output/.outbox.json` is a file in the repository's folder, so a repository can carry one:
committed with forged dates (or none), it would make the sweep delete the person's untracked files in
`output/`. The record therefore only counts when this computer's tool wrote it: activation puts a
random token in the record and the same token, keyed by the folder's real path, in machine-local
state (`local.made`), outside every repository. The sweep and `deliver` act only on an outbox whose
token matches and whose record git does not track (`owned`).

An outbox activated before tokens existed, or one that came from elsewhere, is left alone (nothing
delivered, enrolled or deleted) until the person runs `install-sweeper` in it, which takes it over
(`adopt_state`): no date in the old record is believed, and every entry restarts its seven days.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from pathlib import Path

from continuity.errors import InputRejected
from continuity.local import made
from continuity.local.connection import ensure_ignored
from continuity.outbox.folder import (
    LIFETIME,
    OUTBOX_DIR,
    PRIVATE_DIR_MODE,
    STATE_NAME,
    OutboxState,
    Scheduled,
    entries,
    legacy_error,
    locked,
    outbox_exists,
    outbox_path,
    read_state,
    whole_second,
    write_state,
)


class ForeignOutbox(InputRejected):
    """`output/.outbox.json` exists but this computer's tool did not make it (or git tracks it)."""


def activate(repo: Path, now: datetime, *, dry_run: bool = False, adopt: bool = False) -> tuple[OutboxState, bool]:
    """Make sure the outbox is governed by the expiry policy; True when this call activated it.

    Only an empty (or absent) outbox is activated. A folder with contents and no record is legacy data
    and raises LegacyOutbox before anything is written, including the git exclude line. A record this
    computer did not make raises ForeignOutbox, unless `adopt` (the person's `install-sweeper`) takes
    it over: see `adopt_state`.
    """
    outbox = outbox_path(repo)
    if outbox_exists(outbox) and (state := _recorded(outbox)) is not None:
        if owned(repo, state):
            return state, False
        if not adopt:
            raise foreign_error(repo)
        return adopt_state(repo, now, dry_run=dry_run)
    fresh = OutboxState(activated=whole_second(now), token=new_token())
    if dry_run:
        return fresh, True
    outbox.mkdir(mode=PRIVATE_DIR_MODE, exist_ok=True)
    outbox_exists(outbox)  # re-check: it must not have become a link in the meantime
    ensure_ignored(repo, OUTBOX_DIR)
    with locked(outbox):  # again under the lock: another process may have activated it meanwhile
        state = _recorded(outbox)
        if state is not None:
            if not owned(repo, state):
                raise foreign_error(repo)
            return state, False
        assert fresh.token is not None
        made.remember(made.OUTBOX, outbox, fresh.token)  # first: a record without it is never swept
        write_state(outbox, fresh)
    return fresh, True


def new_token() -> str:
    import secrets  # lazy (9 ms): only a new outbox's token needs it, not the hook's sweep

    return secrets.token_hex(16)


def owned(repo: Path, state: OutboxState) -> bool:
    """Whether this computer's tool activated this outbox: only then may anything in it be deleted.

    The record's token must be the one recorded in machine-local state (`local.made`) for this very
    folder, and git must not track the record (a tracked record came with the repository, and a
    clone of it elsewhere must not act either).
    """
    outbox = outbox_path(repo)
    return made.is_made(made.OUTBOX, outbox, state.token) and not made.tracked(repo, outbox / STATE_NAME)


def foreign_error(repo: Path) -> ForeignOutbox:
    outbox = outbox_path(repo)
    if made.tracked(repo, outbox / STATE_NAME):
        return ForeignOutbox(
            f"{outbox / STATE_NAME} is tracked by git: it came with the repository, so nothing in {outbox} "
            f"is delivered or deleted. Remove it from git ('git rm --cached {OUTBOX_DIR}/{STATE_NAME}') and "
            "review the folder"
        )
    return ForeignOutbox(
        f"{outbox / STATE_NAME} was not activated by this computer's continuity (it came from elsewhere, or "
        f"predates the machine-local record), so nothing in {outbox} is delivered or deleted. Review the "
        "folder, then run 'lifecycle outbox install-sweeper' to take it over: every entry then expires "
        "seven days after that"
    )


def adopt_state(repo: Path, now: datetime, *, dry_run: bool = False) -> tuple[OutboxState, bool]:
    """Take over an untracked record this computer has no token for; the person asked for it.

    No date in the record is believed: every entry (delivered or not) restarts its seven days now, so
    nothing is deleted sooner than seven days after the person confirmed the folder. A tracked record
    stays refused.
    """
    outbox = outbox_path(repo)
    if made.tracked(repo, outbox / STATE_NAME):
        raise foreign_error(repo)
    moment = whole_second(now)
    with contextlib.nullcontext() if dry_run else locked(outbox):
        old = read_state(outbox)
        children = entries(outbox)
        fresh = OutboxState(
            activated=moment,
            enrolled={name: Scheduled(moment, moment + LIFETIME) for name in children},
            unknown=old.unknown if old is not None else {},
            token=new_token(),
        )
        if not dry_run:
            assert fresh.token is not None
            made.remember(made.OUTBOX, outbox, fresh.token)
            write_state(outbox, fresh)
    return fresh, True


def _recorded(outbox: Path) -> OutboxState | None:
    """The outbox's record; None for an empty outbox; LegacyOutbox for contents without a record."""
    state = read_state(outbox)
    if state is None and (found := entries(outbox)):
        raise legacy_error(outbox, len(found))
    return state
