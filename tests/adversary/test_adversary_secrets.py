"""Secrets against an adversary who reads the tool's outputs: nothing derived from a value may leave.

A hash prefix of a short secret is the secret: a 4-digit PIN falls to ten thousand guesses, an 8-digit
password to a hundred million. So every surface (the brief, `render --format json`, `doctor --json`,
`scan --json`, the MCP `brief` tool through a real server, `sync --json`, the journal) is run over a
vault holding secrets of many shapes, and its output is searched for any hex or base64 prefix of the
SHA-256, SHA-1 or MD5 of every piece of each secret line, and for the whole-file digest of each file
left out for a secret. Secret-shaped file names (`archive`, `journal.jsonl`, `log`, `search_log`) and
the lease's task are the same class: what a person typed reaches no output the gate did not pass.

Values are generated at run time, so this file holds no secret-shaped text of its own.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import string
import subprocess
from pathlib import Path

import pytest
import secret_corpus
from briefkit import DEFAULT_HANDOFF, SOURCE_REL, connect, handoff_note, hot_note, make_vault, write
from hookkit import lifecycle
from mcpkit import mcp_server
from syncvaults import bare_remote

from continuity.gate.secrets import Finding, scan_text

MARK_CHARS = 8  # a prefix this long of a digest would already let a guess be tested


def github_token(rng: random.Random) -> str:
    return secret_corpus.checksummed(rng, "ghp" + "_")


def secret_lines(seed: int) -> list[str]:
    """One line per shape: short numeric ones (the brute-forceable class) and issued tokens."""
    rng = random.Random(seed)
    alnum = string.ascii_letters + string.digits
    word = "".join(rng.choice(string.ascii_lowercase) for _ in range(6))
    return [
        f"PIN: {rng.randint(1000, 9999)}",
        f"My bank PIN is {rng.randint(1000, 9999)}.",
        f"password: {rng.randint(10_000_000, 99_999_999)}",
        f"password = {word}{rng.randint(10, 99)}",
        f"the wifi passphrase is {word}-orbit-{rng.randint(10, 99)}",
        f"db: postgres://admin:{word}{rng.randint(100, 999)}@db.internal/app",
        "export AWS_SECRET_ACCESS_KEY=" + "".join(rng.choice(alnum + "/+") for _ in range(40)),
        "Authorization: Bearer " + "".join(rng.choice(string.ascii_letters) for _ in range(32)),
        "sk" + "_live_" + "".join(rng.choice(alnum) for _ in range(24)),
        "token " + github_token(rng),
    ]


def digest_marks(data: bytes) -> set[str]:
    """Every hex and base64 prefix of `MARK_CHARS` of the SHA-256, SHA-1 and MD5 of `data`."""
    marks: set[str] = set()
    for name in ("sha256", "sha1", "md5"):
        raw = hashlib.new(name, data).digest()
        marks.add(raw.hex()[:MARK_CHARS])
        marks.add(base64.b64encode(raw).decode()[:MARK_CHARS])
        marks.add(base64.urlsafe_b64encode(raw).decode()[:MARK_CHARS])
    return marks


def forbidden(line: str) -> set[str]:
    """The value of a secret line in every cut a detector might take, and each cut's digest marks."""
    pieces = {line[i:j] for i in range(len(line)) for j in range(i + 4, len(line) + 1)}
    marks: set[str] = set()
    for piece in pieces:
        marks |= digest_marks(piece.encode("utf-8"))
    return marks


def assert_nothing_derived(outputs: dict[str, str], lines: list[str], files: list[bytes]) -> None:
    marks = set().union(*(forbidden(line) for line in lines))
    for data in files:
        marks |= digest_marks(data)
        marks.add(hashlib.sha256(data).hexdigest())
    for surface, text in outputs.items():
        for line in lines:
            value = line.split()[-1].rstrip(".")
            assert value not in text, f"{surface} shows a secret value"
        leaked = sorted(mark for mark in marks if mark in text)
        assert not leaked, f"{surface} shows something derived from a secret: {leaked[:3]}"


def run(cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return lifecycle(cwd, *args, stdin=stdin, timeout=180)


@pytest.mark.parametrize("seed", [1, 2])
def test_no_surface_shows_anything_derived_from_a_secret(repo: Path, tmp_path: Path, seed: int) -> None:
    lines = secret_lines(seed)
    assert all(scan_text(line) for line in lines), "each generated line is a secret to the gate"
    vault = make_vault(tmp_path / "vault")
    connect(repo, vault)
    # Each hot source and the handoff hold one secret line; the memory folders hold all of them.
    placed = dict(zip([*SOURCE_REL, "handoff"], lines[seed % 2 :], strict=False))
    files: list[bytes] = []
    for name, line in placed.items():
        if name == "handoff":
            text = handoff_note(goal=line)
            rel = DEFAULT_HANDOFF
        else:
            text, rel = hot_note(name, f"- {line}"), SOURCE_REL[name]
        files.append(write(vault, rel, text).read_bytes())
    for index, line in enumerate(lines):
        note = f"---\nid: leak-{index}\ntype: fact\nstatus: approved\n---\n# Leak\n\n{line}\n"
        files.append(write(vault, f"30-memory/facts/leak-{index}.md", note).read_bytes())
    outputs: dict[str, str] = {}
    for args in (
        ["render"],
        ["render", "--format", "json"],
        ["render", "--event", "SubagentStart", "--format", "json"],
        ["doctor", "--json"],
        ["doctor"],
        ["scan", "--json"],
        ["scan"],
    ):
        done = run(repo, *args)
        outputs[" ".join(args)] = done.stdout + done.stderr
    rendered = json.loads(run(repo, "render", "--format", "json").stdout)
    left_out = [source for source in rendered["sources"] if source["reason"] == "secret"]
    assert left_out and all(source["sha256"] is None for source in left_out)
    with mcp_server(repo) as server:
        outputs["mcp brief"] = server.call("brief", {"event": "SessionStart"}).text
        outputs["mcp search_log"] = server.call("search_log", {}).text
    remote = bare_remote(tmp_path)
    synced = run(repo, "sync", "--remote", str(remote), "--json")
    assert synced.returncode == 5, synced.stderr
    outputs["sync --remote"] = synced.stdout + synced.stderr
    outputs["sync again"] = "".join(run(repo, "sync", "--json").stdout)
    journal = vault / "50-devices/dev-a/journal.jsonl"
    outputs["journal"] = journal.read_text() if journal.exists() else ""
    history = subprocess.run(
        ["git", "-C", str(remote), "log", "--all", "-p", "--format=%H %B"], capture_output=True, text=True, check=False
    ).stdout
    outputs["remote"] = without_object_names(history, remote)
    assert_nothing_derived(outputs, lines, files)


def without_object_names(history: str, remote: Path) -> str:
    """The remote's history with git's own object names (commit, tree and blob ids, whole or cut to
    the 7+ characters of an `index` line) taken out. They hash contents and times, so they are
    random to this test: left in, one of the hundreds of hex runs they bring would now and then
    match one of the tens of thousands of 8-character marks by chance. Nothing is lost by taking
    them out: a blob that reached the remote shows its content in the patch, and that is searched."""
    listed = subprocess.run(
        ["git", "-C", str(remote), "rev-list", "--all", "--objects"], capture_output=True, text=True, check=True
    ).stdout
    names = {line.split()[0] for line in listed.splitlines() if line.strip()}
    return re.sub(r"\b[0-9a-f]{7,40}\b", lambda m: "" if any(n.startswith(m[0]) for n in names) else m[0], history)


def test_a_finding_carries_no_value_derived_field() -> None:
    finding = scan_text("PIN: 4821")[0]
    assert finding == Finding(1, finding.detector)
    assert finding.describe() == f"line 1: {finding.detector}"


# ------------------------------------------------------------- 11: secret-shaped file names


def secret_names(rng: random.Random) -> list[str]:
    alnum = string.ascii_letters + string.digits
    return [
        github_token(rng),
        "sk" + "_live_" + "".join(rng.choice(alnum) for _ in range(24)),
        "AKIA" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(16)),
        "xoxb-"
        + "-".join("".join(rng.choice(string.digits) for _ in range(12)) for _ in range(2))
        + "-"
        + "".join(rng.choice(alnum) for _ in range(24)),
    ]


def test_a_secret_shaped_file_name_reaches_no_output_nor_the_journal(repo: Path, tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    connect(repo, vault)
    names = secret_names(random.Random(11))
    assert all(scan_text(name) for name in names)
    outputs: dict[str, str] = {}
    for index, name in enumerate(names):
        note = f"---\nid: named-{index}\ntype: fact\nstatus: approved\n---\n# A fact\n\nplain text\n"
        write(vault, f"30-memory/facts/{name}.md", note)
        for args in (["archive", f"named-{index}"], ["archive", f"named-{index}", "--json"]):
            done = run(repo, *args)
            outputs[" ".join(args)] = done.stdout + done.stderr
    assert any(not (vault / f"30-memory/facts/{name}.md").exists() for name in names), outputs
    for index, name in enumerate(names):  # overdue: listed by revalidate and stale_notes
        due = f"---\nid: due-{index}\ntype: fact\nstatus: approved\ntitle: due\nverified: 2020-01-01\n"
        write(vault, f"30-memory/facts/{name}-due.md", due + "revalidate_by: 2020-06-01\n---\nx\n")
    for args in (["revalidate"], ["revalidate", "--json"]):
        done = run(repo, *args)
        outputs[" ".join(args)] = done.stdout + done.stderr
    # A line another device (or an older version, or a hand) wrote is withheld when read back too.
    other = vault / "50-devices/dev-b/journal.jsonl"
    other.parent.mkdir(parents=True, exist_ok=True)
    line = {"ts": "2026-01-01T00:00:00Z", "device": "dev-b", "op": "note.archive", "id": names[0],
            "path": f"30-memory/facts/{names[1]}.md", "sha256": None}  # fmt: skip
    other.write_text(json.dumps(line) + "\n")
    for args in (["log"], ["log", "--json"], ["log", "facts"], ["log", "/ghp_/"], ["log", names[0][:8]]):
        done = run(repo, *args)
        outputs[" ".join(args)] = done.stdout + done.stderr
    with mcp_server(repo) as server:
        outputs["search_log"] = server.call("search_log", {}).text
        outputs["search_log facts"] = server.call("search_log", {"query": "facts"}).text
        probe = server.call("search_log", {"query": "/" + names[1][:10] + "/"}).text
        outputs["stale_notes"] = server.call("stale_notes", {}).text
    outputs["journal"] = (vault / "50-devices/dev-a/journal.jsonl").read_text()
    assert "note.archive" in outputs["journal"] and "withheld" in outputs["log --json"]
    for surface, text in outputs.items():
        for name in names:
            assert name not in text and name[4:20] not in text, f"{surface} shows a secret-shaped name"
    assert "0 entries" in probe, "a query cannot probe a withheld name"


# ------------------------------------------------------------------------------ 5: the lease task


def test_a_secret_in_a_lease_task_is_refused_and_never_shown(repo: Path, tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    connect(repo, vault)
    for line in secret_lines(5):
        done = run(repo, "lease", "acquire", "--task", f"deploying with {line}")
        assert done.returncode == 5, (line, done.stderr)
        assert line.split()[-1] not in done.stdout + done.stderr
        assert not (vault / ".continuity/leases/dev-a.json").exists()
    # A lease file that arrived with a secret-like task (another device, an older version) is data.
    leaked = secret_lines(6)[-1]
    lease_file = vault / ".continuity/leases/dev-b.json"
    lease_file.parent.mkdir(parents=True, exist_ok=True)
    lease_file.write_text(json.dumps({"version": 1, "device": "dev-b", "token": "t" * 32,
                                      "acquired": "2026-01-01T00:00:00Z", "expires": "2099-01-01T00:00:00Z",
                                      "task": f"deploying with {leaked}"}))  # fmt: skip
    outputs = [run(repo, *args) for args in (["lease", "status", "--json"], ["lease", "status"], ["doctor", "--json"])]
    refused = run(
        repo, "note", "new", "--type", "fact", "--title", "x", "--from", "-", "--evidence", "e", stdin="a fact\n"
    )
    assert refused.returncode == 4
    with mcp_server(repo) as server:
        reply = server.call("write_handoff", {"title": "t", "goal_and_status": "g", "completed_work": "c",
                                              "risks_and_decisions": "r", "next_actions": ["n"]})  # fmt: skip
    assert reply.is_error
    for text in [done.stdout + done.stderr for done in [*outputs, refused]] + [reply.text]:
        assert leaked.split()[-1] not in text
    assert "withheld" in outputs[0].stdout
