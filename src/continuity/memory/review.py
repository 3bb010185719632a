"""The reviewed improvement loop: candidate -> approved -> superseded or archived; revalidation.

Observation becomes a *candidate* (`20-state/candidates/`, cold) with provenance: device, session and
time. Only the person turns a candidate into an *approved* note (`30-memory/<kind>s/`, warm) with
`verified` and `revalidate_by` dates; the candidate leaves the queue for `90-archive/`, marked approved,
as the audit trail.
A claim that stops being true is not rewritten: a new note *supersedes* it, and both are linked. A
note may replace several (two facts merged into one): its `supersedes` is then the list of their ids,
and a single id as before while it replaces one, so notes written earlier read the same; each old note
has one `superseded_by`, since only an approved note can be superseded. An archived note moves to
`90-archive/` under its original relative path, so its origin stays obvious.
SOUL.md and PREFERENCES.md change only through `memory.edits`.

Notes are found by their frontmatter id, never by a path built from what a person typed, and new
notes get ids that never come back to life (`memory.lookup`). Memory notes are capped at the
size recall can load, `RECALL_NOTE_CAP_BYTES`.

Every write goes through `writer.transaction` (local lock, lease check, caps, secrets, journal).
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity import ids, limits, tunables
from continuity.errors import FIELD, InputRejected, UsageError
from continuity.memory import handoff_write
from continuity.memory.claims import CONFIDENCES, DEFAULT_CONFIDENCE, DEFAULT_SCOPE, KINDS, SCOPES
from continuity.memory.lookup import (
    Found,
    check_id,
    find_note,
    free_id,
    notes_mentioning,
    read_note,
    superseded_ids,
)
from continuity.store import writer
from continuity.store.writer import WriteContext
from continuity.vault import layout, notes

KIND_FOLDERS = {"fact": layout.FACTS, "decision": layout.DECISIONS, "lesson": layout.LESSONS}
MEMORY_FOLDERS = layout.APPROVED_FOLDERS
ARCHIVABLE_FOLDERS = (layout.CANDIDATES, layout.SESSIONS, *MEMORY_FOLDERS, layout.HANDOFFS)
NOTE_CAP_BYTES = tunables.RECALL_NOTE_CAP_BYTES


def _choice(value: str, allowed: tuple[str, ...], field: str) -> str:
    if value not in allowed:
        raise UsageError(f"{FIELD} must be one of {', '.join(allowed)}", field=field)
    return value


def _input_body(body: str | None, source_name: str, title: str, kind: str) -> tuple[str, int]:
    """(body, its first line in the input): the input's own frontmatter, if any, is replaced by ours.

    Without input the body comes from `templates/<kind>.md` (a fact, decision or lesson has its own
    shape), else from `templates/candidate.md`.
    """
    if body is None:
        name = f"{kind}.md" if kind in KIND_FOLDERS else "candidate.md"
        return writer.template_body(name, {"title": title}), 1
    parsed = notes.parse_note(body.encode("utf-8"), source_name, require_frontmatter=False)
    if not parsed.body.strip():
        raise InputRejected(f"{source_name} has no text; nothing was written")
    return parsed.body, parsed.body_start_line


# ------------------------------------------------------------------------------------ candidates


@dataclass(frozen=True)
class Created:
    id: str
    rel: str

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "id": self.id, "path": self.rel}


def new_candidate(
    ctx: WriteContext,
    kind: str,
    title: str,
    body: str | None = None,
    *,
    scope: str = DEFAULT_SCOPE,
    confidence: str = DEFAULT_CONFIDENCE,
    evidence: str | None = None,
    source_name: str = "the input",
) -> Created:
    """Record a proposed memory in `20-state/candidates/` with its provenance."""
    _choice(kind, KINDS, "type")
    _choice(scope, SCOPES, "scope")
    _choice(confidence, CONFIDENCES, "confidence")
    title = writer.clean_line(title, "title", tunables.TITLE_MAX_CHARS)
    if evidence is not None:
        evidence = writer.clean_line(evidence, "evidence", tunables.EVIDENCE_MAX_CHARS)
    if scope == "project" and not ctx.project:
        raise UsageError(f"{FIELD} project needs a connected project", field="scope")
    text, input_start = _input_body(body, source_name, title, kind)
    now = ctx.clock()
    with writer.transaction(ctx) as tx:
        note_id = free_id(
            ctx.vault,
            f"cand-{kind}-{writer.slugify(title, 'note')}",
            layout.CANDIDATES,
            unique_in=ARCHIVABLE_FOLDERS,
            next_step=f"choose a different {FIELD}",
            field="title",
        )
        meta: dict[str, Any] = {
            "id": note_id,
            "type": kind,
            "status": "candidate",
            "title": title,
            "scope": scope,
        }
        if scope == "project":
            meta["project"] = ctx.project
        elif scope == "device":
            meta["device"] = ctx.device
        meta["confidence"] = confidence
        meta["created"] = now
        provenance: dict[str, Any] = {"device": ctx.device}
        if ctx.session:
            provenance["session"] = ctx.session
        provenance["time"] = notes.format_utc(now)
        meta["provenance"] = provenance
        if evidence:
            meta["evidence"] = evidence
        rel = f"{layout.CANDIDATES}/{note_id}.md"
        first = notes.compose(meta, "").count("\n")
        tx.create(
            rel,
            notes.compose(meta, text),
            op="note.new",
            note_id=note_id,
            cap=NOTE_CAP_BYTES,
            input_lines=(first, input_start),
        )
    return Created(note_id, rel)


def load_candidate(vault_root: Path, candidate_id: str) -> Found:
    """A candidate that can be approved (exit 5 otherwise), for showing before asking."""
    found = find_note(vault_root, candidate_id, (layout.CANDIDATES, f"{layout.ARCHIVE}/{layout.CANDIDATES}"))
    status = found.meta.get("status")
    if status != "candidate" or found.rel.startswith(layout.ARCHIVE + "/"):
        raise InputRejected(f"{candidate_id} is not awaiting approval (status {status})")
    kind = found.meta.get("type")
    if kind == "preference":
        raise InputRejected(
            f"{candidate_id} is a preference: apply it with 'lifecycle edit preferences --from FILE', "
            f"then 'lifecycle archive {candidate_id}'"
        )
    if kind not in KIND_FOLDERS:
        raise InputRejected(f"{candidate_id} has type {kind!r}; only {', '.join(KIND_FOLDERS)} can be approved")
    return found


@dataclass(frozen=True)
class Approved:
    id: str
    rel: str
    candidate_id: str
    candidate_rel: str
    revalidate_by: dt.date

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "id": self.id,
            "path": self.rel,
            "candidate": self.candidate_id,
            "candidate_path": self.candidate_rel,
            "revalidate_by": self.revalidate_by.isoformat(),
        }


def _approved_from(vault_root: Path, folder: str, candidate_id: str, kind: str) -> Found | None:
    """An approved note already made from this candidate (a crash between the two writes).

    A note that names the candidate must be that note: with no valid id, another status or another
    type it is neither reused nor passed over (a second note would be made), and approval stops
    with exit 5, naming it.
    """
    for found in notes_mentioning(vault_root, (folder,), candidate_id):
        if found.meta.get("candidate") != candidate_id:
            continue
        status, found_kind = found.meta.get("status"), found.meta.get("type")
        if not ids.is_note_id(found.meta.get("id")):
            problem = "has no valid id"
        elif status != "approved":
            problem = f"has status {status!r}, not 'approved'"
        elif found_kind != kind:
            problem = f"has type {found_kind!r}, not {kind!r}"
        else:
            return found
        raise InputRejected(
            f"{found.rel} says it was approved from {candidate_id} but {problem}; "
            "correct or remove that note, then approve again"
        )
    return None


def approve(ctx: WriteContext, candidate_id: str, *, revalidate_days: int = tunables.REVALIDATE_AFTER_DAYS) -> Approved:
    """The person's act: write the approved note and mark the candidate approved."""
    now = ctx.clock()
    today = now.date()
    due = today + dt.timedelta(days=revalidate_days)
    with writer.transaction(ctx) as tx:
        cand = load_candidate(ctx.vault, candidate_id)
        kind = str(cand.meta["type"])
        folder = KIND_FOLDERS[kind]
        existing = _approved_from(ctx.vault, folder, candidate_id, kind)
        if existing is not None:
            note_id, rel = existing.id, existing.rel
            due = notes.as_date(existing.meta.get("revalidate_by")) or due
        else:
            base = candidate_id.removeprefix("cand-")
            note_id = free_id(
                ctx.vault,
                base,
                folder,
                unique_in=ARCHIVABLE_FOLDERS,
                next_step=f"propose the claim again with a different {FIELD} and approve that candidate",
                field="title",
            )
            skip = ("id", "type", "status", "approved_as", "approved", "created")
            meta: dict[str, Any] = {"id": note_id, "type": kind, "status": "approved"}
            meta.update({k: v for k, v in cand.meta.items() if k not in skip})
            meta["created"] = now
            meta.update({"verified": today, "revalidate_by": due, "candidate": candidate_id, "approved": now})
            meta["approved_on"] = ctx.device
            rel = f"{folder}/{note_id}.md"
        cand_meta = dict(cand.meta)
        cand_meta.update({"status": "approved", "approved_as": note_id, "approved": now})
        cand_text = notes.compose(cand_meta, cand.note.body)
        tx.check(cand.rel, cand_text, limits.LIFECYCLE_TEXT_CAP_BYTES)
        if existing is None:
            tx.create(
                rel,
                notes.compose(meta, cand.note.body),
                op="note.approve",
                note_id=note_id,
                cap=NOTE_CAP_BYTES,
            )
        # The candidate leaves the review queue: it moves to 90-archive/, marked approved, as the audit
        # trail (beside any earlier copy of that name, never over it).
        kept = f"{layout.ARCHIVE}/{cand.rel}"
        if os.path.lexists(ctx.vault / kept):
            kept = f"{kept.removesuffix('.md')}.{now.astimezone(dt.timezone.utc):%Y%m%dT%H%M%SZ}.md"
        tx.create(kept, cand_text, op="note.approve", note_id=candidate_id, cap=limits.LIFECYCLE_TEXT_CAP_BYTES)
        tx.expect(cand.rel, writer.sha256_hex(cand.data))
        tx.remove(cand.rel, op="note.approve", note_id=candidate_id)
    return Approved(note_id, rel, candidate_id, kept, due)


# ------------------------------------------------------------------------- supersede and archive


@dataclass(frozen=True)
class Superseded:
    old_id: str
    old_rel: str
    new_id: str
    new_rel: str

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "old": self.old_id,
            "old_path": self.old_rel,
            "new": self.new_id,
            "new_path": self.new_rel,
        }


def supersede(ctx: WriteContext, old_id: str, new_id: str) -> Superseded:
    """Link two approved notes and mark the old one superseded (history is kept, not rewritten).

    NEW keeps every note it superseded before: `supersedes` becomes a list once it holds two.
    """
    if handoff_write.is_handoff(ctx.vault, old_id):
        old_handoff, new_handoff = handoff_write.supersede(ctx, old_id, new_id)
        return Superseded(old_id, old_handoff.rel, new_id, new_handoff.rel)
    if check_id(old_id) == check_id(new_id):
        raise InputRejected("a note cannot supersede itself")
    now = ctx.clock()
    with writer.transaction(ctx) as tx:
        old = find_note(ctx.vault, old_id, MEMORY_FOLDERS)
        new = find_note(ctx.vault, new_id, MEMORY_FOLDERS)
        if old.meta.get("status") != "approved":
            raise InputRejected(f"{old_id} is not an approved note (status {old.meta.get('status')})")
        if new.meta.get("status") != "approved":
            raise InputRejected(f"{new_id} is not an approved note (status {new.meta.get('status')})")
        old_meta = dict(old.meta)
        old_meta.update({"status": "superseded", "superseded_by": new_id, "superseded": now})
        earlier = superseded_ids(new.meta.get("supersedes"))
        if earlier is None:
            raise InputRejected(
                f"{new.rel}: supersedes is neither an id nor a list of ids; correct it by hand, then run this again"
            )
        if old_id not in earlier:
            earlier.append(old_id)
        new_meta = dict(new.meta)
        new_meta["supersedes"] = earlier[0] if len(earlier) == 1 else earlier
        old_text = notes.compose(old_meta, old.note.body)
        new_text = notes.compose(new_meta, new.note.body)
        tx.check(old.rel, old_text, limits.LIFECYCLE_TEXT_CAP_BYTES)
        tx.check(new.rel, new_text, limits.LIFECYCLE_TEXT_CAP_BYTES)
        for found, text in ((new, new_text), (old, old_text)):
            tx.replace(
                found.rel,
                text,
                op="note.supersede",
                note_id=found.id,
                cap=limits.LIFECYCLE_TEXT_CAP_BYTES,
                expect_sha256=writer.sha256_hex(found.data),
            )
    return Superseded(old_id, old.rel, new_id, new.rel)


def _same_note(meta: dict[str, Any], body: str, found: Found) -> bool:
    """True when an archived copy is this very note (a run that stopped before removing the original):
    the same body and the same frontmatter but for what archiving itself sets."""
    ignored = ("status", "archived")
    return body == found.note.body and {k: v for k, v in meta.items() if k not in ignored} == {
        k: v for k, v in found.meta.items() if k not in ignored
    }


@dataclass(frozen=True)
class Archived:
    id: str
    from_rel: str
    rel: str

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "id": self.id, "from": self.from_rel, "path": self.rel}


def archive(ctx: WriteContext, note_id: str, reason: str | None = None) -> Archived:
    """Move a note into `90-archive/` under its original relative path, marked archived (and why)."""
    now = ctx.clock()
    with writer.transaction(ctx) as tx:
        found = find_note(ctx.vault, note_id, ARCHIVABLE_FOLDERS)
        target = f"{layout.ARCHIVE}/{found.rel}"
        meta = dict(found.meta)
        is_handoff = meta.get("type") == "handoff"
        if not is_handoff:
            meta["status"] = "archived"
        elif meta.get("status") == "current":
            meta["status"] = "historical"
        meta["archived"] = now
        if reason:
            meta["archived_reason"] = reason
        text = notes.compose(meta, found.note.body)
        done = read_note(ctx.vault, target) if os.path.lexists(ctx.vault / target) else None
        if done is None or not _same_note(done.meta, done.note.body, found):
            # An archived copy of another version (a sync brought both, or the id was reused) is never
            # overwritten and never taken for this one: this version is archived beside it.
            if os.path.lexists(ctx.vault / target):
                stem = target.removesuffix(".md")
                target = f"{stem}.{now.astimezone(dt.timezone.utc):%Y%m%dT%H%M%SZ}.md"
                if os.path.lexists(ctx.vault / target):
                    raise writer.Exists(f"{target} already exists; refusing to overwrite it")
            tx.create(target, text, op="note.archive", note_id=note_id, cap=limits.LIFECYCLE_TEXT_CAP_BYTES)
        tx.expect(found.rel, writer.sha256_hex(found.data))
        tx.remove(found.rel, op="note.archive", note_id=note_id)
    return Archived(note_id, found.rel, target)
