"""Leases and the local lock: states, take-over, release, racing processes, and the CLI contract."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from writer_support import NOW, cli, connect, context, journal_lines, make_vault, write_lease

from continuity import tunables
from continuity.errors import InputRejected, LeaseHeld, UsageError
from continuity.records import leases as lease_records
from continuity.store import lease, writer
from continuity.vault import layout

HOUR = dt.timedelta(hours=1)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault")


# ---------------------------------------------------------------------------------- durations


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("30m", 1800), ("2h", 7200), ("2H", 7200), ("7d", 604800), ("1h30m", 5400), ("1d12h", 129600)],
)
def test_durations(text: str, seconds: int) -> None:
    assert lease.parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text", ["", "2", "h", "2x", "-2h", "1.5h", "0s", "2 h", "٣h", "9999999999d", "31d", "1h 30m", "1h30", "0h0m"]
)
def test_bad_durations_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError):
        lease.parse_duration(text)


def test_the_maximum_duration_is_the_limit() -> None:
    days = tunables.LEASE_MAX_TTL_SECONDS // 86400
    leases_doc = (Path(__file__).resolve().parents[2] / "docs" / "leases.md").read_text(encoding="utf-8")
    assert f"at most {days} days (`LEASE_MAX_TTL_SECONDS`)" in leases_doc
    assert lease.parse_duration(f"{days}d") == tunables.LEASE_MAX_TTL_SECONDS
    with pytest.raises(UsageError, match=f"maximum of {days}d"):
        lease.parse_duration(f"{days}d1s")


@given(st.text(max_size=12))
def test_durations_never_crash(text: str) -> None:
    try:
        seconds = lease.parse_duration(text)
    except UsageError:
        return
    assert 0 < seconds <= tunables.LEASE_MAX_TTL_SECONDS


# ------------------------------------------------------------------------------------- states


def test_states_none_held_foreign_stale(root: Path) -> None:
    assert lease_records.status(root, "laptop", NOW).state == "none"
    assert lease_records.status(root, "laptop", NOW).line() == "lock=none"

    ctx = context(root, now=NOW)
    held = writer.acquire_lease(ctx, 3600, "parser work")
    assert held.state == "held"
    assert held.line() == "lock=held device=laptop expires=2026-11-30T04:57:00Z"
    assert held.to_json() == {
        "version": 1,
        "state": "held",
        "device": "laptop",
        "acquired": "2026-11-30T03:57:00Z",
        "expires": "2026-11-30T04:57:00Z",
        "task": "parser work",
    }
    # The same files seen from the desktop: foreign while unexpired, stale afterwards.
    seen = lease_records.status(root, "desktop", NOW).line()
    assert seen == "lock=foreign device=laptop expires=2026-11-30T04:57:00Z"
    later = NOW + 2 * HOUR
    seen = lease_records.status(root, "desktop", later).line()
    assert seen == "lock=stale device=laptop expired=2026-11-30T04:57:00Z"
    assert lease_records.status(root, "laptop", later).state == "stale"


def test_reacquire_extends_own_lease(root: Path) -> None:
    first = writer.acquire_lease(context(root, now=NOW), 3600).lease
    second = writer.acquire_lease(context(root, now=NOW + HOUR / 2), 3600, "more").lease
    assert first is not None and second is not None
    assert second.token == first.token
    assert second.acquired == first.acquired
    assert second.expires == NOW + HOUR / 2 + HOUR
    assert second.task == "more"


def test_foreign_unexpired_lease_refuses_acquire(root: Path) -> None:
    write_lease(root, "desktop", NOW + HOUR, task="deploy")
    with pytest.raises(LeaseHeld) as caught:
        writer.acquire_lease(context(root, now=NOW), 3600)
    assert caught.value.exit_code == 4
    assert "desktop" in str(caught.value) and "deploy" in str(caught.value)
    assert not (root / lease.lease_rel("laptop")).exists()


def test_stale_lease_is_taken_over_without_touching_its_file(root: Path) -> None:
    stale = write_lease(root, "desktop", NOW - HOUR)
    before = stale.read_bytes()
    current = writer.acquire_lease(context(root, now=NOW), 3600)
    assert current.state == "held"
    assert stale.read_bytes() == before  # each device writes only its own file


def test_release_own_and_foreign(root: Path) -> None:
    writer.acquire_lease(context(root, now=NOW), 3600)
    released = writer.release_lease(context(root, now=NOW))
    assert [item.device for item in released.released] == ["laptop"]
    assert released.left.state == "none"

    write_lease(root, "desktop", NOW + HOUR)
    with pytest.raises(LeaseHeld):
        writer.release_lease(context(root, now=NOW))
    assert (root / lease.lease_rel("desktop")).exists()
    forced = writer.release_lease(context(root, now=NOW), force=True)
    assert [item.device for item in forced.released] == ["desktop"]
    assert not (root / lease.lease_rel("desktop")).exists()


def test_release_with_nothing_held_or_only_stale(root: Path) -> None:
    assert writer.release_lease(context(root, now=NOW)).released == []
    write_lease(root, "desktop", NOW - HOUR)
    result = writer.release_lease(context(root, now=NOW))
    assert result.released == [] and result.left.state == "stale"


def test_lease_writes_are_journaled(root: Path) -> None:
    writer.acquire_lease(context(root, now=NOW), 3600)
    writer.release_lease(context(root, now=NOW))
    ops = [(line["op"], line["path"], line["id"]) for line in journal_lines(root)]
    assert ops == [
        ("lease.acquire", ".continuity/leases/laptop.json", None),
        ("lease.release", ".continuity/leases/laptop.json", None),
    ]
    assert journal_lines(root)[1]["sha256"] is None


def test_malformed_lease_files_are_reported_not_trusted(root: Path) -> None:
    folder = root / layout.LEASES
    (folder / "broken.json").write_text("{not json", encoding="utf-8")
    (folder / "other.json").write_text(json.dumps({"version": 1, "device": "desk"}), encoding="utf-8")
    (folder / "desktop (1).json").write_text("{}", encoding="utf-8")
    write_lease(root, "desktop", NOW + HOUR)
    (folder / "desktop.json").rename(folder / "mismatch.json")
    (folder / ".desktop.json.0123456789ab.tmp").write_text("partial", encoding="utf-8")
    current = lease_records.status(root, "laptop", NOW)
    assert current.state == "none"
    assert sorted(rel.rpartition("/")[2] for rel, _ in current.invalid) == [
        "broken.json",
        "desktop (1).json",
        "mismatch.json",
        "other.json",
    ]


def test_lease_link_is_not_followed(root: Path, tmp_path: Path) -> None:
    outside = write_lease(tmp_path / "elsewhere", "desktop", NOW + HOUR)
    (root / lease.lease_rel("desktop")).symlink_to(outside)
    current = lease_records.status(root, "laptop", NOW)
    assert current.state == "none"
    assert current.invalid and "link" in current.invalid[0][1]


def test_newer_lease_version_fails_clearly(root: Path) -> None:
    path = write_lease(root, "desktop", NOW + HOUR)
    doc = json.loads(path.read_text())
    doc["version"] = 2
    path.write_text(json.dumps(doc))
    with pytest.raises(InputRejected, match="newer version"):
        lease_records.status(root, "laptop", NOW)


def test_task_text_is_checked(root: Path) -> None:
    with pytest.raises(UsageError):
        writer.acquire_lease(context(root, now=NOW), 60, "x" * (tunables.LEASE_TASK_MAX_CHARS + 1))
    with pytest.raises(UsageError):
        writer.acquire_lease(context(root, now=NOW), 60, "bell\x07")


# ---------------------------------------------------------------------------------- local lock


def test_lock_file_is_machine_local(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = lease.lock_path(root)
    assert str(path).startswith(os.environ["XDG_STATE_HOME"])
    assert root not in path.parents
    link = tmp_path / "vault-link"
    link.symlink_to(root)
    assert lease.lock_path(link) == path  # one vault, one lock, however it is spelled
    monkeypatch.setenv("XDG_STATE_HOME", "relative")  # ignored, as the XDG specification asks
    assert lease.lock_path(root).is_relative_to(Path.home())


def test_local_lock_is_reentrant(root: Path) -> None:
    with lease.local_lock(root), lease.local_lock(root, timeout=0.1):
        pass
    with lease.local_lock(root, timeout=0.1):
        pass


@contextlib.contextmanager
def held_elsewhere(root: Path) -> Iterator[threading.Event]:
    """The local lock held by another thread until the yielded event is set."""
    holding, release = threading.Event(), threading.Event()

    def holder() -> None:
        with lease.local_lock(root):
            holding.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    holding.wait(10)
    try:
        yield release
    finally:
        release.set()
        thread.join()


def test_local_lock_waits_and_announces(root: Path) -> None:
    messages: list[str] = []
    with held_elsewhere(root) as release:

        def on_wait(message: str) -> None:
            messages.append(message)
            release.set()

        with lease.local_lock(root, timeout=10, on_wait=on_wait):
            pass
    assert len(messages) == 1 and "waiting" in messages[0]


def test_local_lock_timeout_is_exit_4(root: Path) -> None:
    messages: list[str] = []
    with (
        held_elsewhere(root),
        pytest.raises(LeaseHeld) as caught,
        lease.local_lock(root, timeout=0.2, on_wait=messages.append),
    ):
        pass
    assert caught.value.exit_code == 4
    assert len(messages) == 1


RACER = """
import pathlib, sys, time
from continuity import errors
from continuity.store import writer
import portalocker
root, device, go = pathlib.Path(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
(go.parent / f"ready-{device}").touch()
while not go.exists():
    time.sleep(0.002)
try:
    writer.acquire_lease(writer.WriteContext(root, device, "demo"), 3600, "race")
except errors.LeaseHeld:
    sys.exit(4)
"""


def test_racing_processes_leave_exactly_one_holder(root: Path, tmp_path: Path) -> None:
    signals = tmp_path / "signals"
    signals.mkdir()
    go = signals / "go"
    devices = [f"dev-{n}" for n in range(6)]
    procs = [
        subprocess.Popen([sys.executable, "-c", RACER, str(root), device, str(go)], stderr=subprocess.PIPE)
        for device in devices
    ]
    while len(list(signals.glob("ready-*"))) < len(devices):
        if any(p.poll() not in (None, 0) for p in procs):
            break
    go.touch()
    codes = [p.wait(60) for p in procs]
    errors = [p.stderr.read() for p in procs if p.stderr]
    assert sorted(codes) == [0] + [4] * (len(devices) - 1), errors
    winner = devices[codes.index(0)]
    assert sorted(p.name for p in (root / layout.LEASES).iterdir()) == [f"{winner}.json"]
    assert lease_records.status(root, winner).state == "held"


# ---------------------------------------------------------------------------------------- CLI


@pytest.fixture
def connected(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    connect(monkeypatch, tmp_path, root)
    return root


def test_cli_status_acquire_release(connected: Path) -> None:
    result = cli(["lease", "status"])
    assert result.exit_code == 0
    assert result.stdout == "lock=none\n"
    assert "this computer can see" in result.stderr

    result = cli(["lease", "acquire", "--ttl", "30m", "--task", "parser", "--json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc) == {"version", "state", "device", "acquired", "expires", "task"}
    assert doc["state"] == "held" and doc["device"] == "laptop" and doc["task"] == "parser"

    result = cli(["lease", "status", "--json"])
    assert set(json.loads(result.stdout)) == {"version", "state", "device", "acquired", "expires", "task", "removed"}
    assert json.loads(result.stdout)["state"] == "held"
    assert cli(["lease", "status"]).stdout.startswith("lock=held device=laptop expires=")

    result = cli(["lease", "release", "--json"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert set(doc) == {"version", "state", "device", "acquired", "expires", "task", "released"}
    assert doc["released"] == ["laptop"] and doc["state"] == "none"


def test_cli_foreign_lease_exits_4(connected: Path) -> None:
    write_lease(connected, "desktop", dt.datetime.now(dt.timezone.utc) + HOUR)
    result = cli(["lease", "acquire"])
    assert result.exit_code == 4
    assert result.stderr.startswith("lifecycle: error: device desktop holds the writer lease")
    assert cli(["lease", "status"]).stdout.startswith("lock=foreign device=desktop")
    assert cli(["lease", "release"]).exit_code == 4
    result = cli(["lease", "release", "--force", "--yes"])
    assert result.exit_code == 0
    assert result.stdout.splitlines() == ["released device=desktop", "lock=none"]


def test_forcing_out_an_unexpired_lease_needs_a_yes_without_a_terminal(connected: Path) -> None:
    write_lease(connected, "desktop", dt.datetime.now(dt.timezone.utc) + HOUR, task="parser")
    result = cli(["lease", "release", "--force"])  # CliRunner's stdin is not a terminal
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "unexpired lease of desktop" in result.stderr and "--yes" in result.stderr
    assert (connected / lease.lease_rel("desktop")).exists()
    # An expired lease is no one's work in progress: --force alone removes it.
    write_lease(connected, "desktop", dt.datetime.now(dt.timezone.utc) - HOUR)
    assert cli(["lease", "release", "--force"]).exit_code == 0
    assert not (connected / lease.lease_rel("desktop")).exists()


def test_a_forced_release_is_journaled_and_told_to_the_device_it_removed(
    connected: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_lease(connected, "desktop", dt.datetime.now(dt.timezone.utc) + HOUR, task="parser")
    assert cli(["lease", "release", "--force", "--yes"]).exit_code == 0
    ops = [(line["op"], line["id"]) for line in journal_lines(connected)]
    assert ("lease.remove", "desktop") in ops
    # The laptop, which removed it, is not told anything about itself.
    assert json.loads(cli(["lease", "status", "--json"]).stdout)["removed"] is None
    # The desktop sees who removed its lease and when, in lease status and in doctor.
    (tmp_path / "desktop").mkdir()
    connect(monkeypatch, tmp_path / "desktop", connected, device="desktop")
    result = cli(["lease", "status"])
    assert result.stdout.splitlines()[0] == "lock=none"
    assert result.stdout.splitlines()[1].startswith(
        "removed: device laptop removed this device's writer lease (parser)"
    )
    doc = json.loads(cli(["lease", "status", "--json"]).stdout)
    assert set(doc) == {"version", "state", "device", "acquired", "expires", "task", "removed"}
    assert set(doc["removed"]) == {"by", "at", "task", "acquired", "expires"} and doc["removed"]["by"] == "laptop"
    report = json.loads(cli(["doctor", "--json"]).stdout)
    removed = [c for c in report["checks"] if c["id"] == "lease.removed"]
    assert removed and removed[0]["level"] == "warn" and "device laptop" in removed[0]["message"]
    # Taking a lease again makes the news old.
    assert cli(["lease", "acquire"]).exit_code == 0
    assert json.loads(cli(["lease", "status", "--json"]).stdout)["removed"] is None


def test_cli_bad_ttl_is_usage_error(connected: Path) -> None:
    result = cli(["lease", "acquire", "--ttl", "soon"])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "invalid duration" in result.stderr


def test_cli_not_connected_is_exit_3(tmp_path: Path) -> None:
    assert cli(["lease", "status"]).exit_code == 3
