"""`lifecycle budget`: scopes, the 79/80/100/101% boundaries, strict exit codes, privacy, read-only."""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

import pytest
from briefkit import connection_file, make_vault, snapshot, write
from hypothesis import given, strategies as st
from typer.testing import CliRunner

from continuity import limits
from continuity.errors import UsageError
from continuity.local import connection
from continuity.vault import budget
from continuity.vault.budget import Thresholds, level

# Every limit far away, so that one test moves exactly one figure against exactly one limit.
FAR = {
    "--working-set-bytes": "1000000000",
    "--working-set-files": "1000000",
    "--file-bytes": "1000000000",
    "--vault-bytes": "1000000000",
    "--vault-files": "1000000",
}
REVEALING = "divorce-lawyer-and-bank-pin"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty vault skeleton (folders only), connected through AGENT_VAULT_CONNECTION."""
    vault = tmp_path / "vault"
    for rel in ("00-system", "10-project", "20-state/handoffs", "30-memory/facts", "40-documents", "50-devices"):
        (vault / rel).mkdir(parents=True)
    file = connection_file(tmp_path / "connection.yaml", vault)
    monkeypatch.setenv(connection.ENV_CONNECTION, str(file))
    monkeypatch.chdir(tmp_path)
    return vault


def cli(*args: str):  # type: ignore[no-untyped-def]
    from continuity.cli import app

    return CliRunner().invoke(app, ["budget", *args], prog_name="lifecycle")


def measure(*args: str, **overrides: str) -> dict[str, object]:
    flags = dict(FAR)
    flags.update({f"--{k.replace('_', '-')}": v for k, v in overrides.items()})
    result = cli("--json", *[x for pair in flags.items() for x in pair], *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def files(root: Path, folder: str, count: int, size: int = 1) -> None:
    target = root / folder
    target.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (target / f"n{n:04d}.md").write_bytes(b"x" * size)


BOUNDARIES = [(79, "ok"), (80, "warning"), (100, "warning"), (101, "over")]


def test_level_boundaries_are_exact() -> None:
    ratio = Thresholds().ratio
    assert ratio == Fraction(4, 5)
    assert [level(n, 100, ratio) for n in (0, 79, 80, 100, 101)] == ["ok", "ok", "warning", "warning", "over"]
    # 80% of 1 MiB is not a whole number of bytes: the first byte count at or above it warns.
    mib = limits.MIB
    assert level(mib * 4 // 5, mib, ratio) == "ok"
    assert level(mib * 4 // 5 + 1, mib, ratio) == "warning"
    # 0.7 as a float is 0.6999999999999999555910790149937…; the ratio is compared as 7/10.
    assert level(70, 100, Thresholds(warn_ratio=0.7).ratio) == "warning"
    assert level(100, 100, Thresholds(warn_ratio=1.0).ratio) == "warning"


@given(st.integers(0, 10**7), st.integers(1, 10**7), st.integers(1, 100))
def test_level_matches_exact_percentages(used: int, limit: int, percent: int) -> None:
    ratio = Thresholds(warn_ratio=percent / 100).ratio
    expected = "over" if used > limit else "warning" if used * 100 >= limit * percent else "ok"
    assert level(used, limit, ratio) == expected


@pytest.mark.parametrize(("count", "state"), BOUNDARIES)
def test_working_set_files(root: Path, count: int, state: str) -> None:
    files(root, "30-memory/facts", count)
    doc = measure(working_set_files="100")
    scope = doc["scopes"]["working_set"]  # type: ignore[index]
    assert scope["files"] == count and scope["limit_files"] == 100 and scope["state"] == state
    assert doc["state"] == state


@pytest.mark.parametrize(("count", "state"), BOUNDARIES)
def test_working_set_bytes(root: Path, count: int, state: str) -> None:
    write(root, "00-system/SOUL.md", b"s" * (count * 10))
    doc = measure(working_set_bytes="1000")
    scope = doc["scopes"]["working_set"]  # type: ignore[index]
    assert scope["bytes"] == count * 10 and scope["state"] == state
    assert doc["state"] == state


@pytest.mark.parametrize(("count", "state"), BOUNDARIES)
def test_one_file(root: Path, count: int, state: str) -> None:
    write(root, "20-state/handoffs/h.md", b"h" * (count * 10))
    write(root, "40-documents/big.pdf", b"d" * 5000)  # outside the working set: not a working-set file
    doc = measure(file_bytes="1000")
    scope = doc["scopes"]["file"]  # type: ignore[index]
    assert scope == {
        "largest_bytes": count * 10,
        "over": int(state == "over"),
        "warning": int(state == "warning"),
        "limit_bytes": 1000,
        "state": state,
    }
    assert doc["state"] == state


@pytest.mark.parametrize(("count", "state"), BOUNDARIES)
def test_whole_vault_files_and_bytes(root: Path, count: int, state: str) -> None:
    files(root, "40-documents/scans", count)
    doc = measure(vault_files="100")
    assert doc["scopes"]["vault"]["files"] == count  # type: ignore[index]
    assert doc["scopes"]["vault"]["state"] == state  # type: ignore[index]
    assert doc["scopes"]["working_set"]["files"] == 0  # type: ignore[index]
    doc = measure(vault_bytes=str(count), vault_files="1000000")
    assert doc["scopes"]["vault"]["state"] == "warning"  # type: ignore[index]  # exactly 100% of bytes


def test_warn_ratio_override(root: Path) -> None:
    files(root, "30-memory/facts", 50)
    assert measure(working_set_files="100")["state"] == "ok"
    assert measure(working_set_files="100", warn_ratio="0.5")["state"] == "warning"


def test_defaults_and_json_keys(root: Path) -> None:
    write(root, "00-system/SOUL.md", "soul\n")
    result = cli("--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert list(doc) == ["version", "state", "complete", "warn_ratio", "scopes", "links", "unreadable", "note"]
    assert doc["version"] == 1 and doc["state"] == "ok" and doc["complete"] is True
    assert list(doc["scopes"]) == ["working_set", "file", "vault"]
    assert doc["scopes"]["working_set"] == {
        "bytes": 5,
        "files": 1,
        "limit_bytes": limits.BUDGET_WORKING_SET_BYTES,
        "limit_files": limits.BUDGET_WORKING_SET_FILES,
        "state": "ok",
    }
    assert doc["scopes"]["file"]["limit_bytes"] == limits.BUDGET_FILE_BYTES
    assert doc["scopes"]["vault"]["limit_bytes"] == limits.BUDGET_VAULT_BYTES
    assert doc["scopes"]["vault"]["limit_files"] == limits.BUDGET_VAULT_FILES
    assert doc["warn_ratio"] == limits.BUDGET_WARN_RATIO
    assert "never a reason to create memory" in doc["note"]


def test_strict_exit_codes(root: Path) -> None:
    flags = [x for pair in FAR.items() for x in pair]
    assert cli(*flags, "--strict").exit_code == 0
    files(root, "30-memory/facts", 80)
    for limit, state in (("100", "warning"), ("79", "over")):
        over = [*flags, "--working-set-files", limit]
        assert cli(*over).exit_code == 0  # advisory
        assert cli(*over, "--json").exit_code == 0
        result = cli(*over, "--strict")
        assert result.exit_code == 1
        assert f"state        {state}" in result.stdout


def test_incomplete_walk() -> None:
    tally = budget.Tally()
    tally.add(10, True, Thresholds())
    partial = budget.report_from(tally, Thresholds(), complete=False, links=0, unreadable=1)
    assert partial.state == "incomplete" and partial.exit_code(strict=True) == 1 and partial.exit_code(False) == 0
    tally.add(10**9, False, Thresholds())
    assert budget.report_from(tally, Thresholds(), complete=False, links=0, unreadable=1).state == "over"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a folder this user cannot read")
def test_unreadable_folder_is_incomplete(root: Path) -> None:
    locked = root / "40-documents" / "locked"
    files(root, "40-documents/locked", 2)
    locked.chmod(0)
    try:
        result = cli("--json", "--strict")
    finally:
        locked.chmod(0o700)
    doc = json.loads(result.stdout)
    assert doc["state"] == "incomplete" and doc["complete"] is False and result.exit_code == 1


def test_links_are_never_followed(root: Path, tmp_path: Path) -> None:
    files(tmp_path, "outside", 500, size=100)
    (root / "30-memory" / "elsewhere").symlink_to(tmp_path / "outside")
    (root / "00-system" / "PREFERENCES.md").symlink_to(tmp_path / "outside" / "n0000.md")
    doc = json.loads(cli("--json").stdout)
    assert doc["scopes"]["vault"]["files"] == 0
    assert doc["links"] == 2


def test_no_private_name_in_any_output(root: Path) -> None:
    make_vault(root)
    write(root, f"30-memory/facts/{REVEALING}.md", "y" * (limits.BUDGET_FILE_BYTES + 1))  # the largest file
    write(root, f"40-documents/{REVEALING}.pdf", "z" * 100)
    write(root, f"90-archive/{REVEALING} (1).md", "old")
    (root / "30-memory" / f"{REVEALING}-link").symlink_to(root / "00-system")
    outputs = []
    for extra in ([], ["--json"], ["--strict"], ["--strict", "--json"], ["--file-bytes", "1"]):
        result = cli(*extra)
        assert result.exit_code in (0, 1)
        outputs += [result.stdout, result.stderr]
    joined = "\n".join(outputs)
    assert "divorce" not in joined.lower() and "lawyer" not in joined.lower()
    assert "state" in joined  # the budget did report
    # Doctor names links and conflict copies on purpose; its budget figures stay aggregate.
    (root / "30-memory" / f"{REVEALING}-link").unlink()
    from continuity.cli import app

    for args in (["doctor"], ["doctor", "--json"]):
        doctor = CliRunner().invoke(app, args, prog_name="lifecycle")
        assert "over 16.0 KiB" in doctor.stdout
        assert "divorce" not in (doctor.stdout + doctor.stderr).lower()


def test_human_output_is_aggregate_and_says_spare_capacity_is_no_reason(root: Path) -> None:
    files(root, "30-memory/facts", 3, size=2048)
    result = cli()
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("working set  6.0 KiB of 1.0 MiB (0%), 3 of 250 files (1%): ok")
    assert lines[1].startswith("one file     largest 2.0 KiB of 16.0 KiB (12%)")
    assert "warning at 80%" in result.stdout
    assert "Spare capacity is never a reason to create memory" in result.stdout
    assert ".md" not in result.stdout


def test_budget_writes_nothing_and_takes_no_lease(root: Path) -> None:
    make_vault(root)
    before = snapshot(root)
    for extra in ([], ["--json"], ["--strict"]):
        cli(*extra)
    assert snapshot(root) == before
    assert not (root / ".continuity").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["--warn-ratio", "0"],
        ["--warn-ratio", "1.5"],
        ["--warn-ratio", "-0.2"],
        ["--working-set-files", "0"],
        ["--vault-bytes", "-1"],
        ["--file-bytes", "lots"],
    ],
)
def test_bad_thresholds_are_usage_errors(root: Path, args: list[str]) -> None:
    result = cli(*args)
    assert result.exit_code == 2
    assert result.stderr.startswith("lifecycle: error:") and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_thresholds_validate_in_the_library() -> None:
    with pytest.raises(UsageError):
        Thresholds(file_bytes=0)
    with pytest.raises(UsageError):
        Thresholds(warn_ratio=float("nan"))


def test_not_connected_is_exit_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("--json")
    assert result.exit_code == 3
    assert result.stderr.startswith("lifecycle: error:")
