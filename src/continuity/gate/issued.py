"""The generic layer's value test: does a value look issued, whatever service issued it?

A format table names the credentials someone listed; the next service's token is not in it. What
every issued credential shares is its structure: a long run of generated characters (upper and lower
case letters and digits mixed, several bits of entropy per character, no dictionary words), often
behind a short prefix (`acme_live_…`). What public material shares is a shape or a context of its
own: hex digests and commit SHAs, UUIDs, lockfile and subresource integrity (`sha512-…`), content
digests under a word that says so (`digest`, `checksum`, `CID`), public key material (SSH key blobs,
armoured public keys and certificates, a JWK's `n` or `x`), base64 that decodes to a file (an image
inline), ids in a URL's path. `generated` is the test, `public_context` the exclusions that need the
text around a value.

Encoded forms are decoded and judged again: base64 and hex runs that decode to printable text, and
percent-encoded runs, are asked whether the decoded text is generated or a `user:password` pair.
"""

from __future__ import annotations

import base64
import binascii
import math
import urllib.parse

from continuity.gate import shapes
from continuity.gate.assignments import word_parts
from continuity.gate.doc import rx
from continuity.gate.values import der_private_key

# Shortest value, and shortest generated segment, that counts without any label or context.
STANDALONE_MIN_CHARS = 32
STANDALONE_MIN_SEGMENT_CHARS = 20
# Bits per character below which a value reads as made by a person rather than a generator.
MIN_BITS_PER_CHAR = 3.6

# A compact ISO 8601 date and time (`20261207T170805Z`, how handoff names and many logs start): a
# public shape, like a UUID, whose upper-case T and Z would otherwise make a path around it look mixed.
COMPACT_TIMESTAMP = r"(?<![0-9A-Za-z])\d{8}T\d{4,6}(?:\.\d+)?Z?(?![0-9A-Za-z])"
# Prefixes that say a digest follows (`sha512-…` integrity, `sha256:…` image digests, go.sum's `h1:`).
DIGEST_PREFIX = r"(?:sha(?:1|224|256|384|512)|md5|blake2b?|h1|sha3)[-:=]"
# Words that make the value after them on the same line a digest or a public id.
_DIGEST_WORDS = (
    "digest", "checksum", "hash", "sha", "integrity", "etag", "cid", "ipfs", "fingerprint", "oid", "commit",
    "revision", "thumbprint", "multihash", "content-addressed", "sri", "nonce",
)  # fmt: skip
# Label words that name public material, ids and digests, not secrets.
PUBLIC_LABEL_WORDS = frozenset(
    [
        "id",
        "ids",
        "uuid",
        "guid",
        "hash",
        "sha",
        "digest",
        "checksum",
        "etag",
        "kid",
        "n",
        "e",
        "x",
        "y",
        "x5c",
        "x5t",
        "modulus",
        "exponent",
        "public",
        "pub",
        "cert",
        "certificate",
        "fingerprint",
        "thumbprint",
        "integrity",
        "commit",
        "revision",
        "rev",
        "oid",
        "cid",
        "image",
        "src",
        "href",
        "url",
        "uri",
        "path",
        "file",
        "name",
        "slug",
        "version",
        "ref",
        "sid",
        "csrf",
        "xsrf",
        "csrftoken",
    ]
)
# File formats whose base64 is content, not a credential (PNG, JPEG, GIF, WebP/RIFF, PDF, gzip, zip).
_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"RIFF", b"%PDF", b"\x1f\x8b", b"PK\x03\x04")


def classes(value: str) -> int:
    return any(c.isupper() for c in value) + any(c.islower() for c in value) + any(c.isdigit() for c in value)


# A hump of letters reads as a word when it is pronounceable: vowels make up this share of it at the
# least, and no run of consonants in it is longer than this (English spells `str`, `ngth` is rare).
WORD_MIN_VOWEL_SHARE = 0.3
WORD_MAX_CONSONANT_RUN = 3


def _spelled(hump: str) -> bool:
    """Whether a hump of four or more letters is pronounceable, as words and names are and generated
    runs mostly are not (`Jylsrv`, `Qzxw`): a random run often holds a vowel, rarely enough of them."""
    lower = hump.lower()
    vowels = sum(c in "aeiouy" for c in lower)
    longest = max((len(run) for run in rx(r"[^aeiouy]+").findall(lower)), default=0)
    return len(hump) >= 4 and vowels >= WORD_MIN_VOWEL_SHARE * len(hump) and longest <= WORD_MAX_CONSONANT_RUN


def _word_share(value: str) -> float:
    """How much of the value is spelled by pronounceable humps of letters (words, names)."""
    humps = rx(r"[A-Z]?[a-z]{2,}|[A-Z]{3,}(?![a-z])").findall(value)
    return sum(len(h) for h in humps if _spelled(h)) / max(1, len(value))


def generated(value: str, min_chars: int = STANDALONE_MIN_CHARS) -> bool:
    """Random enough and long enough to be an issued credential with nothing around it to say so."""
    if not min_chars <= len(value) <= 4096 or rx(DIGEST_PREFIX).match(value.lower()):
        return False
    segments = rx(r"[-_.~:]").split(rx(COMPACT_TIMESTAMP).sub("-", value))
    body = max(segments, key=len)
    if len(body) < STANDALONE_MIN_SEGMENT_CHARS or classes(body) < 3:
        return False  # hex digests, ULIDs, lower-case slugs: generated, but not to be kept secret
    if rx(r"[A-Za-z]{1,4}(?:[0-9a-f]{16,}|[0-9A-F]{16,})").fullmatch(body):
        return False  # a short type prefix on a hex body (`AC…`, `MG…`): an id, as hex as a digest
    if shapes.filler(value) or _word_share(body) >= 0.5:
        return False
    if len(body) >= 40 and "AAAAAA" in body:
        body = rx("A{6,}").sub("", body)
    return shapes.shannon_entropy(body) >= min(MIN_BITS_PER_CHAR + 0.4, math.log2(len(body)) * 0.8)


def public_blob(value: str) -> bool:
    """Base64 that decodes to public material: an SSH public key blob, or a file (an inline image)."""
    if not rx(r"[A-Za-z0-9+/]{16,}={0,2}").fullmatch(value):
        return False
    raw = shapes.b64_bytes(value[: len(value) // 4 * 4])
    if raw is None:
        return False
    if raw.startswith(_MAGIC):
        return True
    long_form = raw[1:2] in (b"\x81", b"\x82", b"\x83")
    if raw[:1] == b"\x30" and (long_form or (raw[1] < 0x80 and raw[2:3] in (b"\x30", b"\x02", b"\x06"))):
        return not der_private_key(value[:256])  # DER: a certificate or a public key, unless private
    size = int.from_bytes(raw[:4], "big") if len(raw) > 8 else 0
    return 7 <= size <= 40 and raw[4 : 4 + size].startswith((b"ssh-", b"ecdsa-", b"sk-", b"rsa-"))


def public_context(text: str, start: int) -> bool:
    """Whether the text before `start` on its line makes the value there public: a digest word, a data
    URI, SOPS ciphertext, an armoured public block, or a URL whose path or query holds the value."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[max(line_start, start - 120) : start].lower()
    if before.endswith(("base64,", "/", "#", "@")) or any(word in before for word in _DIGEST_WORDS):
        return True
    if "enc[" in before:
        return True  # SOPS ciphertext (`ENC[AES256_GCM,data:…]`), which is meant to be committed
    # Inside an armoured block: the private-key detector reads those.
    return "-----BEGIN" in text and text.rfind("-----BEGIN", 0, start) > text.rfind("-----END", 0, start)


def label_words(label: str) -> set[str]:
    return set(word_parts(label))


def decoded_secret(decoded: str) -> bool:
    """Whether the text a base64, hex or percent-encoded run decodes to holds a secret: a private key,
    a generated token among its words, or a `user:password` pair (an armoured public block holds none)."""
    if "-----BEGIN" in decoded:
        return "PRIVATE KEY" in decoded
    if login_pair(decoded.strip()):
        return True
    pieces = rx(r"[^\s\"'{}\[\],;=]{24,}").findall(decoded)
    return any(generated(piece, 24) for piece in pieces)


def decode(value: str) -> str | None:
    """The printable ASCII text a run encodes in base64 (standard or URL-safe), hex or percent form."""
    if "%" in value and value.count("%") >= 2:
        text = urllib.parse.unquote(value)
        return text if text.isprintable() else None
    raw: bytes | None = None
    if len(value) >= 32 and len(value) % 2 == 0 and all(c in "0123456789abcdefABCDEF" for c in value):
        raw = bytes.fromhex(value)
    elif len(value) >= 24 and rx(r"[A-Za-z0-9+/_\-]+={0,2}").fullmatch(value):
        stripped = value.rstrip("=")
        try:
            raw = base64.b64decode(stripped + "=" * (-len(stripped) % 4), altchars=b"-_", validate=False)
        except (binascii.Error, ValueError):
            return None
    if raw is None or not raw:
        return None
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return None
    return text if text.strip() and all(c.isprintable() or c in "\r\n\t" for c in text) else None


def login_pair(text: str) -> bool:
    """`user:password` as Basic auth and registry configs encode it: a name, a colon, a password."""
    match = rx(r"([A-Za-z0-9_.@\-]{1,64}):([^\s:]{6,128})").fullmatch(text)
    if match is None:
        return False
    password = match.group(2)
    return shapes.char_classes(password) >= 2 and not shapes.filler(password) and not password.isdigit()
