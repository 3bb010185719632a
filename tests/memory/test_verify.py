"""`lifecycle verify ID` and `lifecycle revalidate --json`: re-verifying approved notes through the write path."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from writer_support import NOW, cli, connect, context, journal_lines, make_vault, write_lease

from continuity import tunables
from continuity.errors import InputRejected, LeaseHeld
from continuity.memory import revalidation, review as memory
from continuity.vault import layout, notes

DAY = dt.timedelta(days=1)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault")


def approved(root: Path, title: str = "Tests need Docker") -> memory.Approved:
    cand = memory.new_candidate(context(root, now=NOW), "fact", title, "Seen in CI.\n", evidence="ci log")
    return memory.approve(context(root, now=NOW), cand.id)


def meta_of(root: Path, rel: str) -> dict[str, object]:
    return notes.parse_note((root / rel).read_bytes(), rel).meta


def set_policy(root: Path, line: str) -> None:
    (root / layout.MEMORY_POLICY).write_text(f"---\nid: memory-policy\ntype: policy\n{line}\n---\n# Policy\n")


def test_verify_sets_today_and_the_default_interval(root: Path) -> None:
    note = approved(root)
    later = NOW + 100 * DAY
    before = (root / note.rel).read_text()
    result = revalidation.verify(context(root, now=later), note.id)
    assert result.changed and result.interval_days == tunables.REVALIDATE_AFTER_DAYS
    meta = meta_of(root, note.rel)
    assert notes.as_date(meta["verified"]) == later.date()
    assert notes.as_date(meta["revalidate_by"]) == later.date() + dt.timedelta(days=tunables.REVALIDATE_AFTER_DAYS)
    assert result.previous_revalidate_by == NOW.date() + dt.timedelta(days=tunables.REVALIDATE_AFTER_DAYS)
    # Everything else is kept: the body, the title, the provenance.
    assert (root / note.rel).read_text().split("---\n", 2)[2] == before.split("---\n", 2)[2]
    assert meta["title"] == "Tests need Docker" and meta["status"] == "approved"
    line = journal_lines(root)[-1]
    assert (line["op"], line["id"], line["path"]) == ("note.verify", note.id, note.rel)
    assert set(result.to_json()) == {
        "version",
        "id",
        "path",
        "verified",
        "revalidate_by",
        "previous_revalidate_by",
        "interval_days",
        "changed",
    }
    # The note is no longer due.
    assert revalidation.revalidate(root, later + DAY)[0] == []


def test_verify_twice_on_one_day_writes_once(root: Path) -> None:
    note = approved(root)
    revalidation.verify(context(root, now=NOW + 5 * DAY), note.id)
    lines = len(journal_lines(root))
    again = revalidation.verify(context(root, now=NOW + 5 * DAY), note.id)
    assert not again.changed and len(journal_lines(root)) == lines


def test_the_policy_sets_the_interval_for_verify_and_approve(root: Path) -> None:
    set_policy(root, "revalidate_after_days: 30")
    assert revalidation.interval_days(root) == 30
    note = approved(root)
    result = revalidation.verify(context(root, now=NOW + DAY), note.id)
    assert result.revalidate_by == (NOW + DAY).date() + dt.timedelta(days=30)


@pytest.mark.parametrize(
    "line",
    [
        "revalidate_after_days: 0",
        "revalidate_after_days: ninety",
        "revalidate_after_days: true",
        f"revalidate_after_days: {tunables.REVALIDATE_MAX_DAYS + 1}",
    ],
)
def test_a_bad_policy_interval_refuses_the_write(root: Path, line: str) -> None:
    note = approved(root)
    set_policy(root, line)
    before = (root / note.rel).read_bytes()
    with pytest.raises(InputRejected, match="revalidate_after_days"):
        revalidation.verify(context(root, now=NOW + DAY), note.id)
    assert (root / note.rel).read_bytes() == before


def test_only_approved_notes_are_verified(root: Path) -> None:
    note = approved(root)
    cand = memory.new_candidate(context(root, now=NOW), "fact", "Still a candidate", "x\n")
    with pytest.raises(InputRejected, match="is a candidate"):
        revalidation.verify(context(root, now=NOW), cand.id)
    with pytest.raises(InputRejected, match=f"verify the approved note {note.id}"):
        revalidation.verify(context(root, now=NOW), note.candidate_id)
    newer = approved(root, "Tests need Podman")
    memory.supersede(context(root, now=NOW), note.id, newer.id)
    with pytest.raises(InputRejected, match=f"superseded by {newer.id}"):
        revalidation.verify(context(root, now=NOW), note.id)
    with pytest.raises(InputRejected, match="no note with id"):
        revalidation.verify(context(root, now=NOW), "nothing-here")


def test_a_foreign_lease_refuses_verify(root: Path) -> None:
    note = approved(root)
    write_lease(root, "desktop", NOW + DAY)
    before = (root / note.rel).read_bytes()
    with pytest.raises(LeaseHeld):
        revalidation.verify(context(root, now=NOW), note.id)
    assert (root / note.rel).read_bytes() == before


@pytest.fixture
def connected(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    connect(monkeypatch, tmp_path, root)
    return root


def test_cli_verify_and_revalidate(connected: Path) -> None:
    cand = json.loads(cli(["note", "new", "--type", "fact", "--title", "One", "--json"]).stdout)["id"]
    note_id = json.loads(cli(["approve", cand, "--yes", "--json"]).stdout)["id"]
    rel = f"{layout.FACTS}/{note_id}.md"
    note = notes.parse_note((connected / rel).read_bytes(), rel)
    (connected / rel).write_text(notes.compose({**note.meta, "revalidate_by": dt.date(2000, 1, 1)}, note.body))
    doc = json.loads(cli(["revalidate", "--json"]).stdout)
    assert set(doc) == {"version", "today", "due", "invalid"}
    assert [item["id"] for item in doc["due"]] == [note_id]
    assert set(doc["due"][0]) == {"id", "path", "type", "title", "verified", "revalidate_by", "overdue_days"}
    assert doc["due"][0]["revalidate_by"] == "2000-01-01" and doc["due"][0]["overdue_days"] > 0
    assert "lifecycle verify ID" in cli(["revalidate"]).stdout

    refused = cli(["verify", note_id])  # no terminal and no --yes
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    done = cli(["verify", note_id, "--yes", "--json"])
    assert done.exit_code == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["changed"] and result["verified"] == doc["today"]
    assert json.loads(cli(["revalidate", "--json"]).stdout)["due"] == []

    wrong = cli(["verify", cand, "--yes"])
    assert wrong.exit_code == 5
    assert wrong.stderr.startswith("lifecycle: error:") and len(wrong.stderr.strip().splitlines()) == 1


def test_a_secret_like_title_is_withheld_from_the_listing(root: Path) -> None:
    from writer_support import FAKE_SECRET

    note = approved(root)
    meta = meta_of(root, note.rel)
    body = notes.parse_note((root / note.rel).read_bytes(), note.rel).body
    stale = {**meta, "title": f"key {FAKE_SECRET}", "revalidate_by": dt.date(2000, 1, 1)}
    (root / note.rel).write_text(notes.compose(stale, body))
    [due] = revalidation.revalidate(root, NOW)[0]
    assert due.id == note.id and FAKE_SECRET not in json.dumps(due.to_json())
