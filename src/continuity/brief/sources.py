"""The startup sources: gathered as raw bytes, then validated into what the brief may show.

The two steps are apart on purpose. `gather` only reads (standard library, capped, no links, no other
device's folder) and its result is what the startup cache is keyed on: when every gathered byte is
the same as last time, the validated brief is too. `validate` parses frontmatter, checks labels and
caps and runs the secret gate; it is the cold path and the only one that imports YAML or the scanner.

A source with a secret, over its cap, with broken frontmatter, behind a link or with a mismatched
label is left out whole and named in a notice (for secrets: line and detector, never the value). So is
one whose compact part is still its template's placeholder text (reason `placeholder`): that describes
what to write, not anything true. Notices say what happened and never how to get past a check; the
remedies (such as marking a false positive) are for the person, in doctor and on stderr.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from continuity import limits
from continuity.brief.render import SourceView
from continuity.errors import NoteError
from continuity.gate.secrets import scan_text, withheld_name
from continuity.memory import handoff
from continuity.vault import access, layout, notes, placeholders, registry

POLICY_FILES = (layout.INDEX, layout.MEMORY_POLICY)
# A source that holds only the template's sentences is not memory (`vault.placeholders`).
NOT_FILLED_IN = "is not filled in yet: it holds only its template's placeholder text, so it was left out"


class Raw(NamedTuple):
    name: str
    rel: str
    data: bytes | None
    error: NoteError | None
    size: int | None


class Gathered(NamedTuple):
    event: str
    project: str
    device: str
    hot: tuple[Raw, ...]
    handoffs: tuple[tuple[str, bytes | NoteError], ...]
    policy: tuple[Raw, ...]


def _size(root: Path, rel: str) -> int | None:
    try:
        return os.lstat(root / rel).st_size
    except OSError:
        return None


def read_raw(root: Path, name: str, rel: str, cap: int) -> Raw:
    try:
        data = access.read_capped(root, rel, cap)
    except NoteError as exc:
        size = None if exc.reason in ("missing", "link") else _size(root, rel)
        return Raw(name, rel, None, exc, size)
    return Raw(name, rel, data, None, len(data))


def gather(root: Path, project: str, device: str, event: str) -> Gathered:
    shown = registry.shown_in(event)
    hot = tuple(read_raw(root, s.name, s.at(project, device), s.cap_bytes) for s in shown if not s.folder)
    policy = tuple(read_raw(root, rel, rel, limits.LIFECYCLE_TEXT_CAP_BYTES) for rel in POLICY_FILES)
    return Gathered(event, project, device, hot, tuple(handoff.read_all(root)), policy)


def secret_notice(label: str, text: str) -> str | None:
    findings = scan_text(text)
    if not findings:
        return None
    shown = "; ".join(f.describe() for f in findings[:3])
    more = f" and {len(findings) - 3} more" if len(findings) > 3 else ""
    # What happened, never how to get past the gate: that advice is the person's (doctor, stderr).
    return f"{label} left out: secret-like content at {shown}{more}"


def _secret_in_name(rel: str) -> tuple[str, str] | None:
    """(the path with its file name withheld, why) when the file name holds secret-like content."""
    found = withheld_name(rel)
    if found is None:
        return None
    shown, first = found
    return shown, f"its file name holds secret-like content ({first.detector})"


def clean_digest(data: bytes) -> str | None:
    """The SHA-256 of a source's bytes, or None when the gate finds anything in them.

    A source's digest is shown (`render --format json`), and a digest of a small file that holds a
    secret lets anyone test guesses at it offline; so a digest is only given for bytes that passed.
    """
    return None if scan_text(data.decode("utf-8", "replace")) else hashlib.sha256(data).hexdigest()


def _left_out(raw: Raw, reason: str, message: str, digest: str | None = None) -> SourceView:
    path = None if reason == "missing" else raw.rel
    return SourceView(raw.name, path, raw.size, digest, False, reason, None, message)


def _validate_hot(raw: Raw, project: str, device: str) -> SourceView:
    label = f"{raw.name} ({raw.rel})"
    if raw.error is not None:
        verb = "is missing" if raw.error.reason == "missing" else "left out"
        return _left_out(raw, raw.error.reason, f"{label} {verb}: {raw.error}")
    assert raw.data is not None
    try:
        note = notes.parse_note(raw.data, raw.rel)
    except NoteError as exc:
        return _left_out(raw, "invalid", f"{label} left out: {exc}", clean_digest(raw.data))
    found = secret_notice(label, note.text)
    if found:
        return _left_out(raw, "secret", found)  # no digest: it would let a guess at the secret be tested
    digest = hashlib.sha256(raw.data).hexdigest()  # the whole text passed the gate
    source = registry.BY_NAME[raw.name]
    if note.meta.get("type") != source.note_type:
        return _left_out(raw, "invalid", f"{label} left out: frontmatter needs 'type: {source.note_type}'", digest)
    if source.label is not None:
        expected = {"project": project, "device": device}[source.label]
        value = note.meta.get(source.label)
        if value != expected:
            return _left_out(
                raw,
                "label_mismatch",
                f"{label} left out: its '{source.label}' is {str(value)[:64]!r}, expected {expected!r}",
                digest,
            )
    compact = notes.compact_part(note.body)
    if placeholders.only_placeholders(compact):
        return _left_out(raw, "placeholder", f"{label} {NOT_FILLED_IN}", digest)
    return SourceView(raw.name, raw.rel, raw.size, digest, True, None, compact)


def _validate_handoff(gathered: Gathered) -> SourceView:
    """The chosen handoff's view; with a notice (and the brief partial) when a newer handoff file of the
    project cannot be parsed (SPEC 5: the person may have meant it to be current)."""
    selection = handoff.select(list(gathered.handoffs), gathered.project)
    view = _validate_chosen(selection)
    newer = handoff.newer_unparsed(selection, list(gathered.handoffs), gathered.project)
    if not newer:
        return view
    why = dict(selection.invalid)
    shown = [(_secret_in_name(rel) or (rel, ""))[0] for rel in newer]
    than = "the handoff shown" if selection.chosen is not None else "any usable handoff"
    notice = (
        f"handoff file {shown[-1]} is newer than {than} but cannot be used ({why[newer[-1]][:160]})"
        + (f", and {len(newer) - 1} more" if len(newer) > 1 else "")
        + "; it may have been meant to be current"
    )
    if view.reason == "missing":
        return SourceView(registry.HANDOFF.name, shown[-1], None, None, False, "invalid", None, notice)
    return view._replace(notice=f"{view.notice}; {notice}" if view.notice else notice)


def _validate_chosen(selection: handoff.Selection) -> SourceView:
    chosen = selection.chosen
    if chosen is None:
        return SourceView(registry.HANDOFF.name, None, None, None, False, "missing")
    raw = Raw(registry.HANDOFF.name, chosen.rel, chosen.data, None, chosen.size)
    read_whole = chosen.size <= limits.LIFECYCLE_TEXT_CAP_BYTES
    named = _secret_in_name(chosen.rel)
    if named is not None:
        # A handoff's file name is shown (the `path` attribute, notices, JSON), so it is gated too,
        # and the name itself is withheld wherever this handoff is mentioned.
        shown, why = named
        return _left_out(
            raw._replace(rel=shown),
            "secret",
            f"handoff ({shown}) left out: {why}; rename it; no older handoff is used in its place",
        )
    label = f"handoff ({chosen.rel})"
    if chosen.size > registry.HANDOFF.cap_bytes:
        return _left_out(
            raw,
            "too_large",
            f"{label} left out: {chosen.size} bytes, over its cap of {registry.HANDOFF.cap_bytes}; "
            "no older handoff is used in its place",
            # known when it was read whole (under the 1 MiB lifecycle cap) and passes the gate, else null
            clean_digest(chosen.data) if read_whole else None,
        )
    found = secret_notice(label, chosen.note.text)
    if found:
        return _left_out(raw, "secret", found + "; no older handoff is used in its place")
    digest = hashlib.sha256(chosen.data).hexdigest()
    shown = "\n".join(notes.section(chosen.note.body, title) or "" for title in handoff.BRIEF_SECTIONS)
    if placeholders.only_placeholders(shown):
        return _left_out(raw, "placeholder", f"{label} {NOT_FILLED_IN}; no older handoff is used in its place", digest)
    return SourceView(registry.HANDOFF.name, chosen.rel, chosen.size, digest, True, None, handoff.brief_text(chosen))


def policy_notices(gathered: Gathered) -> list[str]:
    """INDEX.md and MEMORY_POLICY.md are validated (size, secrets) but never rendered."""
    out: list[str] = []
    for raw in gathered.policy:
        if raw.error is not None:
            if raw.error.reason != "missing":
                out.append(f"{raw.rel} failed validation ({raw.error.reason}): {raw.error}")
            continue
        assert raw.data is not None
        try:
            text = notes.decode(raw.data, raw.rel)
        except NoteError as exc:
            out.append(f"{raw.rel} failed validation: {exc}")
            continue
        found = secret_notice(raw.rel, text)
        if found:
            out.append(found.replace(" left out:", " holds", 1))
    return out


class Memo:
    """Earlier validation results by key, and the results this run used or made (the ones to keep)."""

    def __init__(self, known: dict[str, Any] | None = None) -> None:
        self.known = dict(known or {})
        self.used: dict[str, Any] = {}

    def recall(self, key: str) -> Any:
        value = self.known.get(key)
        if value is not None:
            self.used[key] = value
        return value

    def keep(self, key: str, value: Any) -> None:
        self.used[key] = value


def _memo_key(*parts: object) -> str:
    """The key of one validation: its kind and everything it reads (bytes by their digest)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else repr(part).encode("utf-8", "surrogateescape"))
        h.update(b"\0")
    return h.hexdigest()


def _raw_part(raw: Raw) -> tuple[str, str, int | None, bytes | str]:
    if raw.data is not None:
        return raw.name, raw.rel, raw.size, hashlib.sha256(raw.data).digest()
    return raw.name, raw.rel, raw.size, f"{raw.error and raw.error.reason}:{raw.error}"


def _view(memo: Memo | None, key: str, make: Callable[[], SourceView]) -> SourceView:
    """`make()`, or the view the memo kept under `key`; the memo keeps what was made."""
    known = memo.recall(key) if memo is not None else None
    if isinstance(known, dict):
        try:
            return SourceView(**known)
        except TypeError:
            pass
    view = make()
    if memo is not None:
        memo.keep(key, view._asdict())
    return view


def validate(gathered: Gathered, memo: Memo | None = None) -> tuple[list[SourceView], list[str]]:
    """(sources in the event's order, extra notices). Status and ceilings are render's business.

    `memo` holds earlier results by a digest of what each one read: a source whose bytes, path,
    project and device are the same as then is not parsed or scanned again (the startup cache keeps
    the memo beside its record, for code of the same digest). Every result made here is added to it.
    """
    views: dict[str, SourceView] = {}
    project, device = gathered.project, gathered.device
    for raw in gathered.hot:
        key = _memo_key("hot", project, device, *_raw_part(raw))
        views[raw.name] = _view(memo, key, partial(_validate_hot, raw, project, device))
    listing = sorted(
        (rel, hashlib.sha256(data).digest() if isinstance(data, bytes) else str(data))
        for rel, data in gathered.handoffs
    )
    key = _memo_key("handoff", project, *listing)
    views[registry.HANDOFF.name] = _view(memo, key, partial(_validate_handoff, gathered))
    # The total cap is checked on the raw sizes of the selected files, leaving out in ceiling order.
    for name in registry.names(registry.left_out_order(gathered.event)):
        total = sum(v.size or 0 for v in views.values() if v.included)
        if total <= limits.STARTUP_TOTAL_CAP_BYTES:
            break
        view = views[name]
        if view.included:
            views[name] = view._replace(
                included=False,
                reason="too_large",
                text=None,
                notice=f"{name} ({view.path}) left out: the startup sources together pass "
                f"{limits.STARTUP_TOTAL_CAP_BYTES} bytes",
            )
    ordered = [views[source.name] for source in registry.shown_in(gathered.event)]
    key = _memo_key("policy", *(part for raw in gathered.policy for part in _raw_part(raw)))
    known = memo.recall(key) if memo is not None else None
    notices = [str(n) for n in known] if isinstance(known, list) else policy_notices(gathered)
    if memo is not None:
        memo.keep(key, notices)
    return ordered, list(notices)
