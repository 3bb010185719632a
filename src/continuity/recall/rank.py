"""How recall ranks: exact and stemmed matches together, the terms that carry the query, and a floor.

Each term of the query (see `terms`) is looked up on its own in two full-text tables of the index:
`fts`, which holds the words as written, and `stem`, the same words through FTS5's Porter stemmer (so
`migrations` finds `migration`, `rebasing` finds `rebase`). A note's score for the term is the sum of
its BM25 in both (field weights `limits.RECALL_BM25_WEIGHTS`), so an exact match, an identifier above
all, outweighs an inflected one; its score for the query is the sum over the terms, as BM25 is.

Which terms count:
- English function words (`concepts.FUNCTION_WORDS`) are left out, unless the query has nothing else;
- a word found in more than `RECALL_COMMON_TERM_PERCENT` of the searchable notes is, in this vault, as
  common as a function word (a stop list derived from document frequency): it is left out too, again
  unless nothing else is left;
- a status code and its reason phrase are one term (`concepts.with_http_status`), and a term that
  names this computer (`concepts.device_names`) matches its notes as if they carried the name.

The floor. A term's weight is its inverse document frequency, a term that no note holds weighing
most. A note's coverage is the share of the query's weight that it matches; a note under
`RECALL_MIN_COVERAGE_PERCENT` is not returned, so a query whose telling words no note holds returns
nothing rather than notes that share its incidental ones.

`FEATURES` name these parts so that `bench/bench_recall_quality.py --without …` can show what each
one contributes; recall itself always runs with all of them.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from continuity import limits
from continuity.recall.concepts import is_function_word
from continuity.recall.terms import Term, match_expression

if TYPE_CHECKING:
    from continuity.recall.index import Hit

FEATURES = ("stems", "function_words", "common_words", "device", "http", "floor", "recency")
_off: set[str] = set()
Ranked = tuple[int, float, float]  # rowid, score, coverage (the share of the query's weight it matches)

_WEIGHTS = ", ".join(repr(float(w)) for w in limits.RECALL_BM25_WEIGHTS)
# The weights are floats from limits; the terms are a bound parameter.
_EXACT = "SELECT rowid, bm25(fts, " + _WEIGHTS + ") FROM fts WHERE fts MATCH ?"  # noqa: S608
_EXACT_SHARE = limits.RECALL_EXACT_MATCH_PERCENT / 100
_STEM = "SELECT rowid, bm25(stem, " + _WEIGHTS + ") FROM stem WHERE stem MATCH ?"  # noqa: S608
# A note of this device matches a name of the device as if the name were in its body: it is the
# note's context, not its topic.
_IMPLIED_WEIGHT = limits.RECALL_BM25_WEIGHTS[4]


def switch_off(names: Sequence[str]) -> None:
    """For measurement only: run without the named parts of the ranking."""
    unknown = sorted(set(names) - set(FEATURES))
    if unknown:
        raise ValueError(f"unknown ranking features {unknown}; known: {', '.join(FEATURES)}")
    _off.update(names)


def enabled(name: str) -> bool:
    return name not in _off


def _idf(total: int, matched: int) -> float:
    return math.log(1.0 + (total - matched + 0.5) / (matched + 0.5))


def _matches(db: sqlite3.Connection, term: Term) -> dict[int, float]:
    expression = match_expression([term])
    found: dict[int, float] = {}
    if not enabled("stems"):
        return {rowid: -rank for rowid, rank in db.execute(_EXACT, (expression,))}
    for rowid, rank in db.execute(_STEM, (expression,)):
        found[rowid] = -rank
    for rowid, rank in db.execute(_EXACT, (expression,)):
        found[rowid] = found.get(rowid, 0.0) - rank * _EXACT_SHARE
    return found


def rank(
    db: sqlite3.Connection, terms: Sequence[Term], device_terms: Sequence[int], device_rows: frozenset[int]
) -> list[Ranked]:
    """(rowid, score, coverage) of every matching note, best first (rowid breaks exact ties)."""
    total = db.execute("SELECT count(*) FROM stem_docsize").fetchone()[0]
    if not total:
        return []
    positions = list(range(len(terms)))
    if enabled("function_words"):
        positions = [p for p in positions if not is_function_word(terms[p])] or positions
    looked = [(p, _matches(db, terms[p])) for p in positions]
    if enabled("device") and device_rows:
        for position, found in looked:
            if position in device_terms:
                weight = _IMPLIED_WEIGHT * _idf(total, len(device_rows | found.keys()))
                for rowid in device_rows:
                    found[rowid] = max(found.get(rowid, 0.0), weight)
    if enabled("common_words"):
        limit = total * limits.RECALL_COMMON_TERM_PERCENT / 100
        kept = [(p, found) for p, found in looked if len(found) <= limit]
        looked = kept or looked
    scores: dict[int, float] = {}
    covered: dict[int, float] = {}
    weight_total = 0.0
    absent = limits.RECALL_ABSENT_TERM_WEIGHT_PERCENT / 100
    for _position, found in looked:
        weight = _idf(total, len(found)) * (absent if not found else 1.0)
        weight_total += weight
        for rowid, score in found.items():
            scores[rowid] = scores.get(rowid, 0.0) + score
            covered[rowid] = covered.get(rowid, 0.0) + weight
    ranked = [(rowid, score, covered[rowid] / weight_total) for rowid, score in scores.items()]
    ranked.sort(key=lambda item: (-item[1], item[0]))
    return ranked


def gated(hits: Iterator[Hit]) -> Iterator[Hit]:
    """`hits`, or nothing when none of the first `RECALL_DEFAULT_LIMIT` reaches `RECALL_MIN_COVERAGE_PERCENT`:
    the query's telling words are not in the notes it can see, so what matched is incidental."""
    first = limits.RECALL_DEFAULT_LIMIT
    gate = limits.RECALL_MIN_COVERAGE_PERCENT / 100 if enabled("floor") else 0.0
    head: list[Hit] = []
    for hit in hits:
        head.append(hit)
        if hit.coverage >= gate or len(head) >= first:
            break
    if not any(hit.coverage >= gate for hit in head):
        return
    yield from head
    yield from hits
