"""`lifecycle outbox list`: what the outbox holds now and when each entry goes.

Read-only and cheap: the activation record gives every entry's deletion time, and each package's
manifest its files; nothing is hashed (`outbox inspect PACKAGE` checks a package's files against its
manifest). An entry the record does not know (it arrived before activation and is enrolled, or it is
not a package) is listed with what the record says of it, so the person sees everything that will be
deleted. A package whose manifest cannot be read is listed with the reason, never skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from continuity.errors import InputRejected
from continuity.outbox import activation, folder
from continuity.outbox.package import read_manifest


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str  # "package" (delivered here), "enrolled" (found at activation) or "unknown"
    created: datetime | None  # delivery time, or when an enrolled entry was found
    expires: datetime | None
    files: int | None
    bytes: int | None
    problem: str | None  # why the manifest could not be read

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "kind": self.kind,
            "created": folder.format_time(self.created) if self.created else None,
            "expires": folder.format_time(self.expires) if self.expires else None,
            "files": self.files,
            "bytes": self.bytes,
            "problem": self.problem,
        }


@dataclass(frozen=True)
class Listing:
    outbox: Path
    activated: datetime | None
    entries: tuple[Entry, ...]
    foreign: str | None = None  # why nothing here is swept (`activation.owned`), and what to run; else None


def _package(outbox: Path, name: str, created: datetime, expires: datetime) -> Entry:
    try:
        _created, _expires, files = read_manifest(outbox / name)
    except (InputRejected, OSError) as exc:
        return Entry(name, "package", created, expires, None, None, str(exc))
    return Entry(name, "package", created, expires, len(files), sum(f.bytes for f in files), None)


def list_outbox(repo: Path) -> Listing:
    """The entries of `repo`'s output/, newest delivery first, then the rest by name."""
    outbox = folder.outbox_path(repo)
    if not folder.outbox_exists(outbox):
        return Listing(outbox, None, ())
    state = folder.read_state(outbox)
    names = folder.entries(outbox)
    if state is None:
        return Listing(outbox, None, tuple(Entry(n, "unknown", None, None, None, None, None) for n in names))
    found: list[Entry] = []
    for name in names:
        if name in state.packages:
            item = state.packages[name]
            found.append(_package(outbox, name, item.since, item.expires))
        elif name in state.enrolled:
            item = state.enrolled[name]
            found.append(Entry(name, "enrolled", item.since, item.expires, None, None, None))
        else:
            found.append(Entry(name, "unknown", None, None, None, None, None))
    packages = sorted(
        (e for e in found if e.kind == "package"), key=lambda e: e.created or state.activated, reverse=True
    )
    rest = [e for e in found if e.kind != "package"]

    foreign = None if activation.owned(repo, state) else str(activation.foreign_error(repo))
    return Listing(outbox, state.activated, (*packages, *rest), foreign)
