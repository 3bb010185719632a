"""Secret detectors for values that prove what they are by their own structure: key bodies and card numbers.

A private key pasted without its `-----BEGIN` line is still a key: its base64 decodes to DER whose
first fields say so (a version 0 or 1, then a modulus, an algorithm or the key octets; or an
encryption algorithm, then the encrypted key). Certificates, public keys and certificate requests
decode to other structures and are left alone: they are public by design, and a note may well keep
one. A payment card number is 13 to 19 digits that a real issuer's prefix and length allow and the
Luhn check accepts; written in groups (`4242 4242 4242 4242`) it stands alone unless its line calls it
an order, invoice, ticket or serial number; run together it needs a word about cards on its line or
the line above, since long ids and timestamps are digits too.
Both detectors wait for literal text (a DER prefix, a digit group) before any expression runs.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re

from continuity.gate.doc import Candidate, Doc, rx
from continuity.gate.shapes import words

# What a DER SEQUENCE looks like in base64, by the size of the key: `MII` (RSA, DSA, PKCS#8, PKCS#12),
# `MIG`/`MIH` (EC P-384/P-521, small encrypted keys), `MHc`/`MHQ` (EC P-256, secp256k1), `MC4C`
# (Ed25519, X25519), `MEcC`/`MEYC` (Ed448, X448), `MFEC`/`MFMC` (Ed25519 with its public key).
_DER_PREFIXES = ("MII", "MIG", "MIH", "MHc", "MHQ", "MC4C", "MEcC", "MEYC", "MFEC", "MFMC")
_OPENSSH_BODY = "b3BlbnNzaC1rZXktdjE"  # base64 of "openssh-key-v1": a new-format OpenSSH private key
_DER_RUN = r"(?:MI[IGH]|MH[cQ]|MC4C|ME[cY]C|MF[EM]C|b3BlbnNzaC1rZXktdjE)[A-Za-z0-9+/]{20,4096}"
_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
# A body is at least one full PEM line: an Ed25519 key is exactly 64 base64 characters.
_DER_MIN_CHARS = 64


def _key_bodies(doc: Doc) -> list[Candidate]:
    """Private key bodies (DER in base64) without the armour lines, on one line or wrapped."""
    runs = doc.runs  # a body is a run of token characters: searching the runs is cheaper than the note
    if not any(prefix in runs for prefix in _DER_PREFIXES) and _OPENSSH_BODY not in runs:
        return []
    text = doc.text
    out: list[Candidate] = []
    read = 0  # where the last body read ended: its wrapped lines are not bodies of their own
    for match in rx(_DER_RUN).finditer(text):
        start = match.start()
        if start < read or (start and text[start - 1] in _BASE64_CHARS):
            continue  # inside a longer run (checked here: a look-behind would slow every position)
        body, read = _joined_body(text, match)
        if len(body) < _DER_MIN_CHARS:
            continue
        if text.rfind("-----BEGIN", 0, start) > text.rfind("-----END", 0, start):
            continue  # inside an armoured block: the private-key detector's, or a public one
        if body.startswith(_OPENSSH_BODY) or der_private_key(body):
            out.append((start, "private-key-body", match.group(0)))
    return out


def _joined_body(text: str, match: re.Match[str]) -> tuple[str, int]:
    """(the body's first 256 base64 characters, where they end): a run that fills its line goes on on
    the next lines (wrapped, escaped `\\n`, indented or quoted)."""
    body, end = match.group(0), match.end()
    following = rx(r"(?:\\[nr]){1,2}|\r?\n[ \t>\"']{0,16}")
    line = rx(r"[A-Za-z0-9+/]{4,128}")
    while len(body) < 256 and len(body) % 4 == 0:
        gap = following.match(text, end)
        run = line.match(text, gap.end()) if gap else None
        if run is None:
            break
        body, end = body + run.group(0), run.end()
    return body[:256], end


def der_private_key(body: str) -> bool:
    """Does this base64 begin a DER private key (PKCS#1, SEC1, PKCS#8, encrypted PKCS#8, PKCS#12)?"""
    try:
        raw = base64.b64decode(body[: len(body) // 4 * 4])
    except (binascii.Error, ValueError):
        return False
    at = _content(raw, 0, 0x30)  # the outer SEQUENCE
    if at is None or at + 3 >= len(raw):
        return False
    if raw[at] == 0x02 and raw[at + 1] == 0x01:  # INTEGER version, one byte
        version, following = raw[at + 2], raw[at + 3]
        if version in (0, 1):  # then a modulus or prime (RSA, DSA), an algorithm (PKCS#8) or the key (SEC1)
            return following in (0x02, 0x04) or (following == 0x30 and raw[at + 5 : at + 6] == b"\x06")
        return version == 3 and following == 0x30  # PKCS#12: a key store
    if raw[at] == 0x30 and raw[at + 2 : at + 3] == b"\x06":  # an encryption algorithm, then the key
        inner = _content(raw, at, 0x30)
        return inner is not None and inner + raw[at + 1] < len(raw) and raw[inner + raw[at + 1]] == 0x04
    return False


def _content(raw: bytes, at: int, tag: int) -> int | None:
    """Where the content of the DER element at `at` starts, when its tag is `tag`."""
    if raw[at : at + 1] != bytes((tag,)) or at + 1 >= len(raw):
        return None
    first = raw[at + 1]
    if first < 0x80:
        return at + 2
    size = first & 0x7F
    return at + 2 + size if 1 <= size <= 3 else None


# --- payment card numbers ---------------------------------------------------------------------------

# Expressions start with a character class, which the engine skips to quickly; the character before a
# match is checked in Python (a look-behind would be tried at every position of every note).
_CARD_START = r"[2-6][0-9]{3}[ \-]?[0-9]{4}"  # every card number begins so; most notes hold no such run
_GROUPED_CARD = (
    r"[2-6][0-9]{3}([ \-])(?:[0-9]{4}\1[0-9]{4}\1[0-9]{4}(?:\1[0-9]{3})?|[0-9]{6}\1[0-9]{4,5})"
    r"(?![0-9A-Za-z]|[ \-][0-9]|[.,][0-9])"
)
_RUN_CARD = r"[2-6][0-9]{12,18}(?![0-9A-Za-z]|[.,][0-9])"
_NOT_BEFORE_CARD = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+-./:_,")
_CARD_WORDS = (
    r"(?:card|credit|debit|visa|mastercard|amex|american express|discover|jcb|diners|unionpay|maestro"
    r"|\bcc\b|\bccn\b|\bpan\b|\bcvv|\bcvc|karte|tarjeta|carte|cartão)"
)
# Numbers that are grouped like cards without being one, when no card word says otherwise.
_OTHER_NUMBER_WORDS = r"order|invoice|tracking|ticket|meeting|serial|licen[cs]e|isbn|iban|imei|phone|\btel\b|\bfax\b"
# Test numbers that card networks and payment providers publish (Stripe, Adyen, Braintree...), as
# fingerprints like `secrets.KNOWN_EXAMPLES`; ones with few distinct digits are turned away anyway.
_PUBLISHED_TEST_CARDS = words(
    "3a134ef77d4e 53a8fc816e63 273476b83f26 d8086d483c15 d79449f462ce 51a4ae4c6ae9 20e6583871d3 576c15a80724 "
    "1d942407169d 75997d50623a ae20c26ab7f7 af01b8b6d8b6 be6a3050f261"
)


def _cards(doc: Doc) -> list[Candidate]:
    """Payment card numbers: grouped anywhere, run together only near a word about cards."""
    text = doc.text
    out: list[Candidate] = []
    if rx(_CARD_START).search(text) is None:
        return out
    for pattern, alone in ((_GROUPED_CARD, True), (_RUN_CARD, False)):
        for match in rx(pattern).finditer(text):
            start = match.start()
            if start and text[start - 1] in _NOT_BEFORE_CARD:
                continue
            digits = match.group(0).replace(" ", "").replace("-", "")
            if not card_number(digits):
                continue
            near = _words_near(doc, start)
            if rx(_CARD_WORDS).search(near) or (alone and not rx(_OTHER_NUMBER_WORDS).search(near)):
                out.append((start, "payment-card", digits))
    return out


def _words_near(doc: Doc, offset: int) -> str:
    """The line of `offset` and the line above, in lower case."""
    index = doc.line_of(offset) - 1
    return "\n".join(doc.lines[max(0, index - 1) : index + 1]).lower()


def card_number(digits: str) -> bool:
    """Issuer prefix and length, the Luhn check, and account digits that are not a pattern."""
    if not _issuer_allows(digits) or len(set(digits[6:-1])) < 4:
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    if total % 10:
        return False

    return hashlib.sha256(digits.encode("ascii")).hexdigest()[:12] not in _PUBLISHED_TEST_CARDS


def _issuer_allows(digits: str) -> bool:
    n, two, three, four = len(digits), int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4":
        return n in (13, 16, 19)  # Visa
    if 51 <= two <= 55 or 2221 <= four <= 2720 or 2200 <= four <= 2204:
        return n == 16  # Mastercard, Mir
    if two in (34, 37):
        return n == 15  # American Express
    if four == 6011 or two in (62, 65) or 644 <= three <= 649 or 3528 <= four <= 3589:
        return 16 <= n <= 19  # Discover, UnionPay, JCB
    if 300 <= three <= 305 or two in (36, 38, 39) or four == 3095:
        return 14 <= n <= 19  # Diners Club
    return four in (5018, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763) and n >= 13  # Maestro


FINDERS = (_key_bodies, _cards)
