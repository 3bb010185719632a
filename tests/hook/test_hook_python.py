"""Doctor says when the `python3` that the checked-in project hooks will run is a version manager's shim.

A real shim: an executable shell script on PATH that runs the real interpreter, as pyenv's does.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import use_connection
from hookkit import connect, make_checkout
from writer_support import cli

from continuity import tunables
from continuity.local import interpreter


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = make_checkout(tmp_path / "copy")
    connect(copy, tmp_path / "vault")
    use_connection(monkeypatch, copy)
    return copy


def shim(folder: Path) -> Path:
    folder.mkdir(parents=True)
    path = folder / "python3"
    path.write_text(f'#!/usr/bin/env bash\nexec "{sys.executable}" "$@"\n')
    path.chmod(0o755)
    return path


def python_check(monkeypatch: pytest.MonkeyPatch, path: str) -> dict[str, str]:
    monkeypatch.setenv("PATH", path)
    doc = json.loads(cli(["doctor", "--json"]).stdout)
    [found] = [c for c in doc["checks"] if c["id"] == "hooks.python"]
    return dict(found)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_pyenv_shim_on_path_is_named_with_its_cost(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = shim(tmp_path / ".pyenv" / "shims")
    rest = os.environ["PATH"]
    found = python_check(monkeypatch, f"{fake.parent}{os.pathsep}{rest}")
    assert found["level"] == "warn"
    assert f"pyenv shim ({fake})" in found["message"] and f"{tunables.PYTHON_SHIM_COST_MS} ms" in found["message"]
    assert str(checkout / ".codex" / "hooks.json") in found["message"]

    real = tmp_path / "real-bin"
    real.mkdir()
    (real / "python3").symlink_to(sys.executable)
    found = python_check(monkeypatch, f"{real}{os.pathsep}{fake.parent}{os.pathsep}{rest}")
    assert found["level"] == "ok" and str(real / "python3") in found["message"]


def test_shims_are_known_by_what_they_are(tmp_path: Path) -> None:
    fake = shim(tmp_path / "anywhere")
    assert interpreter.is_script(str(fake)) and interpreter.manager(str(fake)) == "a version manager"
    assert not interpreter.is_script(sys.executable)
    assert interpreter.on_path("python3", str(fake.parent)) == str(fake)
    assert interpreter.hook_interpreter() == os.path.abspath(sys.executable)  # a venv's link is kept, not resolved
