"""The cold path's side of the startup cache: validate, render, and leave a record for the warm path.

A record (see `fastpath`) holds a token of every input the brief depends on (the hot sources and the
policy files by content, the handoff folder's listing, the folders the startup vault check visited),
the hook's exact output for this harness and event, and the brief with its sources for `lifecycle
render --format json`. A hit returns exactly what this cold path returned for the same inputs, so
the cache changes how fast a brief comes, never what it says.

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

from continuity import limits, safeio
from continuity.brief import envelope, record, render, sources
from continuity.brief.render import Brief, SourceView
from continuity.local.connection import Connection
from continuity.vault import registry

_code_digest: str | None = None


def code_digest() -> str:
    """The digest of the package's modules, for callers that are not the pinned startup script."""
    global _code_digest
    if _code_digest is None:
        h = hashlib.sha256()
        package = Path(__file__).resolve().parents[1]
        for path in sorted(package.rglob("*.py")):
            rel = path.relative_to(package).as_posix()
            h.update(rel.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
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


def cold(
    root: Path, conn: Connection, event: str, harness: str, memo: sources.Memo | None = None
) -> tuple[Brief, tuple[str, ...]]:
    """The validated brief, and the folders its vault check visited (`memo`: see `sources.validate`)."""
    gathered = sources.gather(root, conn.project, conn.device, event)
    views, notices = sources.validate(gathered, memo)
    checked = vault_check(root, conn, memo)
    return render.render(event, harness, views, notices + checked[0]), checked[1]


def vault_check(root: Path, conn: Connection, memo: sources.Memo | None = None) -> tuple[list[str], tuple[str, ...]]:
    """The bounded vault check's notices and the folders it visited.

    The memo keeps them with the token of every visited folder, taken after the check, and answers
    while no such folder changed (a file edited in place changes no folder); the check follows the
    same rule as the record itself, including its one accepted lag (a file that grows past the review
    limit shows at the next change of a folder).
    """
    base = str(root)
    known = memo.recall("vault_check") if memo is not None else None
    if isinstance(known, dict) and isinstance(known.get("dirs"), list) and isinstance(known.get("notices"), list):
        dirs = [(str(rel), str(was)) for rel, was in known["dirs"]]
        if all(record.token(base, rel, "dir") == was for rel, was in dirs):
            return [str(n) for n in known["notices"]], tuple(rel for rel, _ in dirs)
    from continuity.vault import scan  # lazy: a remembered check loads no scanner

    try:
        result = scan.scan(root, conn.project, conn.device)
        notices, visited = scan.notices(result), result.visited
    except Exception as exc:  # the vault check adds a notice; it never stops a session start
        return [f"vault check could not run ({type(exc).__name__}); run 'lifecycle doctor'"], ()
    if memo is not None:
        memo.keep(
            "vault_check", {"dirs": [[rel, record.token(base, rel, "dir")] for rel in visited], "notices": notices}
        )
    return notices, visited


def inputs(root: Path, conn: Connection, event: str) -> list[tuple[str, str, int]]:
    """What the brief reads before its vault check: (vault path, token kind, cap) for each input."""
    shown = registry.shown_in(event)
    hot = [(s.at(conn.project, conn.device), "file", s.cap_bytes) for s in shown if not s.folder]
    policy = [(rel, "file", limits.LIFECYCLE_TEXT_CAP_BYTES) for rel in sources.POLICY_FILES]
    # A folder source is read whole (`memory.handoff.read_all`) whatever the event shows.
    folders = [(s.path, "names", 0) for s in registry.SOURCES if s.folder]
    return [*hot, *policy, *folders, (".", "dir", 0)]


def brief_for(root: Path, conn: Connection, event: str, harness: str, code: str | None = None) -> Brief:
    """The brief from this caller's record when it is still current, else validated afresh.

    `code` is the pinned code's digest when the startup script asks (the warm path then finds the
    record current under the same digest); the command line keys its own records by the package's.
    """
    if not enabled():
        return cold(root, conn, event, harness)[0]
    who = "hook" if code else "cli"
    code = code or code_digest()
    base = str(root)
    path = record.record_path(base, conn.project, conn.device, event, harness, who)
    found = record.read_record(path)
    if found is not None and record.is_current(found[0], base, code):
        cached = _brief_from(found[1].get("brief", b""))
        if cached is not None:
            return cached
    same_code = found is not None and found[0].get("code") == code
    memo = sources.Memo(_memo_from(found[1].get("memo", b"")) if found is not None and same_code else None)
    # Tokens are taken before reading, so a change during the cold path only causes another miss.
    deps = [[rel, kind, cap, record.token(base, rel, kind, cap)] for rel, kind, cap in inputs(root, conn, event)]
    brief, visited = cold(root, conn, event, harness, memo)
    # The folders the vault check visited are stamped after it: a folder changed in between is caught
    # at the next start only if it changes again, a window of milliseconds no sync engine aims at.
    deps += [[rel, "dir", 0, record.token(base, rel, "dir")] for rel in visited if rel != "."]
    _store(path, code, deps, brief, memo.used)
    return brief


def _memo_from(blob: bytes) -> dict[str, Any]:
    try:
        memo = json.loads(blob)
    except ValueError:
        return {}
    return memo if isinstance(memo, dict) else {}


def encode_record(head: dict[str, object], blobs: dict[str, bytes]) -> bytes:
    """A record as `record.read_record` reads it: one JSON line (`head` with the blobs' names and
    sizes), then the blobs' bytes in order."""
    line = json.dumps({**head, "blobs": [[name, len(data)] for name, data in blobs.items()]})
    return record.RECORD_MAGIC + line.encode("utf-8", "surrogateescape") + b"\n" + b"".join(blobs.values())


def _store(path: str, code: str, deps: list[list[object]], brief: Brief, memo: dict[str, Any]) -> None:
    blobs = {
        "output": envelope.hook_output(brief.event, brief.text).encode("utf-8"),
        "brief": _brief_json(brief),
        "memo": json.dumps(memo, ensure_ascii=False).encode("utf-8"),
    }
    head: dict[str, object] = {
        "code": code,
        "deps": deps,
        "status": brief.status,
        "bytes": brief.bytes,
        "tokens_estimate": brief.tokens_estimate,
        "sha256": brief.sha256,
    }
    head.update({f"{name}_sha256": hashlib.sha256(blob).hexdigest() for name, blob in blobs.items()})
    with contextlib.suppress(OSError):  # a cache that cannot be written only makes the next start slower
        safeio.write_private(path, encode_record(head, blobs))
