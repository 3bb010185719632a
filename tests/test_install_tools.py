"""`pipx install` and `uv tool install`, from a clone and from a git URL, as docs/install.md shows them.

Each case installs a copy of this working tree (committed in a new repository, so that the git URL
`git+file://…` is a real one) into a temporary tool home with the real tool, which fetches the
dependencies from the package index as it would for a person. The installed `lifecycle` then runs,
`lifecycle setup codex --dry-run` sees a package installation inside the tool's environment, and the
plugins' runner, given that `lifecycle`, finds the installed startup script and recognises it as the
release it pins.
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from clients import copy_checkout

from continuity.trust import plugin

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = copy_checkout(tmp_path_factory.mktemp("clone") / "continuity")
    git = ["git", "-C", str(folder), "-c", "user.name=Test", "-c", "user.email=test@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(folder)], check=True, timeout=60)
    subprocess.run([*git, "add", "-A"], check=True, timeout=60)
    subprocess.run([*git, "commit", "-q", "-m", "copy"], check=True, timeout=60)
    return folder


def install(tool: str, source: str, home: Path) -> tuple[Path, dict[str, str]]:
    """Install continuity with `tool` from `source` into `home`; the folder its `lifecycle` lands in."""
    exe = BIN / tool
    if not exe.exists():
        pytest.skip(f"{tool} is not installed (it is in the test extra: pip install -e '.[test]')")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIPX_", "UV_", "VIRTUAL_ENV"))}
    env["HOME"] = str(home)
    bin_dir = home / ".local" / "bin"
    if tool == "pipx":
        env.update(PIPX_HOME=str(home / "pipx"), PIPX_BIN_DIR=str(bin_dir), PIPX_MAN_DIR=str(home / "man"))
        argv = [str(exe), "install", source]
    else:
        env.update(
            UV_TOOL_DIR=str(home / "uv-tools"), UV_TOOL_BIN_DIR=str(bin_dir), UV_CACHE_DIR=str(home / "uv-cache")
        )
        argv = [str(exe), "tool", "install", source]
    done = subprocess.run(argv, env=env, cwd=home, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{tool} install failed:\n{done.stdout}\n{done.stderr}"
    assert (bin_dir / "lifecycle").exists(), done.stdout + done.stderr
    return bin_dir, env


@pytest.mark.parametrize("tool", ["pipx", "uv"])
@pytest.mark.parametrize("kind", ["clone", "git URL"])
def test_a_tool_installs_continuity_and_setup_and_the_plugin_find_the_installation(
    tool: str, kind: str, clone: Path, tmp_path: Path
) -> None:
    home = tmp_path / "tool-home"
    home.mkdir()
    source = str(clone) if kind == "clone" else f"git+file://{clone}"
    bin_dir, env = install(tool, source, home)
    lifecycle = bin_dir / "lifecycle"
    env["PATH"] = f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin"
    done = subprocess.run([str(lifecycle), "setup", "codex", "--dry-run", "--json"], env=env, cwd=home,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    found = report["installation"]
    assert found["kind"] == "package" and not found["scripts"].startswith(str(clone)), found
    assert Path(found["python"]).is_relative_to(home) and Path(found["scripts"]).is_relative_to(home), found
    assert not (home / ".codex").exists(), "a dry run wrote something"

    runner = runpy.run_path(str(ROOT / plugin.FOLDER["codex"] / plugin.RUNNER_REL))
    script = runner["installed_script"](str(lifecycle))
    assert script == str(Path(found["scripts"]) / "agent-startup-context.py")
    digest = subprocess.run(["sha256sum", script], capture_output=True, text=True, check=True).stdout.split()[0]
    assert digest == runner["STARTUP_SCRIPT_SHA256"], "the plugin pins another release than the one installed"
