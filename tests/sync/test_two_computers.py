"""One person, two computers, one vault folder carried between them as a sync engine would.

Two homes stand for the two computers (each with its own HOME and XDG folders, so its own device id,
caches and hook state), two clones of one repository with different folder names stand for the two
checkouts, and one vault folder that both reach stands for the synchronized vault. Every step runs the
real `lifecycle` command and the real pinned SessionStart hook command in subprocesses, following the
README's set-up for a second computer.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import git
from hookkit import LIFECYCLE, command, context_of, hook_env, hooks_doc, make_checkout, payload, run_shell

from continuity.vault import layout, registry

HANDOFF = """## Goal and status

Port the exporter to the new storage API; the reader half is done.

## Completed work

- src/export/reader.py moved to the new API; `pytest tests/test_reader.py` passes.

## Risks and decisions

- Keep the old CSV column order: downstream scripts depend on it.

## Next actions

1. Port src/export/writer.py to the new API.
"""


def computer(tmp_path: Path, name: str) -> dict[str, str]:
    """The environment of one computer: its own home and XDG folders."""
    home = tmp_path / name / "home"
    home.mkdir(parents=True)
    env = {"HOME": str(home)}
    for key, sub in (
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
    ):
        env[key] = str(home / sub)
    return env


def run(env: dict[str, str], cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LIFECYCLE), *args], cwd=cwd, env=hook_env(**env), input=stdin, capture_output=True, text=True, timeout=120
    )


def session_start(env: dict[str, str], clone: Path) -> str:
    """The brief the checked-in, pinned SessionStart hook gives the model in this clone."""
    cmd = command(hooks_doc(clone), "SessionStart")
    done = run_shell(cmd, payload("SessionStart", clone, source="startup"), clone, **env)
    assert done.returncode == 0, done.stderr
    return context_of(done.stdout, "SessionStart")


def test_the_second_computer_picks_up_where_the_first_left_off(tmp_path: Path) -> None:
    origin = make_checkout(tmp_path / "origin")
    first, second = computer(tmp_path, "computer-a"), computer(tmp_path, "computer-b")
    clone_a, clone_b = tmp_path / "computer-a" / "work" / "my-app", tmp_path / "computer-b" / "src" / "app"
    for clone in (clone_a, clone_b):
        git(tmp_path, "clone", "-q", str(origin), str(clone))
    # The same repository as each computer's clone names its remote: with a token, and in ssh form.
    git(clone_a, "remote", "set-url", "origin", "https://me:s3cr3t-token@Git.Example.org/me/app.git")
    git(clone_b, "remote", "set-url", "origin", "git@git.example.org:me/app")
    vault = tmp_path / "Drive" / "agent-vault"  # the one synchronized folder both computers see

    # Computer A: a new vault, once.
    done = run(first, clone_a, "init", "--vault", str(vault), "--new", "--json")
    assert done.returncode == 0, done.stderr
    made = json.loads(done.stdout)
    assert made["project"] == "my-app" and made["project_found_by"] == "new"
    assert made["repository"] == "git.example.org/me/app"
    profile = (vault / registry.PROJECT.at("my-app")).read_text(encoding="utf-8")
    assert 'repository: "git.example.org/me/app"' in profile and "s3cr3t" not in profile
    device_a = made["device"]
    done = run(first, clone_a, "handoff", "new", "--title", "Exporter port", "--from", "-", stdin=HANDOFF)
    assert done.returncode == 0, done.stderr
    assert "Port src/export/writer.py" in session_start(first, clone_a)
    done = run(first, clone_a, "lease", "acquire", "--ttl", "1h30m", "--task", "exporter port")
    assert done.returncode == 0, done.stderr

    # Computer B, before the sync engine has finished: a wrong path never creates a vault.
    typo = tmp_path / "Drive" / "agent-valt"
    done = run(second, clone_b, "init", "--vault", str(typo))
    assert done.returncode == 3 and done.stderr.count("\n") == 1
    assert f"{vault} beside it is a vault" in done.stderr and "--new" not in done.stderr
    assert not typo.exists()
    nowhere = tmp_path / "Elsewhere" / "agent-vault"
    done = run(second, clone_b, "init", "--vault", str(nowhere))
    assert done.returncode == 3 and "sync engine has finished" in done.stderr and "--new" in done.stderr
    assert not nowhere.exists()

    # Computer B: the right path connects to the same project, whatever its clone is called.
    done = run(second, clone_b, "init", "--vault", str(vault))
    assert done.returncode == 0, done.stderr
    assert "already known to the vault as project my-app" in done.stdout
    assert not (vault / layout.PROJECTS / "app").exists()
    connection = (clone_b / ".agent-vault").read_text(encoding="utf-8")
    assert "project: my-app" in connection and f"device: {device_a}" not in connection
    # A typo on the now connected checkout is a missing path, not a call for --force.
    done = run(second, clone_b, "init", "--vault", str(typo))
    assert done.returncode == 3 and "does not exist" in done.stderr and "--force" not in done.stderr

    # The second computer's brief carries the first computer's handoff; its unfilled profile is left out.
    brief = session_start(second, clone_b)
    assert 'status="restored"' in brief.split("\n", 1)[0]
    assert "Port src/export/writer.py to the new API." in brief and f"device {device_a}" in brief
    assert "Completed work" in brief and "src/export/reader.py" not in brief  # said where, not shown
    device_b = json.loads(run(second, clone_b, "render", "--format", "json").stdout)["sources"][3]
    assert (device_b["name"], device_b["reason"]) == ("device", "placeholder")
    assert "is not filled in yet" in brief and "Operating system, shell" not in brief
    doctor = json.loads(run(second, clone_b, "doctor", "--json").stdout)
    levels = {c["id"]: c["level"] for c in doctor["checks"]}
    assert levels["source.device"] == "warn" and levels["project.identity"] == "ok"

    # Computer A went quiet holding the lease; B removes it on purpose, and A is told who and when.
    assert run(second, clone_b, "handoff", "new", "--title", "x", "--from", "-", stdin=HANDOFF).returncode == 4
    done = run(second, clone_b, "lease", "release", "--force")  # no terminal and no --yes
    assert done.returncode == 2 and "--yes" in done.stderr
    done = run(second, clone_b, "lease", "release", "--force", "--yes")
    assert done.returncode == 0 and f"released device={device_a}" in done.stdout
    status = run(first, clone_a, "lease", "status")
    lines = status.stdout.splitlines()
    assert lines[0] == "lock=none"
    removed = json.loads(run(first, clone_a, "lease", "status", "--json").stdout)["removed"]
    assert removed["by"] != device_a and removed["task"] == "exporter port"
    assert (
        f"removed: device {removed['by']} removed this device's writer lease (exporter port)"
        == lines[1].split(" at ")[0]
    )
    doctor = json.loads(run(first, clone_a, "doctor", "--json").stdout)
    assert any(c["id"] == "lease.removed" and removed["by"] in c["message"] for c in doctor["checks"])
