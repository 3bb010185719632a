"""Make vault text safe to place inside the brief's wrapper.

The brief is one `<private-memory …>` wrapper holding `<source …>` sections. Vault text is data, so
nothing in it may open or close either tag, whatever it tries: other cases or spacing, fullwidth and
small-form brackets (folded by NFKC first), lookalike brackets, HTML entities, URL, JSON and JS
escapes, comments and CDATA, chat-template tokens. The rule is deliberately broad and simple: any
opener (`<` or one of its encodings or lookalikes) that starts something tag-shaped (a letter, after
optional `/ ! ? |` and, for closing shapes, spaces) becomes `‹` (U+2039, stable under NFKC). Ordinary
comparisons such as `a < b` and `x <= 3` are left alone; `Vec<String>` reads `Vec‹String>`, which a
model still understands and which can never be mistaken for markup.

Invisible characters, as `continuity.characters.hidden` classifies them for the secret gate too
(default-ignorable code points such as variation selectors, the combining grapheme joiner and the
Hangul fillers, unassigned ones included; controls, format, private-use and unassigned characters;
never newline or tab), and combining marks with no letter or digit to sit on, are replaced by a
visible `[U+XXXX]` marker, so nothing invisible reaches the model, a person can see that something was
there, and `<` + an invisible character + `/source>` still reads as a tag and is neutralised. The
look-alikes of `<` and `/` that `characters` lists count as those characters. Line endings become `\\n`
and a leading BOM is dropped. Fences that a note leaves open are closed at the end of its section, so
an unbalanced ``` cannot swallow the closing tag, and role-labelled fences (```system) lose the label.
"""

from __future__ import annotations

import re
import unicodedata

from continuity.characters import LESS_THAN_LOOKALIKES, SLASH_LOOKALIKES, hidden, loose_mark, plain
from continuity.vault.notes import normalize_newlines

SAFE_OPENER = "\u2039"  # ‹
_OPENER = (
    r"(?:<|&(?:amp;)*(?:lt|#0*60|#x0*3c);?|%(?:25)*3c|\\u0*3c|\\u\{0*3c\}|\\x3c|\\074"
    + "|["
    + LESS_THAN_LOOKALIKES
    + "])"
)
# A slash, also URL-, entity- and JS-encoded (`%3C%2Fsource`, `&lt;&#47;source`, `\u003c\u002fsource`).
_SLASH = r"(?:[/" + SLASH_LOOKALIKES + r"]|%(?:25)*2f|&(?:amp;)*(?:#0*47|#x0*2f|sol);?|\\u0*2f|\\x2f|\\057)"
_MARKER = r"\[U\+"
_NAME_START_RE = re.compile(rf"[^\W\d_]|{_MARKER}")
# Opening shape: a run of openers and / ! ? | \ , then a letter or a hidden-character marker. The run
# is matched greedily in one pass and the name is checked after it, never by backtracking, so a long
# run of `<` or `\` costs linear time (a lookahead after a repeated group made it quadratic: seconds
# for a few KiB, enough to time the hook out).
_RUN_RE = re.compile(rf"(?:{_OPENER}|{_SLASH}|[!?|\\])+", re.IGNORECASE)
# A closing shape with spaces; and the comment and CDATA openers `<!--`, `<![`.
_TAG_RE = re.compile(
    rf"{_OPENER}(?=\s*{_SLASH}\s*(?:[^\W\d_]|{_MARKER}))|{_OPENER}(?=!\s*(?:-|\[))",
    re.IGNORECASE,
)
# Spaced opening shape that names one of our own tags (or a chat role), letters folded.
_SPACED_RE = re.compile(rf"{_OPENER}(?=\s+(\S{{1,20}}))", re.IGNORECASE)
_RESERVED = ("source", "private", "memory", "system", "assistant", "developer", "user", "im_", "s>")
_INST_RE = re.compile(r"\[\s*(/?)\s*INST\s*\]", re.IGNORECASE)
_FENCE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_ROLE_WORDS = frozenset(
    {"system", "developer", "assistant", "user", "tool", "function", "instruction", "instructions", "prompt"}
)
# Cyrillic and Greek letters that look like the Latin letters of our tag names.
_CONFUSABLES = str.maketrans(
    "аеорсуѕіјхмтвнкАЕОРСУЅІЈХМТВНКοραιτυνεμΟΡΑΙΤΥΝΕΜ",
    "aeopcysijxmtbhkaeopcysijxmtbhkopaituvemopaituvem",
)


def _hidden_marker(match: str) -> str:
    codes = [f"U+{ord(ch):04X}" for ch in match[:3]]
    extra = f" +{len(match) - 3}" if len(match) > 3 else ""
    return "[" + " ".join(codes) + extra + "]"


def show_hidden(text: str) -> str:
    """Replace runs of invisible characters and loose combining marks with visible `[U+XXXX]` markers."""
    out: list[str] = []
    for line in text.split("\n"):
        if plain(line):
            out.append(line)
            continue
        pieces: list[str] = []
        run: list[str] = []
        before = ""
        for ch in line:
            if hidden(ch) or loose_mark(ch, before):
                run.append(ch)
                continue
            if run:
                pieces.append(_hidden_marker("".join(run)))
                run = []
            pieces.append(ch)
            before = ch
        if run:
            pieces.append(_hidden_marker("".join(run)))
        out.append("".join(pieces))
    return "\n".join(out)


def _neutralize_tags(text: str) -> str:
    def plain(match: re.Match[str]) -> str:
        return re.sub(_OPENER, SAFE_OPENER, match.group(0), flags=re.IGNORECASE)

    def run(match: re.Match[str]) -> str:
        return plain(match) if _NAME_START_RE.match(match.string, match.end()) else match.group(0)

    text = _RUN_RE.sub(run, text)
    text = _TAG_RE.sub(plain, text)

    def spaced(match: re.Match[str]) -> str:
        word = match.group(1).translate(_CONFUSABLES).casefold().lstrip("/|!?")
        if word.startswith(_RESERVED):
            return SAFE_OPENER
        return match.group(0)

    text = _SPACED_RE.sub(spaced, text)
    return _INST_RE.sub(lambda m: f"({m.group(1)}INST)", text)


def _balance_fences(text: str) -> str:
    """Drop role labels from fences and close a fence the text leaves open."""
    lines = text.split("\n")
    open_fence: str | None = None
    for index, line in enumerate(lines):
        match = _FENCE_RE.match(line)
        if not match:
            continue
        indent, fence, info = match.groups()
        if fence[0] == "`" and "`" in info:
            continue  # CommonMark: not a fence but inline code, so it opens nothing to close
        if open_fence is None:
            label = info.split()[0].strip("{}.").casefold() if info.strip() else ""
            if label in _ROLE_WORDS:
                lines[index] = f"{indent}{fence}text (a note's fence labelled {label})"
            open_fence = fence
        elif fence[0] == open_fence[0] and len(fence) >= len(open_fence) and not info.strip():
            open_fence = None
    if open_fence is not None:
        lines.append(open_fence)
    return "\n".join(lines)


def escape_text(text: str) -> str:
    text = normalize_newlines(text.removeprefix("\ufeff"))
    text = unicodedata.normalize("NFKC", text)
    text = show_hidden(text)
    text = _neutralize_tags(text)
    return _balance_fences(text)


def escape_attr(value: str) -> str:
    """An attribute value: escaped like text, on one line, with XML's attribute escapes."""
    text = escape_text(value).replace("\n", " ")
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
