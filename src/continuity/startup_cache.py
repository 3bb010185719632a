"""A machine-local cache of validated briefs, so an unchanged vault costs almost nothing to serve.

The key is a digest of everything the brief depends on: every gathered byte (hot sources, every
handoff file, INDEX and MEMORY_POLICY), the event, the harness, the connection, and the digest of this
package's own code. Reading and hashing a few small files is cheap; parsing YAML and scanning for
secrets is not, so only a changed key takes the cold path. A hit returns exactly what the cold path
returned for the same key, so the cache can change how fast a brief comes, never what it says.

The cache lives under the user's cache directory (`$XDG_CACHE_HOME/continuity/startup`, else
`~/.cache/…`), outside the vault, one file per connection and event, mode 0600, written atomically.
It holds the rendered brief, which is private memory: the folder is created 0700. A file that cannot
be read or parsed is a miss, never an error; `CONTINUITY_NO_CACHE=1` turns the cache off.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from continuity import render, sources
from continuity.connection import Connection
from continuity.render import Brief, SourceView

CACHE_VERSION = 1
_code_digest: str | None = None


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "continuity" / "startup"


def code_digest() -> str:
    """The digest of the package's modules: a code change invalidates every cached brief."""
    global _code_digest
    if _code_digest is None:
        h = hashlib.sha256()
        package = Path(__file__).resolve().parent
        for path in sorted(package.glob("*.py")):
            h.update(path.name.encode() + b"\0")
            h.update(path.read_bytes())
        _code_digest = h.hexdigest()
    return _code_digest


def _slot(root: Path, conn: Connection, event: str, harness: str) -> Path:
    ident = f"{root}\0{conn.project}\0{conn.device}\0{event}\0{harness}"
    return cache_dir() / (hashlib.sha256(ident.encode()).hexdigest()[:32] + ".json")


def _key(gathered: sources.Gathered, root: Path, harness: str) -> str:
    material = f"{CACHE_VERSION}\0{code_digest()}\0{root}\0{harness}\0{gathered.digest()}"
    return hashlib.sha256(material.encode()).hexdigest()


def _load(slot: Path, key: str) -> Brief | None:
    try:
        with open(slot, "rb") as handle:
            stored: dict[str, Any] = json.loads(handle.read())
        if stored.get("version") != CACHE_VERSION or stored.get("key") != key:
            return None
        views = tuple(SourceView(**view) for view in stored["sources"])
        return Brief(
            stored["event"], stored["harness"], stored["status"], stored["text"], views, tuple(stored["notices"])
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _store(slot: Path, key: str, brief: Brief) -> None:
    from continuity import atomic

    record = {
        "version": CACHE_VERSION,
        "key": key,
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
    try:
        slot.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic.write_text(slot, json.dumps(record, ensure_ascii=False), 0o600)
    except OSError:
        pass  # a cache that cannot be written only makes the next start slower


def enabled() -> bool:
    return os.environ.get("CONTINUITY_NO_CACHE") != "1"


def cold(gathered: sources.Gathered, harness: str) -> Brief:
    views, notices = sources.validate(gathered)
    return render.render(gathered.event, harness, views, notices)


def brief_for(root: Path, conn: Connection, event: str, harness: str) -> Brief:
    gathered = sources.gather(root, conn.project, conn.device, event)
    if not enabled():
        return cold(gathered, harness)
    slot = _slot(root, conn, event, harness)
    key = _key(gathered, root, harness)
    cached = _load(slot, key)
    if cached is not None:
        return cached
    brief = cold(gathered, harness)
    _store(slot, key, brief)
    return brief
