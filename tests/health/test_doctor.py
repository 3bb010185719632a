"""`lifecycle doctor` and its bounded scan: every check, the exit codes, the JSON contract, the bounds.

Vaults are real folders built in tmp_path (see briefkit); the CLI runs in process through typer's
CliRunner with AGENT_VAULT_CONNECTION pointing at a connection file in tmp_path.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from briefkit import (
    DEFAULT_HANDOFF,
    DEVICE,
    HANDOFF_DIR,
    PROJECT,
    SOURCE_REL,
    connect,
    connection_file,
    frontmatter,
    handoff_note,
    hot_note,
    make_vault,
    snapshot,
    write,
)
from conftest import use_connection
from hypothesis import given, strategies as st
from typer.testing import CliRunner
from writer_support import write_lease

from continuity import limits, tunables
from continuity.health import doctor, report as doctor_report
from continuity.local import connection
from continuity.vault import scan
from continuity.vault.budget import Thresholds
from continuity.vault.conflicts import ENGINES, conflict_engine

ROOT = Path(__file__).resolve().parents[2]
# An AWS access key id that belongs to nobody, assembled here so that no file of the repository holds it.
SECRET = "AKIA" + "Q7XK3LP9" + "ZQ8WM2RT"
NOW = dt.datetime(2026, 3, 1, 12, 0, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_vault(tmp_path / "vault")
    file = connection_file(tmp_path / "connection.yaml", root)
    monkeypatch.setenv(connection.ENV_CONNECTION, str(file))
    monkeypatch.chdir(tmp_path)
    return root


def run(strict: bool = False, *extra: str) -> tuple[int, dict[str, object], str]:
    """`lifecycle doctor --json`: exit code, document, stderr."""
    from continuity.cli import app

    args = ["doctor", "--json", *(["--strict"] if strict else []), *extra]
    result = CliRunner().invoke(app, args, prog_name="lifecycle")
    return result.exit_code, json.loads(result.stdout), result.stderr


def checks(document: dict[str, object]) -> dict[str, tuple[str, str]]:
    items = document["checks"]
    assert isinstance(items, list)
    return {item["id"]: (item["level"], item["message"]) for item in items}


def level_of(document: dict[str, object], ident: str) -> str:
    return checks(document)[ident][0]


def report(root: Path) -> doctor_report.Report:
    return doctor.run(Path.cwd(), now=NOW)


# ------------------------------------------------------------------------------------- contract


def test_clean_vault_is_ok_and_json_keys_are_pinned(vault: Path) -> None:
    code, doc, _ = run()
    assert code == 0, [c for c in doc["checks"] if c["level"] == "error"]
    assert list(doc) == ["version", "ok", "checks", "scan", "resolved"]
    assert doc["version"] == 1 and doc["ok"] is True
    assert set(doc["scan"]) == {"entries", "dirs", "complete"}  # type: ignore[arg-type]
    assert doc["scan"]["complete"] is True  # type: ignore[index]
    for item in doc["checks"]:  # type: ignore[attr-defined]
        assert list(item) == ["id", "level", "message"]
        assert item["level"] in doctor_report.LEVELS
    found = checks(doc)
    assert {level for level, _ in found.values()} == {"ok"}, found
    expected = {
        "connection",
        "vault",
        "source.soul",
        "source.preferences",
        "source.project",
        "source.device",
        "source.handoff",
        "policy.index",
        "policy.memory_policy",
        "brief.SessionStart",
        "brief.SubagentStart",
        "handoffs",
        "lease",
        "scan.conflicts",
        "scan.temporary",
        "scan.links",
        "scan.budget",
        "scan.complete",
        "hook.pin",
        "hook.delivery",
        "hooks.scopes.codex",
        "hooks.scopes.claude",
        "project.identity",
        "mcp.codex",
        "mcp.claude",
        "notes",
        "review",
    }
    assert set(found) == expected
    assert "via AGENT_VAULT_CONNECTION" in found["connection"][1]
    resolved = doc["resolved"]
    assert isinstance(resolved, dict)
    assert list(resolved) == [
        "cwd",
        "repo",
        "connection",
        "found_via",
        "vault",
        "device",
        "project",
        "python",
        "startup_cache",
        "environment",
    ]
    assert resolved["vault"] == str(vault) and resolved["found_via"] == "env"
    assert resolved["device"] == DEVICE and resolved["project"] == PROJECT
    assert set(resolved["environment"]) == set(doctor.ENV_READ)
    assert resolved["environment"][connection.ENV_CONNECTION] == resolved["connection"]
    assert run(strict=True)[0] == 0


def test_human_table(vault: Path) -> None:
    from continuity.cli import app

    result = CliRunner().invoke(app, ["doctor"], prog_name="lifecycle")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["LEVEL", "CHECK", "MESSAGE"]
    column = lines[0].index("MESSAGE")
    soul = next(line for line in lines if " source.soul " in line)
    assert soul.startswith("ok") and soul[column:].startswith("00-system/SOUL.md")
    assert "doctor: 0 error(s), 0 warning(s)" in result.stdout
    assert "environment: AGENT_VAULT_CONNECTION=" in result.stdout


def test_not_connected_exits_3_with_the_checks_that_explain_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, doc, stderr = run()
    assert code == 3
    assert doc["ok"] is False
    assert checks(doc)["connection"][0] == "error"
    assert stderr.startswith("lifecycle: error: ") and len(stderr.splitlines()) == 1
    assert doc["scan"] == {"entries": 0, "dirs": 0, "complete": False}
    from continuity.cli import app

    human = CliRunner().invoke(app, ["doctor"], prog_name="lifecycle")
    assert human.exit_code == 3
    assert "connection" in human.stdout


def test_connection_found_in_the_checkout(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_vault(tmp_path / "vault")
    connect(repo, root)
    use_connection(monkeypatch, repo)
    code, doc, _ = run()
    assert code == 0
    assert "found in this checkout" in checks(doc)["connection"][1]
    resolved = doc["resolved"]
    assert isinstance(resolved, dict)
    assert resolved["found_via"] == "checkout" and resolved["repo"] == str(repo)
    assert resolved["environment"][connection.ENV_CONNECTION] is None


def test_unreachable_vault_exits_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = connection_file(tmp_path / "connection.yaml", tmp_path / "not-mounted")
    monkeypatch.setenv(connection.ENV_CONNECTION, str(file))
    monkeypatch.chdir(tmp_path)
    code, doc, _ = run()
    assert code == 3
    found = checks(doc)
    assert found["connection"][0] == "ok" and found["vault"][0] == "error"
    assert "not reachable" in found["vault"][1]


# ---------------------------------------------------------------------------------- hot sources


def test_missing_sources(vault: Path) -> None:
    (vault / SOURCE_REL["soul"]).unlink()
    (vault / DEFAULT_HANDOFF).unlink()
    code, doc, _ = run()
    assert code == 1 and doc["ok"] is False
    level, message = checks(doc)["source.soul"]
    assert level == "error" and "missing" in message
    assert checks(doc)["source.handoff"][0] == "ok"  # no handoff is fine


def test_device_profile_missing_says_run_init(vault: Path) -> None:
    (vault / SOURCE_REL["device"]).unlink()
    code, doc, _ = run()
    assert code == 1
    level, message = checks(doc)["source.device"]
    assert level == "error" and "lifecycle init" in message


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("soul", "no frontmatter at all\n", "frontmatter"),
        ("project", hot_note("project", "x" * (limits.PROJECT_CAP_BYTES + 10)), "cap"),
        ("device", hot_note("device", meta={"device": "someone-else"}), "expected"),
        ("preferences", hot_note("preferences", f"- key {SECRET}"), "aws"),
    ],
)
def test_a_left_out_hot_source_is_an_error(vault: Path, name: str, content: str, reason: str) -> None:
    write(vault, SOURCE_REL[name], content)
    code, doc, _ = run()
    assert code == 1
    level, message = checks(doc)[f"source.{name}"]
    assert level == "error"
    assert reason in message.lower()
    assert SECRET not in json.dumps(doc)


def test_a_hot_source_behind_a_link_is_an_error_and_the_link_is_reported(vault: Path, tmp_path: Path) -> None:
    outside = write(tmp_path, "elsewhere/SOUL.md", hot_note("soul"))
    (vault / SOURCE_REL["soul"]).unlink()
    (vault / SOURCE_REL["soul"]).symlink_to(outside)
    code, doc, _ = run()
    assert code == 1
    found = checks(doc)
    assert found["source.soul"][0] == "error" and "link" in found["source.soul"][1]
    assert found["scan.links"][0] == "warn" and SOURCE_REL["soul"] in found["scan.links"][1]


# -------------------------------------------------------------------------------- policy files


def test_secret_in_memory_policy_fails_without_printing_it(vault: Path) -> None:
    text = frontmatter({"id": "memory-policy", "type": "policy"}) + "# Policy\n\nbackup key:\n" + SECRET + "\n"
    write(vault, "00-system/MEMORY_POLICY.md", text)
    from continuity.cli import app

    for args in (["doctor"], ["doctor", "--json"], ["doctor", "--strict"]):
        result = CliRunner().invoke(app, args, prog_name="lifecycle")
        assert result.exit_code == 1
        assert SECRET not in result.stdout and SECRET not in result.stderr
        assert SECRET[4:] not in result.stdout
    code, doc, _ = run()
    assert code == 1
    level, message = checks(doc)["policy.memory_policy"]
    assert level == "error"
    assert "line 8" in message and "aws-access-key-id" in message


def test_index_over_its_cap_is_an_error_and_missing_is_a_warning(vault: Path) -> None:
    (vault / "00-system/MEMORY_POLICY.md").unlink()
    write(vault, "00-system/INDEX.md", "x" * (limits.LIFECYCLE_TEXT_CAP_BYTES + 1))
    code, doc, _ = run()
    assert code == 1
    assert checks(doc)["policy.index"][0] == "error"
    assert checks(doc)["policy.memory_policy"][0] == "warn"


def test_policy_frontmatter_is_checked(vault: Path) -> None:
    write(vault, "00-system/INDEX.md", "---\nid: a\nid: b\n---\n# Index\n")
    code, doc, _ = run()
    assert code == 0
    level, message = checks(doc)["policy.index"]
    assert level == "warn" and "duplicate" in message


# -------------------------------------------------------------------------------------- briefs


def test_token_target_is_a_warning(vault: Path) -> None:
    write(vault, SOURCE_REL["soul"], hot_note("soul", "- " + "remember this well. " * 360))
    code, doc, _ = run()
    assert code == 0
    level, message = checks(doc)["brief.SessionStart"]
    assert level == "warn" and "target" in message, message
    assert checks(doc)["brief.SubagentStart"][0] == "ok"
    assert run(strict=True)[0] == 1


def test_a_source_cut_by_the_ceiling_is_an_error(vault: Path) -> None:
    write(vault, SOURCE_REL["device"], hot_note("device", "- " + "device detail. " * 700))
    code, doc, _ = run()
    assert code == 1
    level, message = checks(doc)["brief.SubagentStart"]
    assert level == "error" and "device (codex)" in message


# ------------------------------------------------------------------------------------ handoffs


def test_several_current_handoffs_warn_and_name_them(vault: Path) -> None:
    second = f"{HANDOFF_DIR}/20250103T000000Z-{DEVICE}-later.md"
    write(vault, second, handoff_note("2025-01-03T00:00:00Z", hid="later"))
    broken = f"{HANDOFF_DIR}/20250104T000000Z-{DEVICE}-broken.md"
    write(vault, broken, "---\ntype: handoff\n---\nnothing\n")
    code, doc, _ = run()
    assert code == 0
    level, message = checks(doc)["handoffs"]
    assert level == "warn" and DEFAULT_HANDOFF in message and second in message
    level, message = checks(doc)["handoffs.invalid"]
    assert level == "warn" and broken in message
    assert run(strict=True)[0] == 1


# --------------------------------------------------------------------------------------- lease


@pytest.mark.parametrize(
    ("owner", "hours", "level", "state"),
    [("dev-b", 2, "warn", "foreign"), ("dev-b", -2, "warn", "stale"), (DEVICE, 2, "ok", "held")],
)
def test_lease_state(vault: Path, owner: str, hours: int, level: str, state: str) -> None:
    write_lease(vault, owner, dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=hours))
    code, doc, _ = run()
    assert code == 0
    found = checks(doc)["lease"]
    assert found[0] == level and f"lock={state}" in found[1]


def test_malformed_lease_file_is_a_warning(vault: Path) -> None:
    write(vault, ".continuity/leases/dev-b.json", "{not json")
    code, doc, _ = run()
    assert code == 0
    assert checks(doc)["lease"][0] == "ok"
    level, message = checks(doc)["lease.invalid"]
    assert level == "warn" and ".continuity/leases/dev-b.json" in message


def test_many_unusable_lease_files_are_counted_past_the_named_ones(vault: Path) -> None:
    extra = 3
    for n in range(doctor_report.MAX_NAMED + extra):
        write(vault, f".continuity/leases/dev-{n:02d}.json", "{not json")
    found = {c.id: c for c in report(vault).checks}["lease.invalid"]
    assert found.level == "warn"
    assert found.message.startswith(f"{doctor_report.MAX_NAMED + extra} unusable lease file(s): ")
    assert found.message.endswith(f"; and {extra} more")
    assert found.message.count(".continuity/leases/") == doctor_report.MAX_NAMED


# ----------------------------------------------------------------------------------------- scan


CONFLICTS = {
    "30-memory/facts/tea (1).md": "google-drive",
    "30-memory/facts/tea (conflicted copy 2025-01-02).md": "dropbox",
    "30-memory/facts/tea (Ann's conflicted copy 2025-01-02).md": "dropbox",
    "30-memory/facts/tea.sync-conflict-20250102-030405-ABCDEFG.md": "syncthing",
    "30-memory/facts/tea-DESKTOP-7Q2K.md": "onedrive",
    "30-memory/facts/tea 2.md": "icloud",
    f"50-devices/{DEVICE}/journal.sync-conflict-20250102-030405-ABCDEFG.jsonl": "syncthing",
}


def test_conflict_copies_temporary_files_and_links_are_warnings(vault: Path, tmp_path: Path) -> None:
    write(vault, "30-memory/facts/tea.md", frontmatter({"id": "tea", "type": "fact"}) + "Green.\n")
    for rel in CONFLICTS:
        write(vault, rel, "copy\n")
    # Ordinary names that only look alike: no original beside them, or a lower-case suffix.
    write(vault, "30-memory/facts/coffee 2.md", "x\n")
    write(vault, "30-memory/facts/coffee-LAPTOP.md", "x\n")
    write(vault, "30-memory/facts/tea-notes.md", "x\n")
    write(vault, f"{HANDOFF_DIR}/.20250102T030405Z-{DEVICE}-start.md.0123456789ab.tmp", "half")
    outside = tmp_path / "outside"
    write(outside, "secret-plans (1).md", "not ours\n")
    (vault / "30-memory/linked").symlink_to(outside)
    code, doc, _ = run()
    assert code == 0
    found = checks(doc)
    level, message = found["scan.conflicts"]
    assert level == "warn"
    for rel, engine in CONFLICTS.items():
        assert f"{rel} ({engine})" in message
    assert "coffee" not in message and "tea-notes" not in message
    assert "secret-plans" not in json.dumps(doc)  # the link was never followed
    assert found["scan.temporary"][0] == "warn" and ".0123456789ab.tmp" in found["scan.temporary"][1]
    assert found["scan.links"][0] == "warn" and "30-memory/linked" in found["scan.links"][1]
    assert run(strict=True)[0] == 1


def test_vault_names_cannot_drive_the_terminal(vault: Path) -> None:
    write(vault, "30-memory/facts/bad\x1b[31mname (1).md", "x\n")
    from continuity.cli import app

    for args in (["doctor"], ["doctor", "--json"]):
        result = CliRunner().invoke(app, args, prog_name="lifecycle")
        assert "\x1b" not in result.stdout
        assert "bad\\u001b[31mname (1).md" in result.stdout.replace("\\\\", "\\")


def test_doctor_writes_nothing(vault: Path) -> None:
    write(vault, "30-memory/facts/tea (1).md", "copy\n")
    write(vault, "00-system/MEMORY_POLICY.md", "# Policy\n" + SECRET + "\n")
    before = snapshot(vault)
    run()
    run(strict=True)
    from continuity.cli import app

    CliRunner().invoke(app, ["doctor"], prog_name="lifecycle")
    assert snapshot(vault) == before


def test_a_3000_file_vault_stops_the_scan_within_its_bounds(vault: Path) -> None:
    for n in range(30):
        folder = vault / "30-memory/facts" / f"topic-{n:02d}"
        folder.mkdir()
        for m in range(100):
            (folder / f"note-{m:03d}.md").write_text("fact\n")
    code, doc, _ = run()
    assert code == 0  # review is a warning, never a failure
    assert doc["scan"]["complete"] is False  # type: ignore[index]
    assert doc["scan"]["entries"] <= limits.DOCTOR_SCAN_MAX_ENTRIES  # type: ignore[index]
    assert doc["scan"]["dirs"] <= limits.DOCTOR_SCAN_MAX_DIRS  # type: ignore[index]
    found = checks(doc)
    assert found["scan.complete"][0] == "warn" and "review was certain" in found["scan.complete"][1]
    assert found["scan.budget"][0] == "warn" and "at least" in found["scan.budget"][1]
    assert "note-" not in found["scan.budget"][1]
    assert run(strict=True)[0] == 1


def test_the_scan_bounds_hold_without_the_review_stop(tmp_path: Path) -> None:
    root = tmp_path / "v"
    generous = Thresholds(working_set_files=10**9, working_set_bytes=10**12)
    for n in range(600):
        (root / "30-memory" / f"d{n:03d}").mkdir(parents=True)
    result = scan.scan(root, PROJECT, DEVICE, thresholds=generous)
    assert result.dirs == limits.DOCTOR_SCAN_MAX_DIRS and not result.complete
    assert result.entries <= limits.DOCTOR_SCAN_MAX_ENTRIES
    for n in range(1500):
        (root / "20-state" / f"f{n:04d}.md").parent.mkdir(parents=True, exist_ok=True)
        (root / "20-state" / f"f{n:04d}.md").write_text("x")
    result = scan.scan(root, PROJECT, DEVICE, thresholds=generous)
    assert result.entries == limits.DOCTOR_SCAN_MAX_ENTRIES and result.stop == scan.STOP_ENTRIES


def test_scan_is_deterministic_and_visits_startup_folders_first(vault: Path) -> None:
    first = scan.scan(vault, PROJECT, DEVICE)
    assert first == scan.scan(vault, PROJECT, DEVICE)
    assert first.complete and first.stop is None
    small = scan.scan(vault, PROJECT, DEVICE, max_dirs=3)
    assert not small.complete and small.dirs == 3
    # 00-system, this project's folder and the handoffs come first: a tiny scan still sees them.
    write(vault, "10-project/demo-app/PROJECT (1).md", "x")
    tiny = scan.scan(vault, PROJECT, DEVICE, max_dirs=3)
    assert [c.rel for c in tiny.conflicts] == ["10-project/demo-app/PROJECT (1).md"]


@given(st.text(max_size=80))
def test_conflict_rules_accept_any_name(name: str) -> None:
    assert conflict_engine(name, lambda other: True) in (None, *ENGINES)
    assert conflict_engine(name, lambda other: False) in (None, "google-drive", "dropbox", "syncthing")


def test_conflict_names() -> None:
    def present(*names: str):  # type: ignore[no-untyped-def]
        return lambda name: name in names

    assert conflict_engine("a (3).md", present()) == "google-drive"
    assert conflict_engine("a (conflicted copy).md", present()) == "dropbox"
    assert conflict_engine("a.sync-conflict-20250101-010203-AB12CD3.md", present()) == "syncthing"
    assert conflict_engine("a 2.md", present("a.md")) == "icloud"
    assert conflict_engine("a 2.md", present()) is None
    assert conflict_engine("plan-B-LAPTOP.md", present("plan-B.md")) == "onedrive"
    assert conflict_engine("plan-B-LAPTOP.md", present("plan.md")) == "onedrive"
    assert conflict_engine("plan-laptop.md", present("plan.md")) is None
    assert conflict_engine("plan-LAPTOP.md", present()) is None
    assert conflict_engine(".a (1).md.0123456789ab.tmp", present()) is None
    assert conflict_engine("notes", present()) is None


# -------------------------------------------------------------------------------- startup path


def test_startup_notices(vault: Path) -> None:
    assert scan.startup_notices(vault, PROJECT) == []
    write(vault, "30-memory/facts/private-thing (1).md", "x")
    write(vault, "30-memory/facts/.private-thing.md.0123456789ab.tmp", "x")
    (vault / "30-memory/facts/private-link").symlink_to(vault / "00-system")
    found = scan.startup_notices(vault, PROJECT)
    assert found == [
        "vault check: 1 sync-conflict copy, 1 leftover temporary file, 1 symbolic link; run 'lifecycle doctor'"
    ]
    assert found == scan.startup_notices(vault, PROJECT, device=DEVICE)
    for n in range(limits.BUDGET_WORKING_SET_FILES + 5):
        (vault / "30-memory/facts" / f"n{n:03d}.md").write_text("x")
    found = scan.startup_notices(vault, PROJECT)
    assert any("over its review limit" in notice for notice in found)
    assert all("private" not in notice for notice in found)


def test_startup_notices_fail_open(tmp_path: Path) -> None:
    assert scan.startup_notices(tmp_path / "missing", PROJECT) == []
    found = scan.startup_notices(None, PROJECT)  # type: ignore[arg-type]
    assert len(found) == 1 and found[0].startswith("vault check could not run")


def test_startup_scan_imports_the_standard_library_only(vault: Path) -> None:
    code = (
        "import sys, pathlib\n"
        "from continuity.vault import scan\n"
        f"scan.startup_notices(pathlib.Path({str(vault)!r}), {PROJECT!r})\n"
        "heavy = ('ruamel', 'detect_secrets', 'typer', 'click', 'portalocker', 'rich')\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert proc.stdout.strip() == "[]"


# ---------------------------------------------------------------------------------- providers


def test_extra_check_providers(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def pin(context: doctor.Context) -> list[doctor_report.Check]:
        assert context.root == vault and context.conn.device == DEVICE
        return [doctor_report.check("hook.pin", "warn", "the startup script changed since it was pinned")]

    def broken(context: doctor.Context) -> list[doctor_report.Check]:
        raise RuntimeError(f"boom near {SECRET}\nsecond line")

    monkeypatch.setattr(doctor, "CHECKS", (pin, broken))
    found = {c.id: c for c in report(vault).checks}
    assert found["hook.pin"].level == "warn"
    crashed = found["provider.broken"]
    assert crashed.level == "error"  # a check that did not run cannot vouch for anything
    assert "RuntimeError: boom near" in crashed.message and "CONTINUITY_DEBUG=1" in crashed.message
    assert SECRET not in crashed.message and "second line" not in crashed.message


def test_a_crashing_hook_pin_check_is_an_error_with_its_traceback_under_debug(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hookkit import make_checkout

    checkout = make_checkout(tmp_path / "copy")
    # A module of the hook's closure too deeply nested for Python's parser: the hook refuses it (its
    # digest changed), and the pin check, which parses the closure, raises RecursionError.
    (checkout / "src" / "continuity" / "vault" / "layout.py").write_text("a" + ".b" * 200_000 + "\n")
    monkeypatch.chdir(checkout)
    code, doc, stderr = run()
    assert code == 1 and doc["ok"] is False
    level, message = checks(doc)["provider._hook_pin"]
    assert level == "error" and "RecursionError" in message and "CONTINUITY_DEBUG=1" in message
    assert "Traceback" not in stderr
    monkeypatch.setenv("CONTINUITY_DEBUG", "1")
    code, doc, stderr = run()
    assert code == 1 and "Traceback (most recent call last)" in stderr and "RecursionError" in stderr
    assert "the traceback is on stderr" in checks(doc)["provider._hook_pin"][1]


def test_fix_removes_only_old_temporary_files_of_our_own_shape(vault: Path) -> None:
    old = vault / "30-memory" / "facts" / ".fact-a.md.0123456789ab.tmp"
    young = vault / "00-system" / ".SOUL.md.ba9876543210.tmp"
    archived = vault / "90-archive" / "00-system" / ".SOUL.20260101T000000Z.md.aaaaaaaaaaaa.tmp"
    lookalike = vault / "30-memory" / "facts" / ".notes.tmp"
    for path in (old, young, archived, lookalike):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half a note")
    stale = os.stat(old).st_mtime - tunables.TEMP_FILE_STALE_SECONDS - 60
    for path in (old, archived, lookalike):
        os.utime(path, (stale, stale))
    before = level_of(run()[1], "scan.temporary")
    assert before == "warn"
    code, _document, stderr = run(False, "--fix")
    assert code == 0  # leftover temporary files are warnings
    assert not old.exists() and not archived.exists()
    assert young.exists() and lookalike.exists()  # in flight, or not ours: left alone
    assert "removed leftover temporary file 30-memory/facts/.fact-a.md.0123456789ab.tmp" in stderr
    journal = (vault / "50-devices" / DEVICE / "journal.jsonl").read_text().splitlines()
    assert [json.loads(line)["op"] for line in journal] == ["doctor.fix", "doctor.fix"]
    young.unlink()
    assert level_of(run()[1], "scan.temporary") == "ok"
