"""`lifecycle sync`: commit (gated), fetch, integrate, push; and making a vault a Git vault.

One sync, under this computer's local write lock (so no `lifecycle` write runs meanwhile):

1. **recover**: finish or undo what an interrupted sync left (`recovery`), and put a vault that a
   person left mid-rebase, mid-merge, on a detached HEAD or another branch back on `main`, every
   commit first saved under `refs/continuity/backup/`;
2. **commit** this computer's changes as one commit, each file through the secret gate (`commit`);
3. **fetch** `main` (a shallow clone is deepened first, since integrating needs the merge base);
4. **integrate** with `combine` (never a conflict marker, the remote's version in place and ours as a
   sync-conflict copy) and move the working tree to the result (`checkout`);
5. **push** without force. A push that loses the race to another computer goes back to step 3, at
   most `SYNC_PUSH_ATTEMPTS` times in all; a remote that refuses the push (a hook, permissions) stops
   the sync with its reason, and the commits wait for the next sync.

Offline (the remote cannot be reached) the commit of step 2 is kept and the sync says so (exit 3).
History is only ever added to: no force-push, no rebase, no reset of a branch that was pushed. When
the remote's own history was rewritten (it no longer holds the tip this computer last saw), this
computer's changes since that tip go on top of the new history and the old one is kept only locally,
under `refs/continuity/backup/` (`combine.adopt_rewrite`): what the rewrite removed is never pushed
back, and only what this computer newly publishes is judged. Before the working tree moves, every
incoming file is measured from its object header, and one over `SYNC_FILE_MAX_BYTES` is never
checked out (`combine.cap_incoming`); it is named as held.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from continuity import limits, tunables
from continuity.errors import FIELD, ContinuityError, InputRejected, NotConnected, UsageError
from continuity.gate.secrets import shown_path
from continuity.records import overlaps
from continuity.records.leases import utcnow
from continuity.store import atomic, lease
from continuity.sync import commit, ignore, recovery, remote, state, underlease
from continuity.sync.combine import Combined, Conflict, cap_incoming, integrate
from continuity.sync.git import (
    BRANCH,
    HEAD_REF,
    INFO_ATTRIBUTES,
    REMOTE,
    TRACKING,
    Git,
    GitFailed,
    first_line,
    is_git_vault,
    reach,
)
from continuity.sync.recovery import checkout
from continuity.vault import access

REWRITTEN = (
    "the remote's history was rewritten; this computer's changes were put on top of it "
    "(the old history is kept under refs/continuity/backup/)"
)
_OFFLINE_WORDS = (
    "could not resolve",
    "unable to access",
    "connection refused",
    "connection timed out",
    "could not read from remote",
    "does not appear to be a git repository",
    "network is unreachable",
    "no such file or directory",
    "did not finish within",
)


class PushRejected(ContinuityError):
    """The remote refused the push for a reason other than a lost race (exit 1)."""


@dataclass(frozen=True)
class SyncResult:
    committed: str | None
    staged: tuple[str, ...]
    removed: tuple[str, ...]
    held: tuple[commit.Held, ...]
    conflicts: tuple[Conflict, ...]
    integrated: str  # same | ours | theirs | merge | offline
    pushed: bool
    attempts: int
    recovered: tuple[str, ...]
    offline: str | None = None
    privacy: str | None = None  # for `--remote`: private | local | unknown
    under_lease: tuple[overlaps.Overlap, ...] = ()  # writes this push carries that another's lease covered

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "committed": self.committed,
            "files": len(self.staged) + len(self.removed),
            "held": [
                {"path": item.shown, "reason": item.reason, "line": item.line, "type": item.detector}
                for item in self.held
            ],
            "conflicts": [{"path": item.path, "copy": item.copy} for item in self.conflicts],
            "integrated": self.integrated,
            "pushed": self.pushed,
            "attempts": self.attempts,
            "recovered": list(self.recovered),
            "offline": self.offline,
            "privacy": self.privacy,
            "under_lease": [item.to_json() for item in self.under_lease],
        }


AfterIntegrate = Callable[[Git], bool]


@dataclass
class _Run:
    git: Git
    now: dt.datetime
    only: set[str] | None
    recovered: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # incoming files over the size cap, never checked out
    under_lease: list[overlaps.Overlap] = field(default_factory=list)


def remote_url(git: Git) -> str:
    proc = git.probe(["config", "--get", f"remote.{REMOTE}.url"])
    if proc.returncode != 0:
        raise UsageError("this vault has no Git remote; run 'lifecycle sync --remote URL' once to set one")
    return proc.stdout.decode("utf-8", "surrogateescape").strip()


def harden(git: Git) -> None:
    """The repository-local settings every sync relies on: attributes off, our fetch refspec."""
    info = git.git_dir() / "info"
    info.mkdir(mode=0o700, exist_ok=True)
    target = info / "attributes"
    if not target.is_file() or target.read_text("utf-8", "replace") != INFO_ATTRIBUTES:
        atomic.write_text(target, INFO_ATTRIBUTES)


def _offline(error: GitFailed) -> str | None:
    detail = error.stderr.lower() + " " + str(error).lower()
    if any(word in detail for word in remote.NOT_OFFLINE_WORDS):
        return None  # it answered and refused: git's reason is the error, never "offline"
    if any(word in detail for word in _OFFLINE_WORDS):
        return remote.strip_credentials(str(error))
    return None


def fetch(git: Git) -> str | None:
    """Fetch the remote's `main` into the tracking ref; the reason when offline, else None."""
    args = ["fetch", "--quiet", "--prune", "--no-tags", REMOTE, f"+refs/heads/*:refs/remotes/{REMOTE}/*"]
    if (git.git_dir() / "shallow").exists():
        args.insert(1, "--unshallow")
    try:
        git.run(args)
    except GitFailed as exc:
        reason = _offline(exc)
        if reason is None:
            raise
        return reason
    return None


def push(git: Git) -> str:
    """`ok`, `race` (someone pushed first) or `offline`; PushRejected for any other refusal."""
    proc = git.probe(["push", "--porcelain", "--no-verify", REMOTE, f"{HEAD_REF}:{HEAD_REF}"])
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode == 0:
        return "ok"
    for line in out.splitlines():
        if line.startswith("!"):
            if "[remote rejected]" in line:
                reason = line.split("[remote rejected]", 1)[1].strip(" ()")
                raise PushRejected(
                    f"the remote refused the push ({reason[:200]}); this computer's commits are kept "
                    "and the next 'lifecycle sync' tries again"
                )
            if "fetch first" in line or "non-fast-forward" in line or "[rejected]" in line:
                return "race"
    error = GitFailed("git push failed (" + first_line(proc.stderr) + ")", proc.stderr.decode("utf-8", "replace"))
    if _offline(error) is not None:
        return "offline"
    raise PushRejected(f"the push failed ({first_line(proc.stderr)}); the next 'lifecycle sync' tries again")


def pack_loose_objects(git: Git) -> None:
    """Pack `.git`'s loose objects once there are more than `SYNC_LOOSE_OBJECTS_MAX` (the budget counts
    files); `repack` writes the new pack before it deletes anything, so a kill leaves both or either."""
    counted = git.probe(["count-objects"])
    words = counted.stdout.split()
    if counted.returncode == 0 and words and words[0].isdigit() and int(words[0]) > tunables.SYNC_LOOSE_OBJECTS_MAX:
        git.probe(["repack", "-d", "-q"])


def sync(
    vault: Path,
    device: str,
    *,
    now: dt.datetime | None = None,
    only: set[str] | None = None,
    after_integrate: AfterIntegrate | None = None,
    lock_timeout: float = limits.LOCAL_LOCK_TIMEOUT_SECONDS,
    on_wait: lease.WaitNotice | None = None,
) -> SyncResult:
    """One sync of the vault (the module docstring); `only` limits the commit to those paths."""
    if not is_git_vault(vault):
        raise UsageError(f"{vault} is not a Git vault; run 'lifecycle sync --remote URL' once to make it one")
    git = Git(vault, device)
    remote.classify(remote_url(git))
    moment = utcnow(now)
    with lease.local_lock(vault, timeout=lock_timeout, on_wait=on_wait):
        harden(git)
        run = _Run(git, moment, only)
        run.recovered.extend(recovery.recover(git, moment))
        state.begin(vault, moment, phase="commit")
        return _sync_locked(run, after_integrate)


def _commit(run: _Run, only: set[str] | None = None) -> tuple[str | None, commit.Staged]:
    git = run.git
    head = git.rev(HEAD_REF)
    ignore.tidy(git.vault)  # before every commit: no ignore line that arrived can hide a note
    staged = commit.stage(git, run.only if only is None else only)
    if not staged.staged and not staged.removed:
        return None, staged  # the index is the last commit's (held files were given back their committed state)
    journal_changed = access.journal(git.device) in staged.staged
    ops = commit.journal_ops(git, head) if journal_changed else []
    made = commit.commit_index(git, commit.message(git.device, ops, staged))
    return made, staged


def _sync_locked(run: _Run, after_integrate: AfterIntegrate | None) -> SyncResult:
    git, vault = run.git, run.git.vault
    made, staged = _commit(run)
    attempts = 0
    integrated = "same"
    while True:
        attempts += 1
        prior = git.rev(TRACKING)
        reason = fetch(git)
        if reason is not None:
            state.end(vault, run.now, "offline")
            return _result(run, made, staged, "offline", False, attempts, reason)
        state.begin(vault, run.now, phase="integrate")
        head, theirs = git.rev(HEAD_REF), git.rev(TRACKING)
        message = f"sync {git.device}: integrate {REMOTE}/{BRANCH}\n"
        combined = integrate(git, head, prior, theirs, message, run.now)
        if combined.rewritten and head is not None:  # the remote no longer holds what we last saw there
            recovery.backup(git, head, "rewritten", run.now)
            run.recovered.append(REWRITTEN)
        combined, big = cap_incoming(git, head, combined, tunables.SYNC_FILE_MAX_BYTES, message)
        run.refused.extend(big)
        integrated = combined.kind if combined.kind != "same" or integrated == "same" else integrated
        run.conflicts.extend(combined.conflicts)
        if combined.commit and combined.commit != head:
            checkout(git, head, combined.commit, run.now)
        found, recorded = underlease.check(git, theirs)
        run.under_lease[:] = found
        if (after_integrate is not None and after_integrate(git)) or recorded:
            extra, more = _commit(run, None if run.only is None else run.only | {overlaps.record_rel(git.device)})
            made = extra or made
            staged = commit.Staged(staged.staged + more.staged, staged.removed + more.removed, more.held)
        head = git.rev(HEAD_REF)
        if head is None or head == theirs:
            break
        refused = commit.outgoing(git, theirs)
        if refused:
            state.end(vault, run.now, "refused")
            raise InputRejected(
                "nothing was pushed: commits made outside 'lifecycle sync' hold what the gate refuses ("
                + "; ".join(item.message().replace("it was not synchronized", "in the history") for item in refused[:5])
                + "); remove it from this vault's unpushed history with git, then sync again"
            )
        try:
            outcome = push(git)
        except PushRejected:
            state.end(vault, run.now, "rejected")
            raise
        if outcome == "ok":
            git.run(["update-ref", TRACKING, head])
            state.end(vault, run.now, "done")
            pack_loose_objects(git)
            return _result(run, made, staged, integrated, True, attempts)
        if outcome == "offline":
            state.end(vault, run.now, "offline")
            return _result(run, made, staged, integrated, False, attempts, "the remote could not be reached")
        if attempts >= tunables.SYNC_PUSH_ATTEMPTS:
            state.end(vault, run.now, "race")
            raise ContinuityError(
                f"other computers pushed first {attempts} times in a row; this computer's commits are kept "
                "and the next 'lifecycle sync' tries again"
            )
    state.end(vault, run.now, "done")
    return _result(run, made, staged, integrated, False, attempts)


def _result(
    run: _Run,
    made: str | None,
    staged: commit.Staged,
    integrated: str,
    pushed: bool,
    attempts: int,
    offline: str | None = None,
) -> SyncResult:
    incoming = tuple(commit.Held(rel, shown_path(rel), "incoming_too_large") for rel in dict.fromkeys(run.refused))
    return SyncResult(
        made,
        staged.staged,
        staged.removed,
        staged.held + incoming,
        tuple(run.conflicts),
        integrated,
        pushed,
        attempts,
        tuple(run.recovered),
        offline,
        under_lease=tuple(run.under_lease),
    )


def connect_remote(vault: Path, device: str, url: str, *, now: dt.datetime | None = None) -> SyncResult:
    """`lifecycle sync --remote URL`: make the vault a Git vault with that remote, then sync.

    An empty remote receives the vault as its first commit; a remote that already holds a vault is
    integrated like any other sync (for unrelated histories every path is compared with an empty base,
    so two different versions of one file are both kept). Running it again with the same URL is a
    plain sync; another URL is refused, so a typo cannot redirect a vault silently.
    """
    checked = remote.classify(url)
    privacy = remote.check_private(checked)
    remote.refuse_public(checked, privacy)
    if not (vault / "00-system").is_dir():
        raise NotConnected(f"{vault} is not a vault (it has no 00-system/)")
    git = Git(vault, device)
    if os.path.lexists(vault / ".git") and not is_git_vault(vault):
        raise InputRejected(f"{vault}/.git is not a folder; it was left alone")
    with lease.local_lock(vault):
        current = git.probe(["config", "--get", f"remote.{REMOTE}.url"]) if is_git_vault(vault) else None
        existing = (
            current.stdout.decode("utf-8", "surrogateescape").strip() if current and not current.returncode else None
        )
        if existing is not None and existing != checked.url and git.rev(TRACKING) is not None:
            raise UsageError("this vault already has another remote; change it with git itself if you mean to")
        if existing != checked.url:  # none yet, or one that never answered a fetch: replaced once it answers
            reach(git, checked.url)
        if not is_git_vault(vault):
            git.run(["init", "--quiet", f"--initial-branch={BRANCH}"])
        if existing != checked.url:
            git.run(["remote", "set-url" if existing is not None else "add", REMOTE, checked.url])
        git.run(["config", f"remote.{REMOTE}.fetch", f"+refs/heads/*:refs/remotes/{REMOTE}/*"])
        harden(git)
        ignore.tidy(vault)
    result = sync(vault, device, now=now)
    return SyncResult(**{**result.__dict__, "privacy": privacy.verdict})


def clone(url: str, target: Path, device: str, on_refused: Callable[[str], None] | None = None) -> str:
    """`init --clone URL`: clone into an absent or empty folder; the privacy verdict."""
    checked = remote.classify(url)
    privacy = remote.check_private(checked)
    remote.refuse_public(checked, privacy)
    if os.path.lexists(target) and (target.is_symlink() or not target.is_dir() or any(target.iterdir())):
        raise InputRejected(f"{target} is not an empty folder; {FIELD} needs an absent or empty one", field="clone")
    target.parent.mkdir(parents=True, exist_ok=True)
    parent = Git(target.parent, device)
    try:
        parent.run(["clone", "--quiet", "--no-checkout", "--origin", REMOTE, checked.url, str(target)])
    except GitFailed as exc:
        raise NotConnected(f"the clone failed ({remote.strip_credentials(str(exc))})") from None
    git = Git(target, device)
    harden(git)
    if git.rev(f"refs/remotes/{REMOTE}/{BRANCH}") is None:
        raise NotConnected(
            "the remote has no 'main' branch with a vault yet; run 'lifecycle sync --remote URL' on the computer "
            "that has the vault first"
        )
    tip = git.rev(f"refs/remotes/{REMOTE}/{BRANCH}") or ""
    # Measured before a byte is written, as in every sync: a file over the cap is not checked out.
    capped, big = cap_incoming(git, None, Combined(tip, (), "theirs"), tunables.SYNC_FILE_MAX_BYTES, "clone\n")
    git.run(["symbolic-ref", "HEAD", HEAD_REF])
    git.run(["update-ref", HEAD_REF, capped.commit])
    git.run(["read-tree", "--reset", "-u", HEAD_REF])

    for rel in big:
        if on_refused is not None:
            on_refused(commit.Held(rel, shown_path(rel), "incoming_too_large").message())
    return privacy.verdict
