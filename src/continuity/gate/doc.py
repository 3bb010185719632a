"""The text under scan, shared by every secret detector: its lines, its lower-cased form, its keywords.

One scan runs a dozen detectors over the same note, and most of them need the same derived views
(line starts to turn an offset into a line number, the lower-cased text for case-blind checks, the
spans of words like `password` or `token`). Building each view on first use and keeping it here
means a clean prose note pays only for what some detector actually asked for, and no view is
computed twice. Detectors return `Candidate`s (offset, detector id, value); `secrets.scan_text`
turns them into findings that never hold the value.
"""

from __future__ import annotations

import re

from continuity.gate import rules, shapes

Candidate = tuple[int, str, str]  # (offset, detector, value)
_SHORT_WORDS = (("pin", r"pin(?:code)?(?![a-z])"), ("pat", r"pat(?![a-z])"), ("sk", r"s(?:k|key)(?![a-z])"))


def rx(pattern: str) -> re.Pattern[str]:
    """Compile on first use (multi-line mode: `^` is a line start); the rule module keeps the cache."""
    return shapes.compiled(pattern, re.MULTILINE)


class Doc:
    """The text plus a lazily built line index, shared by every detector of one scan."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None
        self._lines: list[str] | None = None
        self._lowered: str | None = None
        self._hits: list[tuple[int, int]] | None = None
        self._hit_lines: list[tuple[int, int, int]] | None = None
        self._runs: str | None = None
        self._run_spans: list[tuple[int, str]] | None = None

    @property
    def lowered(self) -> str:
        """The text in lower case, for case-blind literal checks (offsets may differ: see `hits`)."""
        if self._lowered is None:
            self._lowered = self.text.lower()
        return self._lowered

    @property
    def hits(self) -> list[tuple[int, int]]:
        """Spans of secret keywords (pass, pwd, pw, secret, token, key, credential, creds, and PIN as a
        word of its own: `pin`, not `pinned` or `opinion`), any case.

        Searched in the lower-cased text when lower-casing kept every offset (always for ASCII),
        otherwise case-blind in the text itself; either way the spans are offsets into `text`.
        """
        if self._hits is None:
            words = r"pass|pwd|pw|secret|token|key|credential|creds"
            if len(self.lowered) == len(self.text):
                found = shapes.compiled(words).finditer(self.lowered)
            else:
                found = shapes.compiled(words, re.IGNORECASE).finditer(self.text)
            self._hits = [m.span() for m in found]
            # Short words and abbreviations (PIN, PAT, SK) count only as a word part of their own:
            # `pin`, `GH_PAT`, `obsSk`, not `pinned`, `path` or `task`. Each search runs only when its
            # letters occur; the character before is checked here, as a look-behind would be tried everywhere.
            spans: list[tuple[int, int]] = []
            for letters, pattern in _SHORT_WORDS:
                if letters not in self.lowered:
                    continue
                short, haystack = self.caseless(pattern)
                for m in short.finditer(haystack):
                    before = self.text[m.start() - 1 : m.start()]
                    if not before.isalpha() or (before.islower() and self.text[m.start()].isupper()):
                        spans.append(m.span())
            self._hits = sorted(self._hits + spans) if spans else self._hits
        return self._hits

    @property
    def runs(self) -> str:
        """The token-character runs of `secret_rules.runs`: where any token or key body must lie."""
        if self._runs is None:
            self._runs = "\n".join(run for _, run in self.run_spans)
        return self._runs

    @property
    def run_spans(self) -> list[tuple[int, str]]:
        """(offset, run) of every token-character run, found in one pass for every detector."""
        if self._run_spans is None:
            self._run_spans = [(m.start(), m.group(0)) for m in shapes.compiled(rules.RUN).finditer(self.text)]
        return self._run_spans

    @property
    def hit_lines(self) -> list[tuple[int, int, int]]:
        """(0-based index, start offset, end offset) of each line holding a keyword of `hits`, once each,
        in order; counted with C-speed `count`/`find`, so a clean note never builds its line index."""
        if self._hit_lines is None:
            text, found = self.text, []
            index, counted, end = 0, 0, -1
            for start, _ in self.hits:
                if start <= end:
                    continue  # on the line found last
                index += text.count("\n", counted, start)
                counted = start
                end = text.find("\n", start)
                end = len(text) if end < 0 else end
                found.append((index, text.rfind("\n", 0, start) + 1, end))
            self._hit_lines = found
        return self._hit_lines

    def caseless(self, pattern: str) -> tuple[re.Pattern[str], str]:
        """A case-blind matcher for a lower-case `pattern`, and the text to run it on.

        Matching the lower-cased text with a case-sensitive expression gives the same offsets as
        matching the text itself, and compiles far faster than IGNORECASE with non-ASCII classes;
        when lower-casing moved offsets (rare non-ASCII), IGNORECASE on the text is the fallback.
        """
        if len(self.lowered) == len(self.text):
            return shapes.compiled(pattern, re.MULTILINE), self.lowered
        return shapes.compiled(pattern, re.MULTILINE | re.IGNORECASE), self.text

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines

    @property
    def starts(self) -> list[int]:
        if self._starts is None:
            from itertools import accumulate

            self._starts = [0, *accumulate(len(line) + 1 for line in self.lines[:-1])]
        return self._starts

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset (lines end at LF; a CR before it is content)."""
        from bisect import bisect_right

        return bisect_right(self.starts, offset)
