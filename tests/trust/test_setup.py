"""`lifecycle setup` and `lifecycle uninstall`: one step in, one step out, and every file as it was.

Each case snapshots every file setup may touch (hooks, MCP configuration, instruction file, and for
Codex the config.toml where Codex files its trust of hooks), runs the real `lifecycle` command, adds
Codex's trust entries the way `/hooks` does (after setup, for our hooks and for someone else's), runs
uninstall and compares bytes: absent files absent again, present ones byte-identical.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from continuity.trust import harness, instructions, mcpconfig, plugin, undo

LIFECYCLE = Path(sys.executable).with_name("lifecycle")

OTHER_HOOK = {"type": "command", "command": "echo someone else's hook", "timeout": 5}
CODEX_TOML = (
    "# my Codex settings; comments stay\n"
    'model = "o3"  # the model I like\n'
    "\n"
    '[projects."/somewhere"]\n'
    'trust_level = "trusted"\n'
    "\n"
    "[mcp_servers.docs]\n"
    'command = "docs-server"  # another server\n'
    'args = ["--stdio"]\n'
)
CASES: dict[str, dict[str, str]] = {
    "nothing": {},
    "unrelated content": {
        "codex/hooks.json": json.dumps({"hooks": {"Stop": [{"hooks": [OTHER_HOOK]}]}}, indent=2) + "\n",
        "codex/config.toml": CODEX_TOML,
        "codex/AGENTS.md": "# My rules\n\nBe brief.\n",
        "claude/settings.json": json.dumps({"model": "opus", "hooks": {"Stop": [{"hooks": [OTHER_HOOK]}]}}, indent=2)
        + "\n",
        "claude/.claude.json": json.dumps({"numStartups": 3, "mcpServers": {"docs": {"command": "d"}}}, indent=2),
        "claude/CLAUDE.md": "# Mine\n\n<!-- a comment of mine -->\nNo trailing newline",
    },
    "four-space JSON, tables without servers": {
        "codex/hooks.json": json.dumps({"description": "mine", "hooks": {}}, indent=4) + "\n",
        "codex/config.toml": "# only a comment\n",
        "codex/AGENTS.md": "text\n\n",
        "claude/settings.json": json.dumps({"permissions": {"allow": ["Bash(ls)"]}}, indent=4) + "\n",
        "claude/.claude.json": "{}\n",
        "claude/CLAUDE.md": "",
    },
}


def _places(home: Path) -> dict[str, Path]:
    codex, claude = home / ".codex", home / ".claude"
    return {
        "codex/hooks.json": codex / "hooks.json",
        "codex/config.toml": codex / "config.toml",
        "codex/AGENTS.md": codex / "AGENTS.md",
        "claude/settings.json": claude / "settings.json",
        "claude/.claude.json": claude / ".claude.json",
        "claude/CLAUDE.md": claude / "CLAUDE.md",
    }


@pytest.fixture
def home(isolated_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("CODEX_HOME", str(isolated_home / ".codex"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(isolated_home / ".claude"))
    outside = tmp_path / "outside"  # not a repository: no project file to collide with
    outside.mkdir()
    monkeypatch.chdir(outside)
    return isolated_home


def lifecycle(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(LIFECYCLE), *args], capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert "Traceback" not in done.stderr, done.stderr
    return done


def snapshot(files: dict[str, Path]) -> dict[str, bytes | None]:
    return {name: path.read_bytes() if path.exists() else None for name, path in files.items()}


def trust_like_codex(config: Path, keys: list[str]) -> None:
    """Add `[hooks.state."<key>"]` tables as Codex's configuration writer does (seen with `codex app-server`'s
    `config/value/write`, tests/real_clients/test_clients_plugins.py): an explicit `[hooks.state]` first,
    blank lines between."""
    text = config.read_text(encoding="utf-8") if config.exists() else ""
    if "[hooks.state]" not in text:
        text += "\n[hooks.state]\n"
    for key in keys:
        text += f'\n[hooks.state.{json.dumps(key)}]\ntrusted_hash = "sha256:{"ab" * 32}"\n'
    config.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("name", ["codex", "claude"])
def test_setup_then_uninstall_leaves_every_file_byte_identical(home: Path, name: str, case: str) -> None:
    files = _places(home)
    for rel, text in CASES[case].items():
        files[rel].parent.mkdir(parents=True, exist_ok=True)
        files[rel].write_text(text, encoding="utf-8")
    before = snapshot(files)

    done = lifecycle("setup", name, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["changed"] and report["served_by"] is None
    assert {c["part"] for c in report["changes"] if c["changed"]} == {"hooks", "mcp", "instructions"}
    hooks_file = files[f"{name}/{'hooks.json' if name == 'codex' else 'settings.json'}"]
    doc = json.loads(hooks_file.read_text(encoding="utf-8"))
    assert harness.our_commands(doc)
    assert instructions.BEGIN in files[f"{name}/{instructions.FILE_NAME[name]}"].read_text(encoding="utf-8")
    assert mcpconfig.registered(name, mcpconfig.user_config_path(name))
    if name == "codex":
        assert "Codex runs a new or changed hook only after you trust it" in " ".join(report["next_steps"])
        ours = [f"{hooks_file}:{event}:{g}:{h}" for event, g, h in undo.our_positions(doc)]
        # Someone else's trusted hook stays trusted; with only ours, Codex's `[hooks.state]` goes too.
        others = [f"{home}/elsewhere/hooks.json:stop:0:0"] if case == "unrelated content" else []
        trust_like_codex(files["codex/config.toml"], [*ours, *others])
        for key in others:
            entry = f'\n[hooks.state]\n\n[hooks.state.{json.dumps(key)}]\ntrusted_hash = "sha256:{"ab" * 32}"\n'
            before["codex/config.toml"] = (before["codex/config.toml"] or b"") + entry.encode()

    again = lifecycle("setup", name)
    assert again.returncode == 0 and "nothing changed" in again.stdout, again.stdout

    done = lifecycle("uninstall", name)
    assert done.returncode == 0, done.stderr
    after = snapshot(files)
    for rel in files:
        assert after[rel] == before[rel], f"{rel} differs after setup and uninstall"


def test_setup_writes_nothing_when_the_project_scope_already_serves_the_harness(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository whose own `.codex/hooks.json` registers the handlers: user-scope setup from inside it refuses."""
    repo = tmp_path / "repo"
    (repo / ".codex").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    project = repo / ".codex" / "hooks.json"
    project.write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [_ours()]}]}}, indent=2) + "\n")
    monkeypatch.chdir(repo)
    before = snapshot(_places(home))
    done = lifecycle("setup", "codex", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["served_by"] == str(project) and not report["changed"]
    assert snapshot(_places(home)) == before
    text = lifecycle("setup", "codex").stdout
    assert "already gets continuity's handlers" in text and "Nothing changed" in text


def _ours() -> dict[str, Any]:
    return {"type": "command", "command": "python3 scripts/agent-startup-context.py --hook --harness codex"}


@pytest.mark.parametrize("name", ["codex", "claude"])
def test_setup_refuses_while_the_plugin_is_enabled_and_says_so(home: Path, name: str) -> None:
    if name == "codex":
        config = home / ".codex" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text('[plugins."continuity@continuity"]\nenabled = true\n')
    else:
        settings = home / ".claude" / "settings.json"
        settings.parent.mkdir(parents=True)
        settings.write_text(json.dumps({"enabledPlugins": {"continuity@continuity": True}}, indent=2) + "\n")
    assert plugin.installed(name, None) is not None
    before = snapshot(_places(home))
    done = lifecycle("setup", name)
    assert done.returncode == 0 and "the continuity plugin" in done.stdout and "Nothing changed" in done.stdout
    assert snapshot(_places(home)) == before


@pytest.mark.parametrize("name", ["codex", "claude"])
def test_dry_run_changes_nothing_and_uninstall_without_setup_says_so(home: Path, name: str) -> None:
    before = snapshot(_places(home))
    done = lifecycle("setup", name, "--dry-run")
    assert done.returncode == 0 and "would write" in done.stdout
    assert snapshot(_places(home)) == before
    done = lifecycle("uninstall", name)
    assert done.returncode == 0 and "nothing changed" in done.stdout
    assert snapshot(_places(home)) == before


def test_uninstall_keeps_what_the_person_added_after_setup(home: Path) -> None:
    """Edits made after setup survive: only continuity's handlers, server and block leave."""
    files = _places(home)
    assert lifecycle("setup", "claude").returncode == 0
    settings = json.loads(files["claude/settings.json"].read_text())
    settings["model"] = "sonnet"
    settings["hooks"]["Stop"].append({"hooks": [OTHER_HOOK]})
    files["claude/settings.json"].write_text(json.dumps(settings, indent=2) + "\n")
    with files["claude/CLAUDE.md"].open("a") as handle:
        handle.write("\nMy own line after the block.\n")
    assert lifecycle("uninstall", "claude").returncode == 0
    left = json.loads(files["claude/settings.json"].read_text())
    assert left == {"model": "sonnet", "hooks": {"Stop": [{"hooks": [OTHER_HOOK]}]}}
    text = files["claude/CLAUDE.md"].read_text()
    assert instructions.BEGIN not in text and "My own line after the block." in text


def test_a_block_without_its_end_marker_is_refused_in_one_line(home: Path) -> None:
    files = _places(home)
    assert lifecycle("setup", "codex").returncode == 0
    agents = files["codex/AGENTS.md"]
    agents.write_text(agents.read_text().replace(instructions.END, "my text"))
    done = lifecycle("uninstall", "codex")
    assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "no end marker" in done.stderr


@pytest.mark.parametrize("name", ["codex", "claude"])
def test_project_scope_setup_and_uninstall_in_a_checkout(
    home: Path, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Project scope writes the repository's files (relative script paths, `lifecycle mcp`) and takes them out."""
    root = Path(__file__).resolve().parents[2]
    repo = tmp_path / "checkout"
    (repo / "scripts").mkdir(parents=True)
    (repo / "src" / "continuity").mkdir(parents=True)
    for script in ("agent-startup-context.py", "artifactctl.py"):
        (repo / "scripts" / script).write_bytes((root / "scripts" / script).read_bytes())
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / instructions.FILE_NAME[name]).write_text("# This repository's rules\n\nRun the tests.\n")
    monkeypatch.chdir(repo)
    files = [repo / rel for rel in (".codex/hooks.json", ".codex/config.toml", ".claude/settings.json", ".mcp.json")]
    files += [repo / "AGENTS.md", repo / "CLAUDE.md", *_places(home).values()]
    before = snapshot({str(p): p for p in files})
    done = lifecycle("setup", name, "--scope", "project", "--json")
    assert done.returncode == 0, done.stderr
    changed = {c["path"] for c in json.loads(done.stdout)["changes"] if c["changed"]}
    hooks = repo / (".codex/hooks.json" if name == "codex" else ".claude/settings.json")
    server = repo / (".codex/config.toml" if name == "codex" else ".mcp.json")
    assert changed == {str(hooks), str(server), str(repo / instructions.FILE_NAME[name])}
    assert "scripts/agent-startup-context.py" in hooks.read_text() and str(repo) not in hooks.read_text()
    assert lifecycle("setup", name, "--scope", "user").stdout.count("Nothing changed") == 1  # never twice
    assert lifecycle("uninstall", name, "--scope", "project").returncode == 0
    assert snapshot({str(p): p for p in files}) == before


# --- generatively: whatever the person's files hold, setup then uninstall gives back their bytes ----------

_WORD = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)
_KEY = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(lambda k: k not in ("hooks", "mcp_servers"))
_JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | _WORD, lambda inner: st.lists(inner, max_size=3), max_leaves=6
)


@st.composite
def toml_texts(draw: st.DrawFn) -> str:
    """Comments, top-level keys and tables, as a person writes them (with or without a final newline)."""
    lines = [f"# {draw(_WORD)}".replace("\n", " ") for _ in range(draw(st.integers(0, 2)))]
    lines += [
        f"{key} = {json.dumps(draw(_WORD), ensure_ascii=False)}"
        for key in draw(st.lists(_KEY, max_size=3, unique=True))
    ]
    for table in draw(st.lists(_KEY, max_size=2, unique=True)):
        lines += ["", f"[t_{table}]", f"value = {draw(st.integers(-5, 5))}  # {draw(_WORD)}".replace("\n", " ")]
    text = "\n".join(lines)
    return text + ("\n" if text and draw(st.booleans()) else "")


@st.composite
def json_texts(draw: st.DrawFn, shape: str = "any") -> str:
    """A JSON object file; shape "codex-hooks" keeps to what Codex accepts in hooks.json."""
    doc: dict[str, Any] = {}
    if shape != "codex-hooks":
        doc = draw(st.dictionaries(_KEY.filter(lambda k: k != "description"), _JSON_VALUE, max_size=4))
    if shape != "any" and draw(st.booleans()):
        doc["description"] = draw(_WORD)
    if shape != "any" and draw(st.booleans()):
        doc["hooks"] = {"Stop": [{"hooks": [OTHER_HOOK]}]}
    indent = draw(st.sampled_from([2, 4, "\t"]))
    return json.dumps(doc, indent=indent, ensure_ascii=False) + ("\n" if draw(st.booleans()) else "")


_MARKDOWN = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80).filter(
    lambda t: "<!--" not in t
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["codex", "claude"]), data=st.data(), pointer=_MARKDOWN,
       present=st.lists(st.booleans(), min_size=3, max_size=3))  # fmt: skip
def test_any_existing_files_come_back_byte_for_byte(
    home: Path, monkeypatch: pytest.MonkeyPatch, name: str, data: st.DataObject, pointer: str, present: list[bool]
) -> None:
    from continuity.trust import setup

    hooks = data.draw(json_texts("codex-hooks" if name == "codex" else "claude-settings"))
    server = data.draw(toml_texts() if name == "codex" else json_texts())

    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        for variable, sub in (("CODEX_HOME", "codex"), ("CLAUDE_CONFIG_DIR", "claude"), ("XDG_STATE_HOME", "state")):
            monkeypatch.setenv(variable, str(base / sub))
        files = {
            harness.user_config_path(name): hooks,
            mcpconfig.user_config_path(name): server,
            instructions.user_path(name): pointer,
        }
        for (path, text), keep in zip(files.items(), present, strict=True):
            if keep:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(text.encode("utf-8"))
        before = {path: path.read_bytes() if path.exists() else None for path in files}
        assert setup.setup(name, "user", Path.cwd()).changed
        assert setup.uninstall(name, "user", Path.cwd()).changed
        assert {path: path.read_bytes() if path.exists() else None for path in files} == before
