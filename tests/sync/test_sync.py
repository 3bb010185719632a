"""`lifecycle sync` with real git: a bare remote in tmp_path and two or three device vaults."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_connection
from syncvaults import bare_remote, devices, git, new_vault, remote_file, remote_history
from typer.testing import CliRunner

from continuity import limits, tunables
from continuity.cli.application import app
from continuity.errors import EXIT_NOT_CONNECTED, EXIT_REJECTED, InputRejected, LeaseHeld
from continuity.local import connection
from continuity.records import leases as lease_records
from continuity.store import lease, writer
from continuity.sync import engine, leases, remote as remotes, state
from continuity.sync.combine import Conflict
from continuity.sync.engine import PushRejected
from continuity.vault.conflicts import conflict_engine

SECRET = "AKIA" + "QZ7XK3LP9ZQ8WM2R"
SHARED = "30-memory/facts/shared.md"
NOTE = "---\nid: shared\ntype: fact\nstatus: approved\n---\n{body}\n"


def test_first_commit_then_second_computer_sees_it(tmp_path: Path) -> None:
    remote, (a, _b) = devices(tmp_path, 2)
    assert remote_file(remote, "50-devices/dev-a/DEVICE.md") is not None
    assert remote_file(remote, "50-devices/dev-b/DEVICE.md") is not None
    a.sync()
    assert (a.vault / "50-devices/dev-b/DEVICE.md").is_file()
    assert git(a.vault, "log", "-1", "--format=%s").startswith("sync dev-")
    ignored = (a.vault / ".gitignore").read_text()
    assert ".*.tmp" in ignored and ".continuity/*.lock" in ignored


def test_tool_local_state_never_committed(tmp_path: Path) -> None:
    _remote, (a,) = devices(tmp_path, 1)
    a.write("30-memory/facts/.fact.md.0123456789ab.tmp", "half a write")
    a.write(".obsidian/workspace.json", "{}")
    a.write("30-memory/facts/kept.md", NOTE.format(body="kept"))
    a.sync()
    tracked = git(a.vault, "ls-files")
    assert "30-memory/facts/kept.md" in tracked
    assert ".tmp" not in tracked and "workspace.json" not in tracked


def test_both_changed_one_note_keeps_both_without_markers(tmp_path: Path) -> None:
    _remote, (a, b) = devices(tmp_path, 2)
    a.write(SHARED, NOTE.format(body="first"))
    a.sync()
    b.sync()
    a.write(SHARED, NOTE.format(body="from a"))
    b.write(SHARED, NOTE.format(body="from b"))
    a.sync()
    result = b.sync()
    assert result.conflicts and isinstance(result.conflicts[0], Conflict)
    copy = result.conflicts[0].copy
    assert (b.vault / SHARED).read_text() == NOTE.format(body="from a")  # the remote's stays in place
    assert (b.vault / copy).read_text() == NOTE.format(body="from b")  # ours beside it
    assert conflict_engine(copy.rsplit("/", 1)[1], lambda name: True) == "syncthing"
    a.sync()
    for device in (a, b):
        for path in device.vault.rglob("*.md"):
            assert "<<<<<<<" not in path.read_text() and ">>>>>>>" not in path.read_text()
        assert (device.vault / copy).is_file()


def test_per_device_files_never_conflict(tmp_path: Path) -> None:
    _remote, (a, b) = devices(tmp_path, 2)
    for device in (a, b):
        ctx = writer.WriteContext(device.vault, device.name)
        with writer.transaction(ctx) as tx:
            tx.create(
                f"50-devices/{device.name}/notes/n.md",
                NOTE.format(body=device.name),
                op="note.new",
                note_id=None,
                cap=limits.LIFECYCLE_TEXT_CAP_BYTES,
            )
    a.sync()
    result = b.sync()
    a.sync()
    assert result.conflicts == ()
    for device in (a, b):
        for other in ("dev-a", "dev-b"):
            assert json.loads((device.vault / f"50-devices/{other}/journal.jsonl").read_text().splitlines()[0])
    assert "note.new x1" in git(b.vault, "log", "--format=%s", "-3")


def test_secret_is_held_back_named_by_line_and_exit_5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote, (a,) = devices(tmp_path, 1)
    a.write("30-memory/facts/leak.md", NOTE.format(body=f"the key is {SECRET}"))
    a.write("30-memory/facts/clean.md", NOTE.format(body="nothing to hide"))
    conn = tmp_path / "conn"
    write_connection(conn, connection.render_connection(a.vault, a.name, "demo", sys.executable))
    monkeypatch.setenv("AGENT_VAULT_CONNECTION", str(conn))
    result = CliRunner().invoke(app, ["sync", "--json"])
    assert result.exit_code == EXIT_REJECTED
    document = json.loads(result.stdout)
    assert set(document) == {
        "version",
        "committed",
        "files",
        "held",
        "conflicts",
        "integrated",
        "pushed",
        "attempts",
        "recovered",
        "offline",
        "privacy",
        "under_lease",
    }
    assert document["held"] == [
        {"path": "30-memory/facts/leak.md", "reason": "secret", "line": 6, "type": "aws-access-key-id"}
    ]
    assert "30-memory/facts/leak.md line 6" in result.stderr
    assert SECRET not in result.stdout + result.stderr
    assert remote_file(remote, "30-memory/facts/clean.md") is not None
    assert remote_file(remote, "30-memory/facts/leak.md") is None
    assert SECRET not in remote_history(remote)


def test_url_with_credentials_is_refused_and_never_printed(tmp_path: Path) -> None:
    for url in ("https://me:hunter2@example.com/v.git", "https://tok3n@example.com/v.git", "ssh://me:pw@host/v"):
        with pytest.raises(InputRejected) as caught:
            remotes.classify(url)
        assert (
            "hunter2" not in str(caught.value) and "tok3n" not in str(caught.value) and "pw@" not in str(caught.value)
        )
    for url in ("git://example.com/v.git", "http://example.com/v.git"):
        with pytest.raises(InputRejected):
            remotes.classify(url)
    assert remotes.classify("git@github.com:me/vault.git").https_twin == "https://github.com/me/vault.git"
    assert remotes.classify("ssh://git@myhost.example/srv/vault.git").kind == "ssh"
    assert remotes.classify(str(tmp_path)).kind == "local"
    assert remotes.check_private(remotes.classify(str(tmp_path))).verdict == "local"
    assert "hunter2" not in remotes.strip_credentials("fatal: unable to access 'https://me:hunter2@h/'")


def test_remote_with_a_secret_is_left_out_by_the_loader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote, (a,) = devices(tmp_path, 1)
    other = tmp_path / "raw"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    soul = other / "00-system/SOUL.md"
    soul.write_text(f"---\ntype: soul\n---\n## Brief\nkey {SECRET}\n")
    git(other, "commit", "-qam", "a secret from elsewhere")
    git(other, "push", "-q", "origin", "main")
    a.sync()
    assert SECRET in (a.vault / "00-system/SOUL.md").read_text()
    conn = tmp_path / "conn"
    write_connection(conn, connection.render_connection(a.vault, a.name, "demo", sys.executable))
    monkeypatch.setenv("AGENT_VAULT_CONNECTION", str(conn))
    monkeypatch.setenv("CONTINUITY_NO_CACHE", "1")
    rendered = CliRunner().invoke(app, ["render", "--format", "json"])
    document = json.loads(rendered.stdout)
    soul_source = next(item for item in document["sources"] if item["name"] == "soul")
    assert soul_source["reason"] == "secret" and SECRET not in rendered.stdout


def test_rebase_left_in_progress_is_backed_up_and_undone(tmp_path: Path) -> None:
    _remote, (a, b) = devices(tmp_path, 2)
    a.write(SHARED, NOTE.format(body="base"))
    a.sync()
    b.sync()
    a.write(SHARED, NOTE.format(body="a side"))
    a.sync()
    b.write(SHARED, NOTE.format(body="b side"))
    git(b.vault, "add", "-A")
    git(b.vault, "commit", "-qm", "by hand")
    git(b.vault, "fetch", "-q", "origin")
    proc = subprocess.run(["git", "-C", str(b.vault), "rebase", "origin/main"], capture_output=True)
    assert proc.returncode != 0 and (b.vault / ".git/rebase-merge").exists()
    result = b.sync()
    assert any("rebase" in line for line in result.recovered)
    assert git(b.vault, "for-each-ref", "refs/continuity/backup/")
    assert not (b.vault / ".git/rebase-merge").exists()
    texts = [path.read_text() for path in b.vault.rglob("*.md")]
    assert not any("<<<<<<<" in text for text in texts)
    assert NOTE.format(body="b side") in texts and NOTE.format(body="a side") in texts


def test_detached_head_is_brought_back_to_main(tmp_path: Path) -> None:
    remote, (a,) = devices(tmp_path, 1)
    git(a.vault, "checkout", "-q", "--detach")
    a.write("30-memory/facts/detached.md", NOTE.format(body="made while detached"))
    git(a.vault, "add", "-A")
    git(a.vault, "commit", "-qm", "detached work")
    result = a.sync()
    assert result.recovered and git(a.vault, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert remote_file(remote, "30-memory/facts/detached.md") == NOTE.format(body="made while detached")


def test_shallow_clone_syncs(tmp_path: Path) -> None:
    remote, (a,) = devices(tmp_path, 1)
    for index in range(3):
        a.write(SHARED, NOTE.format(body=f"v{index}"))
        a.sync()
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{remote}", str(shallow))
    a.write(SHARED, NOTE.format(body="newer"))
    a.sync()
    (shallow / "50-devices/dev-s").mkdir(parents=True)
    (shallow / "50-devices/dev-s/DEVICE.md").write_text("---\ntype: device\ndevice: dev-s\n---\nshallow\n")
    result = engine.sync(shallow, "dev-s")
    assert result.pushed and (shallow / SHARED).read_text() == NOTE.format(body="newer")
    assert not (shallow / ".git/shallow").exists()


def test_remote_that_rejects_the_push(tmp_path: Path) -> None:
    remote, (a,) = devices(tmp_path, 1)
    hook = remote / "hooks/pre-receive"
    hook.write_text("#!/bin/sh\necho 'vault is frozen' >&2\nexit 1\n")
    hook.chmod(0o755)
    a.write("30-memory/facts/waiting.md", NOTE.format(body="waits"))
    with pytest.raises(PushRejected, match="refused the push"):
        a.sync()
    assert "30-memory/facts/waiting.md" in git(a.vault, "ls-files")  # committed locally, kept
    assert state.describe(a.vault, a.name).state == "ahead"
    hook.unlink()
    assert a.sync().pushed and remote_file(remote, "30-memory/facts/waiting.md")


def test_lost_push_race_fetches_and_retries(tmp_path: Path) -> None:
    remote, (a, b) = devices(tmp_path, 2)
    raced: list[bool] = []

    def other_computer_pushes(_git: object) -> bool:
        if not raced:
            raced.append(True)
            b.write("30-memory/facts/b.md", NOTE.format(body="b first"))
            b.sync()
        return False

    a.write("30-memory/facts/a.md", NOTE.format(body="a"))
    result = engine.sync(a.vault, a.name, after_integrate=other_computer_pushes)
    assert result.pushed and result.attempts == 2
    assert remote_file(remote, "30-memory/facts/a.md") and remote_file(remote, "30-memory/facts/b.md")


def test_hostile_global_git_config_changes_nothing(tmp_path: Path, isolated_home: Path) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("pre-commit", "pre-push", "post-checkout", "commit-msg"):
        (hooks / name).write_text("#!/bin/sh\nexit 1\n")
        (hooks / name).chmod(0o755)
    ignore = tmp_path / "ignore"
    ignore.write_text("*.md\n")
    (isolated_home / ".gitconfig").write_text(
        f"[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = false\n[core]\n\thooksPath = {hooks}\n"
        f"\tautocrlf = true\n\texcludesFile = {ignore}\n[init]\n\tdefaultBranch = trunk\n[pull]\n\trebase = true\n"
    )
    remote = bare_remote(tmp_path)
    vault = new_vault(tmp_path / "vault", "dev-a")
    engine.connect_remote(vault, "dev-a", str(remote))
    assert remote_file(remote, "50-devices/dev-a/DEVICE.md") == (vault / "50-devices/dev-a/DEVICE.md").read_text()
    assert "\r" not in remote_history(remote)


def test_offline_sync_keeps_the_commit_and_exits_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote, (a,) = devices(tmp_path, 1)
    remote.rename(tmp_path / "gone.git")
    a.write("30-memory/facts/offline.md", NOTE.format(body="offline"))
    conn = tmp_path / "conn"
    write_connection(conn, connection.render_connection(a.vault, a.name, "demo", sys.executable))
    monkeypatch.setenv("AGENT_VAULT_CONNECTION", str(conn))
    result = CliRunner().invoke(app, ["sync"])
    assert result.exit_code == EXIT_NOT_CONNECTED
    assert "30-memory/facts/offline.md" in git(a.vault, "ls-files")


def test_lease_is_exclusive_through_the_remote(tmp_path: Path) -> None:
    remote, (a, b) = devices(tmp_path, 2)
    lease.acquire_locked(a.vault, a.name, 3600, "a works", None)
    assert leases.publish(a.vault, a.name).remote
    assert remote_file(remote, ".continuity/leases/dev-a.json")
    # b has not synced: locally it sees no lease, takes one, and the push tells it that a was first.
    lease.acquire_locked(b.vault, b.name, 3600, "b works", None)
    with pytest.raises(LeaseHeld, match="dev-a took the writer lease first"):
        leases.publish(b.vault, b.name)
    assert remote_file(remote, ".continuity/leases/dev-b.json") is None
    assert not (b.vault / ".continuity/leases/dev-b.json").exists()
    lease.release_locked(a.vault, a.name, False)
    assert leases.publish(a.vault, a.name, releasing=True).remote
    assert remote_file(remote, ".continuity/leases/dev-a.json") is None


def test_lease_without_remote_says_it_is_only_local(tmp_path: Path) -> None:
    vault = new_vault(tmp_path / "vault", "dev-a")
    assert leases.publish(vault, "dev-a").note.startswith("the lease is only local")


def test_interrupted_checkout_is_finished(tmp_path: Path) -> None:
    _remote, (a, b) = devices(tmp_path, 2)
    b.write("30-memory/facts/from-b.md", NOTE.format(body="b"))
    b.sync()
    git(a.vault, "fetch", "-q", "origin")
    head, target = git(a.vault, "rev-parse", "main").strip(), git(a.vault, "rev-parse", "origin/main").strip()
    # As if a sync had been killed after recording the step and before moving anything.
    state.begin(a.vault, lease_records.utcnow(), phase="checkout", **{"from": head, "to": target})
    (a.vault / ".git/index.lock").write_text("")
    assert state.describe(a.vault, a.name).state == "interrupted"
    result = a.sync()
    assert "finished the interrupted sync" in result.recovered
    assert (a.vault / "30-memory/facts/from-b.md").is_file()
    assert state.describe(a.vault, a.name).state == "in-sync"


def test_doctor_reports_the_sync_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _remote, (a,) = devices(tmp_path, 1)
    from continuity.health import doctor

    conn = tmp_path / "conn"
    write_connection(conn, connection.render_connection(a.vault, a.name, "demo", sys.executable))
    monkeypatch.setenv("AGENT_VAULT_CONNECTION", str(conn))
    checks = {item.id: item for item in doctor.run(tmp_path).checks}
    assert checks["sync"].level == "ok" and "last sync" in checks["sync"].message
    git(a.vault, "commit", "-q", "--allow-empty", "-m", "local only")
    checks = {item.id: item for item in doctor.run(tmp_path).checks}
    assert checks["sync"].level == "warn" and "ahead" in checks["sync"].message


def test_init_clone_connects_a_new_computer(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote, (_a,) = devices(tmp_path, 1)
    monkeypatch.delenv("AGENT_VAULT_CONNECTION")
    monkeypatch.chdir(repo)
    target = tmp_path / "second"
    result = CliRunner().invoke(app, ["init", "--vault", str(target), "--clone", str(remote), "--device", "dev-z"])
    assert result.exit_code == 0, result.stderr
    assert (target / "50-devices/dev-a/DEVICE.md").is_file() and (target / "50-devices/dev-z/DEVICE.md").is_file()
    assert CliRunner().invoke(app, ["sync"]).exit_code == 0
    assert remote_file(remote, "50-devices/dev-z/DEVICE.md")


def test_startup_hook_never_syncs(tmp_path: Path, repo: Path) -> None:
    remote, (a,) = devices(tmp_path, 1)
    a.write("30-memory/facts/unsynced.md", NOTE.format(body="local"))
    before = git(a.vault, "rev-parse", "main"), git(a.vault, "status", "--porcelain")
    write_connection((repo / ".agent-vault"), connection.render_connection(a.vault, a.name, "demo-app", sys.executable))
    script = Path(__file__).resolve().parents[2] / "scripts" / "agent-startup-context.py"
    env = {k: v for k, v in os.environ.items() if k != "AGENT_VAULT_CONNECTION"}
    payload = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": str(repo)})
    proc = subprocess.run(
        [sys.executable, str(script), "--hook", "--harness", "codex"],
        input=payload,
        capture_output=True,
        text=True,
        cwd=repo,
        env=env,
        check=True,
    )
    assert "private-memory" in proc.stdout
    assert (git(a.vault, "rev-parse", "main"), git(a.vault, "status", "--porcelain")) == before
    assert not (a.vault / ".git/continuity/sync.json").exists()
    assert remote_file(remote, "30-memory/facts/unsynced.md") is None


def test_hourly_entry_is_pinned(tmp_path: Path) -> None:
    from continuity.sync import schedule

    line = schedule.cron_line(tmp_path, schedule.default_script(), "0" * 64, sys.executable)
    assert line.endswith(f"# {schedule.marker_for(tmp_path)}") and "0" * 64 in line
    script = tmp_path / "job.py"
    script.write_text("print('ran')\n")
    digest = hashlib.sha256(script.read_bytes()).hexdigest()
    ran = subprocess.run(
        [sys.executable, "-c", schedule.PIN_CHECK, str(script), digest], capture_output=True, text=True
    )
    assert ran.returncode == 0 and ran.stdout == "ran\n"
    script.write_text("print('edited')\n")
    refused = subprocess.run(
        [sys.executable, "-c", schedule.PIN_CHECK, str(script), digest], capture_output=True, text=True
    )
    assert refused.returncode != 0 and "changed since it was pinned" in refused.stderr and not refused.stdout


def test_a_secret_committed_by_hand_is_never_pushed(tmp_path: Path) -> None:
    remote, (a,) = devices(tmp_path, 1)
    a.write("30-memory/facts/by-hand.md", NOTE.format(body=f"key {SECRET}"))
    git(a.vault, "add", "-A")
    git(a.vault, "commit", "-qm", "by hand")
    a.write("30-memory/facts/by-hand.md", NOTE.format(body="removed again"))
    with pytest.raises(InputRejected, match="nothing was pushed") as caught:
        a.sync()
    assert "30-memory/facts/by-hand.md line 6" in str(caught.value) and SECRET not in str(caught.value)
    assert SECRET not in remote_history(remote)


def test_lease_commands_through_a_git_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote, (a, b) = devices(tmp_path, 2)
    runner = CliRunner()
    for device in (a, b):
        conn = tmp_path / f"{device.name}.conn"
        write_connection(conn, connection.render_connection(device.vault, device.name, "demo", sys.executable))
    monkeypatch.setenv("AGENT_VAULT_CONNECTION", str(tmp_path / "dev-a.conn"))
    taken = runner.invoke(app, ["lease", "acquire", "--ttl", "1h"])
    assert taken.exit_code == 0 and "the remote records this lease" in taken.stderr
    monkeypatch.setenv("AGENT_VAULT_CONNECTION", str(tmp_path / "dev-b.conn"))
    refused = runner.invoke(app, ["lease", "acquire", "--ttl", "1h"])
    # Acquiring first brings in what the remote records, so B sees A's lease before writing its own.
    assert refused.exit_code == 4 and "device dev-a holds the writer lease" in refused.stderr
    forced = runner.invoke(app, ["lease", "release", "--force", "--yes"])
    assert forced.exit_code == 0, forced.stderr
    assert remote_file(remote, ".continuity/leases/dev-a.json") is None
    # The device whose lease was removed hears of it once both have synced.
    assert runner.invoke(app, ["sync"]).exit_code == 0
    monkeypatch.setenv("AGENT_VAULT_CONNECTION", str(tmp_path / "dev-a.conn"))
    assert runner.invoke(app, ["sync"]).exit_code == 0
    status = json.loads(runner.invoke(app, ["lease", "status", "--json"]).stdout)
    assert status["removed"] and status["removed"]["by"] == "dev-b", status


def test_loose_objects_are_packed_past_the_limit(tmp_path: Path) -> None:
    _remote, (a,) = devices(tmp_path, 1)
    for index in range(tunables.SYNC_LOOSE_OBJECTS_MAX + 10):
        a.write(f"30-memory/facts/many-{index}.md", NOTE.format(body=f"fact {index}"))
    a.sync()
    counts = dict(line.split(": ") for line in git(a.vault, "count-objects", "-v").splitlines())
    assert int(counts["count"]) <= tunables.SYNC_LOOSE_OBJECTS_MAX < int(counts["in-pack"])
