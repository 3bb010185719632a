"""Token formats: the prefixes and shapes of the credentials that services issue.

Token formats follow the public rule sets of gitleaks and trufflehog. Each rule names literal
prefixes that every match contains; its expression runs only when one of them occurs. The prefixes
are not searched in the whole note but in its "runs": stretches of at least 16 token characters
(letters, digits, `_-.+/=~:%`). Every token lies inside one run, and prose has few runs, so a clean
note costs one regex pass and a few substring searches on a short string. Expressions start with
their literal prefix and use bounded repetition, so the worst case stays linear in the input.

Where a format carries a checksum (GitHub's and npm's CRC32 in base62) a valid one is accepted
outright; any other body must look random (`shapes`), which turns away `ghp_xxxx…` fillers and
sequential examples.
"""

from __future__ import annotations

import base64
import re

from continuity.gate import shapes
from continuity.gate.formats import RULES

__all__ = ["RULES", "runs", "token_candidates"]

# --- token formats -----------------------------------------------------------------------------------


def _check(token: str, how: str) -> bool:
    """Validate a match. `how`: "" none, "crc" checksum or random, "tail" random longest segment,
    "body" random after the prefix,
    "aws" no documentation key, "jwt" a JSON header, or "N" / "N:M" random after N characters
    (at least M long, 16 by default)."""
    if not how:
        return True
    if how == "crc":
        return shapes.crc32_base62_ok(token[4:]) or shapes.looks_random(token[4:])
    if how == "body":  # everything after the prefix's separator
        return shapes.looks_random(re.split(r"[-_.]", token, maxsplit=1)[-1], 16)
    if how == "tail":
        return shapes.looks_random(max(re.split(r"[._:\-]", token), key=len), 12)
    if how == "aws":
        return (
            "EXAMPLE" not in token.upper() and not shapes.is_sequential(token[4:]) and not shapes.is_placeholder(token)
        )
    if how == "jwt":
        return _jwt_ok(token)
    offset, _, least = how.partition(":")
    return shapes.looks_random(token[int(offset) :], int(least or 16))


def _jwt_ok(token: str) -> bool:
    """A JSON Web Token: a base64url JSON header with `alg`, and a signature."""
    parts = token.split(".")
    if len(parts) < 3 or len(parts[2]) < 16:
        return False
    try:
        decoded = base64.urlsafe_b64decode((parts[0] + "=" * (-len(parts[0]) % 4)).encode("ascii"))
    except ValueError:
        return False
    return decoded.lstrip().startswith(b"{") and b'"alg"' in decoded.replace(b" ", b"")


# Every token above consists of these characters and is at least this long. Found with `findall` over
# the whole text, a match always starts where a run starts (the scan reaches a run's first character
# before any other, and a greedy match ends where the run does), so no look-behind is needed; one
# would be tried at every position of every note.
RUN = r"[A-Za-z0-9_\-.+/=~:%]{16,}"


def runs(text: str) -> str:
    """The note's token-character runs, joined: where any token prefix must occur."""
    return "\n".join(shapes.compiled(RUN).findall(text))


_PREFIXES = tuple(sorted({prefix for _, prefixes, _, _, _ in RULES for prefix in prefixes}))


def token_candidates(text: str, haystack: str | None = None) -> list[tuple[int, str, str]]:
    """(offset, detector, value) for every token-format match that passes its check (`haystack`: the runs)."""
    haystack = runs(text) if haystack is None else haystack
    out: list[tuple[int, str, str]] = []
    if not haystack:
        return out
    size = len(text)
    present = {prefix for prefix in _PREFIXES if prefix in haystack}  # one loop, not one per rule
    if not present:
        return out
    for detector, prefixes, pattern, check, bounds in RULES:
        if present.isdisjoint(prefixes):
            continue
        for match in shapes.compiled(pattern).finditer(text):
            start, end = match.span()
            if "L" in bounds and start > 0 and text[start - 1] in shapes.WORD_CHARS:
                continue
            if "R" in bounds and end < size and text[end] in shapes.WORD_CHARS:
                continue
            token = match.group(0)
            # A filler (`EXAMPLE`, `xxxx`, `0123…`) is no secret, unless a valid checksum says it was issued.
            issued = check == "crc" and shapes.crc32_base62_ok(token[4:])
            if _check(token, check) and (issued or not shapes.filler(token)):
                out.append((start, detector, token))
    return out
