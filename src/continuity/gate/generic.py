"""The generic layer: credentials recognised by their structure, not by a format someone listed.

Three questions, asked of every note whatever service its credentials come from:

* **A generated value with nothing around it** (`_standalone`): every token-character run that
  `issued.generated` calls random and long enough, unless its context makes it public (a digest word,
  a data URI, an armoured public block, a label naming an id or a digest, a URL path). Encoded runs
  (base64, hex, percent) are decoded and the decoded text is asked again.
* **A URL that carries a capability** (`_urls`): a webhook's path (`/hooks/…`, `/webhooks/…`,
  `/services/…`) with a generated segment, or a query parameter named like a secret (`?token=…`).
* **Assignment shapes the other detectors do not read** (`_line_shapes`, on the lines that hold a
  secret word): a default after an environment lookup (`System.getenv("X") ?: "…"`,
  `process.env.X || "…"`, `os.environ.get("X") or "…"`), Dockerfile's `ENV NAME value`, PowerShell's
  `-Name "value"`, and a table row whose first cell names a secret. Each name is judged by
  `assignments.secret_name` (word parts, compounds, abbreviations) and each value by
  `assignments.assigned_value_ok`, the same judgement every other assignment gets.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable

from continuity.gate import issued, shapes
from continuity.gate.assignments import assigned_value_ok, passphrase_like, secret_name
from continuity.gate.doc import Candidate, Doc, rx

_LABEL_BEFORE = r"([A-Za-z_][A-Za-z0-9_.\-]{0,63})[\"'\]]?[ \t]{0,4}(?::=|=>|=|:)[ \t]{0,4}[\"'`]?$"
_CAPABILITY_HINT = r"hook|/services/|/triggers/|/workflows/"
_CAPABILITY_SEGMENTS = frozenset(("hooks", "webhooks", "webhook", "services", "triggers", "workflows", "webhookb2"))


def _label_of(text: str, start: int) -> str:
    """The name assigned to the value at `start`, on its line (`"key": "…`, `TOKEN=…`), or ""."""
    line_start = text.rfind("\n", 0, start) + 1
    match = rx(_LABEL_BEFORE).search(text[max(line_start, start - 96) : start])
    return match.group(1) if match else ""


def _pieces(offset: int, run: str) -> list[tuple[int, str]]:
    """The value of a run: the part after a `name=` or `name:` inside it (`api_key=…`, `user:…`), else
    the whole run."""
    for separator in ("=", ":"):
        at = run.find(separator)
        if 0 < at < len(run) - 16 and run[at + 1] != separator:
            return [(offset + at + 1, run[at + 1 :].rstrip(".,;:"))]
    return [(offset, run.rstrip(".,;:"))]


def _block_head(doc: Doc, start: int, value: str) -> str:
    """For a line of a wrapped base64 block (64 or 76 characters, the line to itself), the block's first
    lines, which say what the block is (a certificate, a public key); otherwise the value itself."""
    if len(value) not in (64, 76) or not rx(r"[A-Za-z0-9+/=]+").fullmatch(value):
        return value
    lines, index = doc.lines, doc.line_of(start) - 1
    if lines[index].strip() != value:
        return value
    while (
        index > 0
        and len(lines[index - 1].strip()) == len(value)
        and rx(r"[A-Za-z0-9+/]+").fullmatch(lines[index - 1].strip())
    ):
        index -= 1
    head = [lines[i].strip() for i in range(index, min(index + 4, len(lines)))]
    return "".join(line for line in head if len(line) == len(value) and rx(r"[A-Za-z0-9+/=]+").fullmatch(line))


def _standalone(doc: Doc) -> list[Candidate]:
    """Generated values anywhere, encoded runs whose decoded text is one, and URLs with a capability."""
    text = doc.text
    out: list[Candidate] = []
    sealed = "SealedSecret" in text
    for offset, run in doc.long_runs:
        if "://" in run:
            out.extend(_url(offset, run))
            continue
        if rx(issued.DIGEST_PREFIX).match(run.lower()):
            continue  # a digest (`sha512-…`, `h1:…`)
        for start, value in _pieces(offset, run):
            value = value.strip("'\"`")
            if len(value) < 24 or value.startswith(shapes.PUBLIC_PREFIXES):
                continue  # short, or a publishable key
            plain = issued.generated(value)
            hexed = not plain and len(value) >= 32 and all(c in "0123456789abcdefABCDEF" for c in value)
            short_b64 = not (plain or hexed) and len(value) < issued.STANDALONE_MIN_CHARS and issued.classes(value) == 3
            if not (plain or hexed or short_b64) or (sealed and value.startswith("Ag") and len(value) > 100):
                continue  # nothing generated; a SealedSecret's ciphertext, which is meant to be committed
            decoded = issued.decode(value)
            encoded = decoded is not None and issued.decoded_secret(decoded)
            if decoded is not None and not encoded:
                continue  # the encoding of ordinary text: its randomness is the encoding's, not a secret's
            if not encoded and (hexed or short_b64 or issued.public_blob(_block_head(doc, start, value))):
                continue
            label = _label_of(text, start) if start == offset else run[: start - offset - 1]
            if label and not secret_name(label) and issued.label_words(label) & issued.PUBLIC_LABEL_WORDS:
                continue
            if not (label and secret_name(label)) and issued.public_context(text, start):
                continue
            out.append((start, "encoded-secret" if encoded else "generated-token", value))
    return out


def _url(offset: int, run: str) -> list[Candidate]:
    """A webhook URL with a generated path segment, or a secret-named query parameter."""
    at = run.find("://")
    if not ("?" in run or rx(_CAPABILITY_HINT).search(run.lower())):
        return []
    try:
        parts = urllib.parse.urlsplit(run[at - min(at, 12) :].rstrip(".,;:)"))
    except ValueError:
        return []
    segments = [s for s in parts.path.split("/") if s]
    if any(s.lower() in _CAPABILITY_SEGMENTS for s in segments) or "hook" in parts.netloc.lower():
        secret = max(segments, key=len, default="")
        if len(secret) >= 20 and shapes.looks_random(secret, 20) and not shapes.digest_like(secret):
            return [(offset, "webhook-url", secret)]
    for name, value in urllib.parse.parse_qsl(parts.query):
        if secret_name(name) and (issued.generated(value, 16) or (len(value) >= 16 and shapes.token_like(value))):
            return [(offset, "secret-in-url", value)]
    return []


# `System.getenv("NAME") ?: "…"`, `process.env.NAME || "…"`, `ENV["NAME"] || "…"`, `os.environ.get("NAME") or "…"`.
_FALLBACK = (
    r"(?:env|environ|getenv|getenv\(|get\()?(?:\(\s{0,4}[\"'`]|\.|\[\s{0,4}[\"'`])([A-Za-z_][A-Za-z0-9_.\-]{0,64})"
    r"[\"'`]?\s{0,4}[)\]]{0,2}\s{0,4}(?:\?:|\|\||\?\?|\bor\b)\s{0,4}([\"'`])([^\"'`\r\n]{1,512})\2"
)


def _line_shapes(doc: Doc) -> list[Candidate]:
    """The assignment shapes read line by line, on the lines that hold a secret word: a default after an
    environment lookup, Dockerfile's `ENV NAME value`, single-dash parameters, and label rows."""
    out: list[Candidate] = []
    text = doc.text
    for index, start, end in doc.hit_lines:
        line = text[start:end]
        stripped = line.strip()
        if stripped.startswith("|"):
            out.extend(_label_row(doc.starts[index], stripped))
            continue
        if stripped.startswith("ENV "):
            out.extend(_dockerfile_env(start, line))
        if " -" in line or "\t-" in line or "(-" in line:
            out.extend(_dash_flags(text, start, end))
        if "env" in line.lower():
            out.extend(_fallbacks(text, start, end))
    return out


def _fallbacks(text: str, start: int, end: int) -> list[Candidate]:
    out: list[Candidate] = []
    for match in rx(_FALLBACK).finditer(text, start, end):
        name, value = match.group(1), match.group(3)
        kind = secret_name(name)
        if kind and assigned_value_ok(value, True, kind):
            out.append((match.start(), "secret-assignment", value))
    return out


_DOCKERFILE_ENV = (
    r"[ \t]{0,8}ENV[ \t]{1,8}([A-Za-z_][A-Za-z0-9_]{0,64})[ \t]{1,8}([\"']?)([^\s\"'=][^\s\"']{0,511})\2[ \t]*\r?"
)


def _dockerfile_env(start: int, line: str) -> list[Candidate]:
    """Dockerfile's `ENV NAME value` (the older form, without `=`)."""
    match = rx(_DOCKERFILE_ENV).fullmatch(line)
    if match is None:
        return []
    kind = secret_name(match.group(1))
    if kind and assigned_value_ok(match.group(3), bool(match.group(2)), kind):
        return [(start, "secret-assignment", match.group(3))]
    return []


_DASH_FLAG = r"-([A-Za-z][A-Za-z0-9]{1,48})[ \t:]{1,4}(?:([\"'])([^\"'\r\n]{1,512})\2|([^\s\"'`;|&]{1,512}))"


def _dash_flags(text: str, start: int, end: int) -> list[Candidate]:
    """`-Password "…"`, `-ApiKey …`: PowerShell's and other single-dash named parameters."""
    out: list[Candidate] = []
    for match in rx(_DASH_FLAG).finditer(text, start, end):
        if match.start() > 0 and (text[match.start() - 1].isalnum() or text[match.start() - 1] in "_-"):
            continue  # inside a word (`x-api-key`) or a long flag: not a single-dash parameter
        name = match.group(1)
        kind = secret_name(name) if len(name) > 2 else ""
        quoted = bool(match.group(2))
        value = match.group(3) if quoted else match.group(4)
        if kind and not value.startswith("-") and assigned_value_ok(value, quoted, kind):
            out.append((match.start(), "secret-flag", value))
    return out


def _label_row(offset: int, line: str) -> list[Candidate]:
    """A table row whose first cell names a secret and whose next cell holds its value."""
    if line.count("|") < 3:
        return []
    cells = [cell.strip().strip("`*_") for cell in line.strip("|").split("|")]
    if len(cells) < 2 or not cells[0] or len(cells[0]) > 64:
        return []
    kind = secret_name(cells[0].replace(" ", "_"))
    value = cells[1]
    if " " in value:  # words in a cell are a passphrase only under a password label
        ok = kind == "password" and passphrase_like(value, 3)
    else:
        ok = bool(kind and value) and assigned_value_ok(value, False, kind)
    if ok:
        return [(offset, "secret-table-cell", value)]
    return []


# A value split over lines: a `\` line continuation, adjacent string literals (optionally joined by `+`),
# and the opening parenthesis of a literal that continues on the next line.
_SPLIT = (
    r"\\\r?\n[ \t]{0,64}"
    r"|([\"'])[ \t]{0,8}\+?[ \t]{0,8}\r?\n[ \t]{0,64}\+?[ \t]{0,8}\1"
    r"|=[ \t]{0,8}\([ \t]{0,8}\r?\n[ \t]{0,64}"
)


def rejoined(text: str) -> tuple[str, Callable[[int], int]]:
    """The text with values split over lines joined again, and a map from a line of the joined text to
    the file's line where it starts. The text itself, and the identity, when nothing was split."""
    # Every split form leaves a quote or a backslash at the end of a line (`= (` is followed by one).
    crlf = "\r" in text
    if not crlf and "\\\n" not in text and '"\n' not in text and "'\n" not in text:
        return text, _same_line
    starts: list[int] = []
    for mark in ("\\", '"', "'", "("):
        for end in ("\n", "\r\n") if crlf else ("\n",):
            at = text.find(mark + end)
            while at >= 0:
                starts.append(text.rfind("=", max(0, at - 9), at) if mark == "(" else at)
                at = text.find(mark + end, at + 1)
    cuts: list[tuple[int, int]] = []  # (offset in the joined text, line feeds removed there)
    pieces: list[str] = []
    kept = size = 0
    for start in sorted(starts):
        match = rx(_SPLIT).match(text, start) if start >= kept else None
        if match is None:
            continue
        pieces.append(text[kept : match.start()])
        size += match.start() - kept
        cuts.append((size, match.group(0).count("\n")))
        replacement = "= " if match.group(0).startswith("=") else ""
        pieces.append(replacement)
        size += len(replacement)
        kept = match.end()
    if not cuts:
        return text, _same_line
    joined = "".join(pieces) + text[kept:]
    line_starts = [0] + [i + 1 for i, ch in enumerate(joined) if ch == "\n"]

    def line_in_file(line: int) -> int:
        start = line_starts[min(line, len(line_starts)) - 1]
        return line + sum(count for at, count in cuts if at <= start)

    return joined, line_in_file


def _same_line(line: int) -> int:
    return line


# What only this layer reports; the format table names what it knows (`github-token`, not a generated one).
DETECTORS = frozenset(("generated-token", "webhook-url", "secret-in-url"))


def unnamed_only(doc: Doc, found: list[Candidate]) -> list[Candidate]:
    """The candidates, without this layer's own on a line that another detector names already: a
    finding says what was found as precisely as the gate knows it."""
    if not any(detector in DETECTORS for _, detector, _ in found):
        return found
    named = {doc.line_of(offset) for offset, detector, _ in found if detector not in DETECTORS}
    return [c for c in found if c[1] not in DETECTORS or doc.line_of(c[0]) not in named]


FINDERS = (_standalone, _line_shapes)
