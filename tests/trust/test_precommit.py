"""`.pre-commit-hooks.yaml`: the hook a vault kept in Git runs, checked by pre-commit itself.

The manifest is validated against pre-commit's own schema (every key one it documents, the values it
accepts), docs/scan.md's example configuration is loaded as pre-commit loads a config, and one test runs
`pre-commit try-repo` for real: pre-commit builds its own virtual environment from a committed copy of
this checkout (about ten seconds, once) and runs the hook on a vault's staged notes.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

from briefkit import make_vault, write
from conftest import git
from pre_commit import clientlib
from secret_corpus import checksummed, j

from continuity.errors import EXIT_REJECTED

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / ".pre-commit-hooks.yaml"
SCAN_DOC = ROOT / "docs" / "scan.md"
HOOK_ID = "continuity-scan"
TOKEN = checksummed(random.Random(11), j("gh", "p_"))


def test_the_manifest_uses_only_keys_pre_commit_documents() -> None:
    raw = clientlib.yaml_load(MANIFEST.read_text())
    known = {item.key for item in clientlib.MANIFEST_HOOK_DICT.items}
    assert isinstance(raw, list) and [hook["id"] for hook in raw] == [HOOK_ID]
    assert set(raw[0]) <= known, set(raw[0]) - known
    [hook] = clientlib.load_manifest(str(MANIFEST))  # raises on a wrong type or a missing key
    assert hook["entry"] == "lifecycle scan" and hook["language"] == "python"
    assert hook["types"] == ["markdown"] and hook["pass_filenames"] is True


def readme_example() -> str:
    """The `.pre-commit-config.yaml` docs/scan.md shows a vault's repository."""
    text = SCAN_DOC.read_text()
    found = re.search(r"```yaml\n(# \.pre-commit-config\.yaml.*?)```", text, re.DOTALL)
    assert found, "docs/scan.md shows no .pre-commit-config.yaml example"
    return found.group(1)


def test_the_readme_example_is_a_valid_pre_commit_config(tmp_path: Path) -> None:
    config = tmp_path / ".pre-commit-config.yaml"
    config.write_text(readme_example())
    loaded = clientlib.load_config(str(config))
    hooks = [hook["id"] for repo in loaded["repos"] for hook in repo["hooks"]]
    assert hooks == [HOOK_ID]


def committed_copy(dest: Path) -> Path:
    """This checkout's files (tracked and new, not ignored) committed in a repository of their own.

    try-repo takes a repository at a commit; a copy makes the test see the working tree as it is.
    """
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        if (ROOT / rel).is_file() and not (ROOT / rel).is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "copy")
    return dest


def test_pre_commit_try_repo_runs_the_hook_on_a_vaults_staged_notes(tmp_path: Path) -> None:
    hooks_repo = committed_copy(tmp_path / "continuity")
    vault = make_vault(tmp_path / "vault")
    git(vault, "init", "-q", "-b", "main")
    write(vault, "30-memory/facts/leak.md", f"---\nid: leak\ntype: fact\n---\nthe token is {TOKEN}\n")
    write(vault, "30-memory/facts/notes.txt", f"not Markdown, so not passed: {TOKEN}\n")
    git(vault, "add", "-A")
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(hooks_repo), HOOK_ID, "--color", "never"]
    env = {"PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}

    found = run(command, vault, env)
    assert found.returncode == 1, found.stdout + found.stderr
    assert f"- exit code: {EXIT_REJECTED}" in found.stdout
    assert "30-memory/facts/leak.md:5: " in found.stdout and "notes.txt" not in found.stdout
    assert TOKEN not in found.stdout + found.stderr

    git(vault, "rm", "-q", "--cached", "30-memory/facts/leak.md")
    clean = run(command, vault, env)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert re.search(r"continuity secret scan\.+Passed", clean.stdout)


def run(command: list[str], cwd: Path, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **extra}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=600)
