"""Recall names every warm note it could not search (too large, unreadable, not valid) and why, in its
text, its JSON, on the command line's stderr and through the MCP tool; a secret-like file name is
withheld wherever the note is named."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from briefkit import connect, make_vault
from hookkit import LIFECYCLE, hook_env
from mcpkit import approved_note, mcp_server
from secret_corpus import checksummed, j

from continuity import tunables
from continuity.recall import search

DEVICE = "dev-a"
PROJECT = "demo-app"
TOKEN = checksummed(random.Random(11), j("gh", "p_"))
BIG_BYTES = 5 * 1024 * 1024


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault")


def run(vault: Path, *terms: str) -> search.Recall:
    return search.recall(vault, DEVICE, PROJECT, list(terms))


def big_note(vault: Path, name: str) -> Path:
    path = approved_note(vault, name, "zebra crossing")
    with path.open("a", encoding="utf-8") as out:
        out.write("zebra " * (BIG_BYTES // 6))
    return path


def test_a_too_large_and_an_invalid_note_are_named_with_why_every_time(vault: Path) -> None:
    approved_note(vault, "fine", "zebra crossing")
    big = big_note(vault, "huge")
    (vault / "30-memory/facts/broken.md").write_text("---\nid: [unclosed\n---\nzebra\n", encoding="utf-8")
    for terms in (["zebra"], ["unrelated"]):  # searched or not, they were never searched
        found = run(vault, *terms)
        reasons = {s.path: s.reason for s in found.skipped}
        assert reasons == {"30-memory/facts/huge.md": "too_large", "30-memory/facts/broken.md": "invalid"}
        doc = found.to_json()
        [large] = [s for s in doc["skipped"] if s["reason"] == "too_large"]
        assert large == {
            "path": "30-memory/facts/huge.md",
            "reason": "too_large",
            "findings": [],
            "bytes": big.stat().st_size,
        }
        assert (
            f"30-memory/facts/huge.md was not searched: it is larger than the {tunables.RECALL_NOTE_CAP_BYTES}"
            in found.text
        )
        assert "30-memory/facts/broken.md was not searched: its frontmatter or id is not valid" in found.text
    assert [r.path for r in run(vault, "zebra").results] == ["30-memory/facts/fine.md"]
    assert "No approved note matched these terms." in run(vault, "unrelated").text


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_an_unreadable_note_is_named(vault: Path) -> None:
    path = approved_note(vault, "locked", "zebra")
    path.chmod(0)
    try:
        found = run(vault, "zebra")
    finally:
        path.chmod(0o600)
    assert [(s.path, s.reason) for s in found.skipped] == [("30-memory/facts/locked.md", "unreadable")]
    assert "30-memory/facts/locked.md was not searched: it could not be read" in found.text


def test_a_secret_like_file_name_is_withheld_wherever_the_note_is_named(vault: Path, repo: Path) -> None:
    big_note(vault, f"notes-{TOKEN}")
    found = run(vault, "zebra")
    assert [s.path for s in found.skipped] == ["30-memory/facts/(file name withheld)"]
    assert TOKEN not in found.text and TOKEN not in json.dumps(found.to_json())
    connect(repo, vault)
    import subprocess

    cli = subprocess.run(
        [str(LIFECYCLE), "recall", "zebra", "--json"],
        cwd=repo,
        env=hook_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert cli.returncode == 0, cli.stderr
    assert TOKEN not in cli.stdout + cli.stderr
    assert "30-memory/facts/(file name withheld) was not searched" in cli.stderr
    with mcp_server(repo) as server:
        reply = server.call("recall", {"terms": "zebra"})
    assert not reply.is_error and TOKEN not in reply.text
    assert "30-memory/facts/(file name withheld) was not searched: it is larger than" in reply.text


def test_the_command_line_and_the_mcp_tool_name_skipped_notes(vault: Path, repo: Path) -> None:
    approved_note(vault, "fine", "zebra crossing")
    big_note(vault, "huge")
    connect(repo, vault)
    import subprocess

    cli = subprocess.run(
        [str(LIFECYCLE), "recall", "zebra"], cwd=repo, env=hook_env(), capture_output=True, text=True, check=False
    )
    assert cli.returncode == 0, cli.stderr
    assert "30-memory/facts/huge.md was not searched" in cli.stdout
    assert cli.stderr.startswith("lifecycle: note: 30-memory/facts/huge.md was not searched")
    with mcp_server(repo) as server:
        reply = server.call("recall", {"terms": "zebra"})
    assert not reply.is_error
    assert "30-memory/facts/huge.md was not searched" in reply.text and "zebra crossing" in reply.text
