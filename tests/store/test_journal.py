"""The per-device journal: exact keys, tolerant reading, tail windows, and lines that never tear."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from writer_support import NOW

from continuity.records import journal as journal_records
from continuity.store import journal


def test_line_has_exactly_the_documented_keys() -> None:
    line = journal.entry_line("laptop", "note.new", "cand-x", "20-state/candidates/cand-x.md", "ab" * 32, NOW)
    doc = json.loads(line)
    assert list(doc) == ["ts", "device", "op", "id", "path", "sha256"]
    assert doc["ts"] == "2026-11-30T03:57:00Z"
    assert "\n" not in line


def test_hostile_values_cannot_break_a_line() -> None:
    line = journal.entry_line("laptop", "op", None, 'a"\nb\u2028c.md', None, NOW)
    assert "\n" not in line and "\u2028" not in line
    entry = journal_records.parse_line(line)
    assert entry is not None and entry.path == 'a"\nb\u2028c.md'


def test_append_and_read_round_trip(tmp_path: Path) -> None:
    file = tmp_path / "journal.jsonl"
    for n in range(3):
        journal.append(file, "laptop", "note.new", f"n{n}", f"p{n}.md", None, NOW)
    read = journal_records.read(file)
    assert [e.id for e in read.entries] == ["n0", "n1", "n2"]
    assert [e.line for e in read.entries] == [1, 2, 3]
    assert read.malformed == 0 and read.complete
    assert read.entries[0].to_json()["path"] == "p0.md"
    assert read.entries[0].time == NOW
    assert oct(file.stat().st_mode & 0o777) == "0o600"


def test_reader_tolerates_malformed_lines(tmp_path: Path) -> None:
    file = tmp_path / "journal.jsonl"
    good = journal.entry_line("laptop", "note.new", "a", "a.md", None, NOW)
    file.write_bytes(
        "\n".join(
            [
                good,
                "not json",
                "[1, 2]",
                json.dumps({"ts": 1, "device": "x", "op": "y", "path": "z"}),
                json.dumps({"ts": "t", "device": "x", "op": "y", "path": "z", "id": 5}),
                "",
                good,
            ]
        ).encode()
        + b"\n\xff\xfe\n"
        + good[:20].encode()  # a torn final line, as a foreign tool might leave
    )
    read = journal_records.read(file)
    assert len(read.entries) == 2
    assert read.malformed == 7
    assert [e.line for e in read.entries] == [1, 7]
    assert len(list(journal_records.iter_entries(file))) == 2


def test_missing_link_and_fifo_journals_read_as_empty(tmp_path: Path) -> None:
    assert journal_records.read(tmp_path / "absent.jsonl").entries == []
    real = tmp_path / "real.jsonl"
    journal.append(real, "laptop", "op", None, "p", None, NOW)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    assert journal_records.read(link).entries == []
    fifo = tmp_path / "fifo.jsonl"
    import os

    os.mkfifo(fifo)
    assert journal_records.read(fifo).entries == []


@pytest.mark.parametrize("total", [0, 1, 5, 3000])
@pytest.mark.parametrize("window", [0, 1, 4, 5, 2999, 10_000])
def test_tail_window(tmp_path: Path, total: int, window: int) -> None:
    file = tmp_path / "journal.jsonl"
    lines = [journal.entry_line("laptop", "op", f"n{n}", "x" * (n % 50), None, NOW) for n in range(total)]
    file.write_text("".join(line + "\n" for line in lines))
    read = journal_records.read(file, window)
    expected = [f"n{n}" for n in range(total)][max(0, total - window) :] if window else []
    assert [e.id for e in read.entries] == expected
    assert read.complete == (window >= total)
    assert read.malformed == 0


APPENDER = """
import datetime, pathlib, sys
from continuity.store import journal
file, tag = pathlib.Path(sys.argv[1]), sys.argv[2]
now = datetime.datetime.now(datetime.timezone.utc)
for n in range(300):
    journal.append(file, "laptop", "note.new", f"{tag}-{n}", "p/" + "x" * (n * 7 % 900) + ".md", None, now)
"""


def test_concurrent_appenders_never_interleave(tmp_path: Path) -> None:
    file = tmp_path / "journal.jsonl"
    procs = [subprocess.Popen([sys.executable, "-c", APPENDER, str(file), f"w{k}"]) for k in range(4)]
    assert [p.wait(60) for p in procs] == [0, 0, 0, 0]
    read = journal_records.read(file)
    assert read.malformed == 0
    assert len(read.entries) == 1200
    for k in range(4):
        ids = [e.id for e in read.entries if e.id and e.id.startswith(f"w{k}-")]
        assert ids == [f"w{k}-{n}" for n in range(300)]
