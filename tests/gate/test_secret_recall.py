"""Recall and precision of the secret gate on the corpus of `secret_formats`, reported per family.

Targets: at least 97% of the secrets over every gitleaks rule and over every assignment shape, and at
most 3% false positives on at least 300 hard negatives. Each family's count is printed (`pytest -s`
shows the table), and a failure names the cases that were missed or wrongly flagged.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
import secret_formats as formats

from continuity.gate.secrets import scan_text
from continuity.tunables import (
    SECRET_GATE_MAX_FALSE_POSITIVE_PERCENT,
    SECRET_GATE_MIN_HARD_NEGATIVES,
    SECRET_GATE_MIN_RECALL_PERCENT,
)

CASES = formats.all_cases()


def _flagged(case: formats.Case) -> bool:
    return bool(scan_text(case.text))


def _report(cases: list[formats.Case]) -> dict[str, tuple[int, int]]:
    """family -> (cases, cases the gate judged right)."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for case in cases:
        totals[case.family][0] += 1
        totals[case.family][1] += _flagged(case) == case.secret
    return {family: (n, right) for family, (n, right) in sorted(totals.items())}


def test_every_gitleaks_rule_has_a_case_and_a_negative() -> None:
    names = [rule for rule, _, _ in formats.GITLEAKS_RULES]
    assert len(names) == len(set(names)) >= 222
    for rule in names:
        kinds = {case.secret for case in CASES if case.name == rule}
        assert kinds == {True, False}, rule


def test_every_shape_has_a_case_and_a_negative() -> None:
    for group in formats.SHAPED_GROUPS:
        names = {case.name for case in CASES if case.group == group}
        assert names, group
        for name in names:
            assert {c.secret for c in CASES if c.group == group and c.name == name} == {True, False}, (group, name)


def test_the_corpus_is_deterministic() -> None:
    assert formats.all_cases() == CASES


@pytest.mark.parametrize("group", ["gitleaks", *formats.SHAPED_GROUPS])
def test_recall(group: str) -> None:
    cases = [c for c in CASES if c.secret and c.group == group]
    report = _report(cases)
    for family, (n, right) in report.items():
        print(f"{group:12} {family:28} {right:4}/{n:<4} {right / n:6.1%}")
    caught = sum(right for _, right in report.values())
    missed = [c.name for c in cases if not _flagged(c)]
    assert caught * 100 >= SECRET_GATE_MIN_RECALL_PERCENT * len(cases), missed


def test_false_positives_on_hard_negatives() -> None:
    negatives = [c for c in CASES if not c.secret]
    assert len(negatives) >= SECRET_GATE_MIN_HARD_NEGATIVES
    report = _report(negatives)
    for family, (n, right) in report.items():
        print(f"negatives    {family:28} {n - right:4}/{n:<4} flagged")
    flagged = [(c.family, c.name) for c in negatives if _flagged(c)]
    assert len(flagged) * 100 <= SECRET_GATE_MAX_FALSE_POSITIVE_PERCENT * len(negatives), flagged
