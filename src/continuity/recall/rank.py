"""How recall ranks: words with their inflections, the terms that carry the query, and a floor.

The index's full-text table holds each note's words through FTS5's Porter stemmer, so `migrations`
finds `migration` and `rebasing` finds `rebase`; an exact form has the same stem, so it keeps its full
weight, and an identifier (`invoice_line`, `spawn_blocking`) is a phrase of stems that only it holds.
SQLite scores the query by BM25 (field weights `tunables.RECALL_BM25_WEIGHTS`) over every counted term
OR-ed, which is the sum of each term's BM25. (Scoring the words as written beside their stems, with a
tenth of the weight, was measured: it moved recall@3 by 0.2 points and doubled the scoring time; see
docs/recall.md.)

Which terms count:
- English function words (`concepts.FUNCTION_WORDS`) are left out, unless the query has nothing else;
- (a stop list derived from document frequency, words in more than a quarter of the notes, was
  measured and left out: BM25's inverse document frequency already weighs them down, and dropping them
  cost recall);
- a status code and its reason phrase are one term (`concepts.with_http_status`), and a term that
  names this computer (`concepts.device_names`) matches its notes as if they carried the name.

The work at hand. A note of the project the query is made in (any scope), or of this device (its
notes folder, `scope: device`), scores `RECALL_LOCAL_BONUS_PERCENT` more than a note with the same
words that holds everywhere: a task in a project means that project's notes first, and a general
lesson still wins when it fits the words clearly better. Only the ranked candidates are looked up
(SQLite's best `RECALL_RANKED_CANDIDATES` first), so the cost does not grow with the project. The
floor below is unaffected: it reads which terms a note holds, not its score.

The floor. A term's weight is its inverse document frequency, a term that no note holds weighing
most. A note's coverage is the share of the query's weight that it matches. When none of the first
`RECALL_DEFAULT_LIMIT` notes a query can see reaches `RECALL_MIN_COVERAGE_PERCENT`, nothing is
returned (`gated`): the query's telling words are in no note, and what matched is incidental. Below
the best notes, a note under `RECALL_MIN_NOTE_COVERAGE_PERCENT` is not returned either. A vault of
fewer than `RECALL_FLOOR_MIN_NOTES` searchable notes has no floor: so few notes cannot tell a rare,
telling word from an incidental one (a new vault would otherwise answer most task sentences with
nothing).

`FEATURES` name these parts so that `bench/bench_recall_quality.py --without …` can show what each
one contributes; recall itself always runs with all of them.
"""

from __future__ import annotations

import heapq
import math
import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import NamedTuple, Protocol, TypeVar

from continuity import tunables
from continuity.recall.concepts import is_function_word
from continuity.recall.terms import Term, match_expression


class Covered(Protocol):
    """What `gated` reads of a hit (`index.Hit`, which imports this module: named by shape, no cycle)."""

    @property
    def coverage(self) -> float: ...


HitT = TypeVar("HitT", bound=Covered)

FEATURES = ("function_words", "device", "http", "floor", "recency", "local")
_off: set[str] = set()
Ranked = tuple[int, float, float]  # rowid, score, coverage (the share of the query's weight it matches)

_WEIGHTS = ", ".join(repr(float(w)) for w in tunables.RECALL_BM25_WEIGHTS)
# The weights are floats from limits; the terms are a bound parameter.
_TOP = "SELECT rowid, bm25(stem, " + _WEIGHTS + ") AS r FROM stem WHERE stem MATCH ? ORDER BY r LIMIT ?"  # noqa: S608
_ROWIDS = "SELECT rowid FROM stem WHERE stem MATCH ?"
_COUNT = "SELECT count(*) FROM stem WHERE stem MATCH ?"
_HOLDS = "SELECT 1 FROM stem WHERE stem MATCH ? AND rowid = ?"
# A note of this device matches a name of the device as if the name were in its body: it is the
# note's context, not its topic.
_IMPLIED_WEIGHT = tunables.RECALL_BM25_WEIGHTS[4]
# Which of some rowids are of the work at hand (`local_among`); the marks are `?` only, all bound.
_LOCAL = "SELECT rowid FROM owner WHERE rowid IN ({marks}) AND (project = ? OR device = ?)"
_LOOKUP_CHUNK = 500  # bound parameters a statement: well under SQLite's oldest limit (999)
_LOCAL_CHUNK = 16  # notes asked about at once for the local bonus: a few more than a caller usually reads


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


def _rowids(db: sqlite3.Connection, expression: str) -> set[int]:
    return {row[0] for row in db.execute(_ROWIDS, (expression,))}


def _holds(db: sqlite3.Connection, item: _Looked, rowid: int) -> bool:
    if rowid in item.implied:
        return True
    return db.execute(_HOLDS, (item.expression, rowid)).fetchone() is not None


def _top(db: sqlite3.Connection, expression: str, limit: int) -> dict[int, float]:
    """BM25 (higher is better) of the best `limit` matches of `expression` (-1: all), ranked by SQLite."""
    return {rowid: -score for rowid, score in db.execute(_TOP, (expression, limit))}


class _Looked(NamedTuple):
    expression: str
    matched: int  # how many notes match the term, this device's notes included when it names it
    implied: frozenset[int]  # this device's notes that match only because the term names the device


def _look(
    db: sqlite3.Connection, terms: Sequence[Term], device_terms: Sequence[int], device_rows: frozenset[int], total: int
) -> list[_Looked]:
    positions = list(range(len(terms)))
    if enabled("function_words"):
        positions = [p for p in positions if not is_function_word(terms[p])] or positions
    kept: list[_Looked] = []
    for position in positions:
        expression = match_expression([terms[position]])
        implied: frozenset[int] = frozenset()
        if enabled("device") and position in device_terms and device_rows:
            implied = device_rows - _rowids(db, expression)
        count = db.execute(_COUNT, (expression,)).fetchone()[0] + len(implied)
        kept.append(_Looked(expression, count, implied))
    return kept


def local_among(db: sqlite3.Connection, rowids: Collection[int], project: str, device: str) -> set[int]:
    """Which of `rowids` (the index's notes) are of the work at hand: of `project` (any scope), or of
    this device (its own notes folder, and `scope: device` notes of it). Looked up by rowid in the
    index's small `owner` table, so the cost follows the notes ranked, not the size of the project."""
    found: set[int] = set()
    ordered = list(rowids)
    for start in range(0, len(ordered), _LOOKUP_CHUNK):
        chunk = ordered[start : start + _LOOKUP_CHUNK]
        sql = _LOCAL.format(marks=", ".join("?" * len(chunk)))
        found.update(row[0] for row in db.execute(sql, (*chunk, project, device)))
    return found


def _with_bonus(
    ranked: list[tuple[int, float]], local: Callable[[Collection[int]], set[int]]
) -> Iterator[tuple[int, float]]:
    """`ranked` (best score first) in the order of their scores with the local bonus, asking `local`
    about only as many notes as the caller reads, a few at a time: a note not yet asked about scores at
    most its own score times the bonus, so a note whose bonus-adjusted score passes that is in place."""
    bonus = 1.0 + tunables.RECALL_LOCAL_BONUS_PERCENT / 100
    ready: list[tuple[float, int]] = []  # (-score, rowid): the heap pops the best, lowest rowid on ties
    at = 0
    while at < len(ranked) or ready:
        bound = ranked[at][1] * bonus if at < len(ranked) else -math.inf
        if ready and -ready[0][0] > bound:
            negative, rowid = heapq.heappop(ready)
            yield rowid, -negative
            continue
        chunk = ranked[at : at + _LOCAL_CHUNK]
        at += len(chunk)
        near = local([rowid for rowid, _score in chunk])
        for rowid, score in chunk:
            heapq.heappush(ready, (-(score * bonus if rowid in near else score), rowid))


def rank(
    db: sqlite3.Connection,
    terms: Sequence[Term],
    device_terms: Sequence[int],
    device_rows: frozenset[int],
    local: Callable[[Collection[int]], set[int]] | None = None,
) -> Iterator[Ranked]:
    """(rowid, score, coverage) of every matching note, best first (rowid breaks exact ties).

    SQLite scores the query (every counted term OR-ed: BM25 sums over them) and hands over the best
    `RECALL_RANKED_CANDIDATES` first; the rest only when a caller reads that far. A note that `local`
    says is of the work at hand (the query's project or this device: `local_among`) scores
    `RECALL_LOCAL_BONUS_PERCENT` more."""
    total = db.execute("SELECT count(*) FROM stem_docsize").fetchone()[0]
    looked = _look(db, terms, device_terms, device_rows, total) if total else []
    if not looked:
        return
    weights = [_idf(total, item.matched) for item in looked]
    # With few notes, which words are rare says little: every match counts as fitting the query.
    weight_total = sum(weights) if total >= tunables.RECALL_FLOOR_MIN_NOTES else 0.0
    expression = " OR ".join(item.expression for item in looked)
    seen: set[int] = set()
    for limit in (tunables.RECALL_RANKED_CANDIDATES, -1):
        scores = _top(db, expression, limit)
        full = limit < 0 or len(scores) < limit
        for item, weight in zip(looked, weights, strict=True):
            for rowid in item.implied:  # matched by naming this device: as if the name were in its body
                scores[rowid] = scores.get(rowid, 0.0) + _IMPLIED_WEIGHT * weight
        ranked = [(rowid, score) for rowid, score in scores.items() if rowid not in seen]
        seen.update(rowid for rowid, _score in ranked)
        ranked.sort(key=lambda item: (-item[1], item[0]))
        boosted = local is not None and enabled("local") and tunables.RECALL_LOCAL_BONUS_PERCENT > 0
        ordered = _with_bonus(ranked, local) if boosted and local is not None else iter(ranked)
        for rowid, score in ordered:  # coverage costs a lookup a term: only for notes read
            covered = sum(weight for item, weight in zip(looked, weights, strict=True) if _holds(db, item, rowid))
            yield (rowid, score, covered / weight_total if weight_total else 1.0)
        if full:
            return


def gated(hits: Iterator[HitT]) -> Iterator[HitT]:
    """`hits`, or nothing when none of the first `RECALL_DEFAULT_LIMIT` reaches `RECALL_MIN_COVERAGE_PERCENT`:
    the query's telling words are not in the notes it can see, so what matched is incidental."""
    first = tunables.RECALL_DEFAULT_LIMIT
    gate = tunables.RECALL_MIN_COVERAGE_PERCENT / 100 if enabled("floor") else 0.0
    head: list[HitT] = []
    for hit in hits:
        head.append(hit)
        if hit.coverage >= gate or len(head) >= first:
            break
    if not any(hit.coverage >= gate for hit in head):
        return
    yield from head
    yield from hits
