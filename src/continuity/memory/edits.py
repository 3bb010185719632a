"""Edits of the hot profiles: SOUL.md, PREFERENCES.md, this project's PROJECT.md, this device's DEVICE.md.

These files shape every session start, so an edit is planned first and written second: `plan_edit`
validates the complete new file (frontmatter with the right `type`, and for PROJECT.md and DEVICE.md
the `project` / `device` label of this connection; the 20 KiB cap; the secret gate) and diffs it
against the current file without writing anything, so the person can review the change; `apply_edit`
then writes it through the normal write path, under the lease (taken for the write when this device
does not already hold it, and given back afterwards). The previous version is kept byte for byte in
`90-archive/<the file's folder>/<NAME>.<UTC time>.md` (for SOUL.md `90-archive/00-system/`), even when
it is malformed, because a broken file is often the reason for the edit. The write is refused when the
current file changed after it was planned (a sync arrived meanwhile). A line of the current file that
holds a secret-like value is replaced by a marker in the diff, so reviewing never prints a secret.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity import ids, limits, tunables
from continuity.errors import InputRejected, NoteError, UsageError
from continuity.gate.secrets import scan_text
from continuity.store import lease, writer
from continuity.store.writer import WriteContext
from continuity.vault import access, layout, notes, registry


def _takes() -> UsageError:
    return UsageError(f"edit takes one of {', '.join(source.name for source in registry.EDITABLE)}")


def editable(which: str) -> registry.Source:
    """The source `lifecycle edit WHICH` changes (`vault.registry.EDITABLE`)."""
    found = registry.BY_NAME.get(which)
    if found is None or not found.editable:
        raise _takes()
    return found


def edit_path(which: str, *, project: str | None = None, device: str | None = None) -> str:
    """The vault-relative file `which` names for this connection's project and device."""
    source = editable(which)
    if source.label is not None and not {"project": project, "device": device}[source.label]:
        raise _takes()
    return source.at(project or "", device or "")


@dataclass(frozen=True)
class EditPlan:
    which: str
    rel: str
    old: bytes | None  # None when the file does not exist yet
    new_text: str
    diff: list[str]

    @property
    def unchanged(self) -> bool:
        return self.old is not None and self.old == self.new_text.encode("utf-8")


def plan_edit(
    vault_root: Path, which: str, new_text: str, *, project: str | None = None, device: str | None = None
) -> EditPlan:
    """Validate a new profile (type, label, cap, secrets) and diff it; nothing is written."""
    rel = edit_path(which, project=project, device=device)
    source = editable(which)
    note = notes.parse_note(new_text.encode("utf-8"), f"the new {rel}")
    if note.meta.get("type") != source.note_type:
        raise InputRejected(f"the new {rel} must have 'type: {source.note_type}' in its frontmatter")
    key = source.label
    label = {"project": project, "device": device}[key] if key is not None else None
    if key is not None and note.meta.get(key) != label:
        raise InputRejected(f"the new {rel} must have '{key}: {label}' in its frontmatter (its folder's name)")
    writer.check_text(rel, new_text, source.cap_bytes)
    try:
        old: bytes | None = access.read_capped(vault_root, rel, limits.LIFECYCLE_TEXT_CAP_BYTES)
    except NoteError as exc:
        if exc.reason != "missing":
            raise
        old = None
    old_lines = _redacted_lines(old) if old is not None else []
    diff = list(difflib.unified_diff(old_lines, new_text.splitlines(keepends=True), f"{rel} (current)", f"{rel} (new)"))
    return EditPlan(which, rel, old, new_text, diff)


def _redacted_lines(data: bytes) -> list[str]:
    """The current file's lines for the diff; a line with a secret-like value is replaced by a marker.

    The current file may be malformed (often the reason for the edit), so bytes that are not UTF-8
    are shown as replacement characters instead of failing.
    """
    text = notes.normalize_newlines(data.decode("utf-8", errors="replace").removeprefix("\ufeff"))
    lines = text.splitlines(keepends=True)
    for finding in scan_text(text):
        if 0 < finding.line <= len(lines):
            lines[finding.line - 1] = f"[line {finding.line} hidden: looks like a secret ({finding.detector})]\n"
    return lines


@dataclass(frozen=True)
class Edited:
    which: str
    rel: str
    archived: str | None
    changed: bool

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "path": self.rel, "archived": self.archived, "changed": self.changed}


def apply_edit(ctx: WriteContext, plan: EditPlan, *, lease_ttl: int = tunables.EDIT_LEASE_TTL_SECONDS) -> Edited:
    """Write a planned edit under the lease, keeping the previous version in `90-archive/00-system/`.

    The lease is taken for the write when this device does not hold it already, and given back after.
    The current file must still be what was planned against (a sync may have changed it meanwhile).
    """
    if plan.unchanged:
        return Edited(plan.which, plan.rel, None, False)
    meta_id = notes.parse_note(plan.new_text.encode("utf-8"), plan.rel).meta.get("id")
    note_id = meta_id if ids.is_note_id(meta_id) else None
    op = f"{plan.which}.edit"
    archived: str | None = None
    with writer.transaction(ctx) as tx:
        took = tx.lease_status.state != "held"
        if took:
            taken = lease.acquire_locked(ctx.vault, ctx.device, lease_ttl, f"edit {plan.which}", ctx.clock())
            tx.record("lease.acquire", None, taken.rel, writer.sha256_hex(taken.to_json().encode("utf-8")))
        try:
            if plan.old is None:
                if os.path.lexists(ctx.vault / plan.rel):
                    raise InputRejected(f"{plan.rel} appeared while this command ran; run it again")
                tx.create(plan.rel, plan.new_text, op=op, note_id=note_id, cap=editable(plan.which).cap_bytes)
            else:
                tx.expect(plan.rel, writer.sha256_hex(plan.old))
                archived = _preserve(tx, plan, op, note_id)
                tx.replace(
                    plan.rel,
                    plan.new_text,
                    op=op,
                    note_id=note_id,
                    cap=editable(plan.which).cap_bytes,
                    expect_sha256=writer.sha256_hex(plan.old),
                )
        finally:
            if took:
                lease.remove_lease_file(ctx.vault, lease.lease_rel(ctx.device))
                tx.record("lease.release", None, lease.lease_rel(ctx.device), None)
    return Edited(plan.which, plan.rel, archived, True)


def _preserve(tx: writer.Transaction, plan: EditPlan, op: str, note_id: str | None) -> str:
    """Copy the previous version, byte for byte, to `90-archive/<folder>/<NAME>.<UTC time>.md`."""
    assert plan.old is not None
    folder, _, name = plan.rel.rpartition("/")
    stem = name.removesuffix(".md")
    stamp = tx.ctx.clock().strftime("%Y%m%dT%H%M%SZ")
    for attempt in range(1, tunables.HANDOFF_NAME_ATTEMPTS + 1):
        suffix = "" if attempt == 1 else f"-{attempt}"
        rel = f"{layout.ARCHIVE}/{folder}/{stem}.{stamp}{suffix}.md"
        if os.path.lexists(tx.vault / rel):
            continue
        try:
            tx.preserve(rel, plan.old, op=op, note_id=note_id)
        except writer.Exists:
            continue
        return rel
    raise InputRejected(f"could not find a free archive name for {plan.rel}")
