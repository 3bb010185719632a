"""`lifecycle mcp install`: the server registered in Codex's config.toml and Claude Code's JSON files,
merge-safe, idempotent, once across scopes; doctor reports where."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from briefkit import connection_file, make_vault
from conftest import git
from typer.testing import CliRunner

from continuity import tunables
from continuity.cli import app
from continuity.local import connection
from continuity.trust import mcpconfig

tomllib = pytest.importorskip("tomllib")  # an independent reader of what was written (Python 3.11+)

CODEX_CONFIG = """# my Codex settings
model = "o3"  # the model I use

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-server"]  # keep this comment

[hooks.state."a:b:0:0"]
trusted_hash = "sha256:abc"
"""


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), prog_name="lifecycle")


@pytest.fixture(autouse=True)
def harness_homes(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The harness variables point inside the test's home; the commands run in a fresh git repository."""
    monkeypatch.setenv("CODEX_HOME", str(isolated_home / ".codex"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(isolated_home / "claude-config"))
    repo = tmp_path / "work" / "app"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    monkeypatch.chdir(repo)
    return repo


def codex_file(home: Path) -> Path:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_codex_user_install_keeps_every_comment_and_key(isolated_home: Path) -> None:
    path = codex_file(isolated_home)
    path.write_text(CODEX_CONFIG)
    result = invoke("mcp", "install", "--harness", "codex", "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc) == {
        "version",
        "harness",
        "scope",
        "path",
        "server",
        "command",
        "changed",
        "dry_run",
        "duplicate_of",
    }
    assert doc["changed"] is True and doc["path"] == str(path) and doc["duplicate_of"] is None
    text = path.read_text()
    for line in CODEX_CONFIG.splitlines():
        assert line in text  # comments, unrelated tables and keys, all kept
    parsed = tomllib.loads(text)
    assert parsed["mcp_servers"]["continuity"] == {"command": sys.executable, "args": ["-I", "-m", "continuity", "mcp"]}
    assert parsed["mcp_servers"]["docs"]["command"] == "npx" and parsed["model"] == "o3"
    again = json.loads(invoke("mcp", "install", "--harness", "codex", "--json").stdout)
    assert again["changed"] is False and path.read_text() == text


def test_reinstall_updates_our_keys_and_keeps_the_persons(isolated_home: Path) -> None:
    path = codex_file(isolated_home)
    old = '[mcp_servers.continuity]\ncommand = "/old/python"\nargs = ["-m", "continuity", "mcp"]\nenabled = false\n'
    path.write_text(old)
    assert invoke("mcp", "install", "--harness", "codex").exit_code == 0
    entry = tomllib.loads(path.read_text())["mcp_servers"]["continuity"]
    assert entry["command"] == sys.executable and entry["enabled"] is False


def test_claude_user_install_honours_the_config_dir_and_the_file_s_shape(isolated_home: Path) -> None:
    path = isolated_home / "claude-config" / ".claude.json"
    path.parent.mkdir()
    original = {
        "numStartups": 7,
        "projects": {"/somewhere": {"allowedTools": []}},
        "mcpServers": {"x": {"command": "y"}},
    }
    path.write_text(json.dumps(original, indent=4) + "\n")
    os.chmod(path, 0o600)
    result = invoke("mcp", "install", "--harness", "claude")
    assert result.exit_code == 0, result.stderr
    assert f"wrote {path}" in result.stdout
    text = path.read_text()
    assert text.startswith('{\n    "numStartups": 7,') and text.endswith("}\n")
    doc = json.loads(text)
    assert doc["projects"] == original["projects"] and doc["mcpServers"]["x"] == {"command": "y"}
    assert doc["mcpServers"]["continuity"] == {
        "type": "stdio",
        "command": sys.executable,
        "args": ["-I", "-m", "continuity", "mcp", "--harness", "claude"],
    }
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert mcpconfig.registrations("claude", None) == {"user": path}


def test_project_scope_names_no_machine_path(harness_homes: Path) -> None:
    assert invoke("mcp", "install", "--harness", "claude", "--scope", "project").exit_code == 0
    doc = json.loads((harness_homes / ".mcp.json").read_text())
    assert doc == {
        "mcpServers": {"continuity": {"type": "stdio", "command": "lifecycle", "args": ["mcp", "--harness", "claude"]}}
    }
    assert invoke("mcp", "install", "--harness", "codex", "--scope", "project").exit_code == 0
    entry = tomllib.loads((harness_homes / ".codex" / "config.toml").read_text())["mcp_servers"]["continuity"]
    assert (entry["command"], entry["args"]) == ("lifecycle", ["mcp"])


def test_never_twice_across_scopes_unless_asked(harness_homes: Path, isolated_home: Path) -> None:
    assert invoke("mcp", "install", "--harness", "codex", "--scope", "project").exit_code == 0
    done = invoke("mcp", "install", "--harness", "codex")
    assert done.exit_code == 0 and "already registers" in done.stdout and "project scope" in done.stdout
    assert not (isolated_home / ".codex" / "config.toml").exists()
    doc = json.loads(invoke("mcp", "install", "--harness", "codex", "--json").stdout)
    assert doc["duplicate_of"] == str(harness_homes / ".codex" / "config.toml") and doc["changed"] is False
    assert invoke("mcp", "install", "--harness", "codex", "--both").exit_code == 0
    assert set(mcpconfig.registrations("codex", harness_homes)) == {"user", "project"}


def test_dry_run_prints_and_writes_nothing(isolated_home: Path) -> None:
    result = invoke("mcp", "install", "--harness", "codex", "--dry-run")
    assert result.exit_code == 0 and "[mcp_servers.continuity]" in result.stdout
    assert not (isolated_home / ".codex" / "config.toml").exists()


@pytest.mark.parametrize(
    ("harness", "name", "content", "words"),
    [
        ("codex", "config.toml", "model = \n", "not valid TOML"),
        ("codex", "config.toml", 'mcp_servers = "x"\n', "not a table"),
        ("codex", "config.toml", '[mcp_servers.continuity]\ncommand = "other-server"\n', "does not run"),
        ("claude", ".claude.json", '{"a": 1, "a": 2}', "not valid JSON"),
        ("claude", ".claude.json", "[1]", "JSON object"),
        ("claude", ".claude.json", '{"mcpServers": []}', "not a table"),
    ],
)
def test_files_that_must_not_be_rewritten_are_refused(
    isolated_home: Path, harness: str, name: str, content: str, words: str
) -> None:
    path = (isolated_home / ".codex" if harness == "codex" else isolated_home / "claude-config") / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    result = invoke("mcp", "install", "--harness", harness)
    assert result.exit_code == 5
    assert result.stderr.startswith("lifecycle: error:") and words in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert path.read_text() == content


def test_a_linked_config_is_refused(isolated_home: Path, tmp_path: Path) -> None:
    real = tmp_path / "real.toml"
    real.write_text(CODEX_CONFIG)
    codex_file(isolated_home).symlink_to(real)
    result = invoke("mcp", "install", "--harness", "codex")
    assert result.exit_code == 5 and "link" in result.stderr and real.read_text() == CODEX_CONFIG


def test_the_registered_user_command_starts_this_package(tmp_path: Path) -> None:
    entry = mcpconfig.wanted_entry("codex", "user")
    done = subprocess.run(
        [entry["command"], *entry["args"][:-1], "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "mcp" in done.stdout


def test_doctor_says_where_the_server_is_registered(
    harness_homes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_vault(tmp_path / "vault")
    monkeypatch.setenv(connection.ENV_CONNECTION, str(connection_file(tmp_path / "connection.yaml", root)))

    def mcp_checks() -> dict[str, dict[str, str]]:
        doc = json.loads(invoke("doctor", "--json").stdout)
        return {c["id"]: c for c in doc["checks"] if c["id"].startswith("mcp.")}

    found = mcp_checks()
    assert set(found) == {"mcp.codex", "mcp.claude"}
    assert (
        found["mcp.codex"]["level"] == "ok" and "lifecycle mcp install --harness codex" in found["mcp.codex"]["message"]
    )
    invoke("mcp", "install", "--harness", "claude")
    found = mcp_checks()
    assert found["mcp.claude"]["level"] == "ok" and "registered at user scope" in found["mcp.claude"]["message"]
    invoke("mcp", "install", "--harness", "claude", "--scope", "project", "--both")
    found = mcp_checks()
    assert found["mcp.claude"]["level"] == "warn" and str(harness_homes / ".mcp.json") in found["mcp.claude"]["message"]


def test_a_config_over_the_cap_is_refused_before_it_is_read(isolated_home: Path) -> None:
    path = isolated_home / "claude-config" / ".claude.json"
    path.parent.mkdir()
    with open(path, "wb") as handle:  # sparse: the size says enough, nothing is read
        handle.truncate(tunables.MCP_CONFIG_CAP_BYTES + 1)
    result = invoke("mcp", "install", "--harness", "claude")
    assert result.exit_code == 5 and str(tunables.MCP_CONFIG_CAP_BYTES) in result.stderr
    assert path.stat().st_size == tunables.MCP_CONFIG_CAP_BYTES + 1


# What a cloned repository can put at its top, where the client starts the server: the package's own
# name, and modules the interpreter or the server imports after start-up.
PLANTED = ("continuity/__init__.py", "continuity/__main__.py", "continuity.py", "json.py", "threading.py",
           "pathlib.py", "selectors.py", "sitecustomize.py", "usercustomize.py", "encodings/__init__.py")  # fmt: skip


def assert_served_without_the_repositorys_code(command: list[str], tmp_path: Path, env: Mapping[str, str]) -> None:
    """Run `command` as the client runs it, in a repository that plants a module under every name of
    PLANTED: it answers the handshake, and none of the planted modules ran."""
    repo, marker = tmp_path / "cloned", tmp_path / "ran"
    for rel in PLANTED:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(f"open({str(marker)!r}, 'a').write({rel!r} + chr(10))\n", encoding="utf-8")
    git(repo, "init", "-q")
    client = {"name": "t", "version": "1"}
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}}  # fmt: skip
    done = subprocess.run(
        command, cwd=repo, input=json.dumps(hello) + "\n", capture_output=True, text=True, timeout=60,
        check=False, env=dict(env),
    )  # fmt: skip
    assert not marker.exists(), f"the repository's code ran: {marker.read_text()}"
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "continuity", done.stderr


@pytest.mark.parametrize(("harness", "scope"), [("codex", "user"), ("claude", "user"), ("codex", "project")])
def test_the_registered_server_never_imports_from_the_repository_it_serves(
    tmp_path: Path, harness: str, scope: str
) -> None:
    """The registered command, run as the client runs it (in the opened repository), answers the
    handshake and runs none of the repository's modules, whatever name they take. The user-scope entry
    is run with PYTHONPATH pointing at the repository too (isolated mode ignores it); the project
    entry is the console script, run from this environment's folder of scripts."""
    entry = mcpconfig.wanted_entry(harness, scope)
    command = entry["command"] if scope == "user" else str(Path(sys.executable).parent / entry["command"])
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "cloned")} if scope == "user" else os.environ
    assert_served_without_the_repositorys_code([command, *entry["args"]], tmp_path, env)


def test_an_entry_written_without_isolation_is_ours_rewritten_and_named_by_doctor(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_vault(tmp_path / "vault")
    monkeypatch.setenv(connection.ENV_CONNECTION, str(connection_file(tmp_path / "connection.yaml", root)))
    config = isolated_home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[mcp_servers.continuity]\ncommand = "{sys.executable}"\nargs = ["-m", "continuity", "mcp"]\n')
    old = mcpconfig.entry_at("codex", config)
    assert mcpconfig.is_ours(old) and mcpconfig.reads_the_working_folder(old)
    doctor = {c["id"]: c for c in json.loads(invoke("doctor", "--json").stdout)["checks"]}
    assert (
        doctor["mcp.codex"]["level"] == "warn"
        and "lifecycle mcp install --harness codex" in doctor["mcp.codex"]["message"]
    )
    invoke("mcp", "install", "--harness", "codex")
    new = mcpconfig.entry_at("codex", config)
    assert new["args"] == ["-I", "-m", "continuity", "mcp"] and not mcpconfig.reads_the_working_folder(new)


def test_a_package_only_pythonpath_holds_is_registered_with_safe_path_and_still_ignores_the_repository(
    tmp_path: Path,
) -> None:
    """Isolated mode leaves PYTHONPATH and the user's site folder out, so a package found only there
    (here: an interpreter with no continuity installed, given the package through PYTHONPATH) is
    registered with `-P` (3.11+), which keeps the opened repository off the path and still starts."""
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    python = str(bare / "bin" / "python")
    src = Path(mcpconfig.__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), sysconfig.get_paths()["purelib"]])}
    code = (
        "import json; from continuity.trust import mcpconfig as m; print(json.dumps(m.wanted_entry('codex', 'user')))"
    )
    chosen = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=False)
    if sys.version_info < (3, 11):
        assert chosen.returncode != 0 and "install continuity with pipx or uv tool" in chosen.stderr
        return
    entry = json.loads(chosen.stdout)
    assert entry == {"command": python, "args": ["-P", "-m", "continuity", "mcp"]}, chosen.stderr
    assert mcpconfig.is_ours(entry) and not mcpconfig.reads_the_working_folder(entry)
    assert_served_without_the_repositorys_code([entry["command"], *entry["args"]], tmp_path, env)
