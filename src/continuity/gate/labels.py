"""Secret detectors for values that a label names without an assignment operator.

`api secret 3f7a…` (a label, a space, a long random value), a label alone on its line with the
value alone on the next (`Password` / `Hx7p…`), a table whose header names a password, token, key
or PIN column (Markdown, CSV, tab- or space-aligned), and recovery codes or a seed phrase listed
under a label that says so (no word list: the label, the count and the shape of the words suffice).
A label is classified by `secret_assignments.secret_name`, the test that reads `DB_PASSWORD=`'s
name, and a value by the same checks as an assigned one; only where the value sits is new. The
label searches start from the keyword spans that `Doc.hits` found once for all detectors, so a note
without a secret word costs nothing there, and a line is looked at once however many keywords it
holds; codes and phrases wait for their label's literal words.
"""

from __future__ import annotations

from continuity.gate import shapes
from continuity.gate.assignments import assigned_value_ok, passphrase_like, secret_name, with_word_before
from continuity.gate.doc import Candidate, Doc, rx
from continuity.gate.shapes import words

_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
# Where a value names the place a secret is kept instead of holding it.
_REFERENCE_STARTS = (
    "vault:", "op:", "ref+", "secret:", "secrets.", "secretref", "env:", "keychain:", "keyring:", "file:", "arn:",
    "awssm:", "gcpsm:", "azurekv:", "bws:", "pass:", "see ", "ask ", "in ", "stored ", "from ",
)  # fmt: skip
_REFERENCE_WORDS = ("1password", "bitwarden", "lastpass", "keepass", "keychain", "vault")


def reference_like(value: str) -> bool:
    """A pointer to where the secret lives (`vault:kv/db#password`, `see 1Password`, `$DB_PASS`)."""
    lowered = value.lower()
    if lowered.startswith(_REFERENCE_STARTS) or value[:1] in "$%<{":
        return True
    return " " in value and any(word in lowered for word in _REFERENCE_WORDS)


# --- a label, a space, the value -------------------------------------------------------------------

_AFTER_LABEL = r"[ \t]{1,4}([\"'`]?)([A-Za-z0-9+/][A-Za-z0-9+/_\-.~]{23,511}={0,2})\1(?![A-Za-z0-9+/_\-~=])"


def _label_then_value(doc: Doc) -> list[Candidate]:
    """`api secret 3f7a…`, `webhook signing key `…``: a secret-named label, then a long random value."""
    text = doc.text
    out: list[Candidate] = []
    size = len(text)
    after = rx(_AFTER_LABEL)
    for hit_start, hit_end in doc.hits:
        end = hit_end
        while end < size and end - hit_end < 32 and text[end] in _WORD_CHARS:
            end += 1
        if text[end : end + 1] not in (" ", "\t"):
            continue  # cheap test first: a value follows a blank
        match = after.match(text, end)
        if match is None:
            continue
        begin = hit_start
        while begin > 0 and hit_start - begin < 32 and text[begin - 1] in _WORD_CHARS:
            begin -= 1
        begin, name = with_word_before(text, begin, text[begin:end])
        value = match.group(2).rstrip(".")
        if secret_name(name) and not _bare_verb(name) and labelled_token_ok(value):
            out.append((begin, "labelled-secret", value))
    return out


def _bare_verb(name: str) -> bool:
    """`pass` (`pass the token`, Python's `pass`), `pw`, `pwd`: a label only with an operator after it."""
    return rx(r"[A-Za-z0-9]+").findall(name)[-1].lower() in ("pass", "pw", "pwd")


def labelled_token_ok(value: str) -> bool:
    """A generated value after a label that names a secret: long, random, not a path or an example."""
    if len(value) < 24 or shapes.filler(value) or shapes.env_name(value) or value.startswith(shapes.PUBLIC_PREFIXES):
        return False
    if rx(r"[^.]{1,200}\.[a-z]{2,5}").fullmatch(value):
        return False  # a file or host name
    if "/" in value:
        parts = value.split("/")
        if value[0] in "/~." or sum(1 for p in parts if rx(r"[a-z]{2,12}|v[0-9]{1,2}").fullmatch(p)) >= 2:
            return False  # a path or an API route, not base64
    if all(c in "0123456789abcdefABCDEF" for c in value):
        return len(value) >= 32 and shapes.shannon_entropy(value) >= 3.0
    return shapes.token_like(value)


# --- a label alone on its line, the value alone on the next --------------------------------------------

_LONE_LABEL = (
    r"[ \t>]{0,8}(?:[-*+][ \t]{1,4}|#{1,6}[ \t]{1,4})?[*_`]{0,3}([A-Za-z][A-Za-z0-9 _.()/\-]{0,48}?)"
    r"[*_`]{0,3}[ \t]{0,4}[:：]?[ \t]{0,4}[*_`]{0,3}[ \t]{0,4}\r?"
)
_LONE_VALUE = r"[ \t>]{0,16}([\"'`]?)([^\s\"'`]{6,256}|[a-z]{3,12}(?: [a-z]{3,12}){3,11})\1[ \t]{0,4}\r?"


def _lone_labels(doc: Doc) -> list[Candidate]:
    """`Password` (or `**API key:**`, `- Token:`) alone on a line, the secret alone on the next."""
    out: list[Candidate] = []
    text = doc.text
    lone_label = rx(_LONE_LABEL)
    for index, start, end in doc.hit_lines:
        if end - start > 64:
            continue
        label = lone_label.fullmatch(text, start, end)
        kind = secret_name(label.group(1)) if label else ""
        if not kind or (label and _bare_verb(label.group(1)) and ":" not in text[start:end]):
            continue
        below = _value_below(doc.lines, index)
        if below is None:
            continue
        number, quoted, value = below
        if not reference_like(value) and (
            assigned_value_ok(value, quoted, kind) or (kind == "password" and passphrase_like(value, 4))
        ):
            out.append((doc.starts[number], "labelled-secret", value))
    return out


def _value_below(lines: list[str], index: int) -> tuple[int, bool, str] | None:
    """(line index, quoted, value) of a value alone on a line just below `index`: one blank line and
    one opening code fence may come between."""
    number, blank, fence = index + 1, False, False
    while number < len(lines):
        stripped = lines[number].strip()
        if not stripped and not blank:
            blank = True
        elif stripped.startswith(("```", "~~~")) and not fence:
            fence = True
        else:
            break
        number += 1
    else:
        return None
    match = rx(_LONE_VALUE).fullmatch(lines[number])
    if match is None or match.group(2).startswith(("-", "*", "+", "#", "|")) or match.group(2)[-1] in ":;,({[":
        return None  # another list item, heading, table row, label or line of code: not a value
    return number, bool(match.group(1)), match.group(2)


# --- tables whose header names a secret column ---------------------------------------------------------

_PIN_HEADERS = frozenset(("PIN", "PIN code", "PIN number", "pin code", "pincode", "Pincode", "Pin code"))
_PLAIN_NAME = r"[ \t]{0,8}[A-Za-z][A-Za-z0-9 _.\-]{0,40}\r?"
# A Markdown table's delimiter row (`|---|:--:|`), bounded so that a hostile line costs linear time.
_DELIMITER_ROW = (
    r"[ \t]{0,3}\|?[ \t]{0,8}:?-{2,64}:?[ \t]{0,8}(?:\|[ \t]{0,8}:?-{1,64}:?[ \t]{0,8}){0,64}"
    r"\|?[ \t]{0,8}\r?"
)
_EMPTY_CELLS = frozenset(("", "-", "--", "—", "–", "?", "…", "...", "•••", "✓", "✗", "✔", "✘"))


def _column_kind(cell: str) -> str:
    cell = cell.strip().strip("*_`").strip()
    if not cell or len(cell) > 40:
        return ""
    if cell in _PIN_HEADERS:
        return "pin"
    kind = secret_name(cell)
    if not kind and cell[-1:] in "sS":
        kind = secret_name(cell[:-1])  # Passwords, Tokens
    return kind


def _split(line: str, separator: str) -> list[str]:
    if separator == "|":
        line = line.strip().strip("\r")
        line = line[1:] if line.startswith("|") else line
        line = line[:-1] if line.endswith("|") and not line.endswith("\\|") else line
        return line.split("|")
    if separator == "  ":
        return rx(r"[ \t]{2,}|\t").split(line.strip())
    return line.rstrip("\r").split(separator)


def _separator(line: str) -> str:
    if "|" in line:
        return "|"
    if "\t" in line:
        return "\t"
    if "," in line and ", " not in line:
        return ","  # CSV: a header row of names, as password managers export them
    return "  " if "  " in line.strip() else ""


def _tables(doc: Doc) -> list[Candidate]:
    """Cells under a header that names a password, secret, token, API key or PIN column."""
    out: list[Candidate] = []
    text = doc.text
    read = -1  # the last row read as part of a table: its rows are not headers of another (linear time)
    for index, start, end in sorted(_header_candidates(doc)):
        separator = _separator(text[start:end]) if index > read and end - start <= 4096 else ""
        if not separator:
            continue
        lines = doc.lines
        header = _split(lines[index], separator)
        if separator != "|" and not all(rx(_PLAIN_NAME).fullmatch(cell) for cell in header):
            continue  # outside Markdown, a header row is plain names (no quotes, calls or punctuation)
        columns = {i: kind for i, cell in enumerate(header) if (kind := _column_kind(cell))}
        if len(header) < 2 or not columns:
            continue
        number = index + 1
        if separator == "|":
            if number >= len(lines) or not rx(_DELIMITER_ROW).fullmatch(lines[number]):
                continue  # a Markdown table has its delimiter row right below the header
            number += 1
        while number < len(lines):
            row = _split(lines[number], separator)
            if not lines[number].strip() or len(row) > len(header) or (separator != "|" and len(row) != len(header)):
                break
            for column, kind in columns.items():
                if column < len(row) and _cell_is_secret(row[column], kind):
                    out.append((doc.starts[number], "secret-table-cell", row[column].strip()))
            number += 1
        read = number - 1
    return out


def _header_candidates(doc: Doc) -> set[tuple[int, int, int]]:
    """Lines that could be a header, as `Doc.hit_lines` gives them: those with a secret keyword, and
    those naming a PIN (not a keyword)."""
    found = set(doc.hit_lines)
    if "pin" not in doc.lowered:
        return found
    lowered = doc.lowered if len(doc.lowered) == len(doc.text) else ""  # when lower-casing kept every offset
    for word, haystack in (("PIN", doc.text), ("pin code", lowered), ("pincode", lowered)):
        position = haystack.find(word) if word in haystack else -1
        while position >= 0:
            index = doc.line_of(position) - 1
            found.add((index, doc.starts[index], doc.starts[index] + len(doc.lines[index])))
            position = haystack.find(word, position + len(word))
    return found


def _cell_is_secret(cell: str, kind: str) -> bool:
    value = cell.strip()
    quoted = len(value) > 2 and value[0] == value[-1] and value[0] in "`\"'"
    value = value[1:-1] if quoted else value
    if value in _EMPTY_CELLS or value.lower() in shapes.PLACEHOLDER_VALUES or reference_like(value):
        return False
    if kind == "pin":
        return rx(r"[0-9]{4,12}").fullmatch(value) is not None and len(set(value)) > 1
    if " " in value:
        return kind == "password" and passphrase_like(value, 4)
    if kind != "password" and not quoted and _identifier_like(value):
        return False  # the name of a key (`ci_deploy_2024`, `staging-readonly-v2`), not the key
    return assigned_value_ok(value, quoted, kind)


def _identifier_like(value: str) -> bool:
    """Words and short numbers joined by `-`, `_` or `.`: what people name keys and secrets."""
    parts = rx(r"[-_.]").split(value)
    return len(parts) >= 2 and all(
        rx(r"[A-Za-z]{2,16}[0-9]{0,4}|[0-9]{1,4}|v[0-9]{1,3}").fullmatch(part)
        and (part.isdigit() or part[:1] == "v" or any(vowel in part.lower() for vowel in "aeiouy"))
        for part in parts
    )


# --- recovery codes and seed phrases, under a label that says so ---------------------------------------

_CODES_LABEL = r"(?:recovery|backup|2fa|mfa|one-time|emergency)[ \t_-]{0,2}codes?\b"
_CODE = (
    r"(?<![A-Za-z0-9-])(?:[a-z0-9]{4,6}-[a-z0-9]{4,6}|[A-Z0-9]{4,6}(?:-[A-Z0-9]{4,6}){1,7}|[0-9]{4} ?[0-9]{4}"
    r"|[a-z0-9]{8,16}|[A-Z0-9]{8,16})(?![A-Za-z0-9-])"
)
_PHRASE_LABEL = (
    r"(?:seed|recovery|mnemonic|backup|wallet|secret)[ \t_-]{0,2}(?:phrase|words)\b|\bmnemonic\b|\bbip-?39\b"
)
# Seed phrase lengths (BIP39), and short English words that no BIP39 list holds: a sentence has them.
_PHRASE_WORDS = frozenset((12, 15, 18, 21, 24))
_NOT_SEED_WORDS = words("the and for are was were you your our with not but has have had its")
_ITEM_MARK = r"[ \t>]{0,16}(?:[-*+•][ \t]{1,4}|[0-9]{1,2}[.):][ \t]{0,4})?"


def _listed_after(doc: Doc, end: int, item: str) -> tuple[int, list[str], int]:
    """(offset of the first item, the items, where the list ends) listed after a label ending at `end`:
    on the rest of its line and on the lines below (one blank line or fence first), each line nothing
    but items. A list is at most 40 lines of at most 1 KiB: codes and phrases are short."""
    lines, index = doc.lines, doc.line_of(end) - 1
    rest = doc.text[end : min(end + 256, doc.starts[index] + len(lines[index]))].lstrip(" \t:：-—*_`")
    marks, items = rx(_ITEM_MARK), rx(item)
    found: list[str] = []
    first = last = -1
    blank = fence = False
    number = index
    offset, line = end, rest
    while True:
        if line.strip():
            body = line[marks.match(line).end() :]  # type: ignore[union-attr]  # every part is optional
            listed = items.findall(body)
            if not listed or items.sub("", body).strip(" \t\r,;|`*.·•:0123456789()"):
                if number > index or found:
                    break  # a line with anything else ends the list (the label's own line may go on in words)
            else:
                first = offset if first < 0 else first
                last = offset + len(line)
                found.extend(listed)
        number += 1
        if number >= len(lines) or number > index + 40:
            break
        offset, line = doc.starts[number], lines[number]
        stripped = line.strip()
        if not found and not stripped and not blank:
            blank = True
        elif not found and stripped.startswith(("```", "~~~")) and not fence:
            fence = True
        elif not stripped or stripped.startswith(("```", "~~~")) or len(stripped) > 1024:
            break
        else:
            continue
        line = ""
    return first, found, last


def _recovery_codes(doc: Doc) -> list[Candidate]:
    """Two or more codes listed under `recovery codes`/`backup codes`; numbered seed phrases of 12-24
    lower-case words under `seed phrase`/`mnemonic`; BitLocker recovery keys wherever they are."""
    lowered = doc.lowered
    out: list[Candidate] = []
    if "code" in lowered and any(w in lowered for w in ("recovery", "backup", "2fa", "mfa", "one-time", "emergency")):
        labels, haystack = doc.caseless(_CODES_LABEL)
        read = -1  # labels inside a list already read are items, not labels (and linear time)
        for label in labels.finditer(haystack):
            if label.start() < read:
                continue
            first, codes, read = _listed_after(doc, label.end(), _CODE)
            real = [c for c in codes if any(ch.isdigit() for ch in c) and not shapes.is_placeholder(c)]
            if len(real) >= 2 and len(set(real)) == len(real):
                out.append((first, "recovery-codes", " ".join(real)))
    if "phrase" in lowered or "mnemonic" in lowered or "seed words" in lowered or "bip" in lowered:
        labels, haystack = doc.caseless(_PHRASE_LABEL)
        read = -1
        for label in labels.finditer(haystack):
            if label.start() < read:
                continue
            first, words, read = _listed_after(doc, label.end(), r"(?<![A-Za-z])[a-z]{3,8}(?![A-Za-z])")
            if len(words) in _PHRASE_WORDS and not _NOT_SEED_WORDS.intersection(words):
                out.append((first, "seed-phrase", " ".join(words)))
    if rx(r"[0-9]{6}-[0-9]{6}-[0-9]{6}").search(doc.runs):
        # A BitLocker recovery key: eight groups of six digits, each a multiple of 11 below 720896.
        text = doc.text
        for match in rx(r"[0-9]{6}(?:-[0-9]{6}){7}(?![0-9-])").finditer(text):
            groups = [int(group) for group in match.group(0).split("-")]
            if match.start() and text[match.start() - 1] in "0123456789-":
                continue
            if all(group % 11 == 0 and group < 720896 for group in groups) and len(set(groups)) > 2:
                out.append((match.start(), "bitlocker-recovery-key", match.group(0)))
    return out


FINDERS = (_label_then_value, _lone_labels, _tables, _recovery_codes)
