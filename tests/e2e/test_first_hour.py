"""A person's first hour with two computers and a private Git vault, driven as they would drive it.

Two homes stand for the two computers (each its own HOME and XDG folders), each with its own clone of
one repository and its own copy of the vault, and a bare repository in tmp_path stands for the private
remote. Every step runs the real `lifecycle` command in a subprocess, with real git.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import git
from hookkit import LIFECYCLE, hook_env

HANDOFF = """## Goal and status

Port the exporter to the new storage API; the reader half is done.

## Completed work

- src/export/reader.py moved to the new API; `pytest tests/test_reader.py` passes.

## Risks and decisions

- Keep the old CSV column order: downstream scripts depend on it.

## Next actions

1. Port src/export/writer.py to the new API.
"""


@dataclass
class Computer:
    """One computer: its home, its clone of the project and its copy of the vault."""

    name: str
    env: dict[str, str]
    clone: Path
    vault: Path

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(LIFECYCLE), *args],
            cwd=self.clone,
            env=hook_env(**self.env),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def ok(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        done = self.run(*args, stdin=stdin)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done

    def doctor(self) -> dict[str, list[str]]:
        """Doctor's checks by id (each id's messages)."""
        report = json.loads(self.run("doctor", "--json").stdout)
        found: dict[str, list[str]] = {}
        for item in report["checks"]:
            found.setdefault(item["id"], []).append(f"{item['level']}: {item['message']}")
        return found


def _home(tmp_path: Path, name: str) -> dict[str, str]:
    home = tmp_path / name / "home"
    home.mkdir(parents=True)
    env = {"HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig")}
    for key, sub in (
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
    ):
        env[key] = str(home / sub)
    return env


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Computer, Computer]:
    """The bare remote, computer A (made the vault, pushed it) and computer B (cloned it, synced)."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    (origin / "README.md").write_text("app\n")
    git(origin, "add", "README.md")
    git(origin, "commit", "-q", "-m", "first")
    remote = tmp_path / "vault.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    made = []
    for name in ("a", "b"):
        clone = tmp_path / name / "work" / "app"
        git(tmp_path, "clone", "-q", str(origin), str(clone))
        made.append(Computer(name, _home(tmp_path, name), clone, tmp_path / name / "agent-vault"))
    a, b = made
    a.ok("init", "--vault", str(a.vault), "--new", "--device", "dev-a")
    a.ok("sync", "--remote", str(remote))
    b.ok("init", "--vault", str(b.vault), "--clone", str(remote), "--device", "dev-b")
    b.ok("sync")
    a.ok("sync")
    return remote, a, b


def _remote_has(remote: Path, prefix: str) -> list[str]:
    listed = git(remote, "ls-tree", "-r", "--name-only", "main")
    return [line for line in listed.splitlines() if line.startswith(prefix)]


def test_a_write_under_the_other_computers_lease_is_pushed_named_and_reported_until_reviewed(
    pair: tuple[Path, Computer, Computer],
) -> None:
    remote, a, b = pair
    a.ok("lease", "acquire", "--task", "exporter port")
    # B has not synced since: it cannot see A's lease, so its write goes through on B.
    b.ok("handoff", "new", "--title", "From B", "--from", "-", stdin=HANDOFF)
    done = b.ok("sync")
    assert "pushed" in done.stdout
    assert "dev-b wrote handoff.new 20-state/handoffs/" in done.stderr
    assert "while device dev-a held the writer lease (exporter port)" in done.stderr
    assert "nothing is lost" in done.stderr
    assert len(_remote_has(remote, "20-state/handoffs/")) == 1  # nothing lost: B's handoff reached the remote
    assert any("dev-a held the writer lease" in m for m in b.doctor()["lease.overlap"])

    a.ok("sync")
    seen = a.doctor()["lease.overlap"]
    assert len(seen) == 1 and seen[0].startswith("warn: device dev-b wrote handoff.new")
    # Reported on both computers until the person reviews it, once, on either.
    a.ok("sync")
    assert "lease.overlap" in a.doctor()
    listed = json.loads(a.ok("lease", "overlaps", "--json").stdout)["overlaps"]
    assert [item["lease_device"] for item in listed] == ["dev-a"]
    assert "marked 1 as reviewed" in a.ok("lease", "overlaps", "--reviewed").stdout
    a.ok("sync")
    assert "lease.overlap" not in a.doctor()
    b.ok("sync")
    assert "lease.overlap" not in b.doctor()
    assert "waiting for review" in b.ok("lease", "overlaps").stdout


def test_a_released_lease_reaches_the_remote_for_the_other_computer(pair: tuple[Path, Computer, Computer]) -> None:
    _remote, a, b = pair
    a.ok("lease", "acquire", "--task", "exporter port")
    b.ok("sync")
    assert b.run("lease", "acquire").returncode == 4  # A holds it, as the remote records
    a.ok("lease", "release")
    # B has not synced since A released; acquiring asks the remote first.
    done = b.run("lease", "acquire", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["state"] == "held" and json.loads(done.stdout)["device"] == "dev-b"


def _edit_brief(computer: Computer, rel: str, line: str) -> None:
    path = computer.vault / rel
    path.write_text(path.read_text().replace("## Brief\n", f"## Brief\n{line}\n", 1))


def test_the_hourly_quiet_sync_still_reports_a_conflict_and_doctor_names_whose_copy(
    pair: tuple[Path, Computer, Computer],
) -> None:
    _remote, a, b = pair
    rel = "00-system/PREFERENCES.md"
    _edit_brief(b, rel, "- Answer in British English.")
    b.ok("sync")
    _edit_brief(a, rel, "- Answer in American English.")
    done = a.run("sync", "--quiet")
    # Documented: exit 0 (synced, nothing lost), the conflict on stderr so that cron mails it.
    assert done.returncode == 0 and done.stdout == ""
    assert f"both computers changed {rel}" in done.stderr and ".sync-conflict-" in done.stderr
    [copy] = [p for p in (a.vault / "00-system").iterdir() if ".sync-conflict-" in p.name]
    assert "American" in copy.read_text() and "British" in (a.vault / rel).read_text()
    [message] = a.doctor()["scan.conflicts"]
    assert f"{copy.name} (lifecycle sync)" in message and "syncthing" not in message


def test_ctrl_c_during_sync_says_what_state_it_left(pair: tuple[Path, Computer, Computer], tmp_path: Path) -> None:
    remote, a, _b = pair
    started = tmp_path / "push-started"
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ntouch {started}\nexec sleep 60\n")
    hook.chmod(0o755)
    _edit_brief(a, "00-system/PREFERENCES.md", "- Prefer small commits.")
    proc = subprocess.Popen(
        [str(LIFECYCLE), "sync"],
        cwd=a.clone,
        env=hook_env(**a.env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        while not started.exists():  # the push has reached the remote's hook: the person presses Ctrl-C
            assert proc.poll() is None, proc.communicate()
            subprocess.run(["sleep", "0.05"], check=True)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, (out, err)
    assert err.count("\n") == 1 and err.startswith("lifecycle: error: interrupted")
    assert "1 commit(s) of this computer may not have reached the remote" in err
    assert "the next 'lifecycle sync' finishes or undoes" in err and "Traceback" not in err
    hook.unlink()
    done = a.ok("sync")
    assert "pushed" in done.stdout
    assert "Prefer small commits." in git(remote, "show", "main:00-system/PREFERENCES.md")


def _one_computer(tmp_path: Path) -> Computer:
    origin = tmp_path / "solo" / "work" / "app"
    origin.mkdir(parents=True)
    git(origin, "init", "-q", "-b", "main")
    a = Computer("solo", _home(tmp_path, "solo-home"), origin, tmp_path / "solo" / "agent-vault")
    a.ok("init", "--vault", str(a.vault), "--new", "--device", "dev-a")
    return a


def test_a_mistyped_remote_is_never_saved_and_a_never_used_one_can_be_replaced(tmp_path: Path) -> None:
    a = _one_computer(tmp_path)
    typo = tmp_path / "vualt.git"
    done = a.run("sync", "--remote", str(typo))
    assert done.returncode == 3 and done.stderr.count("\n") == 1
    assert "does not appear to be a git repository" in done.stderr and "nothing was saved" in done.stderr
    assert "offline" not in done.stderr and not (a.vault / ".git").exists()

    # A vault an older version left with a remote that never answered: --remote replaces it.
    git(a.vault, "init", "-q", "-b", "main")
    git(a.vault, "remote", "add", "origin", str(typo))
    good = tmp_path / "vault.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(good)], check=True)
    done = a.ok("sync", "--remote", str(good))
    assert "pushed" in done.stdout
    assert git(a.vault, "config", "--get", "remote.origin.url").strip() == str(good)
    [check] = a.doctor()["sync"]
    assert check.startswith("ok: git vault in-sync")
    # Once it has answered, another URL is refused: a typo cannot redirect a vault that syncs.
    other = a.run("sync", "--remote", str(typo))
    assert other.returncode == 2 and "already has another remote" in other.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder another user owns needs root")
def test_a_remote_owned_by_another_user_gets_gits_reason_not_offline(tmp_path: Path) -> None:
    a = _one_computer(tmp_path)
    good = tmp_path / "vault.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(good)], check=True)
    a.ok("sync", "--remote", str(good))
    owned = tmp_path / "theirs.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(owned)], check=True)
    subprocess.run(["chown", "-R", "65534:65534", str(owned)], check=True)
    other = _one_computer(tmp_path / "second")
    done = other.run("sync", "--remote", str(owned))
    assert done.returncode == 3 and "dubious ownership" in done.stderr and "offline" not in done.stderr
    subprocess.run(["chown", "-R", "65534:65534", str(good)], check=True)  # the shared remote changes hands
    _edit_brief(a, "00-system/PREFERENCES.md", "- Prefer small commits.")
    done = a.run("sync")
    assert done.returncode == 1 and "dubious ownership" in done.stderr and "offline" not in done.stderr


def test_doctor_is_truthful_about_uncommitted_held_back_and_unusable_notes(tmp_path: Path) -> None:
    a = _one_computer(tmp_path)
    good = tmp_path / "vault.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(good)], check=True)
    a.ok("sync", "--remote", str(good))
    assert a.doctor()["sync"][0].startswith("ok: git vault in-sync")
    facts = a.vault / "30-memory" / "facts"
    facts.mkdir(parents=True, exist_ok=True)
    approved = "---\ntype: fact\nid: {id}\nstatus: approved\ntitle: {id}\n---\n{body}\n"
    (facts / "fine.md").write_text(approved.format(id="fine", body="The build uses make."))
    checks = a.doctor()
    assert checks["sync"][0].startswith("warn: git vault uncommitted") and "1 changed file(s)" in checks["sync"][0]
    a.ok("sync")
    # A note every sync holds back for a secret, a broken frontmatter, a note behind a link.
    key = "AKIA" + "Z7QK3M9V2XR4TB6W"
    (facts / "leak.md").write_text(approved.format(id="leak", body=f"aws_access_key_id = {key}"))
    (facts / "broken.md").write_text("---\ntype: fact\nid: broken\ntitle: [unclosed\n---\nBody.\n")
    (facts / "elsewhere.md").symlink_to(tmp_path / "outside.md")
    (tmp_path / "outside.md").write_text("outside\n")
    assert a.run("sync").returncode == 5
    checks = a.doctor()
    # What waits is only what the gate holds back: each named, the rest is in step with the remote.
    assert "2 changed file(s) not committed" in checks["sync"][0]
    assert len(checks["sync.held"]) == 2
    [held] = [m for m in checks["sync.held"] if "leak.md" in m]
    assert "line 7 looks like a secret" in held and key not in held
    [notes] = checks["notes"]
    assert "30-memory/facts/broken.md" in notes and "invalid-frontmatter" in notes
    assert "30-memory/facts/elsewhere.md (link)" in notes and "30-memory/facts/leak.md line 7" in notes
    assert "fine.md" not in notes and key not in json.dumps(checks)


def test_the_brief_names_the_command_that_prints_completed_work(pair: tuple[Path, Computer, Computer]) -> None:
    _remote, a, b = pair
    a.ok("handoff", "new", "--title", "Exporter port", "--from", "-", stdin=HANDOFF)
    a.ok("sync")
    b.ok("sync")
    brief = b.run("render").stdout
    assert "src/export/reader.py" not in brief  # the evidence stays in the file
    [named] = re.findall(r"`(lifecycle handoff show [^`]+)`", brief)
    shown = b.ok(*named.split()[1:])
    assert "## Completed work" in shown.stdout and "src/export/reader.py moved to the new API" in shown.stdout


def test_a_newer_handoff_with_broken_frontmatter_is_named_and_the_brief_is_partial(
    pair: tuple[Path, Computer, Computer],
) -> None:
    _remote, a, _b = pair
    a.ok("handoff", "new", "--title", "Exporter port", "--from", "-", stdin=HANDOFF)
    # "Newer" is by the name's timestamp, to the second: the second handoff must carry a later one.
    started = int(time.time())
    while int(time.time()) == started:
        time.sleep(0.05)
    a.ok("handoff", "new", "--title", "Writer port", "--from", "-", stdin=HANDOFF.replace("reader half", "writer half"))
    folder = a.vault / "20-state" / "handoffs"
    older, newest = sorted(folder.glob("*.md"))
    assert older.name[:16] < newest.name[:16]
    older.write_text(older.read_text().replace("status: superseded", "status: current", 1))
    newest.write_text(newest.read_text().replace("status: current", "status: current\nstatus: oops", 1))
    rendered = a.run("render", "--format", "json")
    assert rendered.returncode == 1
    doc = json.loads(rendered.stdout)
    assert doc["status"] == "partial"
    [source] = [s for s in doc["sources"] if s["name"] == "handoff"]
    assert source["included"] is True  # the older, valid one is still shown, and the newer one named
    assert any(newest.name in n and "may have been meant to be current" in n for n in doc["notices"])
    # With no valid current handoff at all, the broken one is named instead of silence.
    for path in folder.glob("*.md"):
        if path != newest:
            path.write_text(path.read_text().replace("status: current", "status: superseded"))
    doc = json.loads(a.run("render", "--format", "json").stdout)
    assert doc["status"] == "partial" and any(newest.name in n for n in doc["notices"])
    current = a.run("handoff", "current")
    assert "no current handoff" in current.stdout and newest.name in current.stderr


def _approved(computer: Computer, title: str, body: str) -> str:
    made = json.loads(
        computer.ok(
            "note", "new", "--type", "fact", "--title", title, "--from", "-", "--evidence", "seen", "--json", stdin=body
        ).stdout
    )
    return str(json.loads(computer.ok("approve", made["id"], "--yes", "--json").stdout)["id"])


def test_two_current_handoffs_are_resolved_with_supersede_and_a_race_never_loses_an_archived_copy(
    pair: tuple[Path, Computer, Computer],
) -> None:
    _remote, a, b = pair
    # Two current handoffs: each computer wrote one before seeing the other's.
    a.ok("handoff", "new", "--title", "From A", "--from", "-", stdin=HANDOFF)
    b.ok("handoff", "new", "--title", "From B", "--from", "-", stdin=HANDOFF.replace("reader half", "reader part"))
    a.ok("sync")
    b.ok("sync")
    [warned] = b.doctor()["handoffs"]
    newest = re.search(r"--by ([a-z0-9._-]+)'", warned)
    assert warned.startswith("warn: 2 current handoffs") and newest is not None
    older = [
        p.stem.lower() for p in (b.vault / "20-state" / "handoffs").glob("*.md") if p.stem.lower() != newest.group(1)
    ]
    done = b.ok("supersede", older[0], "--by", newest.group(1))
    assert f"{older[0]} is superseded by {newest.group(1)}" in done.stdout
    assert b.doctor()["handoffs"][0].startswith("ok: one current handoff")

    # B archives a fact while A supersedes it: after both sync, two notes carry its id.
    old = _approved(a, "Build tool", "The build uses make.")
    new = _approved(a, "Build tool now", "The build uses ninja.")
    a.ok("sync")
    b.ok("sync")
    a.ok("supersede", old, "--by", new)
    b.ok("archive", old)
    b.ok("sync")
    a.ok("sync")
    archived = a.vault / "90-archive" / "30-memory" / "facts" / f"{old}.md"
    first_copy = archived.read_text()
    assert (a.vault / "30-memory" / "facts" / f"{old}.md").exists()  # A's superseded version is kept
    a.ok("archive", old)  # archiving it again never overwrites the copy B made
    assert archived.read_text() == first_copy
    kept = sorted((a.vault / "90-archive" / "30-memory" / "facts").glob(f"{old}*.md"))
    assert len(kept) == 2 and any(f"superseded_by: {new}" in p.read_text() for p in kept)


def test_paper_cuts(tmp_path: Path) -> None:
    a = _one_computer(tmp_path)
    done = a.ok("--version")
    assert re.fullmatch(r"continuity \S+\n", done.stdout)
    typo = a.run("verfy", "x")
    assert typo.returncode == 2 and typo.stderr.count("Did you mean 'verify'?") == 1
    assert "default: the template" not in a.ok("handoff", "new", "--help").stdout
    # A missing input file is a usage error (exit 2) for every command that reads one.
    missing = str(tmp_path / "no-such-file.md")
    for args in (
        ("note", "new", "--type", "fact", "--title", "t", "--from", missing, "--evidence", "e"),
        ("handoff", "new", "--title", "t", "--from", missing),
        ("edit", "device", "--from", missing, "--yes"),
        ("edit", "soul", "--from", missing, "--yes", "--accept-concurrency-risk"),
        ("outbox", "deliver", missing),
        ("scan", missing),
    ):
        done = a.run(*args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, (args, done.stderr)
    # A refused edit says "nothing was written" once.
    profile = (a.vault / "50-devices" / "dev-a" / "DEVICE.md").read_text()
    leaky = tmp_path / "device.md"
    leaky.write_text(profile.replace("## Brief\n", "## Brief\naws_access_key_id = AKIAZ7QK3M9V2XR4TB6W\n", 1))
    done = a.run("edit", "device", "--from", str(leaky), "--yes")
    assert done.returncode == 5 and done.stderr.count("nothing was written") == 1, done.stderr
    # scan without a secret does not advise rotating one.
    broken = tmp_path / "drafts" / "broken.md"
    broken.parent.mkdir()
    broken.write_text("---\ntitle: [unclosed\n---\nx\n")
    done = a.run("scan", str(broken.parent))
    assert done.returncode == 5 and "rotate" not in done.stdout + done.stderr
    # A folder inside the vault is named with the vault that holds it.
    other = Computer("c", _home(tmp_path, "c"), tmp_path / "c" / "app", a.vault)
    other.clone.mkdir(parents=True)
    git(other.clone, "init", "-q", "-b", "main")
    done = other.run("init", "--vault", str(a.vault / "00-system"))
    assert done.returncode == 5 and f"inside the vault {a.vault}; run init with --vault {a.vault}" in done.stderr


def test_init_on_a_joining_computer_says_what_is_there_and_leaves_it_only_its_device_profile(tmp_path: Path) -> None:
    a = _one_computer(tmp_path)
    for which, rel in (("soul", "00-system/SOUL.md"), ("preferences", "00-system/PREFERENCES.md")):
        text = tmp_path / f"{which}.md"
        text.write_text((a.vault / rel).read_text().replace("## Brief\n", f"## Brief\n- My own {which}.\n", 1))
        a.ok("edit", which, "--from", str(text), "--yes", "--accept-concurrency-risk")
    remote = tmp_path / "vault.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    a.ok("sync", "--remote", str(remote))
    b = Computer("b", _home(tmp_path, "b"), tmp_path / "b" / "app", tmp_path / "b" / "agent-vault")
    git(tmp_path, "clone", "-q", str(a.clone), str(b.clone))
    done = b.ok("init", "--vault", str(b.vault), "--clone", str(remote), "--device", "dev-b")
    out = done.stdout
    assert "already in the vault: the soul, the preferences, the project profile (not filled in yet)" in out
    assert "left for this computer: its device profile" in out and "'lifecycle edit device'" in out
    for shared in ("edit soul", "edit preferences", "edit project"):
        assert shared not in out
    assert "then run 'lifecycle sync'" in out


def test_a_sync_commit_message_counts_the_persons_operations_not_implicit_lease_ones(tmp_path: Path) -> None:
    a = _one_computer(tmp_path)
    remote = tmp_path / "vault.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    a.ok("sync", "--remote", str(remote))
    text = tmp_path / "soul.md"
    text.write_text((a.vault / "00-system/SOUL.md").read_text().replace("## Brief\n", "## Brief\n- Be brief.\n", 1))
    a.ok("edit", "soul", "--from", str(text), "--yes", "--accept-concurrency-risk")
    a.ok("sync")
    subject = git(remote, "log", "-1", "--format=%s", "main").strip()
    assert subject.startswith("sync dev-a: ") and "lease." not in subject, subject
    a.ok("lease", "acquire")
    assert "lease.acquire x1" in git(remote, "log", "-1", "--format=%s", "main")
