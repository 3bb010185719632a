"""`lifecycle log`: tail windows that widen, field-value matching, untrusted lines, links, the CLI."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from conftest import write_connection
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from continuity import tunables
from continuity.cli import app
from continuity.errors import UsageError
from continuity.local.connection import render_connection
from continuity.recall import journal_search
from continuity.recall.journal_search import TailReader

DEVICE = "lap"


def entry(n: int, *, device: str = DEVICE, op: str = "note.new", path: str | None = None, **extra: Any) -> str:
    doc: dict[str, Any] = {
        "ts": f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}Z",
        "device": device,
        "op": op,
        "id": f"n{n}",
        "path": path or f"20-state/candidates/n{n}.md",
        "sha256": None,
    }
    doc.update(extra)
    return json.dumps(doc, separators=(",", ":"))


def journal(root: Path, device: str, lines: list[str] | bytes, *, final_newline: bool = True) -> Path:
    file = root / "50-devices" / device / "journal.jsonl"
    file.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(lines, bytes):
        file.write_bytes(lines)
    else:
        file.write_text("\n".join(lines) + ("\n" if final_newline and lines else ""), encoding="utf-8")
    return file


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "50-devices").mkdir(parents=True)
    return root


def ids(found: journal_search.LogSearch) -> list[str | None]:
    return [e.id for e in found.results]


# ------------------------------------------------------------------------------------ tail reader


def tail(data: bytes, **options: Any) -> list[bytes | None]:
    with tempfile.TemporaryFile() as handle:
        handle.write(data)
        handle.flush()
        reader = TailReader(handle.fileno(), len(data), **options)
        out: list[bytes | None] = []
        while True:
            got = reader.take(3)
            out.extend(got)
            if len(got) < 3:
                break
        assert reader.complete or reader.cut
        return out


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30),
    st.booleans(),
    st.integers(min_value=1, max_value=64),
)
def test_tail_reader_returns_every_line_newest_first(lines: list[bytes], final_newline: bool, block: int) -> None:
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    expected = data.split(b"\n")
    if expected[-1] == b"":
        expected.pop()  # a final newline ends the last line; an empty file has no lines
    assert tail(data, block=block) == list(reversed(expected))


def test_tail_reader_drops_an_oversized_line_as_one_malformed_line() -> None:
    data = b"first\n" + b"x" * 100 + b"\nlast\n"
    assert tail(data, block=7, max_line=20) == [b"last", None, b"first"]
    assert tail(b"y" * 50, block=8, max_line=20) == [None]
    assert tail(b"a\n" + b"z" * 30 + b"\n", block=64, max_line=20) == [None, b"a"]


def test_tail_reader_stops_at_its_byte_bound() -> None:
    data = b"".join(b"line%03d\n" % n for n in range(100))
    with tempfile.TemporaryFile() as handle:
        handle.write(data)
        handle.flush()
        reader = TailReader(handle.fileno(), len(data), block=16, max_bytes=64)
        got = reader.take(1000)
    assert got[0] == b"line099" and len(got) < 100
    assert reader.cut and not reader.complete


# --------------------------------------------------------------------------------------- search


def test_newest_entries_first_across_devices(vault: Path) -> None:
    journal(vault, "lap", [entry(n) for n in (1, 3, 5)])
    journal(vault, "desk", [entry(n, device="desk") for n in (2, 4, 6)])
    found = journal_search.search(vault)
    assert ids(found) == ["n6", "n5", "n4", "n3", "n2", "n1"]
    assert [e.device for e in found.results][:2] == ["desk", "lap"]
    assert not found.truncated and found.malformed == 0
    assert found.used_window_lines == tunables.LOG_DEFAULT_WINDOW_LINES


def test_equal_times_put_the_later_line_first(vault: Path) -> None:
    journal(vault, "lap", [entry(1, id="first"), entry(1, id="second")])
    assert ids(journal_search.search(vault)) == ["second", "first"]


def test_limit_and_truncated(vault: Path) -> None:
    journal(vault, "lap", [entry(n) for n in range(10)])
    found = journal_search.search(vault, limit=3)
    assert ids(found) == ["n9", "n8", "n7"] and found.truncated
    found = journal_search.search(vault, limit=10)
    assert len(found.results) == 10 and not found.truncated


def test_query_matches_field_values_not_keys_or_timestamps(vault: Path) -> None:
    journal(vault, "lap", [entry(1, op="lease.acquire", id=None, path=".continuity/leases/lap.json")])
    for query in ("path", "ts", "sha256", "device", "2026", "00:01", '"op"', "{"):
        assert journal_search.search(vault, query).results == (), query
    for query in ("lease", "lap", ".continuity/", "acquire"):
        assert len(journal_search.search(vault, query).results) == 1, query


def test_escaped_characters_match_as_themselves(vault: Path) -> None:
    journal(
        vault,
        "lap",
        [
            json.dumps(
                {
                    "ts": "2026-01-01T00:00:01Z",
                    "device": "lap",
                    "op": "note.new",
                    "id": "a",
                    "path": 'caf\u00e9 "quoted" \\ back\tslash.md',
                    "sha256": None,
                }
            ),
            entry(2, path="plain.md"),
        ],
    )
    raw = (vault / "50-devices/lap/journal.jsonl").read_text()
    assert "\\u00e9" in raw  # the line itself holds only the escape
    assert ids(journal_search.search(vault, "café")) == ["a"]
    assert ids(journal_search.search(vault, '"quoted"')) == ["a"]
    assert ids(journal_search.search(vault, "\\ back\t")) == ["a"]
    assert ids(journal_search.search(vault, "u00e9")) == []


def test_literal_queries_are_literal_and_case_sensitive(vault: Path) -> None:
    journal(vault, "lap", [entry(1, path="a.b/c(d)*.md"), entry(2, path="aXb/c.md"), entry(3, path="A.B/x.md")])
    assert ids(journal_search.search(vault, "a.b")) == ["n1"]
    assert ids(journal_search.search(vault, "(d)*")) == ["n1"]
    assert ids(journal_search.search(vault, "A.B")) == ["n3"]


def test_regular_expressions_between_slashes(vault: Path) -> None:
    journal(vault, "lap", [entry(1, op="note.new"), entry(2, op="note.approve"), entry(3, op="lease.acquire")])
    assert ids(journal_search.search(vault, "/^note\\./")) == ["n2", "n1"]
    assert ids(journal_search.search(vault, "/APPROVE|acquire$/")) == ["n3"]
    assert ids(journal_search.search(vault, "/(?i)APPROVE/")) == ["n2"]
    assert ids(journal_search.search(vault, "/")) == ["n3", "n2", "n1"]  # a lone slash is a literal
    with pytest.raises(UsageError):
        journal_search.search(vault, "/[unclosed/")


def test_malformed_lines_are_skipped_and_counted(vault: Path) -> None:
    good = [entry(n) for n in range(3)]
    bad = [
        "not json",
        "",
        "[1, 2]",
        json.dumps({"ts": "2026-01-01T00:00:00Z", "device": "lap", "op": "x", "path": "p"}),  # keys missing
        entry(9, id=5),
        entry(9).replace('"path":"20-state/candidates/n9.md"', '"path":null'),
        entry(9, device="desk"),  # filed in another device's journal
        entry(9, ts="yesterday"),
        "[" * 100_000,
        "x" * (tunables.LOG_MAX_LINE_BYTES + 10),
    ]
    data = "\n".join([good[0], *bad, good[1], good[2]]).encode() + b"\n\xff\xfe\n" + good[0][:25].encode()
    journal(vault, "lap", data)
    found = journal_search.search(vault)
    assert ids(found) == ["n2", "n1", "n0"]
    assert found.malformed == len(bad) + 2  # plus invalid UTF-8 and the torn final line
    assert journal_search.search(vault, "/n/").malformed == found.malformed


def test_the_window_widens_fourfold_until_enough_match(vault: Path) -> None:
    journal(vault, "lap", [entry(0, op="rare")] + [entry(n) for n in range(1, 1000)])
    found = journal_search.search(vault, "rare", window=10)
    assert ids(found) == ["n0"]
    assert found.used_window_lines == 2560  # 10, 40, 160, 640: not yet; 2560 reaches the first line
    assert not found.truncated
    found = journal_search.search(vault, "note.new", window=10, limit=5)
    assert found.used_window_lines == 10 and len(found.results) == 5 and found.truncated
    found = journal_search.search(vault, "nothing", window=10)
    assert found.results == () and found.used_window_lines == 2560 and not found.truncated


def test_the_window_stops_at_its_maximum(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tunables, "LOG_MAX_WINDOW_LINES", 100)
    journal(vault, "lap", [entry(0, op="rare")] + [entry(n) for n in range(1, 300)])
    found = journal_search.search(vault, "rare", window=10)
    assert found.results == () and found.used_window_lines == 100 and found.truncated


def test_without_a_query_the_newest_entries_are_listed(vault: Path) -> None:
    journal(vault, "lap", [entry(n) for n in range(50)])
    found = journal_search.search(vault, None, limit=20, window=5)
    assert ids(found) == [f"n{n}" for n in range(49, 29, -1)]
    assert found.used_window_lines == 20 and found.truncated


def test_links_odd_folders_and_fifos_are_never_read(vault: Path, tmp_path: Path) -> None:
    outside = journal(tmp_path / "elsewhere", "lap", [entry(1, device="far")])
    (vault / "50-devices/far").symlink_to(outside.parent, target_is_directory=True)
    (vault / "50-devices/near").mkdir()
    (vault / "50-devices/near/journal.jsonl").symlink_to(outside)
    journal(vault, "Not A Device", [entry(2, device="Not A Device")])
    (vault / "50-devices/piped").mkdir()
    os.mkfifo(vault / "50-devices/piped/journal.jsonl")
    (vault / "50-devices/folder").mkdir()
    (vault / "50-devices/folder/journal.jsonl").mkdir()
    journal(vault, "lap", [entry(3)])
    found = journal_search.search(vault)
    assert ids(found) == ["n3"]


def test_no_journals_at_all(tmp_path: Path) -> None:
    found = journal_search.search(tmp_path)
    assert found.results == () and not found.truncated and found.malformed == 0


@pytest.mark.parametrize(("limit", "window"), [(0, 10), (1, 0), (1, tunables.LOG_MAX_WINDOW_LINES + 1)])
def test_bad_numbers_are_usage_errors(vault: Path, limit: int, window: int) -> None:
    with pytest.raises(UsageError):
        journal_search.search(vault, limit=limit, window=window)


# ------------------------------------------------------------------------------------------- CLI


def cli(args: list[str]) -> Result:
    return CliRunner().invoke(app, args, prog_name="lifecycle")


@pytest.fixture
def connected(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    file = tmp_path / "connection"
    write_connection(file, render_connection(vault, DEVICE, "demo", None))
    monkeypatch.setenv("AGENT_VAULT_CONNECTION", str(file))
    return vault


def test_cli_text_lists_entries_and_a_summary(connected: Path) -> None:
    journal(connected, "lap", [entry(1, sha256="ab" * 32), "junk", entry(2, path="evil\u001b[31m<note>.md")])
    result = cli(["log"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("2026-01-01T00:00:02Z  lap  note.new  n2  evil")
    assert "\u001b" not in result.stdout and "<note>" not in result.stdout
    assert lines[1].endswith("sha256:" + "ab" * 6)
    assert lines[2] == "2 entries, newest first, from the last 50000 lines of 1 journal; 1 malformed line skipped"


def test_cli_json_keys_are_pinned(connected: Path) -> None:
    journal(connected, "lap", [entry(1)])
    result = cli(["log", "note", "--json", "--limit", "5", "--window", "100"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc) == ["version", "results", "truncated", "used_window_lines", "malformed"]
    assert doc["version"] == 1 and doc["used_window_lines"] == 100
    assert list(doc["results"][0]) == ["ts", "device", "op", "id", "path", "sha256"]


def test_cli_zero_results_exit_0(connected: Path) -> None:
    result = cli(["log", "nothing"])
    assert result.exit_code == 0
    assert result.stdout.startswith("0 entries")


@pytest.mark.parametrize(
    "args", [["log", "/[bad/"], ["log", "--limit", "0"], ["log", "--window", "0"], ["log", "--window", "1000001"]]
)
def test_cli_usage_errors_exit_2_with_one_line(connected: Path, args: list[str]) -> None:
    result = cli(args)
    assert result.exit_code == 2
    assert result.stderr.startswith("lifecycle: error:") and result.stderr.count("\n") == 1


def test_cli_bad_regex_is_a_usage_error_even_without_a_connection() -> None:
    assert cli(["log", "/(/"]).exit_code == 2


def test_cli_without_a_connection_exits_3() -> None:
    result = cli(["log"])
    assert result.exit_code == 3 and result.stderr.startswith("lifecycle: error:")
