"""Only reviewed bytes run in the startup hook: nothing planted beside them, nothing swapped in a cache.

Each test plants something in a fresh copy of the checkout (or in the user's cache) that would run
if the hook imported the package from disk the ordinary way, and runs the real hook command through
`bash -c` for a cold start and for a tool event.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hookkit import command, connect, context_of, hooks_doc, lifecycle, make_checkout, payload, run_shell

PLANTED = "import pathlib; pathlib.Path({marker!r}).write_text('planted code ran')\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    checkout = make_checkout(tmp_path / "copy")
    connect(checkout, tmp_path / "vault")
    return checkout


def start(tree: Path, event: str = "SessionStart", **env: str) -> str:
    data = payload(event, tree / "src", source="startup", turn_id="t1", tool_name="Bash",
                   tool_input={"command": "rm -rf build"})  # fmt: skip
    done = run_shell(command(hooks_doc(tree), event), data, tree / "src", **env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return context_of(done.stdout, event) if event.endswith("Start") else done.stdout


def test_files_planted_beside_the_reviewed_modules_never_run(tree: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    src = tree / "src"
    plants = {
        src / "continuity" / "tool_events" / "__init__.py",  # a package shadowing a reviewed module
        src / "continuity" / "render" / "__init__.py",
        src / "json.py",  # the standard library, shadowed from the checkout
        src / "__future__.py",
        src / "dataclasses.py",
        src / "continuity" / "planted.py",  # a module nobody reviewed
    }
    for path in plants:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(PLANTED.format(marker=str(marker)))
    assert 'status="restored"' in start(tree, CONTINUITY_NO_CACHE="1")
    assert 'status="restored"' in start(tree)
    assert start(tree, "PostToolUse") == ""
    assert not marker.exists()


def test_a_code_cache_that_others_can_write_is_never_executed(tree: Path, tmp_path: Path) -> None:
    """The hook command's compiled script and the startup script's compiled modules live in the user's
    cache; a file there that is not this user's alone (or not a regular file) is compiled afresh."""
    assert 'status="restored"' in start(tree)
    pycache = tmp_path / "home" / ".cache" / "continuity" / "pycache"
    cached = [p for p in pycache.iterdir() if p.suffix == ".code"]
    assert {p.name.split("-")[0] for p in cached} >= {"startup", "warm"}
    marker = tmp_path / "marker"
    evil = marshal.dumps(compile(PLANTED.format(marker=str(marker)), "x", "exec"))
    for path in cached:
        path.write_bytes(evil)
        os.chmod(path, 0o666)  # noqa: S103 -- the point of the test
    assert 'status="restored"' in start(tree)
    assert not marker.exists()


def test_a_module_that_is_a_fifo_a_link_or_huge_is_a_changed_module_not_a_hang(tree: Path) -> None:
    module = tree / "src" / "continuity" / "limits.py"
    original = module.read_bytes()
    module.unlink()
    os.mkfifo(module)
    assert 'status="unavailable"' in start(tree) and "src/continuity/limits.py" in start(tree)
    module.unlink()
    module.symlink_to("/dev/zero")
    assert 'status="unavailable"' in start(tree)
    module.unlink()
    module.write_bytes(original)
    assert 'status="restored"' in start(tree)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX command")
def test_the_command_keeps_no_code_cache_without_an_absolute_home(tmp_path: Path) -> None:
    """An empty or relative HOME is no home: the command compiles the script and caches nothing."""
    from continuity.harness import NOTICE
    from continuity.pincode import pin_code

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    script = repo / "hello.py"
    script.write_text("print('hello from the checked script')\n")
    digest = hashlib.sha256(script.read_bytes()).hexdigest()
    code = pin_code(NOTICE["codex"], start=False)
    root_cache = Path("/.cache/continuity")
    existed = root_cache.exists()
    for home in ("", "relative"):
        env = {"PATH": os.environ["PATH"], "HOME": home, "XDG_CACHE_HOME": ""}
        done = subprocess.run([sys.executable, "-I", "-S", "-c", code, "hello.py", digest], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        assert done.stdout == "hello from the checked script\n", done.stderr
        assert not (repo / "relative").exists() and not (repo / "-").exists()
    assert root_cache.exists() == existed


def test_compiled_code_of_old_versions_is_pruned_when_new_code_is_cached(tree: Path, tmp_path: Path) -> None:
    assert 'status="restored"' in start(tree)
    pycache = tmp_path / "home" / ".cache" / "continuity" / "pycache"
    old = pycache / "pinned-00000000000000000000000000000000-a70d0d0a.code"
    recent = pycache / "pinned-11111111111111111111111111111111-a70d0d0a.code"
    keep = pycache / "notes.txt"
    for path in (old, recent, keep):
        path.write_bytes(b"x")
    month = 31 * 24 * 3600
    for path in (old, keep):
        os.utime(path, (path.stat().st_mtime - month, path.stat().st_mtime - month))
    module = tree / "src" / "continuity" / "layout.py"
    module.write_text(module.read_text() + "\n# a new version\n")
    assert lifecycle(tree, "hook", "pin").returncode == 0
    assert 'status="restored"' in start(tree)  # new code is compiled and cached: the old goes
    assert not old.exists() and recent.exists() and keep.exists()
