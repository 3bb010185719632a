"""This computer's changes as one commit, each file through the secret gate first.

Every path `git status` names (changed, added or removed in the working tree, or staged by hand) is
decided again from the working tree: a removal is staged; a file is staged only when it passes the same
rules the loader applies: a regular file (a link or a FIFO is never committed), at most
`SYNC_FILE_MAX_BYTES`, a name with nothing secret-like in it, and no finding of the secret gate
(`gate.secrets.scan_text`, with its `pragma: allowlist secret`) in any reading of its bytes
(`gate.secrets.scan_bytes`: UTF-8, and when that fails UTF-8 with bad bytes replaced and dropped and
Latin-1, and UTF-16 and UTF-32 when the bytes look wide), so one stray byte or another encoding
cannot carry a token past the gate. A file that is not UTF-8 is committed only under `40-documents/`,
and there, when no reading of it is text at all (an image, an archive: the gate cannot judge it),
only when the person kept exactly those bytes with `lifecycle preserve`, whose record names their
SHA-256 (`preserved`); anywhere else it stays on this computer. A held-back file keeps, in the index,
the version last committed, so what was synchronized before stays synchronized and the new bytes never
leave; the sync names it with the line and detector (never the value) and exits 5, and every other file
is synchronized.

The commit is made with plumbing (`write-tree`, `commit-tree`, `update-ref` with the old value), so no
hook, editor or signing program runs, and the branch moves only if nobody moved it meanwhile. Its
message names the device and the operations this device's journal recorded since the last commit.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from continuity import limits, tunables
from continuity.errors import ContinuityError, NoteError
from continuity.gate.secrets import redact, scan_bytes, scan_text, withheld_name
from continuity.records.leases import parse_lease
from continuity.sync.combine import list_tree
from continuity.sync.git import HEAD_REF, Git
from continuity.sync.ignore import unignored_files
from continuity.vault import access, layout, notes

if TYPE_CHECKING:
    from continuity.gate.secrets import Finding

LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}


@dataclass(frozen=True)
class Held:
    """A file kept on this computer: `shown` is its path, or the path with its name withheld."""

    rel: str  # the real path, for this computer's index only: never printed
    shown: str
    reason: str  # secret | too_large | link | invalid | binary | name | incoming_too_large
    line: int | None = None
    detector: str | None = None

    def message(self) -> str:
        if self.reason == "secret":
            return f"{self.shown} line {self.line} looks like a secret ({self.detector}); it was not synchronized"
        why = {
            "too_large": f"it is larger than {tunables.SYNC_FILE_MAX_BYTES} bytes",
            "incoming_too_large": (
                f"the remote's version is larger than {tunables.SYNC_FILE_MAX_BYTES} bytes, so it was not checked "
                "out and this computer's version stays"
            ),
            "link": "it is a symbolic link or not a regular file",
            "binary": (
                f"it is not text the secret gate can read, and only {layout.DOCUMENTS}/ keeps binary originals, "
                "those the person kept with 'lifecycle preserve'"
            ),
            "name": "its name looks like a secret",
        }.get(self.reason, "it cannot be read")
        return f"{self.shown}: {why}; it was not synchronized"


@dataclass(frozen=True)
class Staged:
    staged: tuple[str, ...]
    removed: tuple[str, ...]
    held: tuple[Held, ...]


def changed_paths(git: Git) -> list[str]:
    """Every path whose working-tree or index state differs from the last commit.

    Ignored files are left out, except under the memory folders, where only the tool's own ignore
    lines count (`ignore.unignored_files`): a rule that arrived with the vault cannot hide a note.
    """
    out = git.run(["status", "--porcelain=v1", "-z", "-uall", "--no-renames", "--ignore-submodules=all"])
    paths: list[str] = unignored_files(git)
    for record in out.split(b"\0"):
        if len(record) > 3:
            paths.append(record[3:].decode("utf-8", "surrogateescape"))
    return sorted(set(paths))


def gate_file(git: Git, rel: str) -> Held | None:
    """None when `rel` may be committed as it is in the working tree, else why it is held back."""
    named = withheld_name(rel)
    if named is not None:
        return Held(rel, named[0], "name")
    try:
        data = access.read_capped(git.vault, rel, tunables.SYNC_FILE_MAX_BYTES)
    except NoteError as exc:
        return Held(rel, rel, exc.reason if exc.reason in ("too_large", "link") else "invalid")
    return judge(rel, data, git.vault)


def judge(rel: str, data: bytes, vault: Path | None = None) -> Held | None:
    """The content rules of the module docstring for one file's bytes (`vault`: where approvals live)."""
    named = withheld_name(rel)
    if named is not None:
        return Held(rel, named[0], "name")
    if len(data) > tunables.SYNC_FILE_MAX_BYTES:
        return Held(rel, rel, "too_large")
    document = rel.startswith(layout.DOCUMENTS + "/")
    if not document and not _utf8(data):
        return Held(rel, rel, "binary")
    if rel.startswith(layout.LEASES + "/"):
        findings: list[Finding] | None = scan_text(_own_lease_task(rel, data))
    else:
        findings = scan_bytes(data)
    if findings is None:  # no reading of it is text: the gate cannot judge it
        if document and vault is not None and preserved(vault, rel, data):
            return None
        return Held(rel, rel, "binary")
    if findings:
        first = findings[0]
        return Held(rel, rel, "secret", first.line, first.detector)
    return None


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def preserved(vault: Path, rel: str, data: bytes) -> bool:
    """Whether the person kept exactly these bytes with `lifecycle preserve`, confirming a binary file.

    Its record (`<file>.record.md`, `type: document`, `status: approved`, `scanned: false`) names the
    SHA-256 of the bytes the person confirmed; any other bytes at that path are not what was approved.
    """
    record = rel + ".record.md"
    try:
        meta = notes.parse_note(access.read_capped(vault, record, limits.LIFECYCLE_TEXT_CAP_BYTES), record).meta
    except NoteError:
        return False
    return (
        meta.get("type") == "document"
        and meta.get("status") == "approved"
        and meta.get("scanned") is False
        and meta.get("sha256") == hashlib.sha256(data).hexdigest()
    )


def _own_lease_task(rel: str, data: bytes) -> str:
    """What of a lease file must pass the gate: all of it, unless it is exactly a lease this tool writes.

    The lease's `token` is a random identifier the tool generated (`secrets.token_hex`), which the gate
    rightly takes for a credential-shaped value; a file that parses as a lease and is byte for byte what
    `Lease.to_json` writes for it holds nothing else a person typed but its `task`, which is scanned.
    """
    text = data.decode("utf-8")
    try:
        parsed = parse_lease(data, rel)
    except ContinuityError:
        return text
    return (parsed.task or "") if parsed.to_json() == text else text


def stage(git: Git, only: set[str] | None = None) -> Staged:
    """Put every changed path that passes the gate into the index; held ones keep their committed state."""
    staged: list[str] = []
    removed: list[str] = []
    held: list[Held] = []
    for rel in changed_paths(git):
        if only is not None and rel not in only:
            continue
        if not os.path.lexists(git.vault / rel):
            removed.append(rel)
            continue
        verdict = gate_file(git, rel)
        if verdict is None:
            staged.append(rel)
        else:
            held.append(verdict)
    todo = staged + removed
    if todo:
        paths = b"".join(rel.encode("utf-8", "surrogateescape") + b"\0" for rel in todo)
        git.run(["update-index", "--add", "--remove", "-z", "--stdin"], stdin=paths, env=LITERAL)
    if held:
        restore_committed(git, [item.rel for item in held])
    return Staged(tuple(staged), tuple(removed), tuple(held))


def restore_committed(git: Git, rels: list[str]) -> None:
    """Give held-back paths (even one staged by hand) their last committed state in the index."""
    wanted = set(rels)
    head = git.rev(HEAD_REF)
    committed = list_tree(git, head)
    zero = "0" * 40
    lines = b""
    for rel in sorted(wanted):
        mode, blob = committed.get(rel, ("0", zero))
        lines += f"{mode} {blob}\t".encode("ascii") + rel.encode("utf-8", "surrogateescape") + b"\0"
    if lines:
        git.run(["update-index", "-z", "--index-info"], stdin=lines)


def outgoing(git: Git, remote_tip: str | None) -> list[Held]:
    """Every file version and message a push would send that the gate refuses.

    The commits made here passed the gate file by file, but a commit a person made by hand in the vault
    did not, and a push sends every version in every commit it carries, not only the last. So before
    a push each blob the remote lacks is judged again (`rev-list --objects HEAD --not <remote tip>`),
    as are the messages of those commits.
    """
    exclude = ["--not", remote_tip] if remote_tip else []
    listing = git.run(["rev-list", "--objects", "--filter=object:type=blob", HEAD_REF, *exclude])
    blobs: list[tuple[str, str]] = []
    for raw in listing.decode("utf-8", "surrogateescape").splitlines():
        sha, _space, path = raw.partition(" ")
        if path:
            blobs.append((sha, path))
    refused: list[Held] = []
    if blobs:
        out = git.run(["cat-file", "--batch"], stdin="".join(f"{sha}\n" for sha, _path in blobs).encode("ascii"))
        position = 0
        for _sha, path in blobs:
            header_end = out.index(b"\n", position)
            size = int(out[position:header_end].split()[2])
            data = out[header_end + 1 : header_end + 1 + size]
            position = header_end + 1 + size + 1
            verdict = judge(path, data, git.vault)
            if verdict is not None:
                refused.append(verdict)
    messages = git.run(["log", "--format=%B%x00", HEAD_REF, *exclude]).decode("utf-8", "replace")
    findings = scan_text(messages)
    if findings:
        refused.append(Held("", "a commit message", "secret", findings[0].line, findings[0].detector))
    return refused


def journal_ops(git: Git, head: str | None) -> list[tuple[str, str]]:
    """(op, path) of every line this device's journal gained since `head`'s version of it."""
    rel = access.journal(git.device)
    committed = 0
    if head is not None:
        proc = git.probe(["cat-file", "-s", f"{head}:{rel}"])
        if proc.returncode == 0:
            committed = int(proc.stdout.strip() or b"0")
    staged = git.probe(["cat-file", "-p", f":{rel}"])
    if staged.returncode != 0:
        return []
    ops: list[tuple[str, str]] = []
    for raw in staged.stdout[committed:].decode("utf-8", "replace").splitlines():
        try:
            doc = json.loads(raw)
        except ValueError:
            continue
        if isinstance(doc, dict) and isinstance(doc.get("op"), str):
            ops.append((doc["op"], str(doc.get("path") or "")))
    return ops


def message(device: str, ops: list[tuple[str, str]], staged: Staged) -> str:
    """`sync <device>: <op counts>` and one line per operation; secret-like words withheld."""
    counts: dict[str, int] = {}
    # A write that takes and gives back the lease itself (`edit`) journals both; the summary counts the
    # person's operations, and lease operations only when nothing else happened (`lease acquire`).
    counted = [op for op, _path in ops if not op.startswith("lease.")] or [op for op, _path in ops]
    for op in counted:
        counts[op] = counts.get(op, 0) + 1
    summary = ", ".join(f"{op} x{count}" for op, count in sorted(counts.items()))
    files = len(staged.staged) + len(staged.removed)
    head = f"sync {device}: {summary or 'no journal operations'} ({files} file{'s' if files != 1 else ''})"
    body = [f"{op} {path}" for op, path in ops[: tunables.SYNC_MESSAGE_MAX_LINES]]
    if len(ops) > tunables.SYNC_MESSAGE_MAX_LINES:
        body.append(f"and {len(ops) - tunables.SYNC_MESSAGE_MAX_LINES} more")
    lines = [redact(head), ""] + [redact(line) for line in body] if body else [redact(head)]
    return "\n".join(lines) + "\n"


def commit_index(git: Git, text: str) -> str | None:
    """Commit the index on top of the branch (or as its first commit); None when nothing changed."""
    head = git.rev(HEAD_REF)
    tree = git.run(["write-tree"]).decode("ascii").strip()
    if head is not None and git.text(["rev-parse", f"{head}^{{tree}}"]) == tree:
        return None
    parents = ["-p", head] if head else []
    new = git.run(["commit-tree", tree, *parents, "-F", "-"], stdin=text.encode("utf-8")).decode("ascii").strip()
    git.run(["update-ref", "-m", "continuity sync: commit", HEAD_REF, new, head or "0" * 40])
    return new
