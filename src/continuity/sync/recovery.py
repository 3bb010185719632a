"""Moving the working tree between commits so that a kill at any instant is finished by the next sync,
and putting a vault left in an unusual state by hand back on its branch.

`checkout(old, new)` records both commits in `.git/continuity/sync.json` first, then moves every
path that differs: a working-tree file that is neither the old nor the new version (a file held back
by the secret gate, an edit made meanwhile) is first renamed to a sync-conflict copy, so nothing is
overwritten, and one that is already the new version is removed for git to write again; then a
two-way `read-tree -m -u` sets the index and the files (leaving every file that does not change
between the commits as it is), leftovers of the old commit are removed only while they are still
exactly the old version, and the branch moves last, with
`update-ref`'s compare-and-swap. Run again after a kill, the same steps are safe at every point: a
file already moved is the new version, a rename already done is not repeated, and the branch moves
only from the recorded old commit.

`recover` runs first in every sync: it removes git's lock files that a killed sync left (only when
our own record says a sync was interrupted, so a person's running git is never disturbed), finishes
an interrupted checkout, and backs up and undoes a rebase, merge, cherry-pick or revert left in
progress and a detached HEAD or another branch, so the sync works on `main` and commits no conflict
marker a person's git left in a note.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from continuity.errors import ContinuityError
from continuity.sync import state
from continuity.sync.combine import combine, conflict_copy_name, is_ancestor, list_tree
from continuity.sync.git import HEAD_REF, Git

GIT_LOCKS = (
    "index.lock",
    "HEAD.lock",
    "config.lock",
    "packed-refs.lock",
    "shallow.lock",
    "ORIG_HEAD.lock",
    "FETCH_HEAD.lock",
)
IN_PROGRESS = (
    ("rebase-merge", ["rebase", "--abort"]),
    ("rebase-apply", ["rebase", "--abort"]),
    ("MERGE_HEAD", ["merge", "--abort"]),
    ("CHERRY_PICK_HEAD", ["cherry-pick", "--abort"]),
    ("REVERT_HEAD", ["revert", "--abort"]),
)


def _hash_files(git: Git, rels: list[str]) -> dict[str, str]:
    """The blob id each regular working-tree file would have (links and absent files left out)."""
    present = [rel for rel in rels if (git.vault / rel).is_file() and not (git.vault / rel).is_symlink()]
    if not present:
        return {}
    data = b"".join(rel.encode("utf-8", "surrogateescape") + b"\n" for rel in present)
    out = git.run(["hash-object", "--no-filters", "--stdin-paths"], stdin=data).decode("ascii").split()
    return dict(zip(present, out, strict=True))


def checkout(git: Git, old: str | None, new: str, now: dt.datetime) -> list[str]:
    """Move the working tree and branch from `old` to `new` (module docstring); the copies made."""
    state.begin(git.vault, now, phase="checkout", **{"from": old or "", "to": new})
    current = git.rev(HEAD_REF)
    if current == new:
        return []  # the branch moves last: a checkout killed after that had finished
    index_tree = git.probe(["write-tree"]).stdout.decode("ascii").strip()
    if index_tree == git.text(["rev-parse", f"{new}^{{tree}}"]):
        # Killed between writing the files and moving the branch: only the branch is left to move.
        git.run(["update-ref", "-m", "continuity sync: integrate", HEAD_REF, new, current or "0" * 40])
        return []
    before, after = list_tree(git, old), list_tree(git, new)
    changed = sorted(path for path in set(before) | set(after) if before.get(path) != after.get(path))
    hashes = _hash_files(git, changed)
    taken = set(before) | set(after)
    moved: list[str] = []
    for rel in changed:
        target = git.vault / rel
        if not os.path.lexists(target):
            continue
        if rel in after and hashes.get(rel) == after[rel][1]:
            target.unlink()  # already the new version (a killed checkout got this far): git writes it again
            continue
        if rel in before and hashes.get(rel) == before[rel][1]:
            continue
        copy = conflict_copy_name(rel, git.device, hashes.get(rel, "local"), now, taken)
        taken.add(copy)
        os.rename(target, git.vault / copy)
        moved.append(copy)
    # A two-way merge: files that do not change between the commits keep whatever is in them (a file
    # the gate held back, an edit not yet committed); `--reset` would overwrite those.
    git.probe(["update-index", "-q", "--refresh"])  # stat data of unchanged files, so git sees them as such
    if old is None:
        git.run(["read-tree", "-m", "-u", new])
    else:
        git.run(["read-tree", "-m", "-u", old, new])
    for rel in changed:
        if rel not in after and rel in before and _hash_files(git, [rel]).get(rel) == before[rel][1]:
            (git.vault / rel).unlink()
    _prune_empty_dirs(git.vault, [rel for rel in changed if rel not in after])
    current = git.rev(HEAD_REF)
    if current != new:
        git.run(["update-ref", "-m", "continuity sync: integrate", HEAD_REF, new, current or "0" * 40])
    return moved


def _prune_empty_dirs(vault: Path, removed: list[str]) -> None:
    for rel in removed:
        folder = (vault / rel).parent
        while folder != vault and folder.is_dir() and not folder.is_symlink():
            try:
                folder.rmdir()
            except OSError:
                break
            folder = folder.parent


def backup(git: Git, commit: str, what: str, now: dt.datetime) -> str:
    ref = f"refs/continuity/backup/{now.strftime('%Y%m%dT%H%M%SZ')}-{what}-{commit[:12]}"
    git.run(["update-ref", ref, commit])
    return ref


def _remove_stale_locks(git: Git) -> None:
    """The lock files a killed sync's git commands left (index, HEAD, refs, config, shallow)."""
    for name in GIT_LOCKS:
        (git.git_dir() / name).unlink(missing_ok=True)
    for name in ("combine.index.lock", "combine.index"):
        (git.git_dir() / "continuity" / name).unlink(missing_ok=True)
    for folder, _dirs, files in os.walk(git.git_dir() / "refs"):
        for name in files:
            if name.endswith(".lock"):
                (Path(folder) / name).unlink(missing_ok=True)


def recover(git: Git, now: dt.datetime) -> list[str]:
    """Everything that had to be finished or undone before this sync, one phrase each."""
    notes: list[str] = []
    interrupted = state.running(git.vault)
    if interrupted is not None:
        _remove_stale_locks(git)
        phase = interrupted.get("phase")
        frm, to = str(interrupted.get("from") or ""), str(interrupted.get("to") or "")
        head = git.rev(HEAD_REF)
        if phase == "checkout" and to and head in (frm or None, to):
            checkout(git, frm or None, to, now)
            notes.append("finished the interrupted sync")
        else:
            if head:
                git.run(["read-tree", HEAD_REF])  # a half-staged index is staged again from the files
            notes.append(f"undid the interrupted sync (it stopped while it was at: {phase or 'the start'})")
    elif (git.git_dir() / "index.lock").exists():
        raise ContinuityError("another git command is working in the vault (.git/index.lock); try again when it ends")
    for marker, abort in IN_PROGRESS:
        if os.path.lexists(git.git_dir() / marker):
            head = git.rev("HEAD")
            for name in ("ORIG_HEAD", "HEAD"):
                commit = git.rev(name)
                if commit:
                    backup(git, commit, name.lower(), now)
            if git.probe(abort).returncode != 0 and head:
                git.run(["reset", "--quiet", "--merge", head])
            notes.append(f"undid a {abort[0]} left in progress (its commits are kept under refs/continuity/backup/)")
            break
    notes.extend(_back_on_branch(git, now))
    return notes


def _back_on_branch(git: Git, now: dt.datetime) -> list[str]:
    """A detached HEAD or another branch: save it, integrate it into `main`, and check `main` out."""
    symbolic = git.probe(["symbolic-ref", "-q", "HEAD"])
    where = symbolic.stdout.decode("utf-8", "replace").strip() if symbolic.returncode == 0 else None
    if where == HEAD_REF:
        return []
    current = git.rev("HEAD")
    main = git.rev(HEAD_REF)
    git.run(["symbolic-ref", "HEAD", HEAD_REF])
    if current is None:
        return []
    backup(git, current, "detached" if where is None else "branch", now)
    if main is None:
        git.run(["update-ref", HEAD_REF, current])
        return [f"put {where or 'a detached HEAD'} back on main"]
    if is_ancestor(git, current, main):
        target = main
    elif is_ancestor(git, main, current):
        target = current
    else:
        target = combine(git, current, main, f"sync {git.device}: bring a detached HEAD back to main\n", now).commit
    backup(git, main, "main", now)
    git.run(["update-ref", HEAD_REF, current, main])
    checkout(git, current, target, now)
    return [f"put {where or 'a detached HEAD'} back on main (saved under refs/continuity/backup/)"]
