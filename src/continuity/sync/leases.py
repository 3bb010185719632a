"""The writer lease made exclusive by the remote: a compare-and-swap on the branch.

With a Git vault, `lease acquire` writes this device's lease file as it always did, then commits just
that file and this device's journal, fetches, integrates and pushes. A push only succeeds when the
remote's `main` is still the commit this computer integrated, so between two computers racing for
the lease the later push fails, fetches, and then sees the other's lease: it withdraws its own
(removes the file, journals `lease.release`, pushes that) and exits 4. Hence the guarantee, as the
remote records it: **at most one device has an unexpired lease at the tip of `main`**, for every
computer whose clock is right and that acquires through `lifecycle`.

Its limits: expiry is judged by each computer's own clock, so a clock that runs behind keeps an
expired lease alive for it and one that runs ahead takes over early; a computer that is offline
when it acquires holds a lease that only it knows about (the command says so), and one that never
syncs is never stopped by anybody's lease; a person's own `git push` bypasses all of it. Release
pushes the removal the same way; offline, it is only local until the next sync.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from continuity.errors import LeaseHeld
from continuity.records import leases as lease_records
from continuity.store import journal, lease
from continuity.sync import engine
from continuity.sync.git import REMOTE, TRACKING, Git, is_git_vault
from continuity.vault import access


@dataclass(frozen=True)
class Published:
    remote: bool  # True when the remote's branch now records this computer's lease state
    note: str


def has_remote(vault: Path, device: str) -> bool:
    if not is_git_vault(vault):
        return False
    return Git(vault, device).probe(["config", "--get", f"remote.{REMOTE}.url"]).returncode == 0


def refresh(vault: Path, device: str, *, now: dt.datetime | None = None) -> bool:
    """Bring in the remote's lease state before judging it (nothing of this computer is committed);
    False without a remote or offline, when only what this computer saw last can be judged."""
    if not has_remote(vault, device):
        return False
    return engine.sync(vault, device, now=now, only=set()).offline is None


def publish(
    vault: Path,
    device: str,
    *,
    releasing: bool = False,
    removed: tuple[str, ...] = (),
    now: dt.datetime | None = None,
) -> Published:
    """Push this device's lease file (or its removal, and `removed`: lease files `release --force` deleted);
    LeaseHeld when another's lease landed first."""
    if not has_remote(vault, device):
        return Published(False, "the lease is only local: this vault has no Git remote")
    lost: list[lease_records.Lease] = []

    def withdraw_if_foreign(_git: Git) -> bool:
        if releasing:
            return False
        seen = lease_records.status(vault, device, now)
        own = seen.own()
        if seen.state != "foreign" or seen.lease is None:
            return False
        lost.append(seen.lease)
        if own is not None:
            lease.remove_lease_file(vault, own.rel)
            journal.append(
                vault / access.journal(device), device, "lease.release", None, own.rel, None, lease_records.utcnow(now)
            )
        return True

    only = {lease_records.lease_rel(device), access.journal(device), *removed}
    result = engine.sync(vault, device, now=now, only=only, after_integrate=withdraw_if_foreign)
    if lost:
        other = lost[0]
        raise LeaseHeld(
            f"device {other.device} took the writer lease first (until {other.expires:%Y-%m-%dT%H:%M:%SZ}, as the "
            "remote records it); this computer's lease was withdrawn"
        )
    if result.offline:
        return Published(False, f"the lease is only local: the remote could not be reached ({result.offline})")
    word = "removal of the lease" if releasing else "lease"
    if not remote_records(vault, device, lease_records.lease_rel(device)):
        held = next((item.message() for item in result.held if item.rel == lease_records.lease_rel(device)), None)
        why = f" ({held})" if held else ""
        return Published(False, f"the {word} is only local: the remote does not record it{why}")
    return Published(True, f"the remote records this {word}; other computers see it at their next sync")


def remote_records(vault: Path, device: str, rel: str) -> bool:
    """Whether the remote's branch, as last fetched or pushed, holds exactly this computer's file at `rel`
    (or, when the file is gone here, holds none): what a sync reported is checked, not assumed, since a
    file the gate held back or a push that did not happen leaves the remote as it was."""
    git = Git(vault, device)
    there = git.probe(["rev-parse", "--verify", "--quiet", f"{TRACKING}:{rel}"])
    if not os.path.lexists(vault / rel):
        return there.returncode != 0
    if there.returncode != 0:
        return False
    here = git.probe(["hash-object", "--no-filters", "--", rel])
    return here.returncode == 0 and here.stdout.strip() == there.stdout.strip()
