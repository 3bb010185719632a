"""Killed writers: SIGKILL real vault-writing processes at random moments and check what is left.

Every write command (handoff new, note new, approve, edit, lease acquire, outbox deliver, preserve) runs in a
real child process that is killed with SIGKILL after a random delay drawn from the span of one
uninterrupted run of the same command. To land the kill inside the work rather than inside interpreter
start-up, a small fork server imports the package once and forks one child per command; each child is
an ordinary process that runs the `lifecycle` command line and is killed from the test.

After every kill: every note parses, every journal line is whole JSON, the old or the new version of the
touched file exists (never neither), and at the end `lifecycle doctor` names every leftover temporary
file by name.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hookkit import LIFECYCLE, hook_env

from continuity.memory import handoff
from continuity.safeio import is_tmp_name
from continuity.vault import layout, notes, scan

SEED = int(os.environ.get("CONTINUITY_FAULT_SEED", "20261130"))
KILLS_PER_COMMAND = int(os.environ.get("CONTINUITY_FAULT_KILLS", "14"))

# The fork server: import every module a write command uses, then fork one child per request line.
# Protocol (one JSON line each way): request `[args...]`; replies `{"pid": N}` at once, then
# `{"status": S, "seconds": T}` when the child ends (killed or not).
SERVER = r"""
import importlib, json, os, pkgutil, sys, time
import continuity
from continuity.cli import app
for info in pkgutil.walk_packages(continuity.__path__, "continuity."):
    try:
        importlib.import_module(info.name)
    except Exception:
        pass
from continuity.gate import secrets
secrets.scan_text("warm up the secret scanner: password = hunter2hunter2")
out = sys.stdout
out.write(json.dumps({"ready": True}) + "\n"); out.flush()
for line in sys.stdin:
    args = json.loads(line)
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        code = 0
        try:
            app(args=args, prog_name="lifecycle", standalone_mode=False)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            code = 99
        os._exit(code)
    out.write(json.dumps({"pid": pid}) + "\n"); out.flush()
    _, status = os.waitpid(pid, 0)
    out.write(json.dumps({"status": status, "seconds": time.monotonic() - start}) + "\n"); out.flush()
"""


class Server:
    """A live fork server in the connected checkout."""

    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER],
            cwd=cwd,
            env=hook_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        assert json.loads(self._read()) == {"ready": True}

    def _read(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            assert self.proc.stderr is not None
            raise AssertionError(f"fork server died: {self.proc.stderr.read()}")
        return line

    def run(self, args: list[str], kill_after: float | None) -> tuple[int, float, bool]:
        """Run one command; kill it with SIGKILL after `kill_after` seconds. (wait status, seconds, killed)"""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(args) + "\n")
        self.proc.stdin.flush()
        pid = json.loads(self._read())["pid"]
        killed = False
        if kill_after is not None:
            time.sleep(kill_after)
            try:
                os.kill(pid, signal.SIGKILL)
                killed = True
            except ProcessLookupError:
                pass
        done = json.loads(self._read())
        status = int(done["status"])
        killed = killed and os.WIFSIGNALED(status)
        return status, float(done["seconds"]), killed

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@dataclass
class Setup:
    repo: Path
    vault: Path
    server: Server
    rng: random.Random
    inputs: Path


@pytest.fixture
def setup(repo: Path, tmp_path: Path) -> Iterator[Setup]:
    vault = tmp_path / "vault"
    done = subprocess.run(
        [str(LIFECYCLE), "init", "--vault", str(vault), "--new", "--device", "dev-a", "--project", "demo"],
        cwd=repo,
        env=hook_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    server = Server(repo)
    try:
        yield Setup(repo, vault, server, random.Random(SEED), inputs)
    finally:
        server.close()


# ------------------------------------------------------------------------------------------ checks


def md_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.md") if p.is_file() and not p.is_symlink())


def tmp_files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if is_tmp_name(p.name)}


def assert_vault_whole(root: Path) -> None:
    """Every note parses; every journal is whole lines of JSON objects.

    A preserved original in 40-documents/ is an exact file, not a note (its record beside it is one).
    """
    for path in md_files(root):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(layout.DOCUMENTS + "/") and not rel.endswith(".record.md"):
            continue
        data = path.read_bytes()
        assert data, f"{path} is empty"
        notes.parse_note(data, path.name)
    journals = list((root / "50-devices").glob("*/journal.jsonl"))
    for journal in journals:
        data = journal.read_bytes()
        assert not data or data.endswith(b"\n"), f"{journal} ends in a torn line"
        for line in data.decode("utf-8").splitlines():
            assert isinstance(json.loads(line), dict), line


def current_handoffs(root: Path) -> list[str]:
    selection = handoff.select(handoff.read_all(root), "demo")
    return (
        [h.rel for h in selection.current]
        if hasattr(selection, "current")
        else ([selection.chosen.rel] if selection.chosen else [])
    )


def kill_series(s: Setup, make_args, after_each) -> int:  # type: ignore[no-untyped-def]
    """Measure whole runs, then run KILLS_PER_COMMAND more, each killed at a random moment."""
    spans = []
    for i in (-3, -2, -1):
        status, span, _ = s.server.run(make_args(i), None)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        after_each(i, False)
        spans.append(span)
    span = min(spans)
    kills = 0
    for i in range(KILLS_PER_COMMAND):
        status, _, killed = s.server.run(make_args(i), s.rng.uniform(0.0, span))
        if not killed:
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        kills += killed
        assert_vault_whole(s.vault)
        after_each(i, killed)
    assert kills >= KILLS_PER_COMMAND // 3, f"only {kills} runs were killed mid-way"
    return kills


def scanned(rel: str) -> bool:
    """Doctor's bounded scan covers the working set, the tool's state and (for temporary files) 90-archive/."""
    return rel.split("/", 1)[0] in (*layout.WORKING_SET_DIRS, layout.TOOL_STATE, layout.ARCHIVE)


def assert_doctor_names(s: Setup) -> None:
    """Doctor, as a real process, names every leftover temporary file in the folders it scans."""
    left = {rel for rel in tmp_files(s.vault) if scanned(rel)}
    done = subprocess.run(
        [str(LIFECYCLE), "doctor", "--json"], cwd=s.repo, env=hook_env(), capture_output=True, text=True, timeout=60
    )
    assert "Traceback" not in done.stderr
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    by_id = {c["id"]: c for c in doc["checks"]}
    temp = by_id["scan.temporary"]
    if left:
        assert temp["level"] == "warn"
        for rel in sorted(left)[:5]:
            assert rel in temp["message"], (rel, temp["message"])
    else:
        assert temp["level"] == "ok"


# ------------------------------------------------------------------------------------------- tests

HANDOFF_BODY = (
    "## Goal and status\n\nstep {i}\n\n## Completed work\n\n- done {i}\n\n"
    "## Risks and decisions\n\n- none\n\n## Next actions\n\n1. next {i}\n"
)


def test_killed_handoff_new_keeps_a_current_handoff(setup: Setup) -> None:
    s = setup
    seen: set[str] = set()

    def args(i: int) -> list[str]:
        body = s.inputs / f"handoff-{i}.md"
        body.write_text(HANDOFF_BODY.format(i=i))
        return ["handoff", "new", "--title", f"step {i}", "--from", str(body)]

    def check(i: int, killed: bool) -> None:
        files = {p.name for p in (s.vault / "20-state/handoffs").glob("*.md")}
        assert seen <= files, f"a handoff vanished: {seen - files}"
        seen.update(files)
        # The previous current handoff is superseded only after the new one exists: never neither.
        assert current_handoffs(s.vault), "no current handoff is left"

    kill_series(s, args, check)
    assert_doctor_names(s)


def test_killed_note_new_leaves_whole_candidates(setup: Setup) -> None:
    s = setup
    seen: set[str] = set()

    def args(i: int) -> list[str]:
        body = s.inputs / f"note-{i}.md"
        body.write_text(f"The parser of part {i} is a PEG parser.\n")
        return [
            "note",
            "new",
            "--type",
            "fact",
            "--title",
            f"Parser part {i} is PEG",
            "--from",
            str(body),
            "--evidence",
            "src/parser.py",
        ]

    def check(i: int, killed: bool) -> None:
        files = {p.name for p in (s.vault / "20-state/candidates").glob("*.md")}
        assert seen <= files
        seen.update(files)

    kill_series(s, args, check)
    assert_doctor_names(s)


def test_killed_approve_keeps_candidate_or_memory(setup: Setup) -> None:
    s = setup
    for i in range(-3, KILLS_PER_COMMAND):
        body = s.inputs / f"c-{i}.md"
        body.write_text(f"Claim {i} holds.\n")
        status, _, _ = s.server.run(
            [
                "note",
                "new",
                "--type",
                "lesson",
                "--title",
                f"Claim {i + 1} holds",
                "--from",
                str(body),
                "--evidence",
                "tests",
            ],
            None,
        )
        assert os.WEXITSTATUS(status) == 0
    candidates = sorted(p.stem for p in (s.vault / "20-state/candidates").glob("*.md"))
    assert len(candidates) == KILLS_PER_COMMAND + 3
    order = iter(candidates)
    current: list[str] = []

    def args(i: int) -> list[str]:
        current[:] = [next(order)]
        return ["approve", "--yes", current[0]]

    def check(i: int, killed: bool) -> None:
        cand = current[0]
        approved = s.vault / "30-memory/lessons" / (cand.removeprefix("cand-") + ".md")
        candidate = s.vault / "20-state/candidates" / f"{cand}.md"
        assert candidate.exists() or approved.exists(), f"{cand}: neither the candidate nor the memory"
        if not killed:
            assert approved.exists()

    kill_series(s, args, check)
    assert_doctor_names(s)


def test_killed_edit_leaves_old_or_new_soul(setup: Setup) -> None:
    s = setup
    soul = s.vault / "00-system/SOUL.md"
    template = soul.read_text()
    assert "## Brief" in template
    previous: list[bytes] = [soul.read_bytes()]

    def args(i: int) -> list[str]:
        new = s.inputs / f"soul-{i}.md"
        new.write_text(template.replace("## Brief\n", f"## Brief\n\n- soul version {i + 1}\n", 1))
        return ["edit", "soul", "--from", str(new), "--yes", "--accept-concurrency-risk"]

    def check(i: int, killed: bool) -> None:
        assert soul.exists(), "SOUL.md vanished"
        now = soul.read_bytes()
        marker = f"- soul version {i + 1}\n".encode()
        assert now == previous[0] or marker in now, "SOUL.md is neither the old nor the new version"
        if not killed:
            assert marker in now
        previous[0] = now

    kill_series(s, args, check)
    assert_doctor_names(s)


def test_killed_lease_acquire_leaves_a_readable_lease(setup: Setup) -> None:
    s = setup
    lease_file = s.vault / ".continuity/leases/dev-a.json"

    def args(i: int) -> list[str]:
        return ["lease", "acquire", "--ttl", "2h", "--task", f"task {i}"]

    def check(i: int, killed: bool) -> None:
        assert lease_file.exists(), "the lease file vanished"
        doc = json.loads(lease_file.read_bytes())
        assert doc["version"] == 1 and doc["device"] == "dev-a"
        if not killed:
            assert doc["task"] == f"task {i}"
        done = (
            subprocess.run(
                [str(LIFECYCLE), "lease", "status", "--json"],
                cwd=s.repo,
                env=hook_env(),
                capture_output=True,
                text=True,
                timeout=60,
            )
            if i == KILLS_PER_COMMAND - 1
            else None
        )
        if done is not None:
            assert "Traceback" not in done.stderr and done.returncode == 0, done.stderr
            assert json.loads(done.stdout)["state"] == "held"

    kill_series(s, args, check)
    assert_doctor_names(s)


def test_killed_outbox_deliver_leaves_whole_packages(setup: Setup) -> None:
    s = setup
    payload = s.inputs / "report.bin"
    payload.write_bytes(random.Random(SEED).randbytes(256 * 1024))
    outbox = s.repo / "output"
    seen: set[str] = set()

    def args(i: int) -> list[str]:
        return ["outbox", "deliver", "--name", f"report {i}", str(payload)]

    def check(i: int, killed: bool) -> None:
        state = outbox / ".outbox.json"
        if state.exists():
            assert json.loads(state.read_bytes())["version"] == 1
        packages = {p.name for p in outbox.iterdir() if p.is_dir() and not p.name.startswith(".")}
        assert seen <= packages
        seen.update(packages)
        for name in packages:
            manifest = json.loads((outbox / name / ".manifest.json").read_bytes())
            assert manifest["files"][0]["bytes"] == payload.stat().st_size
            assert (outbox / name / "report.bin").read_bytes() == payload.read_bytes()

    kill_series(s, args, check)
    done = subprocess.run(
        [str(LIFECYCLE), "outbox", "sweep", "--json"],
        cwd=s.repo,
        env=hook_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in done.stderr and done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["failed"] == 0


def test_killed_preserve_keeps_only_whole_delivered_files_and_a_rerun_completes_it(setup: Setup) -> None:
    s = setup
    payload = s.inputs / "chart.bin"
    payload.write_bytes(random.Random(SEED).randbytes(512 * 1024))
    text = s.inputs / "summary.md"
    text.write_text("# Summary\n\nThe numbers.\n" * 2000)
    packages = []
    for i in range(3 + KILLS_PER_COMMAND):
        done = subprocess.run(
            [str(LIFECYCLE), "outbox", "deliver", "--json", "--name", f"p{i}", str(payload), str(text)],
            cwd=s.repo,
            env=hook_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        packages.append(json.loads(done.stdout)["package"])
    expected = {"chart.bin": payload.read_bytes(), "summary.md": text.read_bytes()}

    def args(i: int) -> list[str]:
        return ["preserve", packages[i + 3], "--yes", "--why", f"run {i}"]

    def check(i: int, killed: bool) -> None:
        for path in (s.vault / layout.DOCUMENTS).rglob("*"):
            if not path.is_file() or is_tmp_name(path.name):
                continue
            if path.name.endswith(".record.md"):
                record = notes.parse_note(path.read_bytes(), path.name).meta
                kept = path.with_name(path.name.removesuffix(".record.md"))
                assert kept.read_bytes() == expected[kept.name], "a record without its whole file"
                assert record["sha256"] == hashlib.sha256(expected[kept.name]).hexdigest()
            else:
                assert path.read_bytes() == expected[path.name], f"{path} is not the delivered file"
        if killed:  # running it again completes what the kill left
            status, _, _ = s.server.run(args(i), None)
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        package = packages[i + 3]
        for name in expected:
            found = list((s.vault / layout.DOCUMENTS).glob(f"*/*-{package}/{name}.record.md"))
            assert len(found) == 1, (package, name)

    kill_series(s, args, check)
    assert_doctor_names(s)


def test_mixed_kills_across_every_writer_leave_the_vault_whole(setup: Setup) -> None:
    """Random commands, random moments, one vault: the invariants hold after the whole storm too."""
    s = setup
    body = s.inputs / "h.md"
    body.write_text(HANDOFF_BODY.format(i=0))
    note = s.inputs / "n.md"
    note.write_text("A fact.\n")
    commands = [
        ["handoff", "new", "--title", "mixed", "--from", str(body)],
        ["note", "new", "--type", "fact", "--title", "mixed {i}", "--from", str(note), "--evidence", "x"],
        ["lease", "acquire", "--task", "mixed {i}"],
    ]
    spans = []
    for args in commands:
        status, span, _ = s.server.run([a.replace("{i}", "first") for a in args], None)
        assert os.WEXITSTATUS(status) == 0
        spans.append(span)
    for i in range(KILLS_PER_COMMAND):
        k = s.rng.randrange(len(commands))
        s.server.run([a.replace("{i}", str(i)) for a in commands[k]], s.rng.uniform(0, spans[k] * 1.2))
        assert_vault_whole(s.vault)
        assert current_handoffs(s.vault)
    assert_doctor_names(s)
    # Read-side commands still work on what the storm left.
    for args in (["render"], ["budget"], ["log", "--limit", "5"]):
        done = subprocess.run(
            [str(LIFECYCLE), *args], cwd=s.repo, env=hook_env(), capture_output=True, text=True, timeout=60
        )
        assert "Traceback" not in done.stderr and done.returncode in (0, 1), (args, done.stderr)


def test_doctor_names_a_temporary_file_left_in_the_archive(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    for rel in layout.ALL_DIRS:
        (root / rel).mkdir(parents=True, exist_ok=True)
    left = root / "90-archive/00-system/.SOUL.20261130T045224Z-4.md.6977245808c0.tmp"
    left.parent.mkdir(parents=True, exist_ok=True)
    left.write_text("half")
    assert is_tmp_name(left.name)
    assert "90-archive/00-system/" + left.name in scan.scan(root, "demo", "dev-a").temporary
