"""Shared fixtures: every test runs with HOME, XDG_* and the connection override inside tmp_path.

An always-on fixture points the user's directories at a temporary folder and makes the real home
unreachable, so no test can read or write a person's own vault, cache or harness configuration.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

XDG_FOLDERS = (
    ("XDG_CACHE_HOME", ".cache"),
    ("XDG_STATE_HOME", ".local/state"),
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_DATA_HOME", ".local/share"),
)


def _point_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(home))
    for name, sub in XDG_FOLDERS:
        monkeypatch.setenv(name, str(home / sub))
    # The harnesses' own folders then default to this home (~/.codex, ~/.claude); a test that needs
    # them elsewhere sets them itself, so the person's real ones are never read.
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session", autouse=True)
def session_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The home that module- and session-scoped fixtures see (they run before `isolated_home`)."""
    home = tmp_path_factory.mktemp("session-home")
    with pytest.MonkeyPatch.context() as patch:
        _point_home(home, patch)
        yield home


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, session_home: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    home.mkdir()
    # What `lifecycle init` recorded for a shared fixture's checkout (`local.made`) holds in each test.
    made = session_home / ".local" / "state" / "continuity" / "made"
    if made.is_dir():
        import shutil

        shutil.copytree(made, home / ".local" / "state" / "continuity" / "made")
    _point_home(home, monkeypatch)
    monkeypatch.setenv("AGENT_VAULT_CONNECTION", str(tmp_path / "no-connection-configured"))
    monkeypatch.delenv("CONTINUITY_DEBUG", raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@example.invalid")
    yield home


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return proc.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository with one commit."""
    path = tmp_path / "work" / "demo-app"
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("demo\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "first")
    return path


def use_connection(monkeypatch: pytest.MonkeyPatch, repo: Path) -> None:
    """Let discovery find the checkout's own `.agent-vault` instead of the per-test override."""
    monkeypatch.delenv("AGENT_VAULT_CONNECTION", raising=False)
    monkeypatch.chdir(repo)


def write_connection(file: Path, text: str) -> None:
    """A connection file as `lifecycle init` leaves it: written, and recorded as this computer's own
    (`local.made`), without which discovery never uses a checkout's connection."""
    import hashlib

    from continuity.local import made

    file.write_text(text)
    made.remember(made.CONNECTION, file, hashlib.sha256(file.read_bytes()).hexdigest())


def env_without_override() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("AGENT_VAULT_CONNECTION", None)
    return env
