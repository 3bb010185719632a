"""One classification of characters for everything that judges vault text and everything that shows it.

A secret hidden by a character nobody sees (`ghp_…` with a COMBINING GRAPHEME JOINER inside) and a tag
forged with one (`<` VARIATION SELECTOR-16 `/source>`) are the same trick: a reader that drops the
invisible character sees something the checker never saw. So the gate and the brief's escaping ask
this module the same question, "is this character invisible?", and get the same answer:

* **hidden** (`hidden`): a default-ignorable code point (below), or a character of the categories Cc
  (controls), Cf (format), Cs (surrogates), Co (private use) or Cn (unassigned), except tab, line feed
  and carriage return. None of them has a standard visible glyph. The gate removes them before it
  judges; the brief shows them as `[U+XXXX]` markers.
* **mark without a base** (`loose_mark`): a combining mark (Mn, Mc, Me) that does not follow a letter,
  a digit or another mark. It has nothing to combine with; after `<` or `/` it only disguises a tag.
  The brief shows it as a marker too; the gate, which judges a skeleton, drops every mark.

The gate judges `judged(text)`: hidden characters removed, the text decomposed (NFKD), combining
marks removed, then recomposed with NFKC, so that fullwidth or mathematical letters, ligatures and
accents inserted into a token read as the ASCII the token was. Line feeds are never added or removed,
so a finding's line number is the file's.

**Default_Ignorable_Code_Point** is not in the standard library's `unicodedata`; it is derived here
from its definition in the Unicode Character Database (DerivedCoreProperties.txt):

    Default_Ignorable_Code_Point = Other_Default_Ignorable_Code_Point
                                 + Cf (format characters)
                                 + Variation_Selector
                                 - White_Space
                                 - FFF9..FFFB (interlinear annotation format characters)
                                 - 13430..1343F (Egyptian hieroglyph format characters)
                                 - Prepended_Concatenation_Mark

with Other_Default_Ignorable_Code_Point, Variation_Selector, White_Space and
Prepended_Concatenation_Mark as PropList.txt lists them (the tables below), and Cf from `unicodedata`.
The unassigned code points that Other_Default_Ignorable_Code_Point reserves (U+2065, U+FFF0..FFF8,
U+E0000, U+E0002..E001F, U+E0080..E00FF, U+E01F0..E0FFF) are included: text from a newer Unicode
version can use them today.

The look-alikes of `<`, `/` and `>` (`LESS_THAN_LOOKALIKES`, …) are the characters that UTS #39's
confusables.txt maps to them, plus every character whose compatibility decomposition begins with
them (`≮` is `<` with a combining long solidus). The escaping treats each as the ASCII character.
"""

from __future__ import annotations

import functools
import unicodedata

Ranges = tuple[tuple[int, int], ...]

OTHER_DEFAULT_IGNORABLE: Ranges = (
    (0x034F, 0x034F),  # COMBINING GRAPHEME JOINER
    (0x115F, 0x1160),  # HANGUL CHOSEONG FILLER, JUNGSEONG FILLER
    (0x17B4, 0x17B5),  # KHMER VOWEL INHERENT AQ, AA
    (0x2065, 0x2065),  # reserved
    (0x3164, 0x3164),  # HANGUL FILLER
    (0xFFA0, 0xFFA0),  # HALFWIDTH HANGUL FILLER
    (0xFFF0, 0xFFF8),  # reserved
    (0xE0000, 0xE0000),  # reserved
    (0xE0002, 0xE001F),  # reserved
    (0xE0080, 0xE00FF),  # reserved
    (0xE01F0, 0xE0FFF),  # reserved
)
VARIATION_SELECTOR: Ranges = ((0x180B, 0x180D), (0x180F, 0x180F), (0xFE00, 0xFE0F), (0xE0100, 0xE01EF))
WHITE_SPACE: Ranges = (
    (0x0009, 0x000D),
    (0x0020, 0x0020),
    (0x0085, 0x0085),
    (0x00A0, 0x00A0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
)
INTERLINEAR_ANNOTATION: Ranges = ((0xFFF9, 0xFFFB),)
EGYPTIAN_FORMAT: Ranges = ((0x13430, 0x1343F),)
PREPENDED_CONCATENATION_MARK: Ranges = (
    (0x0600, 0x0605),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
)
_NOT_IGNORABLE = WHITE_SPACE + INTERLINEAR_ANNOTATION + EGYPTIAN_FORMAT + PREPENDED_CONCATENATION_MARK
_HIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Co", "Cn"))
_MARKS = frozenset(("Mn", "Mc", "Me"))
_KEPT = frozenset("\t\n\r")

# confusables.txt's entries for `<`, `/` and `>`, and the characters whose NFKD begins with one of them
# (fullwidth, small form, and the negated relations). `test_normalise` derives the second part again.
LESS_THAN_LOOKALIKES = (
    "\u02c2\u1438\u16b2\u2039\u276e\U0001d236"  # confusables.txt
    "\u226e\ufe64\uff1c"  # NFKD begins with `<`
    "\u2329\u3008\u27e8\u29fc\u227a\u3031\u276c\u2770\u27ea"  # angle brackets a model reads as `<`
)
SLASH_LOOKALIKES = (
    "\u1735\u2041\u2044\u2215\u2571\u27cb\u29f8\u3033\u31d3\u4e3f\u2f03\u2cc6\u30ce\U0001d23a"  # confusables
    "\uff0f"  # NFKD begins with `/`
    "\u29f6"  # SOLIDUS WITH OVERBAR
)
GREATER_THAN_LOOKALIKES = (
    "\u02c3\u1433\u203a\u276f\U00016f3f\U0001d237"  # confusables.txt
    "\u226f\ufe65\uff1e"  # NFKD begins with `>`
    "\u232a\u3009\u27e9\u29fd\u227b\u276d\u2771\u27eb"
)


def in_ranges(code: int, ranges: Ranges) -> bool:
    return any(low <= code <= high for low, high in ranges)


def default_ignorable(ch: str) -> bool:
    """Default_Ignorable_Code_Point, derived as the module's docstring says."""
    code = ord(ch)
    if code < 0xAD:
        return False
    if in_ranges(code, OTHER_DEFAULT_IGNORABLE) or in_ranges(code, VARIATION_SELECTOR):
        return True
    return unicodedata.category(ch) == "Cf" and not in_ranges(code, _NOT_IGNORABLE)


@functools.lru_cache(maxsize=65536)
def hidden(ch: str) -> bool:
    """Invisible: default-ignorable, or Cc, Cf, Cs, Co, Cn (tab, line feed and carriage return excepted)."""
    return ch not in _KEPT and (unicodedata.category(ch) in _HIDDEN_CATEGORIES or default_ignorable(ch))


def is_mark(ch: str) -> bool:
    return unicodedata.category(ch) in _MARKS


_BRACKETS = frozenset(LESS_THAN_LOOKALIKES + SLASH_LOOKALIKES + GREATER_THAN_LOOKALIKES)


def loose_mark(ch: str, before: str) -> bool:
    """A combining mark with nothing to combine with: after a character that is no letter, digit or mark,
    or after a look-alike of `<`, `/` or `>` (some are letters: CANADIAN SYLLABICS PA, KATAKANA NO)."""
    if not is_mark(ch):
        return False
    return before in _BRACKETS or not (before.isalnum() or (before != "" and is_mark(before)))


# The ASCII controls other than tab, line feed and carriage return: the only hidden ASCII characters.
_ASCII_CONTROLS = bytes(range(0x09)) + b"\x0b\x0c" + bytes(range(0x0E, 0x20)) + b"\x7f"


def plain(text: str) -> bool:
    """True when no character of `text` is hidden and none can fold (printable ASCII, tabs, line ends).
    Checked with C-speed `bytes.translate`, which deletes the controls: a regex class scans slower."""
    if not text.isascii():
        return False
    raw = text.encode("ascii")
    return len(raw.translate(None, _ASCII_CONTROLS)) == len(raw)


def without_hidden(text: str) -> str:
    """`text` with every hidden character removed."""
    return "".join(ch for ch in text if (ch.isascii() and (ch.isprintable() or ch in _KEPT)) or not hidden(ch))


def judged(text: str) -> str:
    """The text the gate judges: hidden characters and combining marks removed, NFKC applied."""
    if plain(text):
        return text
    stripped = unicodedata.normalize("NFKD", without_hidden(text))
    if not stripped.isascii():
        stripped = "".join(ch for ch in stripped if ch.isascii() or not is_mark(ch))
    return without_hidden(unicodedata.normalize("NFKC", stripped))
