"""The cold path's side of the startup cache: validate, render, and leave a record for the warm path.

A record (see `fastpath`) holds the key of everything the brief depends on, the stamps of the folders
the startup vault check visited, the hook's exact output for this harness and event, and the brief
with its sources for `lifecycle render --format json`. A hit returns exactly what this cold path
returned for the same key, so the cache changes how fast a brief comes, never what it says.

Records live under the user's cache directory (`$XDG_CACHE_HOME/continuity/startup`, else
`~/.cache/…`), outside the vault, one per connection, event, harness and caller (the pinned hook and
the command line keep separate records, since their code digests are computed differently), mode
0600 in a 0700 folder, because a brief is private memory. An unreadable record is a miss, never an
error; `CONTINUITY_NO_CACHE=1` turns the cache off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from continuity import fastpath, rawos, render, sources
from continuity.connection import Connection
from continuity.render import Brief, SourceView

_code_digest: str | None = None


def code_digest() -> str:
    """The digest of the package's modules, for callers that are not the pinned startup script."""
    global _code_digest
    if _code_digest is None:
        h = hashlib.sha256()
        package = Path(__file__).resolve().parent
        for path in sorted(package.glob("*.py")):
            h.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
        _code_digest = h.hexdigest()
    return _code_digest


def enabled() -> bool:
    return os.environ.get("CONTINUITY_NO_CACHE") != "1"


def _brief_json(brief: Brief) -> bytes:
    record = {
        "event": brief.event,
        "harness": brief.harness,
        "status": brief.status,
        "text": brief.text,
        "sources": [
            {
                "name": s.name,
                "path": s.path,
                "size": s.size,
                "sha256": s.sha256,
                "included": s.included,
                "reason": s.reason,
                "notice": s.notice,
            }
            for s in brief.sources
        ],
        "notices": list(brief.notices),
    }
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


def _brief_from(blob: bytes) -> Brief | None:
    try:
        stored: dict[str, Any] = json.loads(blob)
        views = tuple(SourceView(**view) for view in stored["sources"])
        return Brief(
            stored["event"], stored["harness"], stored["status"], stored["text"], views, tuple(stored["notices"])
        )
    except (ValueError, KeyError, TypeError):
        return None


def cold(root: Path, conn: Connection, event: str, harness: str) -> tuple[Brief, tuple[str, ...]]:
    """The validated brief, and the folders its vault check visited."""
    from continuity import scan

    gathered = sources.gather(root, conn.project, conn.device, event)
    views, notices = sources.validate(gathered)
    try:
        result = scan.scan(root, conn.project, conn.device)
        notices += scan.notices(result)
        visited: tuple[str, ...] = result.visited
    except Exception as exc:  # the vault check adds a notice; it never stops a session start
        notices.append(f"vault check could not run ({type(exc).__name__}); run 'lifecycle doctor'")
        visited = ()
    return render.render(event, harness, views, notices), visited


def brief_for(root: Path, conn: Connection, event: str, harness: str) -> Brief:
    if not enabled():
        return cold(root, conn, event, harness)[0]
    code = fastpath.CODE or code_digest()
    who = "hook" if fastpath.CODE else "cli"
    base = str(root)
    slot = fastpath.slot_path(base, conn.project, conn.device, event, harness, who)
    # The key is taken before reading, so a change during the cold path only causes another miss.
    key = fastpath.vault_key(base, conn.project, conn.device, event, harness, code)
    record = fastpath.read_record(slot)
    if record is not None and record[0] == key:
        _, dirs, fields, blobs = record
        blob = blobs.get("brief", b"")
        # The blob's digest sits in the header: a damaged record is a miss, never a different brief.
        intact = fields.get("brief_sha256") == hashlib.sha256(blob).hexdigest()
        if intact and all(fastpath.dir_stamp(base, rel) == stamp for rel, stamp in dirs):
            cached = _brief_from(blob)
            if cached is not None:
                return cached
    root_stamp = fastpath.dir_stamp(base, ".")
    brief, visited = cold(root, conn, event, harness)
    # Folder stamps are taken after the scan: a folder changed in between is caught at the next start
    # only if it changes again, a window of milliseconds that a person's sync engine cannot aim at.
    stamps = [(".", root_stamp)] + [(rel, fastpath.dir_stamp(base, rel)) for rel in visited]
    _store(slot, key, stamps, brief)
    return brief


def _store(slot: str, key: str, stamps: list[tuple[str, str]], brief: Brief) -> None:
    from continuity import hook

    brief_blob = _brief_json(brief)
    fields = {
        "status": brief.status,
        "bytes": str(brief.bytes),
        "tokens_estimate": str(brief.tokens_estimate),
        "sha256": brief.sha256,
        "brief_sha256": hashlib.sha256(brief_blob).hexdigest(),
    }
    output = hook.hook_output(brief.event, brief).encode("utf-8")
    fields["output_sha256"] = hashlib.sha256(output).hexdigest()
    blobs = {"output": output, "brief": brief_blob}
    with contextlib.suppress(OSError):  # a cache that cannot be written only makes the next start slower
        rawos.write_private(slot, fastpath.encode_record(key, stamps, fields, blobs))
