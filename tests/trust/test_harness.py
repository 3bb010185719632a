"""`lifecycle hooks install` and the shape of the checked-in `.codex/hooks.json`.

Install merges with pre-existing files (every unrelated key, group and handler kept), is idempotent,
refuses files it must not rewrite (exit 5, file untouched), and writes handlers whose commands work:
a user-scope command is run through a real shell from another repository.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hookkit import ROOT, connect, context_of, hook_env, lifecycle, make_checkout, payload, run_shell
from typer.testing import CliRunner

from continuity import tunables
from continuity.cli import app
from continuity.errors import InputRejected
from continuity.trust import harness, hookcommand

UNRELATED_CODEX: dict[str, Any] = {
    "description": "my own hooks",
    "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo mine", "timeout": 5}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],
    },
}


def groups(doc: dict[str, Any], event: str) -> list[dict[str, Any]]:
    value = doc["hooks"][event]
    assert isinstance(value, list)
    return value


def ours(doc: dict[str, Any], event: str) -> dict[str, Any]:
    [group] = [g for g in groups(doc, event) if any(harness.is_ours(h) for h in g["hooks"])]
    return group


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


@pytest.fixture(autouse=True)
def outside_any_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a plain folder: this repository's own `.codex/hooks.json` registers the handlers at
    project scope, which would (rightly) stop a user-scope install."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    monkeypatch.chdir(folder)


def test_the_checked_in_codex_file_has_the_strict_shape() -> None:
    doc = json.loads((ROOT / ".codex" / "hooks.json").read_text())
    assert set(doc) == {"description", "hooks"}
    assert set(doc["hooks"]) == {"SessionStart", "SubagentStart", "PreCompact", "PostToolUse", "Stop"}
    session = ours(doc, "SessionStart")
    assert session["matcher"] == "startup|resume|clear|compact"
    brief = session["hooks"][0]
    assert brief["command"].endswith("--hook --harness codex") and "agent-startup-context.py" in brief["command"]
    assert brief["additionalContextLimit"] == tunables.CODEX_SESSION_START_CONTEXT_LIMIT_TOKENS
    assert brief["timeout"] == tunables.HOOK_TIMEOUT_SECONDS and "commandWindows" in brief
    sub = ours(doc, "SubagentStart")["hooks"][0]
    assert sub["additionalContextLimit"] == tunables.CODEX_SUBAGENT_START_CONTEXT_LIMIT_TOKENS
    assert ours(doc, "PostToolUse")["matcher"] == "*"
    for event in ("PreCompact", "PostToolUse", "Stop"):
        handler = ours(doc, event)["hooks"][0]
        assert set(handler) == {"type", "command", "commandWindows", "timeout"}
    for group in (g for groups_ in doc["hooks"].values() for g in groups_):
        assert set(group) <= {"matcher", "hooks"}
        for handler in group["hooks"]:
            assert set(handler) <= {"type", "command", "commandWindows", "timeout", "statusMessage",
                                    "additionalContextLimit", "async"}  # fmt: skip
            assert str(ROOT.parent) not in handler["command"] and "/home/" not in handler["command"]


def test_codex_user_install_merges_and_is_idempotent(tmp_path: Path, isolated_home: Path) -> None:
    path = isolated_home / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text(json.dumps(UNRELATED_CODEX, indent=4))
    result = invoke("hooks", "install", "--harness", "codex")
    assert result.exit_code == 0, result.output
    assert "/hooks" in result.output
    doc = json.loads(path.read_text())
    assert doc["description"] == "my own hooks"
    assert doc["hooks"]["PreToolUse"] == UNRELATED_CODEX["hooks"]["PreToolUse"]
    assert groups(doc, "SessionStart")[0] == UNRELATED_CODEX["hooks"]["SessionStart"][0]
    session = ours(doc, "SessionStart")
    named = hookcommand.split(session["hooks"][0]["command"])
    script = str(harness.Path(harness.__file__).resolve().parents[3] / harness.SCRIPT_REL)
    assert named is not None and named[:2] == (harness.sys.executable, script)
    before = path.read_bytes()
    again = invoke("hooks", "install", "--harness", "codex", "--json")
    assert again.exit_code == 0
    checkout = harness.Path(harness.__file__).resolve().parents[3]
    installed = {"kind": "checkout", "scripts": str(checkout / "scripts"), "python": harness.sys.executable}
    assert json.loads(again.output) == {"version": 1, "harness": "codex", "scope": "user", "path": str(path),
                                        "changed": False, "dry_run": False, "duplicate_of": None,
                                        "installation": installed}  # fmt: skip
    assert path.read_bytes() == before


def test_reinstall_replaces_our_handlers_in_place(tmp_path: Path, isolated_home: Path) -> None:
    path = isolated_home / ".codex" / "hooks.json"
    checkout = harness.Path(harness.__file__).resolve().parents[3]
    harness.install("codex", "user", checkout)
    doc = json.loads(path.read_text())
    stale = ours(doc, "Stop")["hooks"][0]
    stale["command"] = stale["command"].replace("--hook", "--hook --old")
    mine = {"type": "command", "command": "notify.sh"}
    doc["hooks"]["Stop"].append({"hooks": [mine]})
    doc["hooks"]["SessionStart"].append({"hooks": [{"type": "command", "command": "later.sh"}]})
    path.write_text(json.dumps(doc))
    result = harness.install("codex", "user", checkout)
    assert result.changed
    merged = json.loads(path.read_text())
    assert groups(merged, "Stop")[0]["hooks"][0]["command"].endswith("--hook --harness codex")
    assert groups(merged, "Stop")[1]["hooks"] == [mine]
    assert groups(merged, "SessionStart")[0] == ours(merged, "SessionStart")  # still first: same trust key
    assert groups(merged, "SessionStart")[1]["hooks"][0]["command"] == "later.sh"


def test_claude_user_install_keeps_settings_and_uses_claude_events(isolated_home: Path) -> None:
    path = isolated_home / ".claude" / "settings.json"
    path.parent.mkdir()
    settings = {"permissions": {"allow": ["Bash(ls:*)"]}, "env": {"A": "1"}, "model": "x"}
    path.write_text(json.dumps(settings))
    assert invoke("hooks", "install", "--harness", "claude").exit_code == 0
    doc = json.loads(path.read_text())
    assert {k: doc[k] for k in settings} == settings
    assert ours(doc, "SessionStart")["matcher"] == "startup|resume|clear|compact|fork"
    assert set(doc["hooks"]) == {
        "SessionStart",
        "SubagentStart",
        "PreCompact",
        "PostToolUse",
        "Stop",
        "UserPromptSubmit",
    }
    for group in (g for gs in doc["hooks"].values() for g in gs):
        for handler in group["hooks"]:
            sweep = "artifactctl.py" in handler["command"]
            assert set(handler) == {"type", "command", "timeout", *(["async"] if sweep else [])}
            assert "--harness claude" in handler["command"] or sweep
    assert invoke("hooks", "install", "--harness", "claude", "--json").output.count('"changed": false') == 1


def test_dry_run_prints_the_file_and_writes_nothing(isolated_home: Path) -> None:
    result = invoke("hooks", "install", "--harness", "codex", "--dry-run")
    assert result.exit_code == 0
    doc = json.loads(result.output)
    assert set(doc) == {"description", "hooks"}
    assert not (isolated_home / ".codex").exists()


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", "not valid JSON"),
        ('{"hooks": {}, "hooks": {}}', "not valid JSON"),
        ('{"$schema": "x", "hooks": {}}', "'$schema'"),
        ('{"hooks": []}', "'hooks' must be an object"),
        ('{"hooks": {"Stop": {}}}', "must be a list"),
        ("[1, 2]", "JSON object"),
    ],
)
def test_files_that_must_not_be_rewritten_are_refused(isolated_home: Path, content: str, words: str) -> None:
    path = isolated_home / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text(content)
    result = CliRunner().invoke(app, ["hooks", "install", "--harness", "codex"])
    assert result.exit_code == 5
    assert words in result.output and "Traceback" not in result.output
    assert path.read_text() == content


def test_a_linked_settings_file_is_refused(isolated_home: Path, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles-settings.json"
    real.write_text("{}")
    (isolated_home / ".claude").mkdir()
    (isolated_home / ".claude" / "settings.json").symlink_to(real)
    with pytest.raises(InputRejected, match="link"):
        harness.install("claude", "user", harness.Path(harness.__file__).resolve().parents[3])
    assert real.read_text() == "{}"


def test_config_homes_follow_the_harness_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cl"))
    assert harness.user_config_path("codex") == tmp_path / "cx" / "hooks.json"
    assert harness.user_config_path("claude") == tmp_path / "cl" / "settings.json"


def test_project_scope_needs_a_continuity_checkout(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(app, ["hooks", "install", "--harness", "codex", "--scope", "project"])
    assert result.exit_code == 2 and "continuity checkout" in result.output


def test_project_scope_writes_the_checkout_files(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "copy")
    done = lifecycle(checkout / "src", "hooks", "install", "--harness", "claude", "--scope", "project")
    assert done.returncode == 0, done.stderr
    doc = json.loads((checkout / ".claude" / "settings.json").read_text())
    command = ours(doc, "SessionStart")["hooks"][0]["command"]
    assert " scripts/agent-startup-context.py " in command and str(checkout) not in command
    assert lifecycle(checkout, "hooks", "install", "--harness", "codex", "--scope", "project").stdout.endswith(
        "nothing changed\n"
    )


def test_a_user_scope_command_serves_another_repository(tmp_path: Path, repo: Path) -> None:
    """The installed command runs the continuity checkout's script by absolute path from any repository."""
    checkout = make_checkout(tmp_path / "continuity")
    connect(repo, tmp_path / "vault")
    result = harness.install("codex", "user", checkout)
    doc = json.loads(result.path.read_text())
    command = ours(doc, "SessionStart")["hooks"][0]["command"]
    named = hookcommand.split(command)
    assert named is not None and named[1] == str(checkout / harness.SCRIPT_REL)
    sub = repo / "deep"
    sub.mkdir()
    done = run_shell(command, payload("SessionStart", sub, source="startup"), sub)
    assert 'status="restored"' in context_of(done.stdout, "SessionStart")
    assert os.stat(result.path).st_mode & 0o777 == 0o644


def test_the_windows_commands_run_the_same_check(tmp_path: Path) -> None:
    """PowerShell only changes the quoting: the Python inside `commandWindows` is the POSIX program with
    its quotes swapped, and it behaves the same (run here with this interpreter)."""
    checkout = make_checkout(tmp_path / "copy")
    connect(checkout, tmp_path / "vault")
    doc = json.loads((checkout / ".codex" / "hooks.json").read_text())
    for event in ("SessionStart", "SubagentStart", "Stop"):
        handler = ours(doc, event)["hooks"][0]
        windows = handler["commandWindows"]
        found = re.fullmatch(r"""python -I -S -c "([^"]*)" '(scripts/agent-startup-context\.py)' (.*)""", windows, re.S)
        assert found, windows
        code, script, rest = found.group(1), found.group(2), found.group(3).split()
        assert "$" not in code and "`" not in code and "'" not in shlex.split(handler["command"])[4]
        assert code == shlex.split(handler["command"])[4].replace('"', "'")
        for digest in (rest[0], "0" * 64):
            done = subprocess.run(
                [sys.executable, "-I", "-S", "-c", code, script, digest, *rest[1:]],
                cwd=checkout / "src",
                input=json.dumps(payload(event, checkout / "src", source="startup", stop_hook_active=False)),
                capture_output=True,
                text=True,
                env=hook_env(),
                timeout=120,
            )
            assert done.returncode == 0, done.stderr
            if event == "Stop":
                assert done.stdout == ""
            elif digest == rest[0]:
                assert 'status="restored"' in context_of(done.stdout, event)
            else:
                assert done.stdout == hookcommand.CHANGED_NOTICE + "\n"


def test_every_command_is_short_enough_to_review(tmp_path: Path, isolated_home: Path) -> None:
    """A person reads each command in Codex's /hooks dialog before trusting it."""
    checkout = make_checkout(tmp_path / "copy")
    files = [ROOT / ".codex" / "hooks.json"]
    for name in harness.HARNESSES:
        files += [harness.install(name, "project", checkout).path, harness.install(name, "user", checkout).path]
    for path in files:
        doc = json.loads(path.read_text())
        commands = harness.our_commands(doc)
        assert commands and all(len(c) <= tunables.HOOK_COMMAND_MAX_CHARS for c in commands), (path, commands)


def test_one_scope_at_a_time_so_the_brief_never_comes_twice(tmp_path: Path, isolated_home: Path) -> None:
    checkout = make_checkout(tmp_path / "copy")
    user_file = isolated_home / ".codex" / "hooks.json"
    # In a checkout whose project file registers the handlers, a user-scope install says so and writes nothing.
    done = lifecycle(checkout / "src", "hooks", "install", "--harness", "codex")
    assert done.returncode == 0 and "already registers" in done.stdout and "--both" in done.stdout
    assert not user_file.exists()
    report = json.loads(lifecycle(checkout, "hooks", "install", "--harness", "codex", "--json").stdout)
    assert report["changed"] is False and report["duplicate_of"] == str(checkout / ".codex" / "hooks.json")
    # Asked to, it registers both, and doctor warns about it.
    assert lifecycle(checkout, "hooks", "install", "--harness", "codex", "--both").returncode == 0
    assert user_file.exists()
    assert set(harness.registrations("codex", checkout)) == {"user", "project"}
    connect(checkout, tmp_path / "vault")
    doc = json.loads(lifecycle(checkout, "doctor", "--json").stdout)
    [scopes] = [c for c in doc["checks"] if c["id"] == "hooks.scopes.codex"]
    assert scopes["level"] == "warn" and "twice" in scopes["message"]
    # The reverse: with user-scope handlers, a project-scope install for Claude Code writes nothing.
    assert lifecycle(checkout, "hooks", "install", "--harness", "claude", "--both").returncode == 0
    claude_project = checkout / ".claude" / "settings.json"
    done = lifecycle(checkout, "hooks", "install", "--harness", "claude", "--scope", "project")
    assert done.returncode == 0 and "already registers" in done.stdout and not claude_project.exists()
