"""The secret gate: one scanner for every reader of the vault (brief, doctor, handoffs, notes, recall).

Private notes are where people paste credentials, so every source is scanned before anything of it is
shown. A finding names the line and a stable detector id, nothing else: neither the value nor anything
computed from it (a hash prefix of a 4-digit PIN gives the PIN back in ten thousand guesses), so a
notice, a log line, a JSON report or an exception can never leak what it found or let a guess be tested.

Detectors: token formats with their prefixes, found with or without a label (`rules`, over the
table in `formats`); private key blocks, service-account JSON, credentials in URLs and `curl -u`,
`Authorization` headers, Kubernetes Secrets, session cookies and Sentry DSNs (`structures`);
secret-named assignments in the forms of the common languages and config formats, from ENV and YAML
to Go's `var x string =`, Makefile's `::=` and an XML element's next line (`assignments`); passwords,
passphrases and PINs in sentences, and shapes near a service's name such as AWS, Twilio, Mailgun
(`context`); values that a label names without an operator, on the line below it or in a table
column (`labels`); private key bodies without their armour and payment card numbers, which prove
what they are by their own structure (`values`); client and access ids under a service's name
(`services`); base64 that decodes to a JWT or a private key (`encoded`); and detect-secrets, through
its public API, for the few formats it knows that we do not (`detectsecrets`). All of them read one
`doc.Doc`; this module runs them and turns what they return into findings. Beside the formats, a
generic layer (`generic`, `issued`) judges any value by its structure, so that a credential nobody
listed is found as well (docs/secret-gate.md has its measurement). The text is judged as written, as
`characters.judged` shows it (hidden characters and combining marks removed, NFKC applied), and with
values split over two lines rejoined. Every detector turns
away fillers and documented examples (`xxxx`, `0123…`, EXAMPLE) unless a checksum proves the value
was issued.

Cost matters because this runs on the session-start hook's cold path, where a clean prose note is the
common case. Every detector is gated by literal substrings (C-speed `in`) before any expression runs;
expressions are compiled on first use, written with literal anchors and bounded repetition (a 1 MiB
line or 100,000 short lines scan in bounded time), and case-blind ones run on the lower-cased text
instead of using IGNORECASE, which compiles several times slower. detect-secrets (a few hundred
milliseconds to import) is imported only for a line shaped like a key that only its plugins know.
"""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

from continuity import characters
from continuity.gate import (
    assignments as secret_assignments,
    context as secret_context,
    detectsecrets,
    encoded as secret_encoded,
    generic,
    labels as secret_labels,
    rules,
    services as secret_services,
    structures as secret_structures,
    values as secret_values,
)
from continuity.gate.doc import Candidate, Doc

ALLOWLIST_PRAGMA = "pragma: allowlist secret"
SCAN_ERROR = "scan-error"
# Fingerprints of values that vendors and standards publish in their documentation (the jwt.io
# sample token, Stripe's and GitHub's documented example keys, RFC 6749's client credentials, the
# Azure storage emulator's key):
# examples, not leaks. Kept as hash prefixes so that this file holds no token-shaped text. AWS's
# documentation keys are caught by their EXAMPLE suffix.
KNOWN_EXAMPLES = frozenset(
    {
        "7f75367e7881",  # jwt.io's sample token
        "2cafc0970149",  # Stripe's documented test key
        "f2d6ca165150",  # Stripe's older documented test key
        "3543c50b0cb9",  # GitHub's documented token example (ghp_)
        "bc3ae723f57c",  # the same example as an OAuth token (gho_)
        "ca7459e2b267",  # RFC 6749's client credentials in a Basic header
        "0011cc25eb43",  # the Azure storage emulator's published account key
        "900e6c2bf8ce",  # the same, as matched with its AccountKey= prefix
    }
)


class Finding(NamedTuple):
    """Where a secret-like value sits and what recognised it; nothing of or from the value is kept."""

    line: int
    detector: str

    def describe(self) -> str:
        return f"line {self.line}: {self.detector}"


def _example_mark(value: str) -> str:
    """The key `KNOWN_EXAMPLES` is written in; compared here and never returned, stored or shown."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def scan_text(text: str) -> list[Finding]:
    """Every secret-like value in `text`, sorted, at most one finding per (line, detector).

    Never raises: a detector that fails on some input yields a `scan-error` finding on line 1, so the
    source is left out (fail closed) instead of being shown unscanned.
    """
    findings = _scan(text)
    shown = as_shown(text)
    if shown != text:
        seen = {(f.line, f.detector) for f in findings}
        findings = sorted(findings + [f for f in _scan(shown) if (f.line, f.detector) not in seen])
    rejoined, line_in_file = generic.rejoined(shown)
    if rejoined != shown:  # a value split over two lines (`"abc"` / `"def"`, a `\` continuation)
        seen = {(f.line, f.detector) for f in findings}
        moved = (f._replace(line=line_in_file(f.line)) for f in _scan(rejoined))
        findings = sorted(findings + [f for f in moved if (f.line, f.detector) not in seen])
    return findings


def scan_bytes(data: bytes) -> list[Finding] | None:
    """`scan_text` over every reading of `data` that looks like text; None when none does (binary).

    What leaves the computer is judged as bytes: a file that is not UTF-8 (one stray byte, Latin-1,
    UTF-16 from a Windows editor) still carries whatever was typed into it, so it is scanned as each
    reader could see it (`text_readings`), and a finding in any reading is a finding. Bytes that read
    as text in no encoding (an image, an archive) cannot be judged by the gate at all, which the
    caller must decide about (sync keeps them unless the person preserved them with approval).
    """
    texts = text_readings(data)
    if not texts:
        return None
    found: dict[tuple[int, str], Finding] = {}
    for text in texts:
        for finding in scan_text(text):
            found.setdefault((finding.line, finding.detector), finding)
    return sorted(found.values())


# A reading is text when at most TEXT_NOISE_ALLOWED_CHARS plus one in TEXT_NOISE_RATIO of its
# characters are replacement or control characters (a few stray bytes in a short note stay text).
TEXT_NOISE_RATIO = 100
TEXT_NOISE_ALLOWED_CHARS = 8
TEXT_SAMPLE_CHARS = 64 * 1024
# C0 and C1 controls but whitespace, and U+FFFD. Not NUL: wide text read byte by byte is ASCII and
# NULs (whatever the alignment, after an inserted byte too), which the gate drops (`as_shown`).
_NOISE = re.compile("[\x01-\x08\x0e-\x1f\x7f-\x9f\ufffd]")


def text_readings(data: bytes) -> list[str]:
    """The texts a reader could take from `data`, without guessing which one the writer meant.

    UTF-8 (strict when it is valid, else with each bad byte replaced and, separately, dropped, so a
    byte wedged into a token cannot split it), Latin-1 (every byte a character), and UTF-16 and UTF-32
    in both byte orders when a byte-order mark or NUL bytes say the text is wide; each kept only when
    it looks like text (`TEXT_NOISE_RATIO`), so binary noise is neither scanned slowly nor mistaken
    for an assignment.
    """
    try:
        strict = data.decode("utf-8")
    except UnicodeDecodeError:
        strict = None
    if strict is not None and "\0" not in strict:
        return [strict]
    texts: list[str] = []
    if strict is not None:
        texts.append(strict)  # valid UTF-8 with NULs: the gate drops them (`as_shown`); wide readings too
    else:
        replaced, latin = data.decode("utf-8", "replace"), data.decode("latin-1")
        latin_text = _looks_like_text(latin)
        # Text in either reading is text: then the bytes that are no UTF-8 are also dropped, since bytes
        # wedged into a token (read as Latin-1, one may be a no-break space that splits it) are the attack.
        if latin_text or _looks_like_text(replaced):
            texts += [replaced, data.decode("utf-8", "ignore")]
        if latin_text:
            texts.append(latin)
    if data.startswith((b"\xff\xfe", b"\xfe\xff", b"\0\0\xfe\xff")) or data.count(b"\0") * 8 >= len(data):
        for codec in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"):
            wide = data[: len(data) - len(data) % (4 if "32" in codec else 2)].decode(codec, "replace")
            if _looks_like_text(wide):
                texts.append(wide)
    return list(dict.fromkeys(texts))


def _looks_like_text(text: str) -> bool:
    # A noisy start settles it cheaply (and safely: what is not text is held unless the person kept it).
    head = text[:TEXT_SAMPLE_CHARS]
    if len(_NOISE.findall(head)) > TEXT_NOISE_ALLOWED_CHARS + len(head) // TEXT_NOISE_RATIO:
        return False
    return len(_NOISE.findall(text)) <= TEXT_NOISE_ALLOWED_CHARS + len(text) // TEXT_NOISE_RATIO


WITHHELD = "(withheld: secret-like content)"


def withheld_name(rel: str) -> tuple[str, Finding] | None:
    """(the path with its file name withheld, the finding) when a vault file's name looks like a secret.

    File names are shown where bodies are not (paths in the brief, listings, JSON), so a token pasted
    into a handoff's name must be kept out of them as well.
    """
    findings = scan_text(rel)
    if not findings:
        return None
    return f"{rel.rsplit('/', 1)[0]}/(file name withheld)", findings[0]


def shown_path(rel: str) -> str:
    """A vault-relative path as it may be printed, journaled or returned: its file name withheld when
    that name looks like a secret (the one rule every output and every journal line goes through)."""
    found = withheld_name(rel)
    if found is None:
        return rel
    return found[0] if not scan_text(found[0]) else WITHHELD


def redact(message: str) -> str:
    """A one-line message that names files, with every secret-like word withheld.

    For the tool's own messages (doctor's checks, warnings), which quote file names and never note
    bodies: a name a person pasted a token into must not carry it to the terminal or a JSON report.
    """
    if not scan_text(message):
        return message
    words = [WITHHELD if scan_text(word.strip(",;:()[]'\"")) else word for word in message.split(" ")]
    shown = " ".join(words)
    return shown if not scan_text(shown) else "(details withheld: they would show secret-like text)"


def shown_value(value: str) -> str:
    """A short metadata value (a title, a session id) as it may be shown: withheld when secret-like."""
    return WITHHELD if scan_text(value) else value


def as_shown(text: str) -> str:
    """The text as the gate judges it (`characters.judged`): hidden characters and combining marks
    removed, NFKC applied. A token written in fullwidth or mathematical letters (`𝐬𝐤_𝐥𝐢𝐯𝐞_…`), or split
    by a zero-width space, a variation selector or a combining grapheme joiner, reads as the ASCII it
    was. Newlines are kept, so line numbers stay those of the file.
    """
    return characters.judged(text)


def _scan(text: str) -> list[Finding]:
    doc = Doc(text)
    found: list[Candidate] = []
    for finder in _FINDERS:
        try:
            found.extend(finder(doc))
        except Exception:
            found.append((0, SCAN_ERROR, f"{SCAN_ERROR}:{finder.__name__}"))
    return _findings(doc, generic.unnamed_only(doc, found))


def _findings(doc: Doc, found: list[Candidate]) -> list[Finding]:
    if not found:
        return []
    allowed = _allowlisted_lines(doc)
    seen: dict[tuple[int, str], Finding] = {}
    for offset, detector, value in sorted(found):
        line = doc.line_of(offset)
        # A pragma allowlists its own line: a value spanning lines (a key block) needs it on each of them.
        spanned = range(line, line + value.count("\n") + 1)
        if detector != SCAN_ERROR and all(number in allowed for number in spanned):
            continue
        key = (line, detector)
        if key not in seen and _example_mark(value) not in KNOWN_EXAMPLES:
            seen[key] = Finding(line, detector)
    return sorted(seen.values())


def _allowlisted_lines(doc: Doc) -> frozenset[int]:
    if "allowlist" not in doc.lowered:
        return frozenset()
    return frozenset(number for number, line in enumerate(doc.lines, start=1) if ALLOWLIST_PRAGMA in line.lower())


# --- the detectors, in the order they run --------------------------------------------------------------


def _tokens(doc: Doc) -> list[Candidate]:
    return rules.token_candidates(doc.text, doc.runs)


_FINDERS = (
    _tokens,
    *secret_structures.FINDERS,
    *secret_assignments.FINDERS,
    *secret_context.FINDERS,
    *secret_labels.FINDERS,
    *secret_values.FINDERS,
    *secret_services.FINDERS,
    *secret_encoded.FINDERS,
    *generic.FINDERS,
    detectsecrets.candidates,
)
