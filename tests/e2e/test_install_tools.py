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

ROOT = Path(__file__).resolve().parents[2]
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
    env["HOME"] = str(home)  # and every harness and state folder inside it, whatever the caller's were
    env.update(CODEX_HOME=str(home / ".codex"), CLAUDE_CONFIG_DIR=str(home / ".claude"))
    env.update(XDG_STATE_HOME=str(home / ".local" / "state"), XDG_CACHE_HOME=str(home / ".cache"))
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


def test_after_an_upgrade_to_another_release_the_plugin_says_in_one_line_what_to_run(
    clone: Path, tmp_path: Path
) -> None:
    """`pipx install --force` of a clone whose startup script changed (a new release; `pipx upgrade` of a
    local path reinstalls only for a new version number): the plugin's runner refuses the new script
    and says what to run, once, and `lifecycle setup codex` writes the new digest into the hooks."""
    newer = tmp_path / "newer"
    subprocess.run(["git", "clone", "-q", str(clone), str(newer)], check=True, timeout=120)
    script = newer / "scripts" / "agent-startup-context.py"
    script.write_text(script.read_text(encoding="utf-8") + "\n# the next release\n", encoding="utf-8")
    home = tmp_path / "tool-home"
    home.mkdir()
    bin_dir, env = install("pipx", str(clone), home)
    env["PATH"] = f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin"
    setup = [str(bin_dir / "lifecycle"), "setup", "codex"]
    assert subprocess.run(setup, env=env, cwd=home, capture_output=True, timeout=120).returncode == 0
    forced = subprocess.run([str(BIN / "pipx"), "install", "--force", str(newer)], env=env, cwd=home,
                            capture_output=True, text=True, timeout=600)  # fmt: skip
    assert forced.returncode == 0, forced.stderr
    (home / ".codex" / "hooks.json").rename(home / "setup-hooks.json")  # the plugin alone serves Codex now

    folder = ROOT / plugin.FOLDER["codex"]
    doc = json.loads((folder / plugin.HOOKS_REL).read_text(encoding="utf-8"))
    command = doc["hooks"]["SessionStart"][0]["hooks"][0]["command"].replace(plugin.ROOT_VARIABLE["codex"], str(folder))
    payload = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "session_id": "s"})
    done = subprocess.run(["/bin/bash", "-c", command], env=env, cwd=home, input=payload, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.count("\n") == 1 and "another release than this plugin" in done.stdout, done.stdout

    (home / "setup-hooks.json").rename(home / ".codex" / "hooks.json")
    again = subprocess.run(setup, env=env, cwd=home, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and f"hooks: wrote {home / '.codex' / 'hooks.json'}" in again.stdout, again.stdout
