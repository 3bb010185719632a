"""Warm recall's shortcuts change how fast an answer comes, never what it says.

The walk by folder descriptor.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from continuity import limits, recall_notes

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
    deepest = limits.RECALL_MAX_FOLDER_DEPTH
    for k in (deepest - 1, deepest):
        note(vault, "30-memory/" + "".join(f"d{n}/" for n in range(k)) + f"n{k}.md", f"n{k}", "zebra")
    note(vault, f"50-devices/{DEVICE}/notes/mine.md", "mine", "zebra")
    note(vault, "50-devices/desk/notes/theirs.md", "theirs", "zebra")
    by_fd = recall_notes.scan(vault, DEVICE, by_fd=True)
    assert by_fd == recall_notes.scan(vault, DEVICE, by_fd=False)
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
        assert recall_notes.scan(vault, DEVICE, by_fd=by_fd) == {}
