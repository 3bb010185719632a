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
from itertools import accumulate

from continuity.gate import rules, shapes

Candidate = tuple[int, str, str]  # (offset, detector, value)
# The shortest run the generic layer judges (`generic._standalone`): shorter values need a label.
LONG_RUN_CHARS = 24
# Words too short to search for inside other words: counted only as a word part of their own.
_SHORT_WORDS = ("pin", "pat", "sk", "skey")


def rx(pattern: str) -> re.Pattern[str]:
    """Compile on first use (multi-line mode: `^` is a line start); the rule module keeps the cache."""
    return shapes.compiled(pattern, re.MULTILINE)


def _keyword_spans(lowered: str) -> list[tuple[int, int]]:
    """Spans of `pass`, `pwd`, `pw`, `secret`, `token`, `key`, `credential` and `creds` in lower-cased
    text, sorted: one C-speed `find` loop a word, faster than one alternation tried at every position."""
    spans: list[tuple[int, int]] = []
    for word in ("pass", "pw", "secret", "token", "key", "cred"):
        at = lowered.find(word)
        while at >= 0:
            end = at + len(word)
            if word == "pw":
                end += lowered.startswith("d", end)  # `pwd`
            elif word == "cred":  # `credential` or `creds`, not `credit`
                end = at + (
                    10 if lowered.startswith("credential", at) else 5 if lowered.startswith("creds", at) else -at
                )
            if end > at:
                spans.append((at, end))
            at = lowered.find(word, at + 1)
    spans.sort()
    return spans


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
        self._long_runs: list[tuple[int, str]] | None = None
        self._run_list: list[str] = []

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
            if len(self.lowered) == len(self.text):
                self._hits = _keyword_spans(self.lowered)
            else:
                words = r"pass|pwd|pw|secret|token|key|credential|creds"
                self._hits = [m.span() for m in shapes.compiled(words, re.IGNORECASE).finditer(self.text)]
            # Short words and abbreviations (PIN, PAT, SK) count only as a word part of their own:
            # `pin`, `GH_PAT`, `obsSk`, not `pinned`, `path` or `task`. Found with C-speed `find`, the
            # characters around each checked here: a look-behind would be tried at every position.
            spans: list[tuple[int, int]] = []
            lowered, text = self.lowered, self.text
            if len(lowered) == len(text):
                for word in _SHORT_WORDS:
                    at = lowered.find(word)
                    while at >= 0:
                        end = at + len(word)
                        end += 4 if word == "pin" and lowered.startswith("code", end) else 0
                        before = text[at - 1 : at]
                        if not lowered[end : end + 1].isalpha() and (
                            not before.isalpha() or (before.islower() and text[at].isupper())
                        ):
                            spans.append((at, end))
                        at = lowered.find(word, at + 1)
            else:  # lower-casing moved offsets (rare non-ASCII): case-blind in the text itself
                short = shapes.compiled(r"(?<![a-z])(?:pin(?:code)?|pat|sk|skey)(?![a-z])", re.IGNORECASE)
                spans = [m.span() for m in short.finditer(text)]
            self._hits = sorted(self._hits + spans) if spans else self._hits
        return self._hits

    @property
    def runs(self) -> str:
        """The token-character runs of `secret_rules.runs`: where any token or key body must lie."""
        if self._runs is None:
            self._run_list = shapes.compiled(rules.RUN).findall(self.text)
            self._runs = "\n".join(self._run_list)
        return self._runs

    @property
    def long_runs(self) -> list[tuple[int, str]]:
        """(offset, run) of every token-character run of `LONG_RUN_CHARS` or more. The runs come from one
        C-speed `findall`, their offsets from `find` in order: the first occurrence after the previous
        long run is the run itself, since any other stretch of as many token characters would be a
        long run of its own, found before it."""
        if self._long_runs is None:
            _ = self.runs
            spans, at = [], 0
            for run in self._run_list:
                if len(run) >= LONG_RUN_CHARS:
                    at = self.text.find(run, at)
                    spans.append((at, run))
                    at += len(run)
            self._long_runs = spans
        return self._long_runs

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
            self._starts = [0, *accumulate(len(line) + 1 for line in self.lines[:-1])]
        return self._starts

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset (lines end at LF; a CR before it is content)."""
        from bisect import bisect_right  # lazy: only a finding's line number needs it

        return bisect_right(self.starts, offset)
