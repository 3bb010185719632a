"""`lifecycle --help` is typer's own text, kept after the first time so later help needs no typer."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from hookkit import LIFECYCLE, hook_env

from continuity.cli import helpcache


def help_run(tmp_path: Path, option: str = "--help", **env: str) -> tuple[str, set[str]]:
    """The help text and the modules imported, from the real `lifecycle` script in a new process."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", str(LIFECYCLE), option],
        cwd=tmp_path, env=hook_env(**env), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert len(lines) == len(done.stderr.splitlines()), done.stderr
    return done.stdout, {line.split("|")[-1].strip().split(".")[0] for line in lines}


def test_help_is_typer_s_text_and_the_second_time_needs_no_typer(tmp_path: Path) -> None:
    first, first_modules = help_run(tmp_path, COLUMNS="100")
    assert "typer" in first_modules and "Usage: lifecycle" in first and "doctor" in first
    second, second_modules = help_run(tmp_path, COLUMNS="100")
    assert second == first
    assert not second_modules & {"typer", "click"}
    assert help_run(tmp_path, "-h", COLUMNS="100") == (second, second_modules)
    narrow, narrow_modules = help_run(tmp_path, COLUMNS="52")  # another width: typer answers again
    assert "typer" in narrow_modules and narrow != first
    assert max(len(line) for line in narrow.splitlines()) <= 52
    assert help_run(tmp_path, COLUMNS="52")[0] == narrow
    fresh, fresh_modules = help_run(tmp_path, COLUMNS="100", CONTINUITY_NO_CACHE="1")
    assert fresh == first and "typer" in fresh_modules


def test_a_damaged_or_empty_cache_file_is_ignored(tmp_path: Path) -> None:
    expected, _ = help_run(tmp_path, COLUMNS="90")
    folder = tmp_path / "home" / ".cache" / "continuity" / "help"
    for damaged in (b"", b"\xff\xfe not text"):
        for path in folder.iterdir():
            path.write_bytes(damaged)
        text, modules = help_run(tmp_path, COLUMNS="90")
        assert text == expected and "typer" in modules


def test_the_key_follows_the_command_modules(tmp_path: Path) -> None:
    source = Path(helpcache.__file__).resolve().parent
    copy = tmp_path / "cli"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = helpcache.key(copy)
    assert helpcache.key(copy) == before
    (copy / ".#group.py").symlink_to(copy / "nowhere")  # an editor's lock file: not a command module
    assert helpcache.key(copy) == before
    module = copy / "doctor.py"
    module.write_text(module.read_text().replace("Check", "Examine", 1))
    assert helpcache.key(copy) != before
