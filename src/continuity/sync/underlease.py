"""Finding, at sync, the writes this computer made under another computer's lease (`records.overlaps`).

After integrating, the lines this device's journal gained since the remote's version of it are what
this push will publish; each is read with the journal's own line parser and compared with the other
devices' leases the integrated vault now shows. New overlaps are added to this device's record
(`store.records`), which the sync then commits with the rest.
"""

from __future__ import annotations

from continuity.records import journal, leases, overlaps
from continuity.store import records
from continuity.sync.git import HEAD_REF, Git
from continuity.vault import access


def _journal_at(git: Git, rev: str | None) -> bytes:
    if rev is None:
        return b""
    proc = git.probe(["cat-file", "-p", f"{rev}:{access.journal(git.device)}"])
    return proc.stdout if proc.returncode == 0 else b""


def outgoing_entries(git: Git, theirs: str | None) -> list[journal.Entry]:
    """This device's journal entries in HEAD that the remote's `theirs` does not hold yet."""
    known = len(_journal_at(git, theirs))
    entries: list[journal.Entry] = []
    for raw in _journal_at(git, git.rev(HEAD_REF))[known:].decode("utf-8", "replace").splitlines():
        entry = journal.parse_line(raw)
        if entry is not None and entry.device == git.device:
            entries.append(entry)
    return entries


def check(git: Git, theirs: str | None) -> tuple[list[overlaps.Overlap], bool]:
    """The overlaps of what this push publishes, and whether the record gained any (to be committed)."""
    entries = outgoing_entries(git, theirs)
    if not entries:
        return [], False
    seen, _invalid = leases.read_leases(git.vault)
    found = overlaps.find(git.device, entries, seen)
    return found, bool(records.record_overlaps(git.vault, git.device, found)) if found else False
