"""What a secret value looks like, and what a filler does: the tests every detector of the gate shares.

Entropy, character classes, placeholder words and sequences, token-like and word-like values,
digests, base64 decoding, and the CRC32-in-base62 checksum that GitHub and npm tokens carry. A
value must pass these before a detector calls it a secret, so `ghp_xxxx…`, `changeme` and
`abcdef123456` are turned away however they are labelled.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from binascii import crc32
from itertools import pairwise

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
WORD_CHARS = frozenset(_BASE62 + "_")


def words(text: str, space: str = "") -> frozenset[str]:
    """A word list written as one string, one entry per whitespace-separated word (`space`, when
    given, stands for a blank inside an entry)."""
    return frozenset(word.replace(space, " ") if space else word for word in text.split())


# Substrings that mark a value as a filler, an example or an instruction to the reader, not a secret.
PLACEHOLDER_MARKS = words(
    "xxxx **** .... … example your_ your- yourtoken yourkey yourapi placeholder redacted replace_me replaceme "
    "changeme change_me change-me dummy insert goes_here goes-here _here -here < > ${ {{ }} %( =%s fixme todo "
    "notreal not_real not-real"
)
# Whole values that are words, types or stand-ins rather than secrets.
PLACEHOLDER_VALUES = words(
    "none null nil true false yes no undefined empty required optional string str bytes secret password passwd "
    "token changeme default test testing example sample hidden masked redacted unset not_set notset todo tbd "
    "n/a na env auto generated random secretstr secret_value your_password mysecret supersecret password123 "
    "admin root guest sensitive text hidden"
)


_compiled: dict[tuple[str, int], re.Pattern[str]] = {}


def compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """Compile once, on first use: a rule whose prefix never occurs costs no compilation."""
    found = _compiled.get((pattern, flags))
    if found is None:
        found = _compiled[(pattern, flags)] = re.compile(pattern, flags)
    return found


def shannon_entropy(value: str) -> float:
    """Bits per character: random key material scores high, words and fillers low."""
    if not value:
        return 0.0
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _marked(value: str, lowered: str, mark: str) -> bool:
    """Whether `mark` stands in the value in one case, as people write a filler (`xxxx`, `XXXX`, `TODO`).

    A generated token of mixed case spells a mark by chance (`PXXXxb`, `toDo`) in about one of a
    thousand values; a filler is typed in one case, so a mark in mixed case is no filler.
    """
    start = lowered.find(mark)
    while start != -1:
        piece = value[start : start + len(mark)]
        if piece in (piece.lower(), piece.upper()):
            return True
        start = lowered.find(mark, start + 1)
    return False


def is_placeholder(value: str) -> bool:
    """True for fillers and references people write instead of a secret (and for long repeats).

    A run of `A` is base64 for zero bytes, which real binary tokens begin with (Twitter's bearer
    tokens, Dropbox's long-lived ones): in a long value it is no filler when the rest looks generated.
    """
    lowered = value.lower()
    if any(_marked(value, lowered, mark) for mark in PLACEHOLDER_MARKS):
        return True
    if compiled(r"(.)\1{5}", re.DOTALL).search(lowered) is None:
        return False
    rest = compiled("A{6,}").sub("", value) if len(value) >= 40 else value
    return rest == value or len(rest) < 24 or compiled(r"(.)\1{5}", re.DOTALL).search(rest.lower()) is not None


# Keys that are public by design, whatever label they stand under (Stripe's publishable keys).
# SSH public keys as `authorized_keys` writes them, whatever label stands before them.
PUBLIC_PREFIXES = (
    "pk_live_",
    "pk_test_",
    "ssh-rsa ",
    "ssh-ed25519 ",
    "ssh-dss ",
    "ecdsa-sha2-",
    "sk-ssh-",
    "sk-ecdsa-",
)


def filler(token: str) -> bool:
    """A token of a known format whose material is a filler: marked (`EXAMPLE`, `xxxx`), or counting
    up (`0123…`, `abcd…`) in its longest piece, as documentation writes them."""
    if is_placeholder(token):
        return True
    return is_sequential(max(compiled(r"[._:\-|/+=~]").split(token), key=len))


def is_sequential(value: str) -> bool:
    """True for `abcdef…`/`123456…`-style bodies that documentation uses as stand-ins."""
    if len(value) < 8:
        return False
    lowered = value.lower()
    steps = sum(1 for a, b in pairwise(lowered) if ord(b) - ord(a) == 1)
    return steps * 2 >= len(value) - 1


def looks_random(value: str, min_len: int = 16) -> bool:
    """A body that could be generated key material: long enough, varied, not a filler."""
    if len(value) < min_len or is_placeholder(value) or is_sequential(value):
        return False
    if len(value) >= 40 and "AAAAAA" in value:
        value = compiled("A{6,}").sub("", value)  # zero bytes in base64: judge the rest
    return shannon_entropy(value) >= min(3.0, math.log2(len(value)) * 0.6)


def secret_digits(value: str, least: int = 6) -> bool:
    """A number that a password or PIN label names: long enough, not a pattern, not a year or a date."""
    if not value.isdigit() or not least <= len(value) <= 16:
        return False
    if len(set(value)) < 3 or is_sequential(value) or is_placeholder(value):
        return False
    return not (len(value) in (4, 8) and value[:2] in ("19", "20"))


def char_classes(value: str) -> int:
    """How many of lower case, upper case, digits and other characters the value uses."""
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


def wordy(value: str) -> bool:
    """Made of words: every letter run splits into humps of three or more letters with a vowel
    (`typing.Optional[PRIVATE_KEY]`, `_threading_local`), which generated text rarely manages."""
    humps = compiled(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])").findall(value)
    if not humps or any(c.isdigit() for c in value):
        return False
    return all(len(h) >= 3 and any(v in h.lower() for v in "aeiouy") for h in humps)


def token_like(value: str) -> bool:
    """Generated key material: random-looking, with digits and letters (or long and mixed)."""
    if not looks_random(value, 12) or wordy(value):
        return False
    if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
        return True
    return len(value) >= 24 and char_classes(value) >= 2 and shannon_entropy(value) >= 3.5


def word_like(value: str) -> bool:
    """Words and identifiers: `my-secret-name`, `CamelCaseType`, `snake_case_thing`, `Stored`."""
    pattern = r"[a-z]+(?:[-_.' ][a-z]+)*|[A-Z]?[a-z]+(?:[A-Z][a-z]+)*|[A-Z][a-z]+(?:[-_ ][A-Z]?[a-z]+)*"
    return compiled(pattern).fullmatch(value) is not None


def env_name(value: str) -> bool:
    """An environment variable's name (`DB_PASSWORD`): a reference to a secret, not one."""
    return compiled(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+").fullmatch(value) is not None


def digest_like(value: str) -> bool:
    """Hashes and fingerprints, which sit next to words like `key` without being secrets."""
    lowered = value.lower()
    if lowered.startswith(("sha256:", "sha512:", "sha1:", "md5:", "sha256-", "sha384-", "sha512-")):
        return True
    return len(value) in (7, 8, 10, 12, 40, 64, 128) and all(c in "0123456789abcdef" for c in lowered)


def b64_text(value: str) -> str | None:
    """Decode base64 to printable ASCII text, or None when it is not that."""
    raw = b64_bytes(value)
    if not raw or any(b < 0x20 or b > 0x7E for b in raw.rstrip(b"\r\n")):
        return None
    return raw.decode("ascii").rstrip("\r\n")


def b64_bytes(value: str) -> bytes | None:
    """Decode standard base64 (padding optional), or None when it is not base64."""
    if not compiled(r"[A-Za-z0-9+/]+={0,2}").fullmatch(value):
        return None
    try:
        return base64.b64decode(value.rstrip("=") + "=" * (-len(value.rstrip("=")) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def _base62_decode(text: str) -> int:
    number = 0
    for char in text:
        index = _BASE62.find(char)
        if index < 0:
            return -1
        number = number * 62 + index
    return number


def crc32_base62_ok(body: str) -> bool:
    """GitHub and npm tokens: 30 random base62 characters then their CRC32 in 6 base62 digits."""
    if len(body) != 36:
        return False

    return _base62_decode(body[30:]) == crc32(body[:30].encode("ascii", "replace"))
