"""What a word is for warm recall: one normalization for notes and for search terms.

Text is normalized here, in Python, and handed to SQLite FTS5 as space-separated tokens, so matching
is defined by this module and not by whichever SQLite the machine has:

- NFKC, then case folding, then NFKC again (Unicode's caseless matching); no prefixes (the index
  reduces each token to its Porter stem, so inflections match: `recall.rank`);
- a token is a run of letters and digits, so `_`, `-`, `.`, `/` and every other mark separate words:
  `cache_dir`, `cache-dir` and `cache.dir` all hold the words `cache` and `dir`, and `cache` never
  matches `cacheable` (whole words and identifier boundaries only);
- a mixed-case identifier (`RecallIndex`, `getHTTPResponse`, `base64Encode`) is indexed as written
  (`recallindex`) and, in a separate `parts` field, by its parts (`recall index`), so `index` finds
  `RecallIndex`; ASCII case steps are what mark the parts, and `APIs` stays one word;
- Chinese and Japanese characters are one token each, so a run of them matches as a substring.

Search terms. The arguments are read like a search box: words separated by white space, and text in
double quotes (`'"write path"'` from a shell; curly and fullwidth quotes too) as one phrase; an
English possessive (`laptop's`) is the word itself. Each term
is normalized and de-duplicated in order (`Cache`, `cache` and `CACHE` are one term, as are
`cache-dir` and `cache_dir`); a term with no letter or digit is dropped. A word of several parts
(`cache_dir`) matches its parts as a phrase; a mixed-case word (`cacheDir`) matches either itself
(`cachedir`, any case) or its parts (`cache dir`, `cache_dir`, `cacheDir`). A note matches when any
term does. Every term reaches FTS5 as a double-quoted phrase of tokens made of letters and digits
only, so no input (`AND`, `NEAR(`, `*`, `"`, `:`) can act as query syntax.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from continuity import tunables
from continuity.errors import UsageError

_WORD_RE = re.compile(r"[^\W_]+")
# Words with a lower-to-upper step, an upper run before a capitalized word, or a digit before one. The
# lookbehind lets a match start only where a word does, which keeps the search linear in the text.
_MIXED_RE = re.compile(r"(?<![^\W_])[^\W_]*(?:[a-z][A-Z]|[A-Z][A-Z][a-z]|[0-9][A-Z][a-z])[^\W_]*")
_CJK = "[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]"
_PIECE_RE = re.compile(r'"([^"]*)(?:"|$)|([^\s"]+)')
# An English possessive ending a word (`laptop's`, `org’s`): the word is what is searched.
_POSSESSIVE_RE = re.compile(r"(?<=[^\W_])['\u2019][sS]$")
_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"'})


@functools.cache
def _cjk_re() -> re.Pattern[str]:
    """Compiled on first use: its ranges cost milliseconds to compile, and ASCII text never needs it."""
    return re.compile(_CJK)


def fold(text: str) -> str:
    """NFKC, case folding, NFKC: the normalization shared by notes and search terms."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def words(text: str) -> list[str]:
    """The tokens of `text` as indexed and searched (mixed-case words stay whole here)."""
    folded = fold(text)
    if not folded.isascii():
        cjk = _cjk_re()
        if cjk.search(folded):
            folded = cjk.sub(r" \g<0> ", folded)
    return _WORD_RE.findall(folded)


def camel_parts(word: str) -> list[str]:
    """`getHTTPResponse` -> get, HTTP, Response. A trailing plural `s` stays on its acronym (`APIs`)."""
    parts: list[str] = []
    start = 0
    size = len(word)
    for i in range(1, size):
        prev, cur = word[i - 1], word[i]
        if not cur.isupper():
            continue
        nxt = word[i + 1] if i + 1 < size else ""
        before_word = nxt.islower() and not (nxt == "s" and i + 2 == size)
        if prev.islower() or (prev.isupper() and before_word) or (prev.isdigit() and before_word):
            parts.append(word[start:i])
            start = i
    parts.append(word[start:])
    return parts


def identifier_parts(text: str) -> list[str]:
    """The folded parts of every mixed-case identifier in `text` (the index's `parts` field)."""
    out: list[str] = []
    for match in _MIXED_RE.finditer(unicodedata.normalize("NFKC", text)):
        pieces = camel_parts(match.group(0))
        if len(pieces) > 1:
            for piece in pieces:
                out.extend(words(piece))
    return out


def split_identifiers(text: str) -> list[str]:
    """The tokens of `text` with every mixed-case identifier replaced by its parts."""
    nfkc = unicodedata.normalize("NFKC", text)
    return words(_MIXED_RE.sub(lambda m: " ".join(camel_parts(m.group(0))), nfkc))


class Term(NamedTuple):  # a tuple, not a dataclass: a class defined at every recall should be cheap
    text: str  # normalized, for display; a phrase is shown in double quotes
    alternatives: tuple[tuple[str, ...], ...]  # token sequences, any of which matches as a phrase


def parse_terms(raw: Sequence[str]) -> list[Term]:
    """Normalized, de-duplicated terms in their order; UsageError when there are too many."""
    text = unicodedata.normalize("NFKC", " ".join(raw)).translate(_QUOTES)
    if len(text) > tunables.RECALL_MAX_QUERY_CHARS:
        raise UsageError(f"the terms are longer than {tunables.RECALL_MAX_QUERY_CHARS} characters; use fewer")
    seen: set[tuple[tuple[str, ...], ...]] = set()
    out: list[Term] = []
    for match in _PIECE_RE.finditer(text):
        quoted = match.group(1) is not None
        piece = match.group(1) if quoted else _POSSESSIVE_RE.sub("", match.group(2))
        plain = tuple(words(piece))
        if not plain:
            continue
        split = tuple(split_identifiers(piece))
        alternatives = (plain,) if split == plain else (plain, split)
        if alternatives in seen:
            continue
        seen.add(alternatives)
        shown = " ".join(fold(piece).split())
        out.append(Term(f'"{shown}"' if quoted and " " in shown else shown, alternatives))
    if len(out) > tunables.RECALL_MAX_TERMS:
        raise UsageError(f"{len(out)} terms; at most {tunables.RECALL_MAX_TERMS} are searched at once")
    return out


def phrase(tokens: Iterable[str]) -> str:
    """One FTS5 phrase: the tokens in double quotes (doubled inside), so no word acts as syntax."""
    return '"' + " ".join(tokens).replace('"', '""') + '"'


def match_expression(terms: Sequence[Term]) -> str:
    """The FTS5 query: every term one quoted phrase (or two alternatives), joined by OR."""
    parts: list[str] = []
    for term in terms:
        alternatives = [phrase(tokens) for tokens in term.alternatives]
        parts.append(alternatives[0] if len(alternatives) == 1 else "(" + " OR ".join(alternatives) + ")")
    return " OR ".join(parts)
