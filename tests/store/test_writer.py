"""The one write path: lease refusal, caps, secrets, exclusive creation, links, journal, and SIGKILL."""

from __future__ import annotations

import datetime as dt
import io
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from writer_support import FAKE_SECRET, NOW, all_files, context, journal_lines, make_vault, write_lease

from continuity import safeio
from continuity.errors import InputRejected, LeaseHeld, NotConnected, NoteError, UsageError
from continuity.store import lease, writer
from continuity.vault import access as vault_access, notes

REL = "30-memory/facts/fact-x.md"


def note(body: str = "# X\n\nA claim.\n", **meta: object) -> str:
    return notes.compose({"id": "fact-x", "type": "fact", "status": "approved", **meta}, body)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault")


def test_create_writes_and_journals(root: Path) -> None:
    with writer.transaction(context(root, now=NOW)) as tx:
        written = tx.create(REL, note(), op="note.new", note_id="fact-x", cap=4096)
    data = (root / REL).read_bytes()
    assert notes.parse_note(data, REL).meta["id"] == "fact-x"
    assert written.sha256 == writer.sha256_hex(data)
    assert journal_lines(root) == [
        {
            "ts": "2026-11-30T03:57:00Z",
            "device": "laptop",
            "op": "note.new",
            "id": "fact-x",
            "path": REL,
            "sha256": written.sha256,
        }
    ]
    assert oct((root / REL).stat().st_mode & 0o777) == "0o600"


def test_create_refuses_to_overwrite(root: Path) -> None:
    (root / REL).write_text("original", encoding="utf-8")
    with pytest.raises(writer.Exists) as caught, writer.transaction(context(root)) as tx:
        tx.create(REL, note(), op="note.new", note_id="fact-x", cap=4096)
    assert caught.value.exit_code == 5
    assert (root / REL).read_text() == "original"
    assert journal_lines(root) == []


def test_foreign_lease_refuses_every_write(root: Path) -> None:
    write_lease(root, "desktop", NOW + dt.timedelta(minutes=5))
    with pytest.raises(LeaseHeld) as caught, writer.transaction(context(root, now=NOW)):
        pass
    assert caught.value.exit_code == 4
    # A stale lease, or our own, does not block.
    with writer.transaction(context(root, now=NOW + dt.timedelta(minutes=6))):
        pass
    with writer.transaction(context(root, device="desktop", now=NOW)):
        pass


def test_cap_is_checked_before_writing(root: Path) -> None:
    text = note("x" * 5000)
    with pytest.raises(InputRejected, match="over its cap of 4096"), writer.transaction(context(root)) as tx:
        tx.create(REL, text, op="note.new", note_id="fact-x", cap=4096)
    assert not (root / REL).exists()


def test_secret_is_refused_naming_line_and_detector_not_value(root: Path) -> None:
    body = f"# X\n\nfine\nkey {FAKE_SECRET}\n"
    text = note(body)
    first_body_line = notes.compose({"id": "fact-x", "type": "fact", "status": "approved"}, "").count("\n")
    with pytest.raises(InputRejected) as caught, writer.transaction(context(root)) as tx:
        tx.create(REL, text, op="note.new", note_id="fact-x", cap=4096, input_lines=(first_body_line, 3))
    message = str(caught.value)
    assert FAKE_SECRET not in message and FAKE_SECRET[4:] not in message
    assert f"line {first_body_line + 3}" in message and "(line 6 of the input)" in message
    assert "aws-access-key-id" in message
    assert caught.value.exit_code == 5
    assert not (root / REL).exists()
    assert journal_lines(root) == []


@pytest.mark.parametrize(
    "text",
    ["no frontmatter\n", "---\nid: [unclosed\n---\nbody\n", "---\na: 1\na: 2\n---\n", "---\nnever closed\n"],
)
def test_malformed_notes_are_never_written(root: Path, text: str) -> None:
    with pytest.raises(NoteError), writer.transaction(context(root)) as tx:
        tx.create(REL, text, op="note.new", note_id=None, cap=4096)
    assert not (root / REL).exists()


@pytest.mark.parametrize("rel", ["../x.md", "/etc/x.md", "20-state/../../x.md", "a\\b.md", ""])
def test_paths_that_leave_the_vault_are_refused(root: Path, rel: str) -> None:
    with pytest.raises(InputRejected), writer.transaction(context(root)) as tx:
        tx.create(rel, note(), op="note.new", note_id=None, cap=4096)
    assert not (root.parent / "x.md").exists()


def test_links_on_the_way_are_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "30-memory" / "facts").rmdir()
    (root / "30-memory" / "facts").symlink_to(outside)
    with pytest.raises(InputRejected, match="symbolic link"), writer.transaction(context(root)) as tx:
        tx.create(REL, note(), op="note.new", note_id="fact-x", cap=4096)
    assert list(outside.iterdir()) == []


def test_journal_folder_link_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "50-devices" / "laptop").symlink_to(outside)
    with pytest.raises(InputRejected), writer.transaction(context(root)) as tx:
        tx.create(REL, note(), op="note.new", note_id="fact-x", cap=4096)
    assert list(outside.iterdir()) == []


def test_replace_checks_expected_content(root: Path) -> None:
    with writer.transaction(context(root)) as tx:
        first = tx.create(REL, note(), op="note.new", note_id="fact-x", cap=4096)
    (root / REL).write_text(note("# changed by a sync\n"), encoding="utf-8")
    with pytest.raises(InputRejected, match="changed"), writer.transaction(context(root)) as tx:
        tx.replace(REL, note("# mine\n"), op="x", note_id="fact-x", cap=4096, expect_sha256=first.sha256)
    assert "changed by a sync" in (root / REL).read_text()


def test_preserve_and_remove(root: Path) -> None:
    (root / REL).write_bytes(b"not even a note \xff")
    with writer.transaction(context(root)) as tx:
        tx.preserve("90-archive/30-memory/facts/fact-x.md", (root / REL).read_bytes(), op="a", note_id=None)
        tx.remove(REL, op="a", note_id=None)
    assert (root / "90-archive/30-memory/facts/fact-x.md").read_bytes() == b"not even a note \xff"
    assert not (root / REL).exists()
    assert [line["sha256"] is None for line in journal_lines(root)] == [False, True]


def test_unreachable_vault_is_not_connected(tmp_path: Path) -> None:
    with pytest.raises(NotConnected), writer.transaction(context(tmp_path / "absent")):
        pass


def test_read_input(tmp_path: Path) -> None:
    file = tmp_path / "in.md"
    file.write_bytes(b"\xef\xbb\xbfhello\r\nworld\n")
    assert writer.read_input(str(file), 100) == "hello\nworld\n"
    assert writer.read_input("-", 100, io.BytesIO(b"from stdin")) == "from stdin"
    with pytest.raises(InputRejected, match="over its cap"):
        writer.read_input(str(file), 5)
    file.write_bytes(b"bad \xff")
    with pytest.raises(InputRejected, match="UTF-8"):
        writer.read_input(str(file), 100)
    with pytest.raises(UsageError):
        writer.read_input(str(tmp_path / "absent.md"), 100)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="regular file"):
        writer.read_input(str(fifo), 100)


def test_session_and_line_helpers() -> None:
    assert writer.session_id(None, {"CODEX_SESSION_ID": "abc"}) == "abc"
    assert writer.session_id(None, {"CLAUDE_SESSION_ID": "c1"}) == "c1"
    assert writer.session_id("mine", {"CODEX_SESSION_ID": "abc"}) == "mine"
    assert writer.session_id(None, {}) is None
    with pytest.raises(UsageError):
        writer.clean_line("\x1b[31m", "title", 10)
    assert writer.slugify("Fix the Login — now!", "x") == "fix-the-login-now"
    assert writer.slugify("日本語", "handoff") == "handoff"


# ------------------------------------------------------------------------------------ SIGKILL

BUSY = "30-memory/facts/busy.md"

KILLED_WRITER = """
import os, pathlib, sys
from continuity.store import writer
from continuity.vault import notes
root = pathlib.Path(sys.argv[1])
ctx = writer.WriteContext(root, "laptop", "demo")
n = int(sys.argv[2])
started = False
while True:
    n += 1
    body = ("line %d\\n" % n) * (1 + n % 700)
    text = notes.compose({"id": "busy", "type": "fact", "status": "approved", "n": n}, body)
    with writer.transaction(ctx) as tx:
        tx.replace("30-memory/facts/busy.md", text, op="test.replace", note_id="busy", cap=1 << 20)
        tx.create(f"20-state/candidates/c-{n}.md", text, op="test.create", note_id=f"c-{n}", cap=1 << 20)
    if not started:
        (root.parent / "started").touch()
        started = True
"""


def test_sigkill_mid_write_leaves_whole_notes_and_whole_journal_lines(root: Path) -> None:
    rng = random.Random(20261130)  # a fixed seed makes the kill schedule reproducible
    flag = root.parent / "started"
    n = 0
    for _round in range(10):
        flag.unlink(missing_ok=True)
        command = [sys.executable, "-c", KILLED_WRITER, str(root), str(n)]
        proc = subprocess.Popen(command, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not flag.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(rng.uniform(0.0, 0.08))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        if proc.stderr:
            proc.stderr.close()
        n = _check_vault(root)
    assert n > 10  # the writer really was interrupted at many different points


def _check_vault(root: Path) -> int:
    """Every note parses and is a complete version; every journal line is whole. Returns the last n."""
    for rel in all_files(root):
        name = rel.rpartition("/")[2]
        if safeio.is_tmp_name(name):
            continue  # a killed writer may leave a temporary sibling, never a partial note
        if not rel.endswith(".md"):
            continue
        meta = notes.parse_note((root / rel).read_bytes(), rel).meta
        body = notes.parse_note((root / rel).read_bytes(), rel).body
        n = meta["n"]
        assert body == f"line {n}\n" * (1 + n % 700), rel
    path = root / vault_access.journal("laptop")
    raw = path.read_bytes() if path.exists() else b""
    assert raw == b"" or raw.endswith(b"\n")
    from continuity.records import journal

    read = journal.read(root / vault_access.journal("laptop"))
    assert read.malformed == 0
    busy = root / BUSY
    return int(notes.parse_note(busy.read_bytes(), BUSY).meta["n"]) if busy.exists() else 0


def test_lock_path_does_not_touch_the_vault(root: Path) -> None:
    with writer.transaction(context(root)):
        pass
    assert not (root / ".continuity" / "lock").exists()
    assert lease.lock_path(root).exists()
