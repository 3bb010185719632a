"""Warm recall's shortcuts change how fast an answer comes, never what it says.

The listing fingerprint (an unchanged vault is not compared row by row), the walk by folder
descriptor and ranking in the full-text index alone; then the `lifecycle recall` command itself.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import write_connection
from hookkit import LIFECYCLE, hook_env
from typer.testing import CliRunner

from continuity import tunables
from continuity.cli import app
from continuity.local.connection import render_connection
from continuity.recall import eligible, index as recall_index, rank as recall_rank, search as recall

DEVICE = "lap"
PROJECT = "demo"


def note(root: Path, rel: str, note_id: str, body: str, **meta: Any) -> Path:
    fields: dict[str, Any] = {"id": note_id, "type": "fact", "status": "approved", **meta}
    lines = ["---", *(f"{key}: {json.dumps(value)}" for key, value in fields.items()), "---", body]
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel in ("30-memory/facts", "30-memory/lessons", f"50-devices/{DEVICE}/notes"):
        (root / rel).mkdir(parents=True)
    return root


def refresh(vault: Path) -> recall_index.Refreshed:
    index = recall_index.open_index(vault, DEVICE)
    try:
        return index.refresh()
    finally:
        index.close()


def found(vault: Path, *terms: str) -> list[str]:
    return [r.path for r in recall.recall(vault, DEVICE, PROJECT, list(terms)).results]


def fresh(vault: Path, *terms: str) -> list[str]:
    return [r.path for r in recall.recall(vault, DEVICE, PROJECT, list(terms), use_cache=False).results]


# ------------------------------------------------------------------------------ the fingerprint


def test_an_unchanged_vault_is_answered_from_its_listing_fingerprint(vault: Path) -> None:
    note(vault, "30-memory/facts/a.md", "a", "zebra")
    first = refresh(vault)
    assert first == recall_index.Refreshed(1, 0, 0) and first.compared
    again = refresh(vault)
    assert again == recall_index.Refreshed(0, 0, 0) and not again.compared


def test_every_kind_of_change_is_seen_by_the_next_search(vault: Path) -> None:
    a = note(vault, "30-memory/facts/a.md", "a", "zebra alpha")
    note(vault, "30-memory/facts/b.md", "b", "zebra bravo")
    note(vault, "30-memory/facts/c.md", "c", "zebra charlie")
    assert found(vault, "alpha") == ["30-memory/facts/a.md"]
    # Edited in place, same size: only the file's own times change, never its folder's.
    before = a.stat()
    with open(a, "r+b") as handle:
        data = handle.read().replace(b"alpha", b"omega")
        handle.seek(0)
        handle.write(data)
    os.utime(a, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert a.stat().st_size == before.st_size
    assert found(vault, "alpha") == [] and found(vault, "omega") == ["30-memory/facts/a.md"]
    # Deleted, renamed, added deep down, touched.
    (vault / "30-memory/facts/b.md").unlink()
    assert found(vault, "bravo") == []
    (vault / "30-memory/facts/c.md").rename(vault / "30-memory/lessons/c2.md")
    assert found(vault, "charlie") == ["30-memory/lessons/c2.md"]
    note(vault, f"50-devices/{DEVICE}/notes/x/y/deep.md", "deep", "zebra delta")
    assert found(vault, "delta") == [f"50-devices/{DEVICE}/notes/x/y/deep.md"]
    os.utime(vault / "30-memory/lessons/c2.md", ns=(1, 1))
    touched = refresh(vault)
    assert touched == recall_index.Refreshed(0, 1, 0) and touched.compared
    for terms in (["zebra"], ["omega", "charlie"], ["delta"]):
        assert found(vault, *terms) == fresh(vault, *terms)


def fingerprint(vault: Path) -> str | None:
    with sqlite3.connect(recall_index.index_file(vault)) as db:
        row = db.execute("SELECT value FROM meta WHERE key = 'listing'").fetchone()
    return None if row is None else str(row[0])


def test_a_note_read_again_because_its_bytes_changed_unseen_drops_the_fingerprint(vault: Path) -> None:
    note(vault, "30-memory/facts/a.md", "a", "zebra truth")
    found(vault, "zebra")
    assert fingerprint(vault) == eligible.listing_digest(eligible.scan(vault, DEVICE))
    index = recall_index.open_index(vault, DEVICE)
    try:
        index.reindex("30-memory/facts/a.md")  # what a search does when a served note fails its digest
    finally:
        index.close()
    assert fingerprint(vault) is None
    assert refresh(vault).compared  # so the next search compares every row again
    assert fingerprint(vault) is not None
    with sqlite3.connect(recall_index.index_file(vault)) as db:
        db.execute("UPDATE notes SET body = 'zebra forged', sha256 = ?", ("0" * 64,))
    text = recall.recall(vault, DEVICE, PROJECT, ["zebra"]).text
    assert "truth" in text and "forged" not in text


def test_the_fingerprint_covers_the_order_and_every_field_of_the_listing() -> None:
    listing = {"30-memory/a.md": (10, 20, 30), "30-memory/b.md": (11, 21, 31)}
    digest = eligible.listing_digest(listing)
    assert digest == eligible.listing_digest(dict(listing))
    assert digest != eligible.listing_digest(dict(reversed(listing.items())))
    for changed in ((10, 20, 31), (10, 21, 30), (9, 20, 30)):
        assert digest != eligible.listing_digest({**listing, "30-memory/a.md": changed})
    assert digest != eligible.listing_digest({"30-memory/a.md": (10, 20, 30)})


# ------------------------------------------------------------------------------------ the walk


def test_the_walk_by_descriptor_lists_what_the_walk_by_path_lists(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    note(outside, "secret.md", "s", "zebra")
    note(vault, "30-memory/facts/plain.md", "plain", "zebra")
    note(vault, "30-memory/facts/.hidden.md", "hidden", "zebra")
    note(vault, "30-memory/facts/readme.txt", "txt", "zebra")
    (vault / "30-memory/facts/folder.md").mkdir()
    note(vault, "30-memory/facts/folder.md/inner.md", "inner", "zebra")
    os.symlink(outside / "secret.md", vault / "30-memory/facts/link.md")
    os.symlink(outside, vault / "30-memory/linked-folder")
    os.mkfifo(vault / "30-memory/facts/pipe.md")
    # `30-memory/` itself is the first level: a note under k more folders sits at level k + 1.
    deepest = tunables.RECALL_MAX_FOLDER_DEPTH
    for k in (deepest - 1, deepest):
        note(vault, "30-memory/" + "".join(f"d{n}/" for n in range(k)) + f"n{k}.md", f"n{k}", "zebra")
    note(vault, f"50-devices/{DEVICE}/notes/mine.md", "mine", "zebra")
    note(vault, "50-devices/desk/notes/theirs.md", "theirs", "zebra")
    by_fd = eligible.scan(vault, DEVICE, by_fd=True)
    assert by_fd == eligible.scan(vault, DEVICE, by_fd=False)
    assert set(by_fd) == {
        "30-memory/facts/plain.md",
        "30-memory/facts/folder.md/inner.md",
        "30-memory/" + "".join(f"d{n}/" for n in range(deepest - 1)) + f"n{deepest - 1}.md",
        f"50-devices/{DEVICE}/notes/mine.md",
    }
    info = (vault / "30-memory/facts/plain.md").stat()
    assert by_fd["30-memory/facts/plain.md"] == (info.st_size, info.st_mtime_ns, info.st_ctime_ns)


@pytest.mark.parametrize("linked", ["30-memory", f"50-devices/{DEVICE}/notes", "50-devices"])
def test_a_linked_warm_folder_is_never_walked(vault: Path, tmp_path: Path, linked: str) -> None:
    outside = tmp_path / "outside"
    note(outside, "notes/elsewhere.md", "elsewhere", "zebra")
    note(outside, f"{DEVICE}/notes/elsewhere.md", "elsewhere", "zebra")
    note(outside, "facts/elsewhere.md", "elsewhere", "zebra")
    target = vault / linked
    for child in sorted(target.rglob("*"), reverse=True):
        child.rmdir()
    target.rmdir()
    os.symlink(outside, target)
    for by_fd in (True, False):
        assert eligible.scan(vault, DEVICE, by_fd=by_fd) == {}


# --------------------------------------------------------------------------------- the ranking

# The ranking as one SQL statement, as recall ran it before it ranked in the full-text index alone.
VISIBLE = (
    "SELECT rowid, path, created FROM notes WHERE state IN ('ok', 'secret')"
    " AND (scope IS NULL OR scope NOT IN ('project', 'device')"
    " OR (scope = 'project' AND project = ?) OR (scope = 'device' AND device = ?))"
)


def reference_order(index: recall_index.Index, terms: list[str]) -> list[str]:
    """What the lazy walk must yield, computed all at once: the ranking's visible notes, near-equal
    scores (RECALL_NEAR_EQUAL_PERCENT of the first of a group) newest first, undated last, then by path."""
    visible = {row[0]: (row[1], row[2]) for row in index.db.execute(VISIBLE, (PROJECT, DEVICE))}
    ranking = list(recall_rank.rank(index.db, recall.parse_terms(terms), [], frozenset()))
    floor = tunables.RECALL_MIN_NOTE_COVERAGE_PERCENT / 100
    out: list[str] = []
    group: list[tuple[str, str]] = []
    first = 0.0
    for rowid, score, coverage in ranking:
        if coverage < floor:
            continue
        if group and score < first * (1 - tunables.RECALL_NEAR_EQUAL_PERCENT / 100):
            out.extend(newest_first(group))
            group = []
        if rowid in visible:
            if not group:
                first = score
            group.append((visible[rowid][1], visible[rowid][0]))
    out.extend(newest_first(group))
    return out


def newest_first(group: list[tuple[str, str]]) -> list[str]:
    dated = sorted((g for g in group if g[0]), key=lambda g: (tuple(-ord(c) for c in g[0]), g[1]))
    return [path for _created, path in dated] + sorted(path for created, path in group if not created)


def test_ranking_matches_one_reference_ordering_ties_and_scopes_included(vault: Path) -> None:
    # Equal bodies tie: the newest first, undated last, then by path.
    for name, created in (
        ("t1", "2025-01-02T00:00:00Z"),
        ("t2", None),
        ("t3", "2025-01-03T00:00:00Z"),
        ("t0", "2025-01-02T00:00:00Z"),
        ("t4", None),
    ):
        extra = {"created": created} if created else {}
        note(vault, f"30-memory/facts/{name}.md", name, "zebra lion", **extra)
    note(vault, "30-memory/facts/strong.md", "strong", "zebra zebra lion lion zebra zebra lion lion")
    note(vault, "30-memory/facts/ours.md", "ours", "zebra", scope="project", project=PROJECT)
    note(vault, "30-memory/facts/theirs.md", "theirs", "zebra", scope="project", project="other")
    note(vault, "30-memory/facts/desk.md", "desk", "zebra", scope="device", device="desk")
    note(vault, "30-memory/facts/mine.md", "mine", "zebra", scope="device", device=DEVICE)
    note(vault, "30-memory/facts/cand.md", "cand", "zebra", status="candidate")
    found(vault, "zebra")
    index = recall_index.open_index(vault, DEVICE)
    try:
        for terms in (["zebra"], ["lion"], ["zebra", "lion"], ['"zebra lion"'], ["nothing"]):
            ranking = recall_rank.rank(index.db, recall.parse_terms(terms), [], frozenset())
            hits = index.search(ranking, PROJECT, DEVICE)
            try:
                ranked = [hit.path for hit in hits]
            finally:
                hits.close()
            assert ranked == reference_order(index, terms), terms
            assert ("30-memory/facts/theirs.md" in ranked) is False
            assert ("30-memory/facts/desk.md" in ranked) is False
    finally:
        index.close()
    ties = [p for p in found_all(vault, "lion") if "/t" in p]
    assert ties == [f"30-memory/facts/{n}.md" for n in ("t3", "t0", "t1", "t2", "t4")]


def found_all(vault: Path, *terms: str) -> list[str]:
    return [r.path for r in recall.recall(vault, DEVICE, PROJECT, list(terms), limit=50).results]


# ------------------------------------------------------------------------------- the command


@pytest.mark.parametrize(
    ("args", "parsed"),
    [
        (["zebra"], (["zebra"], "main", 3, False)),
        (["zebra", "lion", "--json"], (["zebra", "lion"], "main", 3, True)),
        (["--for", "subagent", "zebra"], (["zebra"], "subagent", 3, False)),
        (["zebra", "--for=subagent", "--limit", "1"], (["zebra"], "subagent", 1, False)),
        (["zebra", "--limit=2", "--limit", "05", "lion"], (["zebra", "lion"], "main", 5, False)),
        (["zebra", "--for", "subagent", "--for", "main", "--json", "--json"], (["zebra"], "main", 3, True)),
        (['"write path"', ""], (['"write path"', ""], "main", 3, False)),
        # A word that starts with "-" and is not one of recall's options is a term; "--" ends the options.
        (["--max-errors"], (["--max-errors"], "main", 3, False)),
        (["sed", "-i", "--limit", "2"], (["sed", "-i"], "main", 2, False)),
        (["-x", "--json", "-rf", "--force-with-lease"], (["-x", "-rf", "--force-with-lease"], "main", 3, True)),
        (["zebra", "--", "--limit", "--for"], (["zebra", "--limit", "--for"], "main", 3, False)),
        (["--max-errors=50", "zebra"], (["--max-errors=50", "zebra"], "main", 3, False)),
    ],
)
def test_a_recall_command_line_is_read_as_click_reads_it(
    args: list[str],
    parsed: tuple[list[str], str, int, bool],
    vault: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    connect(tmp_path, monkeypatch, vault)
    note(vault, "30-memory/facts/a.md", "a", "zebra lion")
    note(vault, "30-memory/facts/b.md", "b", "zebra")
    terms, audience, limit, as_json = parsed
    result = CliRunner().invoke(app, ["recall", *args], prog_name="lifecycle")
    expected = recall.recall(vault, DEVICE, PROJECT, terms, audience=audience, limit=limit)
    printed = json.dumps(expected.to_json(), ensure_ascii=False, indent=2) if as_json else expected.text
    assert (result.exit_code, result.stdout, result.stderr) == (0, printed + "\n", "")


def connect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, vault: Path) -> Path:
    file = tmp_path / "connection"
    write_connection(file, render_connection(vault, DEVICE, PROJECT, None))
    monkeypatch.setenv("AGENT_VAULT_CONNECTION", str(file))
    return file


@pytest.mark.parametrize(
    ("case", "code"), [("no-connection", 3), ("unreachable", 3), ("no-word", 2), ("too-many-terms", 2)]
)
def test_failures_come_out_as_one_error_line_and_their_exit_code(
    case: str, code: int, vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["recall", "zebra"]
    if case != "no-connection":
        connect(tmp_path, monkeypatch, vault if case != "unreachable" else tmp_path / "missing")
    if case == "no-word":
        args = ["recall", "*", "+"]
    if case == "too-many-terms":
        args = ["recall", *(f"w{n}" for n in range(tunables.RECALL_MAX_TERMS + 1))]
    result = CliRunner().invoke(app, args, prog_name="lifecycle")
    assert (result.exit_code, result.stdout) == (code, "")
    assert result.stderr.startswith("lifecycle: error: ") and result.stderr.count("\n") == 1


def test_the_lifecycle_command_recalls_in_a_new_process(vault: Path, tmp_path: Path) -> None:
    note(vault, "30-memory/facts/a.md", "a", "zebra body")
    write_connection((tmp_path / "connection"), render_connection(vault, DEVICE, PROJECT, None))
    env = hook_env(AGENT_VAULT_CONNECTION=str(tmp_path / "connection"))
    env.pop("CONTINUITY_DEBUG", None)

    def run(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(LIFECYCLE), "recall", *args], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == code, done.stderr
        return done

    assert "zebra body" in run("zebra").stdout  # the first search builds the index
    for args in (["zebra"], ["zebra", "--for", "subagent"]):
        assert "zebra body" in run(*args).stdout  # later ones use it
    assert run("nothing").stdout == recall.recall(vault, DEVICE, PROJECT, ["nothing"]).text + "\n"
    assert json.loads(run("zebra", "--json").stdout)["results"][0]["path"] == "30-memory/facts/a.md"
    refused = run("zebra", "--limit", "0", code=2)
    assert refused.stdout == "" and refused.stderr.startswith("lifecycle: error: ")
    assert refused.stderr.count("\n") == 1
