"""The server's inotify watcher lets warm recall skip its walk only when nothing changed.

Real files and the real kernel queue: every kind of change made after a warm recall (an edit in place
that keeps size and mtime, a rename, a deletion, a new subfolder, a folder swapped for a link) is
seen by the next recall through the server's Session, with or without the watcher, and the answers
equal a fresh search's. The queue's own flags (overflow, a watch gone) are tested through the parser
with a hand-built event buffer, as the kernel would lay it out.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from briefkit import DEVICE, PROJECT, connect, make_vault
from conftest import use_connection
from mcpkit import mcp_server

from continuity import tunables
from continuity.recall import index as recall_index, search, watch
from continuity.server.meter import Meter
from continuity.server.session import Session

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def note(vault: Path, rel: str, note_id: str, body: str, **meta: Any) -> Path:
    fields: dict[str, Any] = {"id": note_id, "type": "fact", "status": "approved", "title": note_id, **meta}
    head = "".join(f"{key}: {json.dumps(value)}\n" for key, value in fields.items())
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{head}---\n{body}\n", encoding="utf-8")
    return path


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault")


@pytest.fixture
def session(
    repo: Path, vault: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[Session]:
    connect(repo, vault)
    use_connection(monkeypatch, repo)
    meter = Meter("main", "codex", dt.datetime.now(dt.timezone.utc), list)
    made = Session(repo, meter, "codex", watch=getattr(request, "param", True))
    try:
        yield made
    finally:
        made.close()


def recalled(session: Session, terms: str) -> list[str]:
    """The paths the server's recall tool returns, with a fresh allowance each time."""
    session.meter = Meter("main", "codex", dt.datetime.now(dt.timezone.utc), list)
    outcome = session.call("recall", {"terms": terms, "limit": 10})
    assert not outcome.is_error, outcome.text
    return re.findall(r'<note id="[^"]+" path="([^"]+)"', outcome.text)


def fresh(vault: Path, terms: str) -> list[str]:
    found = search.recall(vault, DEVICE, PROJECT, [terms], limit=10, use_cache=False)
    return [result.path for result in found.results]


# ------------------------------------------------------------------------- through the server


@pytest.mark.parametrize("session", [True, False], ids=["watched", "fallback"], indirect=True)
def test_every_change_after_a_warm_recall_is_seen_by_the_next_one(
    session: Session, vault: Path, tmp_path: Path
) -> None:
    a = note(vault, "30-memory/facts/a.md", "a", "zebra alpha")
    note(vault, "30-memory/facts/b.md", "b", "zebra bravo")
    note(vault, "30-memory/facts/c.md", "c", "zebra charlie")
    assert recalled(session, "zebra") == fresh(vault, "zebra") and len(fresh(vault, "zebra")) == 3
    assert recalled(session, "zebra") == fresh(vault, "zebra")  # warm: nothing changed

    def check(*terms: str) -> None:
        for term in terms:
            assert recalled(session, term) == fresh(vault, term), term

    # The hard case: edited in place, same size, its mtime put back (only ctime and the bytes differ).
    before = a.stat()
    with open(a, "r+", encoding="utf-8") as handle:
        text = handle.read()
        handle.seek(0)
        handle.write(text.replace("alpha", "omega"))
    os.utime(a, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (a.stat().st_size, a.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert recalled(session, "omega") == ["30-memory/facts/a.md"] and recalled(session, "alpha") == []

    (vault / "30-memory/facts/c.md").rename(vault / "30-memory/facts/c2.md")
    assert recalled(session, "charlie") == ["30-memory/facts/c2.md"]

    (vault / "30-memory/facts/b.md").unlink()
    assert recalled(session, "bravo") == []

    note(vault, "30-memory/projects/deep/d.md", "d", "zebra delta")
    assert recalled(session, "delta") == ["30-memory/projects/deep/d.md"]
    note(vault, f"50-devices/{DEVICE}/notes/e.md", "e", "zebra echo")
    assert recalled(session, "echo") == [f"50-devices/{DEVICE}/notes/e.md"]

    # A folder replaced by a link to a folder holding the same note: the link is never followed.
    outside = tmp_path / "outside"
    note(outside, "d.md", "d", "zebra delta")
    shutil.rmtree(vault / "30-memory/projects/deep")
    (vault / "30-memory/projects/deep").symlink_to(outside, target_is_directory=True)
    assert recalled(session, "delta") == []
    check("zebra", "omega", "charlie", "echo")

    if session.watch:
        watcher = session.watcher(vault, DEVICE)
        assert watcher is not None and watcher.usable  # this machine has inotify: the path under test ran
        assert watcher.unchanged()


def test_the_server_process_sees_an_edit_that_keeps_size_and_mtime(repo: Path, vault: Path) -> None:
    """The same through `lifecycle mcp` itself: its one session holds the watcher between calls."""
    connect(repo, vault)
    a = note(vault, "30-memory/facts/a.md", "a", "zebra alpha")
    before = a.stat()
    with mcp_server(repo) as server:
        assert "zebra alpha" in server.call("recall", {"terms": "alpha"}).text
        assert "zebra alpha" in server.call("recall", {"terms": "alpha"}).text  # warm
        with open(a, "r+", encoding="utf-8") as handle:
            text = handle.read()
            handle.seek(0)
            handle.write(text.replace("alpha", "omega"))
        os.utime(a, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert "zebra omega" in server.call("recall", {"terms": "omega"}).text
        assert "No approved note matched" in server.call("recall", {"terms": "alpha"}).text


def test_a_session_connected_to_another_vault_gets_a_new_watcher(session: Session, vault: Path, tmp_path: Path) -> None:
    first = session.watcher(vault, DEVICE)
    assert session.watcher(vault, DEVICE) is first
    other = session.watcher(make_vault(tmp_path / "other"), DEVICE)
    assert other is not first and first is not None and not first.unchanged()


# ------------------------------------------------------------------------------ at the index


@pytest.fixture
def watcher(vault: Path) -> Iterator[watch.Watcher]:
    made = watch.Watcher(vault, DEVICE)
    assert made.usable
    try:
        yield made
    finally:
        made.close()


def refresh(vault: Path, watcher: watch.Watcher | None) -> recall_index.Refreshed:
    index = recall_index.open_index(vault, DEVICE)
    try:
        return index.refresh(watcher)
    finally:
        index.close()


def test_the_walk_is_skipped_only_while_the_kernel_saw_nothing(vault: Path, watcher: watch.Watcher) -> None:
    a = note(vault, "30-memory/facts/a.md", "a", "zebra alpha")
    assert refresh(vault, watcher).read >= 1
    skipped = refresh(vault, watcher)
    assert skipped == recall_index.Refreshed(0, 0, 0) and not skipped.walked

    # A hidden file (an atomic write's temporary) and a file that is not Markdown are not listed.
    (vault / "30-memory/facts/.a.md.tmp").write_text("x")
    (vault / "30-memory/facts/notes.txt").write_text("x")
    assert not refresh(vault, watcher).walked

    os.utime(a, ns=(1, 1))
    touched = refresh(vault, watcher)
    assert touched == recall_index.Refreshed(0, 1, 0) and touched.walked
    assert not refresh(vault, watcher).walked

    # Another process empties the index (or reads one note again): the fingerprint no longer matches.
    index = recall_index.open_index(vault, DEVICE)
    try:
        index.reindex("30-memory/facts/a.md")
    finally:
        index.close()
    assert refresh(vault, watcher).walked
    assert not refresh(vault, watcher).walked


def test_on_the_way_only_the_next_name_counts(vault: Path, watcher: watch.Watcher) -> None:
    shutil.rmtree(vault / f"50-devices/{DEVICE}", ignore_errors=True)
    refresh(vault, watcher)
    (vault / "INDEX.md").write_text("# index\n")  # in the vault's own folder, not on recall's way
    (vault / "50-devices/other-device").mkdir()
    assert not refresh(vault, watcher).walked
    (vault / f"50-devices/{DEVICE}").mkdir()  # the device's folder appears: the walk must look
    assert refresh(vault, watcher).walked
    (vault / f"50-devices/{DEVICE}/notes").mkdir()
    assert refresh(vault, watcher).walked
    note(vault, f"50-devices/{DEVICE}/notes/n.md", "n", "zebra november")
    assert refresh(vault, watcher) == recall_index.Refreshed(1, 0, 0)


def test_without_inotify_every_search_walks(vault: Path, watcher: watch.Watcher) -> None:
    watcher.disable()
    note(vault, "30-memory/facts/a.md", "a", "zebra alpha")
    assert refresh(vault, watcher).read >= 1
    again = refresh(vault, watcher)
    assert again.walked and not again.compared and not watcher.unchanged()


# ---------------------------------------------------------------------------- the kernel's queue


def event(wd: int, mask: int, name: str = "") -> bytes:
    raw = name.encode()
    padded = raw + b"\0" * (16 - len(raw) % 16) if raw else b""  # the kernel pads names with NULs
    return struct.pack("iIII", wd, mask, 0, len(padded)) + padded


def test_the_queue_flags_and_names_decide_a_full_refresh() -> None:
    buffer = event(3, watch.IN_MODIFY, "a.md") + event(-1, watch.IN_Q_OVERFLOW) + event(4, watch.IN_IGNORED)
    parsed = list(watch.parse_events(buffer + b"\0\0\0"))  # a truncated tail is not an event
    assert parsed == [
        watch.Event(3, watch.IN_MODIFY, "a.md"),
        watch.Event(-1, watch.IN_Q_OVERFLOW, ""),
        watch.Event(4, watch.IN_IGNORED, ""),
    ]
    on_the_way = {1: {"30-memory", "50-devices"}}
    assert [watch.matters(e, on_the_way) for e in parsed] == [True, True, True]
    quiet = [
        watch.Event(3, watch.IN_CREATE, ".a.md.tmp"),
        watch.Event(3, watch.IN_CLOSE_WRITE, "notes.txt"),
        watch.Event(1, watch.IN_MODIFY, "INDEX.md"),
        watch.Event(1, watch.IN_CREATE | watch.IN_ISDIR, "60-inbox"),
    ]
    assert not any(watch.matters(e, on_the_way) for e in quiet)
    loud = [
        watch.Event(3, watch.IN_CREATE | watch.IN_ISDIR, "sub"),
        watch.Event(3, watch.IN_ATTRIB, ""),  # the watched folder's own mode
        watch.Event(3, watch.IN_DELETE_SELF, ""),
        watch.Event(1, watch.IN_MOVED_FROM | watch.IN_ISDIR, "30-memory"),
    ]
    assert all(watch.matters(e, on_the_way) for e in loud)


def test_a_queue_longer_than_one_read_is_drained_to_its_end(vault: Path, watcher: watch.Watcher) -> None:
    """The real queue, holding more than one read takes: the one event that counts comes last."""
    refresh(vault, watcher)
    for n in range(tunables.RECALL_WATCH_READ_BYTES // 16 + 1):
        (vault / f"30-memory/facts/.tmp{n}").write_text("")  # hidden: each one alone would not count
    (vault / "30-memory/facts/z.md").write_text("---\nid: z\n---\n")  # behind them, one that counts
    assert refresh(vault, watcher).walked


def test_one_shot_commands_never_load_the_watcher(vault: Path) -> None:
    program = (
        "import sys; from pathlib import Path; from continuity.recall import search; "
        f"search.recall(Path({str(vault)!r}), {DEVICE!r}, {PROJECT!r}, ['zebra']); "
        "assert 'continuity.recall.watch' not in sys.modules and 'ctypes' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", program], check=True, env=dict(os.environ))
