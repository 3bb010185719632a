"""The secret detector for base64 text that decodes to a token or a key.

Kubernetes manifests, CI variables and config maps keep whole credentials base64-encoded: a JWT
(`eyJ…` encodes to `ZXlK…`) or a PEM private key (`-----BEGIN` encodes to `LS0tLS1CRUdJTi…`). The
encoding hides every prefix the other detectors look for, so such a run is decoded and the decoded
text is asked the same questions: is there a JWT, is there a private key with its body. Only runs
that begin with those two encoded prefixes are decoded (a literal search in the note's token runs
first), so ordinary base64 (images, digests, public material) costs one substring test.
"""

from __future__ import annotations

import base64
import binascii

from continuity.gate import rules, structures
from continuity.gate.doc import Candidate, Doc, rx

# base64 of `eyJ` (a JWT's header) and of `-----BEGIN` (PEM armour), standard and URL-safe alike.
_ENCODED_PREFIXES = ("ZXlK", "LS0tLS1CRUdJTi")
_ENCODED_RUN = r"(?:ZXlK|LS0tLS1CRUdJTi)[A-Za-z0-9+/_\-]{40,16384}={0,2}"
_DETECTORS = frozenset(("jwt", "private-key", "private-key-body"))


def _decoded(run: str) -> str | None:
    """The run decoded as standard or URL-safe base64, when that gives text."""
    padded = run.rstrip("=") + "=" * (-len(run.rstrip("=")) % 4)
    try:
        raw = base64.b64decode(padded, altchars=b"-_" if ("-" in run or "_" in run) else None, validate=True)
    except (binascii.Error, ValueError):
        return None
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        return None


def _encoded_secrets(doc: Doc) -> list[Candidate]:
    if not any(prefix in doc.runs for prefix in _ENCODED_PREFIXES):
        return []
    text = doc.text
    out: list[Candidate] = []
    for match in rx(_ENCODED_RUN).finditer(text):
        start = match.start()
        if start and (text[start - 1].isalnum() or text[start - 1] in "+/"):
            continue  # inside a longer run
        decoded = _decoded(match.group(0))
        if decoded is None:
            continue
        inner = Doc(decoded)
        found = [*rules.token_candidates(decoded, inner.runs), *structures.private_keys(inner)]
        if any(detector in _DETECTORS for _, detector, _ in found):
            out.append((start, "encoded-secret", match.group(0)))
    return out


FINDERS = (_encoded_secrets,)
