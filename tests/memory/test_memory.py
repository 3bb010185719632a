"""The improvement loop: candidates, approval, supersede, archive, revalidate, and soul/preference edits."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from writer_support import (
    FAKE_SECRET,
    NOW,
    all_files,
    cli,
    connect,
    context,
    journal_lines,
    make_vault,
    on_terminal,
    write_lease,
)

from continuity import errors, limits, tunables
from continuity.errors import InputRejected, LeaseHeld, UsageError
from continuity.memory import edits, lookup as memory_ids, revalidation, review as memory
from continuity.records import leases as lease_records
from continuity.store import writer
from continuity.vault import layout, notes, registry

DAY = dt.timedelta(days=1)
SOUL = "---\nid: soul\ntype: soul\nstatus: approved\n---\n# Soul\n\n## Brief\n\n- Careful and brief.\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault")


def meta_of(root: Path, rel: str) -> dict[str, object]:
    return notes.parse_note((root / rel).read_bytes(), rel).meta


def candidate(root: Path, title: str = "Tests need Docker", kind: str = "fact", **extra: object) -> memory.Created:
    ctx = context(root, now=NOW, session="s-1")
    return memory.new_candidate(ctx, kind, title, "The suite starts Postgres in Docker.\n", **extra)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------- candidates


def test_candidate_has_provenance(root: Path) -> None:
    created = candidate(root, evidence="tests/conftest.py starts a container", confidence="high")
    assert created.id == "cand-fact-tests-need-docker"
    assert created.rel == "20-state/candidates/cand-fact-tests-need-docker.md"
    assert created.to_json() == {"version": 1, "id": created.id, "path": created.rel}
    meta = meta_of(root, created.rel)
    assert meta["status"] == "candidate" and meta["type"] == "fact" and meta["scope"] == "project"
    assert meta["project"] == "demo" and meta["confidence"] == "high"
    assert meta["provenance"] == {"device": "laptop", "session": "s-1", "time": "2026-11-30T03:57:00Z"}
    assert meta["evidence"] == "tests/conftest.py starts a container"
    assert journal_lines(root)[-1]["op"] == "note.new"


def test_candidate_ids_never_collide(root: Path) -> None:
    first = candidate(root)
    second = candidate(root)
    assert second.id == first.id + "-2"
    # An archived id is not reused either.
    memory.archive(context(root, now=NOW), second.id)
    assert candidate(root).id == first.id + "-3"
    assert len({p.name for p in (root / layout.CANDIDATES).iterdir()}) == 2


def test_candidate_scopes_and_template(root: Path) -> None:
    device_note = memory.new_candidate(context(root, now=NOW), "lesson", "Use the fast disk", scope="device")
    meta = meta_of(root, device_note.rel)
    assert meta["scope"] == "device" and meta["device"] == "laptop" and "project" not in meta
    text = (root / device_note.rel).read_text()
    assert "## Lesson" in text  # the body came from templates/lesson.md
    assert "session" not in meta["provenance"]  # type: ignore[operator]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"kind": "opinion"}, UsageError),
        ({"scope": "world"}, UsageError),
        ({"confidence": "total"}, UsageError),
        ({"title": ""}, UsageError),
        ({"evidence": "x" * (tunables.EVIDENCE_MAX_CHARS + 1)}, UsageError),
        ({"body": "---\nonly: frontmatter\n---\n"}, InputRejected),
        ({"body": f"key {FAKE_SECRET}\n"}, InputRejected),
        ({"body": "x" * tunables.RECALL_NOTE_CAP_BYTES}, InputRejected),
    ],
)
def test_candidate_bad_input(root: Path, kwargs: dict[str, object], error: type[Exception]) -> None:
    args: dict[str, object] = {"kind": "fact", "title": "T", "body": "A claim.\n", **kwargs}
    with pytest.raises(error):
        memory.new_candidate(context(root, now=NOW), **args)  # type: ignore[arg-type]
    assert list((root / layout.CANDIDATES).iterdir()) == []


# ------------------------------------------------------------------------------------ approval


def test_approve_writes_approved_note_and_marks_candidate(root: Path) -> None:
    created = candidate(root)
    approved = memory.approve(context(root, now=NOW + DAY), created.id)
    assert approved.rel == "30-memory/facts/fact-tests-need-docker.md"
    meta = meta_of(root, approved.rel)
    assert meta["id"] == "fact-tests-need-docker" and meta["status"] == "approved"
    assert notes.as_date(meta["verified"]) == (NOW + DAY).date()
    assert notes.as_date(meta["revalidate_by"]) == (NOW + DAY).date() + dt.timedelta(days=90)
    assert meta["candidate"] == created.id and meta["provenance"]["session"] == "s-1"  # type: ignore[index]
    # The candidate left the review queue for the archive, marked approved (the audit trail).
    assert not (root / created.rel).exists() and approved.candidate_rel == f"90-archive/{created.rel}"
    cand = meta_of(root, approved.candidate_rel)
    assert cand["status"] == "approved" and cand["approved_as"] == approved.id
    assert (root / approved.rel).read_text().endswith("The suite starts Postgres in Docker.\n")
    assert set(approved.to_json()) == {"version", "id", "path", "candidate", "candidate_path", "revalidate_by"}
    with pytest.raises(InputRejected, match="not awaiting approval"):
        memory.approve(context(root, now=NOW), created.id)


def test_approve_completes_after_a_crash_between_writes(root: Path) -> None:
    created = candidate(root)
    approved = memory.approve(context(root, now=NOW), created.id)
    # Put the candidate back as it was before it moved: as if the writer died in between.
    cand_meta = meta_of(root, approved.candidate_rel)
    cand_meta.update({"status": "candidate"})
    del cand_meta["approved_as"], cand_meta["approved"]
    body = notes.parse_note((root / approved.candidate_rel).read_bytes(), approved.candidate_rel).body
    (root / approved.candidate_rel).unlink()
    (root / created.rel).write_text(notes.compose(cand_meta, body))
    again = memory.approve(context(root, now=NOW), created.id)
    assert again.id == approved.id
    assert len(list((root / layout.FACTS).iterdir())) == 1


@pytest.mark.parametrize("bad", ["../x", "x/../../y", "UPPER", "", "nothing-here"])
def test_approve_unknown_or_invalid_ids(root: Path, bad: str) -> None:
    with pytest.raises(InputRejected) as caught:
        memory.approve(context(root, now=NOW), bad)
    assert caught.value.exit_code == 5


def test_approve_preference_points_to_edit(root: Path) -> None:
    created = candidate(root, "Prefer tabs", kind="preference")
    with pytest.raises(InputRejected, match="edit preferences"):
        memory.approve(context(root, now=NOW), created.id)


def test_find_skips_malformed_notes_and_reports_ambiguity(root: Path) -> None:
    (root / layout.FACTS / "broken.md").write_text("---\nid: [\n---\n")
    (root / layout.FACTS / "a.md").write_text("---\nid: twin\ntype: fact\n---\n")
    (root / layout.DECISIONS / "b.md").write_text("---\nid: twin\ntype: decision\n---\n")
    with pytest.raises(InputRejected, match="ambiguous"):
        memory_ids.find_note(root, "twin", memory.MEMORY_FOLDERS)
    (root / layout.DECISIONS / "b.md").unlink()
    assert memory_ids.find_note(root, "twin", memory.MEMORY_FOLDERS).rel == "30-memory/facts/a.md"


def test_approve_refuses_a_note_that_claims_the_candidate_without_a_valid_id(root: Path) -> None:
    created = candidate(root)
    stray = root / layout.FACTS / "stray.md"
    stray.write_text(f"---\ntype: fact\nstatus: approved\ncandidate: {created.id}\n---\nx\n")
    with pytest.raises(InputRejected, match=r"30-memory/facts/stray\.md .*no valid id"):
        memory.approve(context(root, now=NOW), created.id)
    stray.write_text(f"---\nid: fact-stray\ntype: fact\nstatus: superseded\ncandidate: {created.id}\n---\nx\n")
    with pytest.raises(InputRejected, match=r"30-memory/facts/stray\.md .*status 'superseded'"):
        memory.approve(context(root, now=NOW), created.id)
    assert meta_of(root, created.rel)["status"] == "candidate"  # nothing was written
    assert sorted(p.name for p in (root / layout.FACTS).iterdir()) == ["stray.md"]


def test_find_reports_twins_even_under_the_guessed_name(root: Path) -> None:
    (root / layout.FACTS / "twin.md").write_text("---\nid: twin\ntype: fact\n---\n")
    (root / layout.LESSONS / "twin.md").write_text("---\nid: twin\ntype: lesson\n---\n")
    with pytest.raises(InputRejected, match=re.escape("ambiguous: 30-memory/facts/twin.md, 30-memory/lessons/twin.md")):
        memory_ids.find_note(root, "twin", memory.MEMORY_FOLDERS)
    # A note renamed by hand keeps its id: it is a twin of the note under the guessed name.
    (root / layout.LESSONS / "twin.md").unlink()
    (root / layout.DECISIONS / "Renamed in Obsidian.md").write_text("---\nid: twin\ntype: decision\n---\n")
    with pytest.raises(InputRejected, match=r"ambiguous.*edit the id in one of them"):
        memory_ids.find_note(root, "twin", memory.MEMORY_FOLDERS)


@pytest.mark.parametrize("by_fd", [True, False], ids=["openat", "full-paths"])
def test_find_says_what_stands_under_the_guessed_name(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by_fd: bool
) -> None:
    monkeypatch.setattr(memory_ids, "_BY_FD", by_fd)  # both walks: by folder descriptor and by full path
    outside = tmp_path / "elsewhere.md"
    outside.write_text("---\nid: linked\ntype: fact\n---\n")
    (root / layout.FACTS / "linked.md").symlink_to(outside)
    huge = "---\nid: huge\n---\n" + "x" * limits.LIFECYCLE_TEXT_CAP_BYTES
    (root / layout.FACTS / "huge.md").write_text(huge)
    (root / layout.FACTS / "folder.md").mkdir()
    (root / layout.FACTS / "broken.md").write_text("---\nid: [\n---\n")
    (root / layout.FACTS / "renamed.md").write_text("---\nid: other\ntype: fact\n---\n")
    expected = {
        "linked": "30-memory/facts/linked.md exists but is a symbolic link",
        "huge": f"30-memory/facts/huge.md exists but is {len(huge):,} bytes, over its cap",
        "folder": "30-memory/facts/folder.md exists but is not a regular file",
        "broken": "30-memory/facts/broken.md",
        "renamed": "30-memory/facts/renamed.md has id 'other'",
    }
    for note_id, said in expected.items():
        with pytest.raises(InputRejected) as caught:
            memory_ids.find_note(root, note_id, memory.MEMORY_FOLDERS)
        assert caught.value.exit_code == 5
        message = str(caught.value)
        assert message.startswith(f"no note with id {note_id} in ") and said in message, message


def test_new_ids_avoid_ids_in_use_under_other_names(root: Path) -> None:
    # Obsidian renames files, not frontmatter ids: the id is still taken.
    (root / layout.FACTS / "Tests need Docker.md").write_text(
        "---\nid: fact-tests-need-docker\ntype: fact\nstatus: approved\n---\nx\n"
    )
    (root / layout.CANDIDATES / "renamed candidate.md").write_text(
        "---\nid: cand-fact-tests-need-docker\ntype: fact\nstatus: candidate\n---\nx\n"
    )
    created = candidate(root)
    assert created.id == "cand-fact-tests-need-docker-2"
    approved = memory.approve(context(root, now=NOW), created.id)
    assert approved.id == "fact-tests-need-docker-2"
    assert memory_ids.find_note(root, approved.id, memory.MEMORY_FOLDERS).rel == approved.rel
    assert memory_ids.find_note(root, "fact-tests-need-docker", memory.MEMORY_FOLDERS).rel.endswith("Docker.md")


def test_free_id_gives_up_with_a_next_step(root: Path) -> None:
    base = "cand-fact-tests-need-docker"
    for attempt in range(1, tunables.NOTE_ID_ATTEMPTS + 1):
        name = base if attempt == 1 else f"{base}-{attempt}"
        (root / layout.CANDIDATES / f"{name}.md").write_text(f"---\nid: {name}\n---\n")
    with pytest.raises(InputRejected, match=f"{base}-{tunables.NOTE_ID_ATTEMPTS} are all taken") as caught:
        candidate(root)
    assert caught.value.field == "title"  # the command line names it --title, a tool call title
    assert errors.message(caught.value, errors.COMMAND_LINE).endswith("; choose a different --title")
    assert errors.message(caught.value, errors.TOOL_CALL).endswith("; choose a different title")


# ------------------------------------------------------------------------------ supersede/archive


def _approved(root: Path, title: str) -> memory.Approved:
    return memory.approve(context(root, now=NOW), candidate(root, title).id)


def test_supersede_links_both(root: Path) -> None:
    old = _approved(root, "Tests need Docker")
    new = _approved(root, "Tests need Podman")
    result = memory.supersede(context(root, now=NOW), old.id, new.id)
    assert set(result.to_json()) == {"version", "old", "old_path", "new", "new_path"}
    assert meta_of(root, old.rel)["status"] == "superseded"
    assert meta_of(root, old.rel)["superseded_by"] == new.id
    assert meta_of(root, new.rel)["supersedes"] == old.id
    with pytest.raises(InputRejected, match="not an approved note"):
        memory.supersede(context(root, now=NOW), old.id, new.id)
    with pytest.raises(InputRejected, match="itself"):
        memory.supersede(context(root, now=NOW), new.id, new.id)
    with pytest.raises(InputRejected):
        memory.supersede(context(root, now=NOW), "../x", new.id)


def test_a_note_can_supersede_several(root: Path) -> None:
    first = _approved(root, "Tests need Docker")
    second = _approved(root, "Tests need Podman")
    merged = _approved(root, "Tests need a container engine")
    memory.supersede(context(root, now=NOW), first.id, merged.id)
    assert meta_of(root, merged.rel)["supersedes"] == first.id  # one: a single id, as before
    memory.supersede(context(root, now=NOW), second.id, merged.id)
    assert meta_of(root, merged.rel)["supersedes"] == [first.id, second.id]
    assert meta_of(root, first.rel)["superseded_by"] == merged.id
    assert meta_of(root, second.rel)["superseded_by"] == merged.id


def test_supersede_reads_and_refuses_what_is_already_there(root: Path) -> None:
    old = _approved(root, "Tests need Docker")
    new = _approved(root, "Tests need Podman")
    path = root / new.rel
    text = path.read_text()
    # Written by hand (or by a run that stopped before marking the old note): no duplicate.
    path.write_text(text.replace("status: approved\n", f"status: approved\nsupersedes: {old.id}\n", 1))
    memory.supersede(context(root, now=NOW), old.id, new.id)
    assert meta_of(root, new.rel)["supersedes"] == old.id
    third = _approved(root, "Tests need nothing")
    path.write_text(text.replace("status: approved\n", "status: approved\nsupersedes: {a: 1}\n", 1))
    with pytest.raises(InputRejected, match=f"{new.rel}: supersedes is neither an id nor a list of ids"):
        memory.supersede(context(root, now=NOW), third.id, new.id)
    assert meta_of(root, third.rel)["status"] == "approved"


def test_archive_moves_under_original_path(root: Path) -> None:
    old = _approved(root, "Tests need Docker")
    result = memory.archive(context(root, now=NOW), old.id)
    assert result.rel == f"90-archive/{old.rel}"
    assert not (root / old.rel).exists()
    meta = meta_of(root, result.rel)
    assert meta["status"] == "archived" and meta["id"] == old.id
    with pytest.raises(InputRejected, match="no note"):
        memory.archive(context(root, now=NOW), old.id)
    with pytest.raises(InputRejected):
        memory.archive(context(root, now=NOW), "../../etc/passwd")
    archive_ops = [line for line in journal_lines(root) if line["op"] == "note.archive"]
    assert [line["path"] for line in archive_ops] == [result.rel, old.rel]


def test_archive_never_overwrites_a_different_note_and_archives_beside_it(root: Path) -> None:
    old = _approved(root, "Tests need Docker")
    target = root / "90-archive" / old.rel
    target.parent.mkdir(parents=True)
    target.write_text("---\nid: someone-else\n---\n")
    result = memory.archive(context(root, now=NOW), old.id)
    assert target.read_text() == "---\nid: someone-else\n---\n"
    assert result.rel != f"90-archive/{old.rel}" and result.rel.startswith(f"90-archive/{old.rel[:-3]}.")
    assert meta_of(root, result.rel)["id"] == old.id and not (root / old.rel).exists()


def test_archive_finishes_a_run_that_stopped_before_removing_the_original(root: Path) -> None:
    old = _approved(root, "Tests need Docker")
    original = (root / old.rel).read_bytes()
    result = memory.archive(context(root, now=NOW), old.id)
    archived = (root / result.rel).read_bytes()
    (root / old.rel).write_bytes(original)  # as if the removal never happened
    assert memory.archive(context(root, now=NOW + DAY), old.id) == result
    assert not (root / old.rel).exists()
    assert (root / result.rel).read_bytes() == archived


def test_archive_keeps_a_later_note_that_reused_an_archived_id(root: Path) -> None:
    rel = f"{layout.SESSIONS}/s1.md"
    (root / layout.SESSIONS).mkdir(parents=True, exist_ok=True)
    (root / rel).write_text("---\nid: s1\ntype: session\n---\nThe first session.\n")
    memory.archive(context(root, now=NOW), "s1")
    (root / rel).write_text("---\nid: s1\ntype: session\n---\nA later session, same name.\n")
    later = memory.archive(context(root, now=NOW + DAY), "s1")  # archived beside it, never over it
    assert later.rel != f"90-archive/{rel}" and "A later session" in (root / later.rel).read_text()
    assert "The first session" in (root / "90-archive" / rel).read_text()


# ------------------------------------------------------------------------------------- revalidate


def test_revalidate_lists_overdue_notes(root: Path) -> None:
    old = _approved(root, "Tests need Docker")
    (root / layout.LESSONS / "undated.md").write_text("---\nid: undated\ntype: lesson\nstatus: approved\n---\nx\n")
    (root / layout.LESSONS / "broken.md").write_text("---\nid: [\n---\n")
    due, invalid = revalidation.revalidate(root, NOW + 10 * DAY)
    assert [item.id for item in due] == ["undated"]
    assert [rel for rel, _ in invalid] == ["30-memory/lessons/broken.md"]
    due, _ = revalidation.revalidate(root, NOW + 91 * DAY)
    assert [item.id for item in due] == ["undated", old.id]
    assert set(due[1].to_json()) == {"id", "path", "type", "title", "verified", "revalidate_by", "overdue_days"}
    assert due[1].overdue_days == 1 and due[0].overdue_days is None


# ---------------------------------------------------------------------------------------- edits


def test_edit_soul_archives_previous_version(root: Path) -> None:
    previous = b"---\nid: soul\ntype: soul\n---\nold, with a broken \xff byte\n"
    (root / registry.SOUL.path).write_bytes(previous)
    with pytest.raises(InputRejected):
        edits.plan_edit(root, "soul", "---\ntype: preferences\n---\nx\n")  # wrong type
    plan = edits.plan_edit(root, "soul", SOUL)
    assert plan.diff and plan.diff[0].startswith("--- 00-system/SOUL.md")
    edited = edits.apply_edit(context(root, now=NOW), plan)
    assert edited.archived == "90-archive/00-system/SOUL.20261130T035700Z.md"
    assert (root / edited.archived).read_bytes() == previous
    assert (root / registry.SOUL.path).read_text() == SOUL
    ops = [line["op"] for line in journal_lines(root)]
    assert ops == ["lease.acquire", "soul.edit", "soul.edit", "lease.release"]
    assert lease_records.status(root, "laptop", NOW).state == "none"  # the lease taken for the edit is given back
    # The same edit again is no change; a second real edit in the same second gets its own archive name.
    assert edits.plan_edit(root, "soul", SOUL).unchanged
    again = edits.apply_edit(context(root, now=NOW), edits.plan_edit(root, "soul", SOUL + "more\n"))
    assert again.archived == "90-archive/00-system/SOUL.20261130T035700Z-2.md"


def test_edit_keeps_a_lease_already_held(root: Path) -> None:
    writer.acquire_lease(context(root, now=NOW), 3600, "long task")
    edits.apply_edit(context(root, now=NOW), edits.plan_edit(root, "preferences", "---\ntype: preferences\n---\nx\n"))
    current = lease_records.status(root, "laptop", NOW)
    assert current.state == "held" and current.lease is not None and current.lease.task == "long task"


def test_edit_refusals(root: Path) -> None:
    with pytest.raises(InputRejected, match="cap"):
        edits.plan_edit(root, "soul", SOUL + "x" * limits.SOUL_CAP_BYTES)
    with pytest.raises(InputRejected, match="secret"):
        edits.plan_edit(root, "soul", SOUL + f"token {FAKE_SECRET}\n")
    with pytest.raises(InputRejected):
        edits.plan_edit(root, "soul", "no frontmatter\n")
    with pytest.raises(UsageError):
        edits.plan_edit(root, "index", SOUL)
    plan = edits.plan_edit(root, "soul", SOUL)
    write_lease(root, "desktop", NOW + DAY)
    with pytest.raises(LeaseHeld):
        edits.apply_edit(context(root, now=NOW), plan)
    assert not (root / registry.SOUL.path).exists()


def test_edit_diff_never_shows_a_secret_in_the_current_file(root: Path) -> None:
    (root / registry.SOUL.path).write_text(SOUL + f"key {FAKE_SECRET}\n")
    plan = edits.plan_edit(root, "soul", SOUL)
    shown = "".join(plan.diff)
    assert FAKE_SECRET not in shown and "hidden: looks like a secret (aws-access-key-id)" in shown


def test_edit_refuses_when_the_file_changed_meanwhile(root: Path) -> None:
    (root / registry.SOUL.path).write_text(SOUL)
    plan = edits.plan_edit(root, "soul", SOUL + "mine\n")
    (root / registry.SOUL.path).write_text(SOUL + "synced from elsewhere\n")
    with pytest.raises(InputRejected, match="changed"):
        edits.apply_edit(context(root, now=NOW), plan)
    assert (root / registry.SOUL.path).read_text().endswith("synced from elsewhere\n")
    assert not (root / layout.ARCHIVE / "00-system").exists()


# ---------------------------------------------------------------------------------------- CLI


@pytest.fixture
def connected(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    connect(monkeypatch, tmp_path, root)
    return root


def test_cli_note_new_and_approve(connected: Path) -> None:
    result = cli(["note", "new", "--type", "decision", "--title", "Use SQLite", "--from", "-", "--json"], "Why.\n")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc) == {"version", "id", "path"}

    refused = cli(["approve", doc["id"]])  # no terminal here, and no --yes
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    assert meta_of(connected, doc["path"])["status"] == "candidate"

    approved = cli(["approve", doc["id"], "--yes", "--json"])
    assert approved.exit_code == 0, approved.stderr
    assert json.loads(approved.stdout)["path"] == "30-memory/decisions/decision-use-sqlite.md"

    assert cli(["approve", "../x", "--yes"]).exit_code == 5


def test_cli_approve_names_a_stray_note_in_one_line(connected: Path) -> None:
    doc = json.loads(cli(["note", "new", "--type", "fact", "--title", "Stray", "--json"]).stdout)
    (connected / layout.FACTS / "stray.md").write_text(f"---\ntype: fact\ncandidate: {doc['id']}\n---\nx\n")
    result = cli(["approve", doc["id"], "--yes"])
    assert result.exit_code == 5
    assert result.stderr.startswith("lifecycle: error: 30-memory/facts/stray.md ") and result.stderr.count("\n") == 1
    assert "unexpected" not in result.stderr
    assert cli(["note", "new", "--type", "opinion", "--title", "x"]).exit_code == 2


def test_cli_supersede_archive_revalidate(connected: Path) -> None:
    one = json.loads(cli(["note", "new", "--type", "fact", "--title", "One", "--json"]).stdout)["id"]
    two = json.loads(cli(["note", "new", "--type", "fact", "--title", "Two", "--json"]).stdout)["id"]
    a = json.loads(cli(["approve", one, "--yes", "--json"]).stdout)["id"]
    b = json.loads(cli(["approve", two, "--yes", "--json"]).stdout)["id"]
    result = cli(["supersede", a, "--by", b])
    assert result.exit_code == 0 and result.stdout.strip() == f"{a} is superseded by {b}"
    result = cli(["archive", a, "--json"])
    assert json.loads(result.stdout)["path"] == f"90-archive/30-memory/facts/{a}.md"
    assert cli(["archive", a]).exit_code == 5
    doc = json.loads(cli(["revalidate", "--json"]).stdout)
    assert set(doc) == {"version", "today", "due", "invalid"} and doc["due"] == doc["invalid"] == []
    assert cli(["revalidate"]).stdout.strip() == "nothing is due for revalidation"


def test_cli_edit_needs_both_confirmations_without_a_terminal(connected: Path, tmp_path: Path) -> None:
    source = tmp_path / "soul.md"
    source.write_text(SOUL)
    result = cli(["edit", "soul", "--from", str(source)])
    assert result.exit_code == 2 and "--yes and --accept-concurrency-risk" in result.stderr  # both at once
    result = cli(["edit", "soul", "--from", str(source), "--yes"])
    assert result.exit_code == 2 and "--accept-concurrency-risk" in result.stderr
    assert not (connected / registry.SOUL.path).exists()
    result = cli(["edit", "soul", "--from", str(source), "--yes", "--accept-concurrency-risk", "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"version": 1, "path": registry.SOUL.path, "archived": None, "changed": True}
    assert "synced" in result.stderr  # the warning about unsynchronized writers
    result = cli(["edit", "soul", "--from", str(source), "--yes", "--accept-concurrency-risk"])
    assert result.exit_code == 0 and "nothing to do" in result.stdout


def test_cli_edit_foreign_lease_fails_before_asking(connected: Path, tmp_path: Path) -> None:
    source = tmp_path / "soul.md"
    source.write_text(SOUL)
    write_lease(connected, "desktop", dt.datetime.now(dt.timezone.utc) + DAY)
    result = cli(["edit", "soul", "--from", str(source)])
    assert result.exit_code == 4


def test_approve_asks_on_a_terminal(connected: Path) -> None:
    first = json.loads(cli(["note", "new", "--type", "fact", "--title", "Asked", "--json"]).stdout)["id"]
    declined = on_terminal(["approve", first], "n\n")
    assert declined.returncode == 2 and b"Approve it as durable memory?" in declined.stderr
    assert not any(name.startswith("30-memory/facts/") for name in all_files(connected))
    accepted = on_terminal(["approve", first], "y\n")
    assert accepted.returncode == 0, accepted.stderr
    assert (connected / "30-memory/facts/fact-asked.md").exists()


def test_edit_asks_on_a_terminal(connected: Path, tmp_path: Path) -> None:
    source = tmp_path / "soul.md"
    source.write_text(SOUL)
    # Approves the content, says the sync is not known to be current, then declines the risk.
    declined = on_terminal(["edit", "soul", "--from", str(source)], "y\nn\nn\n")
    assert declined.returncode == 2 and b"Accept the concurrency risk" in declined.stderr
    assert not (connected / registry.SOUL.path).exists()
    accepted = on_terminal(["edit", "soul", "--from", str(source)], "y\ny\n")
    assert accepted.returncode == 0, accepted.stderr
    assert b"+- Careful and brief." in accepted.stdout  # the diff was shown before asking
    assert (connected / registry.SOUL.path).read_text() == SOUL
