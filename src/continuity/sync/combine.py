"""Integrating two computers' histories without ever writing a conflict marker or losing either side.

git's own merge is not used for content: it would stitch two edits of one note together line by
line (a frontmatter from one side, a body from the other), write `<<<<<<<` into a note when it
cannot, or follow a `.gitattributes` that says `merge=union`. Instead every path is decided whole,
from its blob on each side and in the merge base:

| ours vs base | theirs vs base | result at the path | beside it |
|---|---|---|---|
| unchanged | anything | theirs | |
| changed | unchanged | ours | |
| changed | changed, to the same bytes | that | |
| deleted | changed | theirs (their edit stays) | |
| changed | deleted | ours (nothing is lost) | |
| changed | changed differently | **theirs** (the remote's stays in place) | ours as a sync-conflict copy |

The copy is named the way Syncthing names one, `<name>.sync-conflict-<UTC date>-<time>-<ID>.<ext>`,
which `vault.conflicts` recognises by name alone: the loader never selects it and doctor reports it
with the next step. `<ID>` is eight capital hex digits of the digest of the device and our blob, so
two different copies never share a name. The result is an ordinary merge commit with both parents, so
history keeps every version too.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from typing import NamedTuple

from continuity.sync.git import Git

Entry = tuple[str, str]  # (mode, blob id)


class Conflict(NamedTuple):
    path: str  # where the remote's version stays
    copy: str  # where ours was kept


@dataclass(frozen=True)
class Combined:
    commit: str
    conflicts: tuple[Conflict, ...]
    kind: str  # same | ours | theirs (fast-forward) | merge
    rewritten: bool = False  # the remote's history was rewritten and adopted (`adopt_rewrite`)


def list_tree(git: Git, commit: str | None) -> dict[str, Entry]:
    """Every file of a commit's tree: path -> (mode, blob id); empty for None."""
    if commit is None:
        return {}
    out = git.run(["ls-tree", "-r", "-z", "--full-tree", commit])
    entries: dict[str, Entry] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _tab, raw_path = record.partition(b"\t")
        mode, kind, blob = meta.decode("ascii").split(" ")
        if kind == "blob":
            entries[raw_path.decode("utf-8", "surrogateescape")] = (mode, blob)
    return entries


def conflict_copy_name(path: str, device: str, blob: str, now: dt.datetime, taken: set[str]) -> str:
    """`<folder>/<stem>.sync-conflict-<date>-<time>-<ID><ext>`, unused in `taken`."""
    folder, slash, name = path.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, ext = name, ""
    stamp = now.astimezone(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    seed = f"{device}\0{blob}"
    for attempt in range(100):
        ident = hashlib.sha256(f"{seed}\0{attempt}".encode()).hexdigest()[:8].upper()
        candidate = f"{folder}{slash}{stem}.sync-conflict-{stamp}-{ident}{'.' + ext if ext else ''}"
        if candidate not in taken:
            return candidate
    raise RuntimeError("no free conflict-copy name")  # a hundred digests colliding cannot happen


def decide(
    base: dict[str, Entry],
    ours: dict[str, Entry],
    theirs: dict[str, Entry],
    device: str,
    now: dt.datetime,
) -> tuple[dict[str, Entry], list[Conflict]]:
    """The table of the module docstring, as a pure function of the three listings."""
    result = dict(theirs)
    conflicts: list[Conflict] = []
    taken = set(ours) | set(theirs) | set(base)
    for path in sorted(set(ours) | set(base)):
        mine, old, other = ours.get(path), base.get(path), theirs.get(path)
        if mine in (old, other):
            continue
        if other == old or other is None:
            if mine is None:
                result.pop(path, None)
            else:
                result[path] = mine
            continue
        if mine is None:
            continue  # we deleted it, they changed it: their edit stays
        copy = conflict_copy_name(path, device, mine[1], now, taken)
        taken.add(copy)
        result[copy] = mine
        conflicts.append(Conflict(path, copy))
    return result, conflicts


def write_tree(git: Git, entries: dict[str, Entry]) -> str:
    """A tree object holding exactly `entries`, built in a private index file (the real one is untouched)."""
    index = git.git_dir() / "continuity" / "combine.index"
    index.parent.mkdir(mode=0o700, exist_ok=True)
    index.unlink(missing_ok=True)
    lines = b"".join(
        f"{mode} {blob}\t".encode("ascii") + path.encode("utf-8", "surrogateescape") + b"\0"
        for path, (mode, blob) in sorted(entries.items())
    )
    env = {"GIT_INDEX_FILE": str(index)}
    git.run(["read-tree", "--empty"], env=env)
    git.run(["update-index", "-z", "--index-info"], stdin=lines, env=env)
    tree = git.run(["write-tree"], env=env).decode("ascii").strip()
    index.unlink(missing_ok=True)
    return tree


def is_ancestor(git: Git, older: str, newer: str) -> bool:
    return git.probe(["merge-base", "--is-ancestor", older, newer]).returncode == 0


def merge_base(git: Git, ours: str, theirs: str) -> str | None:
    proc = git.probe(["merge-base", ours, theirs])
    if proc.returncode != 0:
        return None  # unrelated histories: everything is compared with an empty base
    return proc.stdout.decode("ascii").strip() or None


def combine(git: Git, ours: str | None, theirs: str | None, message: str, now: dt.datetime) -> Combined:
    """One commit holding both sides: ours or theirs when one contains the other, else a merge commit."""
    if theirs is None or ours == theirs:
        return Combined(ours or "", (), "same")
    if ours is None or is_ancestor(git, ours, theirs):
        return Combined(theirs, (), "theirs")
    if is_ancestor(git, theirs, ours):
        return Combined(ours, (), "ours")
    base = merge_base(git, ours, theirs)
    entries, conflicts = decide(list_tree(git, base), list_tree(git, ours), list_tree(git, theirs), git.device, now)
    tree = write_tree(git, entries)
    if conflicts:
        message += "\n\nkept both sides of:\n" + "".join(f"  {item.path} -> {item.copy}\n" for item in conflicts)
    commit = git.run(["commit-tree", tree, "-p", ours, "-p", theirs, "-F", "-"], stdin=message.encode("utf-8"))
    return Combined(commit.decode("ascii").strip(), tuple(conflicts), "merge")


def integrate(
    git: Git, ours: str | None, prior: str | None, theirs: str | None, message: str, now: dt.datetime
) -> Combined:
    """`combine`, unless the remote no longer holds `prior` (the tip this computer last saw there) while
    ours still builds on it: then its history was rewritten, and it is adopted (`adopt_rewrite`)."""
    if ours is None or prior is None or theirs is None or prior == theirs or is_ancestor(git, prior, theirs):
        return combine(git, ours, theirs, message, now)
    if not is_ancestor(git, prior, ours):
        return combine(git, ours, theirs, message, now)
    return adopt_rewrite(git, ours, prior, theirs, message + "the remote's history was rewritten\n", now)


def adopt_rewrite(git: Git, ours: str, prior: str, theirs: str, message: str, now: dt.datetime) -> Combined:
    """This computer's changes since `prior` as one commit on top of a remote history that was rewritten.

    The remote's branch no longer contains `prior`, the tip this computer last saw there: someone
    force-pushed (to scrub a leaked secret, to drop a huge file, or an unrelated history). Merging the
    two histories would push every old commit back, resurrecting what the rewrite removed, and would
    ask the gate to judge history the remote already had. So the old history is not carried: the
    paths are decided by the same table with `prior` as the base, and the result has `theirs` as its
    only parent. What this computer changed since `prior` stays; everything else is the remote's.
    """
    entries, conflicts = decide(list_tree(git, prior), list_tree(git, ours), list_tree(git, theirs), git.device, now)
    tree = write_tree(git, entries)
    if git.text(["rev-parse", f"{theirs}^{{tree}}"]) == tree:
        return Combined(theirs, tuple(conflicts), "theirs", rewritten=True)
    if conflicts:
        message += "\n\nkept both sides of:\n" + "".join(f"  {item.path} -> {item.copy}\n" for item in conflicts)
    commit = git.run(["commit-tree", tree, "-p", theirs, "-F", "-"], stdin=message.encode("utf-8"))
    return Combined(commit.decode("ascii").strip(), tuple(conflicts), "merge", rewritten=True)


def _sizes(git: Git, commit: str) -> dict[str, int]:
    """Each file's size in a commit's tree, from the object headers (no blob is read)."""
    out = git.run(["ls-tree", "-r", "-z", "-l", "--full-tree", commit])
    sizes: dict[str, int] = {}
    for record in out.split(b"\0"):
        meta, _tab, raw_path = record.partition(b"\t")
        fields = meta.split()
        if len(fields) == 4 and fields[1] == b"blob" and fields[3].isdigit():
            sizes[raw_path.decode("utf-8", "surrogateescape")] = int(fields[3])
    return sizes


def cap_incoming(
    git: Git, head: str | None, combined: Combined, cap_bytes: int, message: str
) -> tuple[Combined, list[str]]:
    """`combined` without any file the remote brought in that is over `cap_bytes`; (result, those paths).

    A blob compresses well (a 1.8 MB push can be a 300 MB note), so what would be checked out is
    measured before a byte of it is written: each path that changes and whose new version is over the
    cap keeps this computer's version (or stays absent), in one more commit on top of `combined`.
    """
    if not combined.commit or combined.commit == head:
        return combined, []
    ours = list_tree(git, head)
    new = list_tree(git, combined.commit)
    sizes = _sizes(git, combined.commit)
    big = sorted(path for path, entry in new.items() if ours.get(path) != entry and sizes.get(path, 0) > cap_bytes)
    if not big:
        return combined, []
    for path in big:
        if path in ours:
            new[path] = ours[path]
        else:
            new.pop(path)
    tree = write_tree(git, new)
    text = message + f"\nkept out {len(big)} incoming file(s) over {cap_bytes} bytes\n"
    commit = git.run(["commit-tree", tree, "-p", combined.commit, "-F", "-"], stdin=text.encode("utf-8"))
    return Combined(commit.decode("ascii").strip(), combined.conflicts, "merge"), big
