"""Only reviewed bytes run in the startup hook: nothing planted beside them runs.

Each test plants something in a fresh copy of the checkout that would run if the hook imported the
package from disk the ordinary way, and runs the real hook command through `bash -c` for a cold start
and for a tool event. (`test_fastpath` plants compiled code where a code cache would sit.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hookkit import command, connect, context_of, hooks_doc, make_checkout, payload, run_shell

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
        src / "continuity" / "hook" / "tool_events" / "__init__.py",  # a package shadowing a reviewed module
        src / "continuity" / "brief" / "render" / "__init__.py",
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
