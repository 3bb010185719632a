"""Read-only loading, proven: the vault is byte-for-byte and stamp-for-stamp the same after every read
command (render, the startup hook, doctor, budget, recall, log), run as real processes."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from briefkit import DEVICE, PROJECT, connect, frontmatter, make_vault, startup_script, subprocess_env, write
from hookkit import LIFECYCLE


def snapshot(root: Path) -> dict[str, tuple[str, int, int, int, str]]:
    """Every entry (links not followed): kind, mode, size, mtime in ns, and a digest of a file's bytes."""
    out: dict[str, tuple[str, int, int, int, str]] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                kind, digest = "link", os.readlink(path)
            elif stat.S_ISDIR(info.st_mode):
                kind, digest = "dir", ""
            else:
                kind, digest = "file", hashlib.sha256(path.read_bytes()).hexdigest()
            out[str(path.relative_to(root))] = (kind, info.st_mode, info.st_size, info.st_mtime_ns, digest)
    return out


@pytest.fixture
def vault(repo: Path, tmp_path: Path) -> Path:
    root = make_vault(tmp_path / "vault")
    connect(repo, root)
    for n in range(5):
        meta = {
            "id": f"fact-x-{n}",
            "type": "fact",
            "status": "approved",
            "scope": "project",
            "project": PROJECT,
            "created": "2026-01-01",
            "verified": "2026-01-01",
            "revalidate_by": "2027-01-01",
        }
        write(root, f"30-memory/facts/fact-x-{n}.md", frontmatter(meta) + f"# X {n}\n\nx marks spot {n}.\n")
    entry = {
        "ts": "2026-01-01T00:00:00Z",
        "device": DEVICE,
        "op": "note.new",
        "id": "cand-x",
        "path": "20-state/candidates/cand-x.md",
        "sha256": "0" * 64,
    }
    write(root, f"50-devices/{DEVICE}/journal.jsonl", json.dumps(entry) + "\n")
    write(root, "20-state/handoffs/.x.md.0123456789ab.tmp", "left over")
    write(root, "30-memory/facts/fact-x-0 (1).md", "a conflict copy")
    return root


def _payload(cwd: Path) -> str:
    return json.dumps(
        {
            "session_id": "s-ro",
            "transcript_path": None,
            "cwd": str(cwd),
            "hook_event_name": "SessionStart",
            "model": "m",
            "permission_mode": "default",
            "source": "startup",
        }
    )


COMMANDS = {
    "render": ["render"],
    "render-json-subagent": ["render", "--format", "json", "--event", "SubagentStart"],
    "doctor": ["doctor", "--json"],
    "budget": ["budget", "--json"],
    "recall": ["recall", "x"],
    "log": ["log"],
    "log-query": ["log", "/note/", "--json"],
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_read_command_leaves_the_vault_untouched(name: str, vault: Path, repo: Path) -> None:
    before = snapshot(vault)
    env = subprocess_env()
    done = subprocess.run(
        [str(LIFECYCLE), *COMMANDS[name]], cwd=repo, env=env, capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in done.stderr
    assert done.returncode in (0, 1), done.stderr
    assert snapshot(vault) == before


@pytest.mark.parametrize("cache", ["cold", "warm"])
def test_startup_hook_leaves_the_vault_untouched(cache: str, vault: Path, repo: Path) -> None:
    extra = {"CONTINUITY_NO_CACHE": "1"} if cache == "cold" else {}
    before = snapshot(vault)
    for _ in range(2):  # the second run of the warm case takes the cached path
        done = subprocess.run(
            [sys.executable, str(startup_script()), "--hook", "--harness", "codex"],
            input=_payload(repo),
            cwd=repo,
            env=subprocess_env(**extra),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert "<private-memory" in done.stdout
        assert snapshot(vault) == before
