"""The startup cache changes how fast a brief comes, never what it says.

Every vault state of the catalogue is rendered with the cache off (`CONTINUITY_NO_CACHE=1`) and from a
warm cache, both for the command line (`startup_cache.brief_for`) and for the hook's warm path
(`warm.serve`, the code the pinned script runs first), and the answers must agree byte for byte.
A damaged record is a miss; the record is private (0600 in a 0700 folder); any change to what the
brief depends on invalidates it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import signal
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from briefkit import (
    CASES,
    DEFAULT_HANDOFF,
    DEVICE,
    HANDOFF_DIR,
    MARK,
    OTHER_DEVICE,
    OTHER_DEVICE_MARK,
    PROJECT,
    SESSION,
    SOURCE_REL,
    SUBAGENT,
    Case,
    aws_lines,
    connection_file,
    handoff_note,
    hot_note,
    make_vault,
    printable_ascii,
    reasons,
    snapshot,
    write,
)

from continuity import limits, names
from continuity.brief import cache as startup_cache, envelope, record, sources
from continuity.brief.render import Brief
from continuity.hook import run
from continuity.hook.warm import parse_payload, serve
from continuity.local import connection, userdirs

HOOK_CODE = "test-pinned-code-digest"


def conn_for(vault: Path, tmp_path: Path, *, device: str = DEVICE, project: str = PROJECT) -> connection.Connection:
    file = connection_file(tmp_path / f"conn-{device}-{project}", vault, device=device, project=project)
    return connection.load_connection(file, "env", None)


def brief_json(brief: Brief) -> str:
    return json.dumps(brief.to_json(), ensure_ascii=False, sort_keys=True)


def records() -> list[Path]:
    folder = Path(userdirs.cache_dir()) / "startup"
    return sorted(folder.glob("*.rec")) if folder.is_dir() else []


class Refuse:
    """Stands in for the cold path to prove that a call was answered from the cache."""

    def __call__(self, *args: object, **kwargs: object) -> object:
        raise AssertionError("the cold path ran although the cache should have answered")


def uncached(
    vault: Path, conn: connection.Connection, event: str, harness: str, monkeypatch: pytest.MonkeyPatch
) -> Brief:
    with monkeypatch.context() as patch:
        patch.setenv("CONTINUITY_NO_CACHE", "1")
        return startup_cache.brief_for(vault, conn, event, harness)


def warm(vault: Path, conn: connection.Connection, event: str, harness: str, monkeypatch: pytest.MonkeyPatch) -> Brief:
    with monkeypatch.context() as patch:
        patch.setattr(startup_cache, "cold", Refuse())
        return startup_cache.brief_for(vault, conn, event, harness)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault")


@pytest.fixture
def conn(vault: Path, tmp_path: Path) -> connection.Connection:
    return conn_for(vault, tmp_path)


class Hook:
    """The hook as the pinned script runs it: the cold path under the pinned code digest, and the warm path."""

    def __init__(self, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.cwd = cwd
        self.monkeypatch = monkeypatch

    def data(self, event: str = SESSION, source: str = "startup") -> bytes:
        doc = {
            "session_id": "s-1",
            "transcript_path": None,
            "cwd": str(self.cwd),
            "hook_event_name": event,
            "model": "m",
            "permission_mode": "default",
        }
        if event == SESSION:
            doc["source"] = source
        return json.dumps(doc).encode()

    def cold(self, event: str = SESSION, harness: str = "codex", *, no_cache: bool = False) -> str:
        with self.monkeypatch.context() as patch:
            if no_cache:
                patch.setenv("CONTINUITY_NO_CACHE", "1")
            payload = parse_payload(self.data(event))
            assert payload is not None
            return run.run_hook(harness, payload, HOOK_CODE)

    def serve(
        self, event: str = SESSION, harness: str = "codex", source: str = "startup", code: str = HOOK_CODE
    ) -> bytes | None:
        payload = parse_payload(self.data(event, source))
        assert payload is not None
        return serve(payload, harness, code)


@pytest.fixture
def hooks(conn: connection.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Hook:
    """The connection named by the environment, as the hook sees it in these tests."""
    monkeypatch.setenv("AGENT_VAULT_CONNECTION", str(conn.file))
    return Hook(tmp_path, monkeypatch)


# ----------------------------------------------------------------------------------- byte for byte


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_case_command_line_warm_equals_uncached(
    vault: Path, conn: connection.Connection, case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    case.mutate(vault)
    for event in names.START_EVENTS:
        for harness in names.HARNESSES:
            expected = uncached(vault, conn, event, harness, monkeypatch)
            first = startup_cache.brief_for(vault, conn, event, harness)  # a miss: computes and stores
            hit = warm(vault, conn, event, harness, monkeypatch)
            assert first.text.encode() == expected.text.encode() == hit.text.encode()
            assert brief_json(first) == brief_json(expected) == brief_json(hit)
            assert [(s.name, s.reason, s.notice) for s in hit.sources] == [
                (s.name, s.reason, s.notice) for s in expected.sources
            ]
    assert len(records()) == len(names.START_EVENTS) * len(names.HARNESSES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_case_hook_warm_path_equals_uncached(
    vault: Path, case: Case, hooks: Hook, monkeypatch: pytest.MonkeyPatch
) -> None:
    case.mutate(vault)
    for event in names.START_EVENTS:
        for harness in names.HARNESSES:
            assert hooks.serve(event, harness) is None  # nothing recorded yet
            expected = hooks.cold(event, harness, no_cache=True)
            assert hooks.serve(event, harness) is None  # the cache off leaves no record
            cold = hooks.cold(event, harness)
            served = hooks.serve(event, harness)
            assert served is not None
            assert served == cold.encode() == expected.encode()
            assert list(json.loads(served)) == ["hookSpecificOutput"]
            # another code digest (a re-pinned hook) never takes this record
            assert hooks.serve(event, harness, code=HOOK_CODE + "-other") is None


def test_compaction_start_is_never_served_from_the_cache(vault: Path, hooks: Hook) -> None:
    hooks.cold()
    assert hooks.serve() is not None
    assert hooks.serve(source="compact") is None


def test_no_cache_setting_writes_nothing(
    vault: Path, conn: connection.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTINUITY_NO_CACHE", "1")
    for event in names.START_EVENTS:
        startup_cache.brief_for(vault, conn, event, "codex")
    assert records() == []


def test_no_cache_setting_also_bypasses_the_hooks_warm_path(
    vault: Path, hooks: Hook, monkeypatch: pytest.MonkeyPatch
) -> None:
    hooks.cold()
    monkeypatch.setenv("CONTINUITY_NO_CACHE", "1")
    assert hooks.serve() is None


def test_cache_lives_outside_the_vault_and_never_writes_it(
    vault: Path, conn: connection.Connection, hooks: Hook
) -> None:
    before = snapshot(vault)
    for _ in range(2):
        for event in names.START_EVENTS:
            startup_cache.brief_for(vault, conn, event, "codex")
            hooks.cold(event)
            hooks.serve(event)
    assert snapshot(vault) == before
    assert records() and all(vault not in path.parents for path in records())
    assert all(Path(os.environ["XDG_CACHE_HOME"]) in p.parents for p in records())


def test_cache_record_is_private(vault: Path, conn: connection.Connection, hooks: Hook) -> None:
    startup_cache.brief_for(vault, conn, SESSION, "codex")
    hooks.cold()
    assert len(records()) == 2  # the command line and the pinned hook keep separate records
    for file in records():
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
        assert stat.S_IMODE(file.parent.stat().st_mode) == 0o700
    write(vault, SOURCE_REL["soul"], hot_note("soul", "- changed"))
    startup_cache.brief_for(vault, conn, SESSION, "codex")
    for file in records():
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert [p.name for p in records()[0].parent.iterdir() if p.name.endswith(".tmp")] == []


def test_cache_record_holds_no_secret(vault: Path, conn: connection.Connection) -> None:
    write(vault, SOURCE_REL["soul"], hot_note("soul", aws_lines()))
    write(vault, "00-system/INDEX.md", aws_lines())
    startup_cache.brief_for(vault, conn, SESSION, "codex")
    data = b"".join(p.read_bytes() for p in records())
    for line in aws_lines().split("\n"):
        assert line.split(" = ")[1].encode() not in data


# ---------------------------------------------------------------------------------------- corruption


def _flip_in_text(data: bytes) -> bytes:
    """One letter of the stored brief changed: every length and every structure still intact."""
    marker = MARK["soul"].encode()
    assert marker in data
    return data.replace(marker, marker[:-1] + b"X")


def _truncate(data: bytes, eighths: int) -> bytes:
    return data[: len(data) * eighths // 8]


def _blob_length(data: bytes) -> bytes:
    return data.replace(b'"output", ', b'"output", 7', 1)


CORRUPTIONS: dict[str, Callable[[bytes], bytes]] = {
    "empty": lambda data: b"",
    "garbage": lambda data: b"\x00\xff garbage \xfe" * 10,
    "magic-only": lambda data: data[: data.index(b"\n") + 1],
    "other-magic": lambda data: b"continuity-startup-cache 0" + data[data.index(b"\n") :],
    "no-head-end": lambda data: data.replace(b"\n", b" ", 2),
    "wrong-code": lambda data: data.replace(b'"code": "', b'"code": "0', 1),
    "wrong-token": lambda data: data.replace(b'"file", ', b'"file", 1', 1),
    "blob-length": _blob_length,
    "bad-blob-list": lambda data: data.replace(b'"blobs": [', b'"blobs": [1, ', 1),
    "brief-not-json": lambda data: data.replace(b'{"event"', b'["event"', 1),
    "oversized": lambda data: data + b"x" * (limits.STARTUP_CACHE_RECORD_CAP_BYTES + 1),
    **{f"truncated-{n}": functools.partial(_truncate, eighths=n) for n in range(1, 8)},
    "truncated-by-one": lambda data: data[:-1],
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_a_corrupt_record_is_a_miss(
    vault: Path,
    conn: connection.Connection,
    hooks: Hook,
    name: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected = uncached(vault, conn, SESSION, "codex", monkeypatch)
    expected_hook = hooks.cold()
    startup_cache.brief_for(vault, conn, SESSION, "codex")
    assert len(records()) == 2
    for file in records():
        file.write_bytes(CORRUPTIONS[name](file.read_bytes()))
    assert hooks.serve() in (None, expected_hook.encode())  # a miss, or the intact output
    again = startup_cache.brief_for(vault, conn, SESSION, "codex")
    assert again.text == expected.text and brief_json(again) == brief_json(expected)
    assert hooks.cold() == expected_hook
    # the damaged records were replaced by good ones, which now answer
    assert warm(vault, conn, SESSION, "codex", monkeypatch).text == expected.text
    assert hooks.serve() == expected_hook.encode()


def test_a_changed_byte_inside_the_stored_brief_is_a_miss_for_the_command_line(
    vault: Path, conn: connection.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = uncached(vault, conn, SESSION, "codex", monkeypatch)
    startup_cache.brief_for(vault, conn, SESSION, "codex")
    [file] = records()
    file.write_bytes(_flip_in_text(file.read_bytes()))
    assert startup_cache.brief_for(vault, conn, SESSION, "codex").text == expected.text


def test_a_changed_byte_inside_the_stored_hook_output_is_a_miss(vault: Path, hooks: Hook) -> None:
    expected = hooks.cold()
    [file] = records()
    file.write_bytes(_flip_in_text(file.read_bytes()))
    assert hooks.serve() in (None, expected.encode())


class Alarm(Exception):
    pass


@pytest.fixture
def alarm() -> Iterator[None]:
    """Turn a blocking open into a failure after a few seconds instead of a hung test run."""

    def ring(signum: int, frame: object) -> None:
        raise Alarm("blocked")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(2)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_record_that_is_a_folder_or_a_link_is_a_miss(
    vault: Path, conn: connection.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = uncached(vault, conn, SESSION, "codex", monkeypatch)
    startup_cache.brief_for(vault, conn, SESSION, "codex")
    [file] = records()
    good = tmp_path / "good.rec"
    file.rename(good)
    file.mkdir()
    assert startup_cache.brief_for(vault, conn, SESSION, "codex").text == expected.text
    file.rmdir()
    file.symlink_to(good)  # a link is never followed, even to a valid record
    with monkeypatch.context() as patch:
        patch.setattr(startup_cache, "cold", Refuse())
        with pytest.raises(AssertionError, match="cold path ran"):
            startup_cache.brief_for(vault, conn, SESSION, "codex")


def test_a_record_that_is_a_fifo_does_not_block(
    vault: Path, conn: connection.Connection, alarm: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = uncached(vault, conn, SESSION, "codex", monkeypatch)
    startup_cache.brief_for(vault, conn, SESSION, "codex")
    [file] = records()
    file.unlink()
    os.mkfifo(file)
    assert startup_cache.brief_for(vault, conn, SESSION, "codex").text == expected.text


def test_unwritable_cache_folder_still_renders(
    vault: Path, conn: connection.Connection, tmp_path: Path, hooks: Hook, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = uncached(vault, conn, SESSION, "codex", monkeypatch)
    expected_hook = hooks.cold()
    for file in records():
        file.unlink()
    blocker = tmp_path / "cache-is-a-file"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    for _ in range(2):
        assert startup_cache.brief_for(vault, conn, SESSION, "codex").text == expected.text
        assert hooks.cold() == expected_hook
        assert hooks.serve() is None


# -------------------------------------------------------------------------------------- invalidation


def same_size_same_mtime(path: Path, old: str, new: str) -> None:
    info = path.stat()
    data = path.read_text()
    assert old in data and len(old) == len(new)
    path.write_text(data.replace(old, new))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert path.stat().st_size == info.st_size and path.stat().st_mtime_ns == info.st_mtime_ns


@pytest.mark.parametrize("rel", [*SOURCE_REL.values(), DEFAULT_HANDOFF])
def test_a_changed_source_invalidates_even_with_same_size_and_mtime(
    vault: Path,
    conn: connection.Connection,
    hooks: Hook,
    rel: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = next((n for n, r in SOURCE_REL.items() if r == rel), "handoff")
    startup_cache.brief_for(vault, conn, SESSION, "codex")
    hooks.cold()
    assert MARK[name] in warm(vault, conn, SESSION, "codex", monkeypatch).text
    same_size_same_mtime(vault / rel, MARK[name], MARK[name].upper())
    assert hooks.serve() is None
    after = startup_cache.brief_for(vault, conn, SESSION, "codex")
    assert MARK[name].upper() in after.text and MARK[name] not in after.text
    assert after.text == uncached(vault, conn, SESSION, "codex", monkeypatch).text


def _link_soul(v: Path) -> None:
    (v / "00-system/real.md").write_bytes((v / SOURCE_REL["soul"]).read_bytes())
    (v / SOURCE_REL["soul"]).unlink()
    (v / SOURCE_REL["soul"]).symlink_to(v / "00-system/real.md")


def _fifo_device(v: Path) -> None:
    (v / SOURCE_REL["device"]).unlink()
    os.mkfifo(v / SOURCE_REL["device"])


CHANGES: dict[str, tuple[Callable[[Path], object], Callable[[Brief], bool]]] = {
    "new-secret": (
        lambda v: write(v, SOURCE_REL["soul"], hot_note("soul", aws_lines())),
        lambda b: reasons(b)["soul"] == "secret",
    ),
    "policy-secret": (
        lambda v: write(v, "00-system/INDEX.md", aws_lines()),
        lambda b: any("INDEX.md" in n for n in b.notices),
    ),
    "newer-handoff": (
        lambda v: write(v, f"{HANDOFF_DIR}/z.md", handoff_note("2030-01-01T00:00:00Z", hid="h-z")),
        lambda b: "h-z" in b.text,
    ),
    "handoff-superseded": (
        lambda v: write(v, DEFAULT_HANDOFF, handoff_note(status="superseded")),
        lambda b: reasons(b)["handoff"] == "missing",
    ),
    "handoff-removed": (lambda v: (v / DEFAULT_HANDOFF).unlink(), lambda b: reasons(b)["handoff"] == "missing"),
    "soul-removed": (lambda v: (v / SOURCE_REL["soul"]).unlink(), lambda b: reasons(b)["soul"] == "missing"),
    "soul-linked": (_link_soul, lambda b: reasons(b)["soul"] == "link"),
    "soul-grown": (
        lambda v: write(v, SOURCE_REL["soul"], hot_note("soul", notes=printable_ascii(limits.SOUL_CAP_BYTES))),
        lambda b: reasons(b)["soul"] == "too_large",
    ),
    "device-fifo": (_fifo_device, lambda b: reasons(b)["device"] == "invalid"),
    "project-folder-linked": (
        lambda v: (
            (v / "10-project" / PROJECT).rename(v / "moved"),
            (v / "10-project" / PROJECT).symlink_to(v / "moved"),
        ),
        lambda b: reasons(b)["project"] == "link",
    ),
}


@pytest.mark.parametrize("label", sorted(CHANGES))
def test_changes_invalidate(
    vault: Path, conn: connection.Connection, hooks: Hook, label: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    change, check = CHANGES[label]
    startup_cache.brief_for(vault, conn, SESSION, "codex")
    hooks.cold()
    assert not check(warm(vault, conn, SESSION, "codex", monkeypatch))
    change(vault)
    assert hooks.serve() is None
    after = startup_cache.brief_for(vault, conn, SESSION, "codex")
    assert check(after), label
    fresh = uncached(vault, conn, SESSION, "codex", monkeypatch)
    assert after.text == fresh.text and brief_json(after) == brief_json(fresh)
    assert hooks.cold() == envelope.hook_output(SESSION, fresh.text)


def test_after_one_change_only_that_source_is_validated_again(
    vault: Path, conn: connection.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record's memo answers for every source whose bytes are unchanged; the brief is the same."""
    startup_cache.brief_for(vault, conn, SESSION, "codex")
    validated: list[str] = []
    real_hot, real_handoff = sources._validate_hot, sources._validate_handoff
    monkeypatch.setattr(sources, "_validate_hot", lambda raw, *a: validated.append(raw.name) or real_hot(raw, *a))
    monkeypatch.setattr(sources, "_validate_handoff", lambda g: validated.append("handoff") or real_handoff(g))
    monkeypatch.setattr(sources, "policy_notices", Refuse())
    write(vault, SOURCE_REL["preferences"], hot_note("preferences", "- edited preference"))
    after = startup_cache.brief_for(vault, conn, SESSION, "codex")
    assert validated == ["preferences"] and "edited preference" in after.text
    monkeypatch.undo()
    assert brief_json(after) == brief_json(uncached(vault, conn, SESSION, "codex", monkeypatch))


def test_a_damaged_memo_is_validated_afresh(
    vault: Path, conn: connection.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = uncached(vault, conn, SESSION, "codex", monkeypatch)
    startup_cache.brief_for(vault, conn, SESSION, "codex")
    [file] = records()
    head, blobs = record.read_record(str(file)) or ({}, {})
    memo = json.loads(blobs["memo"])
    for key in memo:
        memo[key] = {"name": "soul", "unexpected": True} if isinstance(memo[key], dict) else "not a list"
    blobs["memo"] = json.dumps(memo).encode()
    head["memo_sha256"] = hashlib.sha256(blobs["memo"]).hexdigest()
    head.pop("blobs")
    file.write_bytes(startup_cache.encode_record(head, blobs))
    write(vault, SOURCE_REL["soul"], (vault / SOURCE_REL["soul"]).read_text() + "\n")  # a miss, with that memo
    assert brief_json(startup_cache.brief_for(vault, conn, SESSION, "codex")) == brief_json(
        uncached(vault, conn, SESSION, "codex", monkeypatch)
    )
    assert expected.status == "restored"


def test_keyed_by_event_harness_vault_and_connection(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        vault,
        SOURCE_REL["soul"],
        hot_note("soul", f"- {MARK['soul']}\n" + printable_ascii(limits.CLAUDE_CONTEXT_LIMIT_CHARS + 100)),
    )
    conn = conn_for(vault, tmp_path)
    codex = startup_cache.brief_for(vault, conn, SESSION, "codex")
    claude = startup_cache.brief_for(vault, conn, SESSION, "claude")
    assert codex.status == "restored" and claude.status == "partial"
    sub = startup_cache.brief_for(vault, conn, SUBAGENT, "codex")
    assert MARK["soul"] not in sub.text
    # another device of the same vault, and another vault with the same ids, never share an answer
    other_device = startup_cache.brief_for(vault, conn_for(vault, tmp_path, device=OTHER_DEVICE), SESSION, "codex")
    assert OTHER_DEVICE_MARK in other_device.text and MARK["device"] not in other_device.text
    other_vault = make_vault(tmp_path / "other-vault")
    write(other_vault, SOURCE_REL["soul"], hot_note("soul", "- elsewhere"))
    assert "elsewhere" in startup_cache.brief_for(other_vault, conn_for(other_vault, tmp_path), SESSION, "codex").text
    for brief, event, harness in ((codex, SESSION, "codex"), (claude, SESSION, "claude"), (sub, SUBAGENT, "codex")):
        assert brief.text == warm(vault, conn, event, harness, monkeypatch).text
        assert brief.text == uncached(vault, conn, event, harness, monkeypatch).text


def test_changed_code_invalidates(vault: Path, conn: connection.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    startup_cache.brief_for(vault, conn, SESSION, "codex")
    warm(vault, conn, SESSION, "codex", monkeypatch)
    monkeypatch.setattr(startup_cache, "_code_digest", "0" * 64)
    with monkeypatch.context() as patch:
        patch.setattr(startup_cache, "cold", Refuse())
        with pytest.raises(AssertionError, match="cold path ran"):
            startup_cache.brief_for(vault, conn, SESSION, "codex")


def test_code_digest_covers_the_package() -> None:
    digest = startup_cache.code_digest()
    assert len(digest) == 64 and digest == startup_cache.code_digest()
