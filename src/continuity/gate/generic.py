"""The generic layer: credentials recognised by their structure, not by a format someone listed.

Three questions, asked of every note whatever service its credentials come from:

* **A generated value with nothing around it** (`_standalone`): every token-character run that
  `issued.generated` calls random and long enough, unless its context makes it public (a digest word,
  a data URI, an armoured public block, a label naming an id or a digest, a URL path). Encoded runs
  (base64, hex, percent) are decoded and the decoded text is asked again.
* **A URL that carries a capability** (`_urls`): a webhook's path (`/hooks/…`, `/webhooks/…`,
  `/services/…`) with a generated segment, or a query parameter named like a secret (`?token=…`).
* **Assignment shapes the other detectors do not read** (`_fallbacks`, `_dockerfile_env`,
  `_dash_flags`, `_label_rows`): a default after an environment lookup (`System.getenv("X") ?: "…"`,
  `process.env.X || "…"`, `os.environ.get("X") or "…"`), Dockerfile's `ENV NAME value`, PowerShell's
  `-Name "value"`, and a table row whose first cell names a secret. Each name is judged by
  `assignments.secret_name` (word parts, compounds, abbreviations) and each value by
  `assignments.assigned_value_ok`, the same judgement every other assignment gets.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable

from continuity.gate import issued, shapes
from continuity.gate.assignments import assigned_value_ok, secret_name
from continuity.gate.doc import Candidate, Doc, rx

_LABEL_BEFORE = r"([A-Za-z_][A-Za-z0-9_.\-]{0,63})[\"'\]]?[ \t]{0,4}(?::=|=>|=|:)[ \t]{0,4}[\"'`]?$"
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
    """Generated values anywhere, and encoded runs whose decoded text is one."""
    text = doc.text
    out: list[Candidate] = []
    sealed = "SealedSecret" in text
    for offset, run in doc.run_spans:
        if len(run) < 24 or "://" in run or rx(issued.DIGEST_PREFIX).match(run.lower()):
            continue  # a URL (`_urls` reads those) or a digest (`sha512-…`, `h1:…`)
        for start, value in _pieces(offset, run):
            value = value.strip("'\"`")
            if len(value) < 24:
                continue
            if value.startswith(shapes.PUBLIC_PREFIXES) or (sealed and value.startswith("Ag") and len(value) > 100):
                continue  # a publishable key; a SealedSecret's ciphertext, which is meant to be committed
            decoded = issued.decode(value)
            if decoded is not None:  # judge what the encoding holds, not how random the encoding looks
                plain, encoded = False, issued.decoded_secret(decoded)
            else:
                plain, encoded = issued.generated(value), False
            if not (plain or encoded) or issued.public_blob(_block_head(doc, start, value)):
                continue
            label = _label_of(text, start) if start == offset else run[: start - offset - 1]
            if label and not secret_name(label) and issued.label_words(label) & issued.PUBLIC_LABEL_WORDS:
                continue
            if not (label and secret_name(label)) and issued.public_context(text, start):
                continue
            out.append((start, "encoded-secret" if encoded else "generated-token", value))
            break
    return out


def _urls(doc: Doc) -> list[Candidate]:
    """Webhook URLs with a generated path segment, and secret-named query parameters."""
    text = doc.text
    if "://" not in text:
        return []
    out: list[Candidate] = []
    for offset, run in doc.run_spans:
        at = run.find("://")
        if at < 0:
            continue
        try:
            parts = urllib.parse.urlsplit(run[at - min(at, 12) :].rstrip(".,;:)"))
        except ValueError:
            continue
        segments = [s for s in parts.path.split("/") if s]
        if any(s.lower() in _CAPABILITY_SEGMENTS for s in segments) or "hook" in parts.netloc.lower():
            secret = max(segments, key=len, default="")
            if len(secret) >= 20 and shapes.looks_random(secret, 20) and not shapes.digest_like(secret):
                out.append((offset, "webhook-url", secret))
                continue
        for name, value in urllib.parse.parse_qsl(parts.query):
            kind = secret_name(name)
            if kind and (issued.generated(value, 16) or (len(value) >= 16 and shapes.token_like(value))):
                out.append((offset, "secret-in-url", value))
                break
    return out


# `System.getenv("NAME") ?: "…"`, `process.env.NAME || "…"`, `ENV["NAME"] || "…"`, `os.environ.get("NAME") or "…"`.
_FALLBACK = (
    r"(?:env|environ|getenv|getenv\(|get\()?(?:\(\s{0,4}[\"'`]|\.|\[\s{0,4}[\"'`])([A-Za-z_][A-Za-z0-9_.\-]{0,64})"
    r"[\"'`]?\s{0,4}[)\]]{0,2}\s{0,4}(?:\?:|\|\||\?\?|\bor\b)\s{0,4}([\"'`])([^\"'`\r\n]{1,512})\2"
)


def _fallbacks(doc: Doc) -> list[Candidate]:
    text = doc.text
    if not any(op in text for op in ("?:", "||", "??", " or ")):
        return []
    out: list[Candidate] = []
    for _, start, end in doc.hit_lines:
        for match in rx(_FALLBACK).finditer(text, max(start, 0), end):
            name, value = match.group(1), match.group(3)
            kind = secret_name(name)
            if kind and assigned_value_ok(value, True, kind):
                out.append((match.start(), "secret-assignment", value))
    return out


def _dockerfile_env(doc: Doc) -> list[Candidate]:
    """Dockerfile's `ENV NAME value` (the older form, without `=`)."""
    if "ENV " not in doc.text:
        return []
    out: list[Candidate] = []
    pattern = rx(
        r"^[ \t]{0,8}ENV[ \t]{1,8}([A-Za-z_][A-Za-z0-9_]{0,64})[ \t]{1,8}([\"']?)([^\s\"'=][^\s\"']{0,511})\2[ \t]*\r?$"
    )
    for match in pattern.finditer(doc.text):
        kind = secret_name(match.group(1))
        if kind and assigned_value_ok(match.group(3), bool(match.group(2)), kind):
            out.append((match.start(), "secret-assignment", match.group(3)))
    return out


_DASH_FLAG = r"(?<![\w-])-([A-Za-z][A-Za-z0-9]{1,48})[ \t:]{1,4}(?:([\"'])([^\"'\r\n]{1,512})\2|([^\s\"'`;|&]{1,512}))"


def _dash_flags(doc: Doc) -> list[Candidate]:
    """`-Password "…"`, `-ApiKey …`: PowerShell's and other single-dash named parameters."""
    out: list[Candidate] = []
    text = doc.text
    for _, start, end in doc.hit_lines:
        if "-" not in text[start:end]:
            continue
        for match in rx(_DASH_FLAG).finditer(text, start, end):
            name = match.group(1)
            kind = secret_name(name) if len(name) > 2 else ""
            quoted = bool(match.group(2))
            value = match.group(3) if quoted else match.group(4)
            if kind and not value.startswith("-") and assigned_value_ok(value, quoted, kind):
                out.append((match.start(), "secret-flag", value))
    return out


def _label_rows(doc: Doc) -> list[Candidate]:
    """A table row whose first cell names a secret and whose next cell holds its value."""
    out: list[Candidate] = []
    text = doc.text
    for index, start, end in doc.hit_lines:
        line = text[start:end].strip()
        if not line.startswith("|") or line.count("|") < 3:
            continue
        cells = [cell.strip().strip("`*_") for cell in line.strip("|").split("|")]
        if len(cells) < 2 or not cells[0] or len(cells[0]) > 64:
            continue
        kind = secret_name(cells[0].replace(" ", "_"))
        value = cells[1]
        if kind and value and " " not in value and assigned_value_ok(value, False, kind):
            out.append((doc.starts[index], "secret-table-cell", value))
    return out


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
    if "\\\n" not in text and '"\n' not in text and "'\n" not in text and "(\n" not in text:
        return text, _same_line
    cuts: list[tuple[int, int]] = []  # (offset in the joined text, line feeds removed there)
    pieces: list[str] = []
    kept = size = 0
    for match in rx(_SPLIT).finditer(text):
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
    starts = [0] + [i + 1 for i, ch in enumerate(joined) if ch == "\n"]

    def line_in_file(line: int) -> int:
        start = starts[min(line, len(starts)) - 1]
        return line + sum(count for at, count in cuts if at <= start)

    return joined, line_in_file


def _same_line(line: int) -> int:
    return line


FINDERS = (_standalone, _urls, _fallbacks, _dockerfile_env, _dash_flags, _label_rows)
