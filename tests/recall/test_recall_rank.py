"""What recall's ranking does with words: inflections, function words, status codes, this computer's
names, the floor that returns nothing when nothing fits, and the newest of near-equals first."""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from continuity import tunables
from continuity.recall import concepts, search as recall, terms as recall_text

DEVICE = "lap"
PROJECT = "demo"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel in ("30-memory/facts", f"50-devices/{DEVICE}/notes"):
        (root / rel).mkdir(parents=True)
    return root


def note(root: Path, name: str, body: str, *, folder: str = "30-memory/facts", **meta: Any) -> None:
    fields: dict[str, Any] = {"id": name, "type": "fact", "status": "approved", **meta}
    head = "".join(f"{key}: {json.dumps(value)}\n" for key, value in fields.items())
    (root / folder / f"{name}.md").write_text(f"---\n{head}---\n{body}\n", encoding="utf-8")


def ids(root: Path, *terms: str) -> list[str]:
    return [r.id for r in recall.recall(root, DEVICE, PROJECT, list(terms)).results]


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("migration", "Squash the migrations once a quarter."),
        ("migrations", "A migration that locks a table."),
        ("rebasing", "Always rebase onto main."),
        ("caching", "The cache is flushed nightly."),
        ("deadlocks", "A deadlock in the flush task."),
        ("benchmarking", "Run the benchmarks before merging."),
    ],
)
def test_an_inflection_finds_the_note(vault: Path, query: str, text: str) -> None:
    note(vault, "n", text)
    note(vault, "other", "Unrelated words about the weather.")
    assert ids(vault, query) == ["n"]


def test_an_identifier_keeps_its_weight_over_words_it_shares(vault: Path) -> None:
    note(vault, "ident", "Call spawn_blocking for CPU work.")
    note(vault, "words", "Blocking calls spawn trouble; spawn fewer, avoid blocking.")
    assert ids(vault, "spawn_blocking")[0] == "ident"


def test_function_words_do_not_rank_a_note(vault: Path) -> None:
    note(vault, "refunds", "Refunds go through the support tool.", title="Refund process")
    note(vault, "audit", "Every refund writes who did what and when.")
    assert ids(vault, "Refund", "part", "of", "the", "invoice", "who", "complained")[0] == "refunds"
    assert all(concepts.is_function_word(t) for t in recall_text.parse_terms(["the", "who", "while"]))
    assert ids(vault, "who") == ["audit"]  # a query of function words only still searches them


def test_a_status_code_and_its_reason_phrase_find_each_other(vault: Path) -> None:
    note(vault, "code", "Stripe throttled the sync (HTTP 429); back off.")
    note(vault, "phrase", "The API answered Service Unavailable when the pool was empty.")
    note(vault, "other", "Requests are many; too slow, sometimes.")
    assert ids(vault, "too", "many", "requests", "from", "Stripe")[0] == "code"
    assert ids(vault, "503")[0] == "phrase"
    merged = concepts.with_http_status(recall_text.parse_terms(["too", "many", "requests"]))
    assert [t.alternatives for t in merged] == [(("too", "many", "requests"), ("429",))]


def test_a_name_of_this_computer_finds_its_notes(vault: Path) -> None:
    (vault / f"50-devices/{DEVICE}").mkdir(exist_ok=True)
    profile = f'---\ntype: device\ndevice: {DEVICE}\ntitle: "MacBook Pro"\naliases: ["laptop", "my Mac"]\n---\n'
    (vault / f"50-devices/{DEVICE}/DEVICE.md").write_text(profile, encoding="utf-8")
    note(vault, "disk", "512 GB filled up with simulators.", folder=f"50-devices/{DEVICE}/notes")
    note(vault, "global", "Disk usage of build caches grows.")
    assert ids(vault, "disk", "full", "on", "my", "laptop")[0] == "disk"
    assert ids(vault, "laptop") == ["disk"]
    assert ids(vault, "my", "laptop's", "disk")[0] == "disk"  # a possessive is the word itself


FILLER = (
    "backup restic nightly timer",
    "postgres replica lag reports",
    "terraform state lock dynamodb",
    "playwright screenshots fonts docker",
    "celery beat scheduler machine",
    "invoice numbering gapless sequence",
    "mqtt broker reconnect jitter",
    "parquet compaction s3 objects",
    "tokio runtime blocking encoder",
    "vercel preview deployments promote",
)


def filled(root: Path) -> None:
    """Enough notes (RECALL_FLOOR_MIN_NOTES) for word rarity to mean something."""
    for n in range(tunables.RECALL_FLOOR_MIN_NOTES):
        note(root, f"filler-{n}", f"{FILLER[n % len(FILLER)]} item {n}.")


def test_a_query_no_note_answers_returns_nothing_and_says_so(vault: Path) -> None:
    filled(vault)
    note(vault, "values", "Config values are read from the environment.")
    note(vault, "charts", "Grafana charts for the ingest rate.")
    found = recall.recall(vault, DEVICE, PROJECT, ["kubernetes", "helm", "chart", "values"])
    assert found.results == () and "No approved note matched these terms." in found.text
    # The same words with what a note does hold come back.
    assert ids(vault, "config", "values") == ["values"]


def test_the_floor_keeps_a_note_that_fits_enough_of_the_query(vault: Path) -> None:
    filled(vault)
    note(vault, "deadlock", "Flushes hung: a std Mutex guard held across an await.", title="Deadlock holding a lock")
    assert ids(vault, "Hold", "a", "lock", "while", "awaiting", "a", "database", "call") == ["deadlock"]
    assert tunables.RECALL_MIN_COVERAGE_PERCENT > tunables.RECALL_MIN_NOTE_COVERAGE_PERCENT > 0


def test_a_small_vault_has_no_floor(vault: Path) -> None:
    note(vault, "values", "Config values are read from the environment.")
    assert ids(vault, "kubernetes", "helm", "chart", "values") == ["values"]


def test_near_equals_put_the_newest_first(vault: Path) -> None:
    note(vault, "old", "We use Node 18 for builds.", created="2024-06-01T00:00:00Z")
    note(vault, "new", "We use Node 20 for builds now.", created="2025-04-01T00:00:00Z")
    assert ids(vault, "node", "builds") == ["new", "old"]


def local_scores(root: Path, project: str, *terms: str) -> dict[str, float]:
    from continuity.recall import index as recall_index, rank as recall_rank

    index = recall_index.open_index(root, DEVICE, use_file=False)
    try:
        index.refresh()
        names = dict(index.db.execute("SELECT rowid, note_id FROM notes"))
        ranked = recall_rank.rank(
            index.db,
            recall_text.parse_terms(list(terms)),
            [],
            frozenset(),
            lambda rowids: recall_rank.local_among(index.db, rowids, project, DEVICE),
        )
        return {names[rowid]: score for rowid, score, _coverage in ranked}
    finally:
        index.close()


def test_a_note_of_the_work_at_hand_scores_the_local_bonus_more(vault: Path) -> None:
    note(vault, "everywhere", "Retry budget: five tries, then give up.")
    note(vault, "project", "Retry budget: five tries, then give up.", scope="project", project=PROJECT)
    note(vault, "other", "Retry budget: five tries, then give up.", scope="project", project="elsewhere")
    note(vault, "device", "Retry budget: five tries, then give up.", folder=f"50-devices/{DEVICE}/notes")
    scores = local_scores(vault, PROJECT, "retry", "budget")
    bonus = 1 + tunables.RECALL_LOCAL_BONUS_PERCENT / 100
    assert scores["project"] == pytest.approx(scores["everywhere"] * bonus)
    assert scores["device"] == pytest.approx(scores["everywhere"] * bonus)
    assert scores["other"] == pytest.approx(scores["everywhere"])  # another project's note: no bonus
    assert local_scores(vault, "elsewhere", "retry", "budget")["project"] == pytest.approx(scores["everywhere"])
    # The bonus follows the project the note names: in the project it now names, it has it.
    note(vault, "project", "Retry budget: five tries, then give up.", scope="project", project="elsewhere")
    assert local_scores(vault, "elsewhere", "retry", "budget")["project"] == pytest.approx(scores["project"])


def test_a_project_note_outranks_a_slightly_better_note_that_holds_everywhere(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from continuity.recall import rank as recall_rank

    note(vault, "everywhere", "The retry budget is five tries.", created="2025-05-01T00:00:00Z")
    text = "The retry budget is five tries per run."
    note(vault, "project", text, scope="project", project=PROJECT, created="2025-01-01T00:00:00Z")
    assert ids(vault, "retry", "budget") == ["project", "everywhere"]
    monkeypatch.setattr(recall_rank, "_off", {"local"})
    # Without the bonus, the shorter and newer note that holds everywhere comes first.
    assert ids(vault, "retry", "budget") == ["everywhere", "project"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=6))
def test_any_words_are_searched_as_text(words: list[str]) -> None:
    # Whatever the words (dashes, quotes, query syntax), they are terms and never syntax or a crash.
    try:
        terms = recall_text.parse_terms(words)
    except Exception as exc:  # pragma: no cover - would be the failure
        pytest.fail(f"{words!r}: {exc}")
    merged = concepts.with_http_status(terms)
    assert all(t.alternatives for t in merged)
    for term in merged:
        assert recall_text.match_expression([term]).startswith(("(", '"'))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 400), st.floats(0.01, 100.0)), max_size=60, unique_by=lambda item: item[0]),
    st.sets(st.integers(1, 400)),
)
def test_the_local_bonus_reorders_exactly_as_a_full_sort_would(pairs: list[tuple[int, float]], near: set[int]) -> None:
    # The bonus is applied lazily, a few notes at a time; the order must be the one a sort of every
    # note's bonus-adjusted score gives (best first, lowest rowid on ties).
    from continuity.recall import rank as recall_rank

    ranked = sorted(pairs, key=lambda item: (-item[1], item[0]))
    bonus = 1 + tunables.RECALL_LOCAL_BONUS_PERCENT / 100
    expected = sorted(
        ((rowid, score * bonus if rowid in near else score) for rowid, score in ranked),
        key=lambda item: (-item[1], item[0]),
    )
    asked: list[int] = []

    def local(rowids: Collection[int]) -> set[int]:
        asked.extend(rowids)
        return {rowid for rowid in rowids if rowid in near}

    assert list(recall_rank._with_bonus(ranked, local)) == expected
    assert sorted(asked) == sorted(rowid for rowid, _score in ranked)  # each note asked about once
