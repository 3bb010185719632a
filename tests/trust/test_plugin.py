"""The plugins in this repository: their pins are current, their manifests agree, and their runner finds
the installed package or says in one line why it cannot (never a traceback), and stays quiet when
`lifecycle setup` already serves the harness.

The hook commands run as the clients run them: through bash, in the session's folder, with the
plugin's folder put in place of `${PLUGIN_ROOT}` / `${CLAUDE_PLUGIN_ROOT}`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from continuity.trust import harness, hookcommand, plugin

ROOT = Path(__file__).resolve().parents[2]
NOT_RESTORED = "Private memory was not restored"


@pytest.fixture(autouse=True)
def harness_homes(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner reads the harnesses' user files: these tests' own, never the caller's."""
    monkeypatch.setenv("CODEX_HOME", str(isolated_home / ".codex"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(isolated_home / ".claude"))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_checked_in_plugins_pin_the_current_runner_and_startup_script() -> None:
    assert plugin.problems(ROOT) == []
    startup = sha256(ROOT / harness.SCRIPT_REL)
    for name, folder in plugin.FOLDER.items():
        runner = ROOT / folder / plugin.RUNNER_REL
        assert f'STARTUP_SCRIPT_SHA256 = "{startup}"' in runner.read_text(encoding="utf-8")
        doc = json.loads((ROOT / folder / plugin.HOOKS_REL).read_text(encoding="utf-8"))
        commands = [h["command"] for groups in doc["hooks"].values() for g in groups for h in g["hooks"]]
        assert commands and all(f" {sha256(runner)} --hook --harness {name}" in c for c in commands)
        assert all(plugin.ROOT_VARIABLE[name] + "/" + plugin.RUNNER_REL in c for c in commands)
        assert all(len(c) <= 2 * len(hookcommand.program(notice=True, walk=True)) for c in commands)


def test_each_marketplace_names_the_plugin_folder_of_its_client() -> None:
    codex = json.loads((ROOT / ".agents/plugins/marketplace.json").read_text())
    claude = json.loads((ROOT / ".claude-plugin/marketplace.json").read_text())
    assert codex["name"] == claude["name"] == "continuity"
    [codex_entry] = codex["plugins"]
    [claude_entry] = claude["plugins"]
    assert codex_entry["source"]["path"] == "./" + plugin.FOLDER["codex"]
    assert claude_entry["source"] == "./" + plugin.FOLDER["claude"]
    codex_manifest = json.loads((ROOT / plugin.FOLDER["codex"] / ".codex-plugin/plugin.json").read_text())
    claude_manifest = json.loads((ROOT / plugin.FOLDER["claude"] / ".claude-plugin/plugin.json").read_text())
    assert codex_manifest["name"] == claude_manifest["name"] == plugin.PLUGIN_NAME
    assert codex_manifest["hooks"] == "./" + plugin.HOOKS_REL and codex_manifest["mcpServers"] == "./.mcp.json"
    for name in plugin.FOLDER:
        servers = json.loads((ROOT / plugin.FOLDER[name] / ".mcp.json").read_text())["mcpServers"]
        assert servers["continuity"]["command"] == "lifecycle" and servers["continuity"]["args"][0] == "mcp"


def run_hook(
    name: str, event: str, cwd: Path, path: str, plugin_root: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The plugin's `event` handler, run as the client runs it, with PATH set to `path`."""
    folder = plugin_root or ROOT / plugin.FOLDER[name]
    doc = json.loads((folder / plugin.HOOKS_REL).read_text(encoding="utf-8"))
    command = doc["hooks"][event][0]["hooks"][0]["command"].replace(plugin.ROOT_VARIABLE[name], str(folder))
    env = {**os.environ, "PATH": path}
    payload = json.dumps({"hook_event_name": event, "source": "startup", "session_id": "s", "cwd": str(cwd)})
    return subprocess.run(["/bin/bash", "-c", command], cwd=cwd, env=env, input=payload, capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def _python_only(tmp_path: Path) -> str:
    """A PATH with python3 and nothing named lifecycle."""
    folder = tmp_path / "python-only"
    folder.mkdir()
    (folder / "python3").symlink_to(sys.executable)
    return str(folder)


@pytest.mark.parametrize("name", ["codex", "claude"])
def test_without_lifecycle_on_path_a_start_gets_one_notice_and_the_rest_nothing(name: str, tmp_path: Path) -> None:
    path = _python_only(tmp_path)
    start = run_hook(name, "SessionStart", tmp_path, path)
    assert start.returncode == 0 and start.stderr == ""
    assert start.stdout.count("\n") == 1 and start.stdout.startswith(NOT_RESTORED) and "lifecycle" in start.stdout
    stop = run_hook(name, "Stop", tmp_path, path)
    assert (stop.returncode, stop.stdout, stop.stderr) == (0, "", "")


def _prefix(tmp_path: Path, startup: bytes | None) -> Path:
    """A package installation's layout: bin/lifecycle, and the package with its `_scripts/` under lib/."""
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "lifecycle").write_text("#!/bin/sh\n")
    (prefix / "bin" / "lifecycle").chmod(0o755)
    site = prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    shutil.copytree(ROOT / "src" / "continuity", site / "continuity", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "continuity" / "_scripts").mkdir()
    script = site / "continuity" / "_scripts" / "agent-startup-context.py"
    script.write_bytes(startup if startup is not None else (ROOT / harness.SCRIPT_REL).read_bytes())
    return prefix


def test_an_installation_of_another_release_gets_one_notice_naming_what_to_run(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path, b"print('PLANTED-SCRIPT-RAN')\n")
    done = run_hook("codex", "SessionStart", tmp_path, f"{prefix / 'bin'}{os.pathsep}{_python_only(tmp_path)}")
    assert done.returncode == 0 and done.stderr == "" and "PLANTED-SCRIPT-RAN" not in done.stdout
    assert done.stdout.startswith(NOT_RESTORED) and "codex plugin add continuity@continuity" in done.stdout


def test_an_editable_install_is_not_run_and_says_so(tmp_path: Path) -> None:
    """This test environment's `lifecycle` is an editable install: no packaged script beside it."""
    done = run_hook("claude", "SessionStart", tmp_path, f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin")
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith(NOT_RESTORED) and "not a package installation" in done.stdout


@pytest.mark.parametrize("name", ["codex", "claude"])
def test_the_installed_package_runs_its_startup_script(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout connected to a new vault: the brief comes from the installed copy of the script."""
    monkeypatch.delenv("AGENT_VAULT_CONNECTION")
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    lifecycle = Path(sys.executable).with_name("lifecycle")
    subprocess.run([str(lifecycle), "init", "--new", "--vault", str(tmp_path / "vault")], cwd=work, check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    prefix = _prefix(tmp_path, None)
    done = run_hook(name, "SessionStart", work, f"{prefix / 'bin'}{os.pathsep}{_python_only(tmp_path)}")
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith('<private-memory event="SessionStart" status='), done.stdout


@pytest.mark.parametrize("name", ["codex", "claude"])
def test_the_plugin_stays_quiet_when_setup_already_serves_the_harness(name: str, tmp_path: Path) -> None:
    registered = harness.user_config_path(name)
    registered.parent.mkdir(parents=True)
    handler = {"type": "command", "command": "python3 /x/agent-startup-context.py 00 --hook"}
    registered.write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [handler]}]}}))
    prefix = _prefix(tmp_path, None)
    path = f"{prefix / 'bin'}{os.pathsep}{_python_only(tmp_path)}"
    done = run_hook(name, "SessionStart", tmp_path, path)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    [key] = json.loads(done.stdout)  # for the person only: nothing for the model
    assert key == "systemMessage" and f"lifecycle uninstall {name}" in json.loads(done.stdout)[key]
    stop = run_hook(name, "Stop", tmp_path, path)
    assert (stop.returncode, stop.stdout, stop.stderr) == (0, "", "")


def test_a_changed_runner_gives_only_the_fixed_notice(tmp_path: Path) -> None:
    copy = tmp_path / "plugin"
    shutil.copytree(ROOT / plugin.FOLDER["codex"], copy)
    runner = copy / plugin.RUNNER_REL
    runner.write_text(runner.read_text() + "\nprint('planted')\n")
    done = run_hook("codex", "SessionStart", tmp_path, _python_only(tmp_path), plugin_root=copy)
    assert done.returncode == 0 and done.stdout.strip() == hookcommand.CHANGED_NOTICE
