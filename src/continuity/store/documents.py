"""Originals kept byte for byte in `40-documents/` (`lifecycle preserve`): the checks before the write.

A preserved original is not a note: its bytes are kept exactly, never re-encoded or given frontmatter.
What the write path checks for a note it checks here for a file: the vault-relative path, a byte cap,
and, for text, the secret gate. `writer.Transaction.create_document` takes only a `CheckedDocument`,
the result of these checks, and writes it like any note (lock, lease, atomic write, journal line); the
checks live apart from the writer to keep the write path itself one readable module.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from continuity.errors import NoteError
from continuity.gate.secrets import scan_text
from continuity.vault import access, notes


@dataclass(frozen=True)
class CheckedDocument:
    """An original's exact bytes after `check_document`; `scanned` is False for a binary file."""

    rel: str
    data: bytes
    sha256: str
    scanned: bool


def check_document(
    rel: str, data: bytes, *, text_cap: int, binary_cap: int, label: str | None = None
) -> CheckedDocument:
    """A file kept byte for byte (`40-documents/`): path and cap checked, text through the secret gate.

    Text is UTF-8 without a NUL byte; its lines are counted as an editor shows them. Anything else is
    binary, which the gate cannot read: it is only capped, and the caller records it as not scanned.
    Refusals are NoteErrors whose reason is `too_large` or `secret` (naming the line, never the value);
    they call the file `label` (default `rel`), the name the person knows it by.
    """
    access.safe_rel(rel)
    name = label or rel
    try:
        text = None if b"\x00" in data else data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    cap = binary_cap if text is None else text_cap
    if len(data) > cap:
        kind = "binary" if text is None else "text"
        raise NoteError(f"{name} is {len(data)} bytes, over the cap of {cap} for a {kind} file", "too_large")
    if text is not None:
        findings = scan_text(notes.normalize_newlines(text.removeprefix("\ufeff")))
        if findings:
            first = min(findings, key=lambda item: item.line)
            message = f"{name} line {first.line} looks like a secret ({first.detector}); it was not written"
            raise NoteError(message, "secret")
    return CheckedDocument(rel, data, hashlib.sha256(data).hexdigest(), text is not None)
