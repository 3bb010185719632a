"""Secret gate, measured blind to formats: recall per family with the format table on and off, and
false positives on clean engineering notes and on the hard negatives the tests hold.

Run from the repository root:

    python bench/blind_bench.py [--seed N]

Corpora: `tests/blind_corpus.py` (credentials of nine families in many writing contexts, many in
shapes no format table lists), `tests/clean_notes.py` (at least 1,000 clean notes full of digests,
ids and talk about tokens), and the hard negatives of `tests/secret_corpus.py` and
`tests/secret_formats.py`. The format table is switched off with `tests/format_blind.py`. The
targets (`continuity.limits`) are checked by `tests/gate/test_blind_recall.py`; this script prints the
tables that `docs/secret-gate.md` quotes, and with `--misses` the kinds of the notes it got wrong.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

import blind_corpus  # noqa: E402
import clean_notes  # noqa: E402
import secret_corpus  # noqa: E402
import secret_formats  # noqa: E402
from format_blind import format_table_off  # noqa: E402

from continuity.gate.secrets import scan_text  # noqa: E402


def flagged(text: str) -> bool:
    return bool(scan_text(text))


def hard_negatives() -> list[str]:
    """Every hard negative the tests hold: both corpora written alongside the format table."""
    texts = [s.text for s in secret_corpus.negatives()] + [s.text for s in secret_corpus.variant_negatives()]
    return texts + [case.text for case in secret_formats.all_cases() if not case.secret]


def pct(hits: int, total: int) -> str:
    return f"{100 * hits / total:5.1f}%" if total else "  -  "


def table(title: str, header: tuple[str, ...], rows: list[tuple[object, ...]]) -> None:
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows, strict=True)]
    print(f"\n{title}")
    for row in (header, *rows):
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--misses", action="store_true", help="list the kinds of notes judged wrong")
    args = parser.parse_args()
    positives = blind_corpus.positives(args.seed)
    clean = clean_notes.notes(args.seed)
    hard = hard_negatives()
    on = {id(s): flagged(s.text) for s in positives}
    clean_on = [flagged(s.text) for s in clean]
    hard_on = [flagged(text) for text in hard]
    with format_table_off():
        off = {id(s): flagged(s.text) for s in positives}
        clean_off = [flagged(s.text) for s in clean]
    by_family: dict[str, list[secret_corpus.Sample]] = defaultdict(list)
    for sample in positives:
        by_family[sample.family].append(sample)
    rows: list[tuple[object, ...]] = []
    for family in blind_corpus.FAMILIES:
        items = by_family[family]
        rows.append(
            (
                blind_corpus.FAMILY_NAMES[family],
                len(items),
                pct(sum(on[id(s)] for s in items), len(items)),
                pct(sum(off[id(s)] for s in items), len(items)),
            )
        )
    total = len(positives)
    rows.append(("ALL", total, pct(sum(on.values()), total), pct(sum(off.values()), total)))
    table(f"recall per family (seed {args.seed})", ("family", "n", "table on", "table off"), rows)
    table(
        "false positives (notes flagged)",
        ("corpus", "n", "table on", "table off"),
        [
            ("clean engineering notes", len(clean), pct(sum(clean_on), len(clean)), pct(sum(clean_off), len(clean))),
            ("hard negatives of the tests", len(hard), pct(sum(hard_on), len(hard)), "-"),
        ],
    )
    if args.misses:
        missed = Counter(s.kind for s in positives if not off[id(s)])
        wrong = Counter(s.kind for s, bad in zip(clean, clean_on, strict=True) if bad)
        print("\nmissed with the table off:", dict(missed.most_common()))
        print("clean notes flagged:", dict(wrong.most_common()))
        print("hard negatives flagged:", sum(hard_on))


if __name__ == "__main__":
    main()
