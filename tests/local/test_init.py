"""`lifecycle init`: connect a checkout to a vault, idempotently, without touching tracked files."""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import sys
from pathlib import Path

import pytest
from briefkit import ROOT, snapshot
from conftest import git, use_connection
from typer.testing import CliRunner, Result

from continuity import ids, names
from continuity.cli import app
from continuity.local import connection
from continuity.vault import layout, notes, registry

JSON_KEYS = {
    "version",
    "connection",
    "vault",
    "device",
    "project",
    "project_found_by",
    "repository",
    "root_commit",
    "created_vault",
    "created",
    "changed",
}


def lifecycle(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), prog_name="lifecycle")


def one_error_line(result: Result, code: int) -> str:
    assert result.exit_code == code, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lifecycle: error: "), result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    return lines[0]


def read_conn(repo: Path) -> connection.Connection:
    return connection.load_connection(repo / connection.CONNECTION_FILE, "checkout", repo)


@pytest.fixture
def here(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    use_connection(monkeypatch, repo)
    return repo


@pytest.fixture
def new_vault(tmp_path: Path) -> Path:
    return tmp_path / "vaults" / "private"


# ----------------------------------------------------------------------------------------- a first run


def test_init_new_creates_vault_and_connection(here: Path, new_vault: Path) -> None:
    result = lifecycle("init", "--vault", str(new_vault), "--new")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    conn = read_conn(here)
    assert conn.vault == new_vault and conn.project == "demo-app"
    host = ids.make_id(socket.gethostname().split(".")[0], "device")
    assert re.fullmatch(rf"{re.escape(host[:58].strip('-'))}-[a-z0-9]{{4}}", conn.device), conn.device
    assert ids.is_valid_id(conn.device)
    assert conn.python == sys.executable
    assert stat.S_IMODE((here / connection.CONNECTION_FILE).stat().st_mode) == 0o600
    for rel in (*layout.ALL_DIRS, f"50-devices/{conn.device}/notes", "10-project/demo-app"):
        assert (new_vault / rel).is_dir(), rel
    for rel in (
        registry.SOUL.path,
        registry.PREFERENCES.path,
        layout.INDEX,
        layout.MEMORY_POLICY,
        registry.DEVICE.at(device=conn.device),
        registry.PROJECT.at("demo-app"),
    ):
        assert (new_vault / rel).is_file(), rel
    assert not list(new_vault.rglob(".keep"))
    assert f"created {registry.DEVICE.at(device=conn.device)}" in result.stdout
    assert "connected: device" in result.stdout


def test_a_new_vault_renders_restored_with_its_unfilled_profiles_named(here: Path, new_vault: Path) -> None:
    """The profiles init makes hold only template text: left out as not filled in yet, yet nothing was withheld."""
    assert lifecycle("init", "--vault", str(new_vault), "--new", "--device", "laptop").exit_code == 0
    for event in names.START_EVENTS:
        result = lifecycle("render", "--event", event, "--format", "json")
        doc = json.loads(result.stdout)
        assert result.exit_code == 0, doc["notices"]
        assert doc["status"] == "restored"
        reasons = {s["name"]: s["reason"] for s in doc["sources"]}
        assert reasons["project"] == reasons["device"] == "placeholder"
        assert all(reason is None for name, reason in reasons.items() if name in ("soul", "preferences"))
        assert len(doc["notices"]) == 2 and all("not filled in yet" in n for n in doc["notices"])


def test_git_ignores_the_connection_without_editing_tracked_files(here: Path, new_vault: Path) -> None:
    tracked_before = {p: p.read_bytes() for p in here.rglob("*") if p.is_file() and ".git" not in p.parts}
    result = lifecycle("init", "--vault", str(new_vault), "--new", "--device", "laptop")
    assert result.exit_code == 0
    assert "/.agent-vault" in (here / ".git" / "info" / "exclude").read_text().splitlines()
    assert git(here, "status", "--porcelain") == ""
    assert git(here, "check-ignore", connection.CONNECTION_FILE).strip() == connection.CONNECTION_FILE
    assert not (here / ".gitignore").exists()
    tracked_after = {p: p.read_bytes() for p in here.rglob("*") if p.is_file() and ".git" not in p.parts}
    del tracked_after[here / connection.CONNECTION_FILE]
    assert tracked_after == tracked_before
    assert "info/exclude" in result.stdout


def test_an_existing_ignore_rule_is_left_alone(here: Path, new_vault: Path) -> None:
    (here / ".gitignore").write_text(".agent-vault\n")
    git(here, "add", ".gitignore")
    git(here, "commit", "-q", "-m", "ignore")
    exclude = here / ".git" / "info" / "exclude"
    before = exclude.read_bytes() if exclude.exists() else None
    result = lifecycle("init", "--vault", str(new_vault), "--new", "--device", "laptop")
    assert result.exit_code == 0
    assert (exclude.read_bytes() if exclude.exists() else None) == before
    assert git(here, "status", "--porcelain") == ""


def test_json_output_keys(here: Path, new_vault: Path) -> None:
    result = lifecycle("init", "--vault", str(new_vault), "--new", "--device", "laptop", "--project", "p1", "--json")
    doc = json.loads(result.stdout)
    assert set(doc) == JSON_KEYS
    assert doc["version"] == 1 and doc["device"] == "laptop" and doc["project"] == "p1"
    assert doc["created_vault"] is True and doc["changed"] is True
    assert set(doc["created"]) == {"50-devices/laptop/DEVICE.md", "10-project/p1/PROJECT.md"}
    again = json.loads(lifecycle("init", "--vault", str(new_vault), "--json").stdout)
    assert set(again) == JSON_KEYS
    assert (again["changed"], again["created"], again["created_vault"]) == (False, [], False)


def test_init_from_a_subdirectory_connects_the_repository_root(
    repo: Path, new_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_connection(monkeypatch, repo)
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert lifecycle("init", "--vault", str(new_vault), "--new").exit_code == 0
    assert (repo / connection.CONNECTION_FILE).is_file()
    assert not (sub / connection.CONNECTION_FILE).exists()
    assert read_conn(repo).project == "demo-app"


def test_relative_and_home_vault_paths_are_made_absolute(here: Path, isolated_home: Path) -> None:
    result = lifecycle("init", "--vault", "../rel-vault", "--new", "--device", "laptop")
    assert result.exit_code == 0, result.stderr
    assert read_conn(here).vault == (here.parent / "rel-vault")
    other = lifecycle("init", "--vault", "~/home-vault", "--new", "--device", "laptop", "--force")
    assert other.exit_code == 0, other.stderr
    assert read_conn(here).vault == isolated_home / "home-vault"


def test_vault_path_with_odd_characters(here: Path, tmp_path: Path) -> None:
    odd = tmp_path / 'my "vault" # \u00fcn\u00efcode \u2028 line'
    assert lifecycle("init", "--vault", str(odd), "--new", "--device", "laptop").exit_code == 0
    assert read_conn(here).vault == odd
    assert lifecycle("render").exit_code == 0


# ------------------------------------------------------------------------------------------ idempotence


def test_second_run_changes_nothing_and_keeps_the_device_id(here: Path, new_vault: Path) -> None:
    assert lifecycle("init", "--vault", str(new_vault), "--new").exit_code == 0
    device = read_conn(here).device
    conn_file = here / connection.CONNECTION_FILE
    exclude = here / ".git" / "info" / "exclude"
    before = (snapshot(new_vault), conn_file.read_bytes(), conn_file.stat().st_mtime_ns, exclude.read_bytes())
    for _ in range(2):
        result = lifecycle("init", "--vault", str(new_vault))
        assert result.exit_code == 0, result.stderr
        assert "already connected" in result.stdout and "created" not in result.stdout
    assert read_conn(here).device == device
    after = (snapshot(new_vault), conn_file.read_bytes(), conn_file.stat().st_mtime_ns, exclude.read_bytes())
    assert after == before
    # the same answers given explicitly are the same connection, too
    assert lifecycle("init", "--vault", str(new_vault), "--device", device, "--project", "demo-app").exit_code == 0
    assert conn_file.read_bytes() == before[1]


def test_rerunning_the_new_command_on_the_created_vault_is_refused_and_changes_nothing(
    here: Path, new_vault: Path
) -> None:
    assert lifecycle("init", "--vault", str(new_vault), "--new", "--device", "laptop").exit_code == 0
    before = (snapshot(new_vault), (here / connection.CONNECTION_FILE).read_bytes())
    one_error_line(lifecycle("init", "--vault", str(new_vault), "--new", "--device", "laptop"), 5)
    assert (snapshot(new_vault), (here / connection.CONNECTION_FILE).read_bytes()) == before


def test_a_loose_mode_is_tightened_on_a_rerun(here: Path, new_vault: Path) -> None:
    assert lifecycle("init", "--vault", str(new_vault), "--new", "--device", "laptop").exit_code == 0
    conn_file = here / connection.CONNECTION_FILE
    conn_file.chmod(0o644)
    assert lifecycle("init", "--vault", str(new_vault)).exit_code == 0
    assert stat.S_IMODE(conn_file.stat().st_mode) == 0o600


def test_existing_profiles_are_never_overwritten(here: Path, tmp_path: Path) -> None:
    existing = tmp_path / "existing"
    (existing / "50-devices" / "laptop").mkdir(parents=True)
    (existing / "00-system").mkdir()
    mine = "---\ntype: device\ndevice: laptop\n---\n## Brief\nmy own words\n"
    (existing / "50-devices" / "laptop" / "DEVICE.md").write_text(mine)
    result = lifecycle("init", "--vault", str(existing), "--device", "laptop", "--json")
    assert result.exit_code == 0, result.stderr
    assert (existing / "50-devices" / "laptop" / "DEVICE.md").read_text() == mine
    assert json.loads(result.stdout)["created"] == ["10-project/demo-app/PROJECT.md"]
    for rel in layout.ALL_DIRS:
        assert (existing / rel).is_dir()


# ---------------------------------------------------------------------------------------------- --force


def test_a_different_vault_needs_force(here: Path, new_vault: Path, tmp_path: Path) -> None:
    assert lifecycle("init", "--vault", str(new_vault), "--new", "--device", "laptop").exit_code == 0
    other = tmp_path / "other-vault"
    before = (here / connection.CONNECTION_FILE).read_bytes()
    line = one_error_line(lifecycle("init", "--vault", str(other), "--new"), 5)
    assert "--force" in line and "already connected" in line
    assert (here / connection.CONNECTION_FILE).read_bytes() == before
    assert not other.exists()
    result = lifecycle("init", "--vault", str(other), "--new", "--force")
    assert result.exit_code == 0, result.stderr
    conn = read_conn(here)
    assert conn.vault == other and conn.device == "laptop"  # the device id survives the move


@pytest.mark.parametrize("option", [("--device", "desktop"), ("--project", "renamed")])
def test_a_different_device_or_project_needs_force(here: Path, new_vault: Path, option: tuple[str, str]) -> None:
    assert lifecycle("init", "--vault", str(new_vault), "--new", "--device", "laptop").exit_code == 0
    one_error_line(lifecycle("init", "--vault", str(new_vault), *option), 5)
    assert lifecycle("init", "--vault", str(new_vault), *option, "--force").exit_code == 0
    conn = read_conn(here)
    assert option[1] in (conn.device, conn.project)


def test_an_invalid_connection_file_needs_force(here: Path, new_vault: Path) -> None:
    (here / connection.CONNECTION_FILE).write_text("garbage: [\n")
    one_error_line(lifecycle("init", "--vault", str(new_vault), "--new", "--device", "laptop"), 5)
    assert (here / connection.CONNECTION_FILE).read_text() == "garbage: [\n"
    assert lifecycle("init", "--vault", str(new_vault), "--new", "--device", "laptop", "--force").exit_code == 0
    assert read_conn(here).device == "laptop"


# ---------------------------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    "args",
    [
        ("--device", "Laptop"),
        ("--device", "-laptop"),
        ("--device", "lap_top"),
        ("--device", ""),
        ("--device", "x" * 64),
        ("--project", "My Project"),
        ("--project", "../escape"),
        ("--project", "p\n"),
    ],
)
def test_bad_ids_exit_5(here: Path, new_vault: Path, args: tuple[str, str]) -> None:
    line = one_error_line(lifecycle("init", "--vault", str(new_vault), "--new", *args), 5)
    assert "id" in line
    assert not new_vault.exists()
    assert not (here / connection.CONNECTION_FILE).exists()


def test_non_empty_new_target_exits_5(here: Path, tmp_path: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "notes.md").write_text("mine")
    line = one_error_line(lifecycle("init", "--vault", str(target), "--new", "--device", "laptop"), 5)
    assert "not empty" in line
    assert [p.name for p in target.iterdir()] == ["notes.md"]
    assert not (here / connection.CONNECTION_FILE).exists()


def test_hidden_file_makes_a_target_non_empty(here: Path, tmp_path: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / ".obsidian").mkdir()
    one_error_line(lifecycle("init", "--vault", str(target), "--new", "--device", "laptop"), 5)


def test_an_empty_folder_is_a_fine_new_target(here: Path, tmp_path: Path) -> None:
    target = tmp_path / "empty"
    target.mkdir()
    assert lifecycle("init", "--vault", str(target), "--new", "--device", "laptop").exit_code == 0
    assert (target / registry.SOUL.path).is_file()


@pytest.mark.parametrize("kind", ["file", "link"])
def test_new_target_that_is_a_file_or_link_exits_5(here: Path, tmp_path: Path, kind: str) -> None:
    target = tmp_path / "target"
    if kind == "file":
        target.write_text("x")
    else:
        real = tmp_path / "real"
        real.mkdir()
        target.symlink_to(real)
    one_error_line(lifecycle("init", "--vault", str(target), "--new", "--device", "laptop"), 5)
    assert not (here / connection.CONNECTION_FILE).exists()


def test_missing_vault_without_new_exits_3(here: Path, tmp_path: Path) -> None:
    line = one_error_line(lifecycle("init", "--vault", str(tmp_path / "nowhere"), "--device", "laptop"), 3)
    assert "--new" in line
    assert not (tmp_path / "nowhere").exists()
    assert not (here / connection.CONNECTION_FILE).exists()


def test_outside_a_repository_exits_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(plain)
    one_error_line(lifecycle("init", "--vault", str(tmp_path / "v"), "--new"), 3)
    assert not (tmp_path / "v").exists()


def test_a_linked_folder_inside_the_vault_is_refused(here: Path, tmp_path: Path) -> None:
    existing = tmp_path / "existing"
    (existing / "00-system").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (existing / "20-state").symlink_to(outside, target_is_directory=True)
    line = one_error_line(lifecycle("init", "--vault", str(existing), "--device", "laptop"), 5)
    assert "symbolic link" in line
    assert list(outside.iterdir()) == []


# ------------------------------------------------------------------------------------------- worktrees


def test_second_worktree_init_and_sibling_reuse(
    here: Path, new_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert lifecycle("init", "--vault", str(new_vault), "--new", "--device", "laptop").exit_code == 0
    tree = tmp_path / "tree"
    git(here, "worktree", "add", "-q", str(tree))
    monkeypatch.chdir(tree)
    # unconnected, the worktree already renders through its sibling's connection
    assert lifecycle("render").exit_code == 0
    result = lifecycle("init", "--vault", str(new_vault), "--device", "laptop")
    assert result.exit_code == 0, result.stderr
    assert (tree / connection.CONNECTION_FILE).is_file()
    assert git(tree, "status", "--porcelain") == ""
    exclude = (here / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.agent-vault") == 1


# ------------------------------------------------------------------------------------------- templates


def test_vault_template_has_every_folder_and_valid_notes() -> None:
    template = ROOT / "vault-template"
    for rel in (
        "00-system",
        "10-project",
        "20-state/handoffs",
        "20-state/candidates",
        "20-state/sessions",
        "30-memory/facts",
        "30-memory/decisions",
        "30-memory/lessons",
        "40-documents",
        "50-devices",
        "60-inbox",
        "90-archive",
    ):
        assert (template / rel).is_dir(), rel
    for rel, kind in ((registry.SOUL.path, "soul"), (registry.PREFERENCES.path, "preferences")):
        note = notes.parse_note((template / rel).read_bytes(), rel)
        assert note.meta["type"] == kind
        assert notes.section(note.body, "Brief")
    for rel in (layout.INDEX, layout.MEMORY_POLICY):
        notes.parse_note((template / rel).read_bytes(), rel)
        assert len((template / rel).read_text()) > 500  # written for a person to read


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "templates").glob("*.md")))
def test_every_note_template_fills_to_valid_frontmatter(name: str) -> None:
    from continuity.store import onboard

    values = {
        "device": "laptop",
        "project": "demo-app",
        "created": "2025-01-02T03:04:05Z",
        "host": "h",
        "title": "A title",
        "id": "an-id",
        "slug": "a-title",
        "session": "s-1",
        "repository": "example.org/a/b",
        "root_commit": "",
    }
    text = onboard.fill((ROOT / "templates" / name).read_text(encoding="utf-8"), values)
    note = notes.parse_note(text.encode(), name)
    assert note.meta.get("type"), name
    if name in ("soul.md", "preferences.md", "project.md", "device.md"):
        assert note.meta["type"] == name.removesuffix(".md")
        assert notes.section(note.body, "Brief") is not None


def test_profiles_created_by_init_are_valid_hot_sources(here: Path, new_vault: Path) -> None:
    assert lifecycle("init", "--vault", str(new_vault), "--new", "--device", "laptop").exit_code == 0
    device = notes.parse_note((new_vault / registry.DEVICE.at(device="laptop")).read_bytes(), "DEVICE.md")
    project = notes.parse_note((new_vault / registry.PROJECT.at("demo-app")).read_bytes(), "PROJECT.md")
    assert (device.meta["type"], device.meta["device"]) == ("device", "laptop")
    assert (project.meta["type"], project.meta["project"]) == ("project", "demo-app")
    assert notes.as_utc(device.meta["created"]) is not None
    assert "{{" not in (new_vault / registry.DEVICE.at(device="laptop")).read_text()
    assert os.stat(new_vault / registry.DEVICE.at(device="laptop")).st_mode & 0o077 == 0


def test_a_vault_inside_the_checkout_is_refused(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(app, ["init", "--new", "--vault", "vault"], prog_name="lifecycle")
    assert result.exit_code == 5 and "inside this git checkout" in result.stderr
    assert not (repo / "vault").exists() and not (repo / ".agent-vault").exists()


def test_a_tracked_connection_file_is_refused(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / ".agent-vault").write_text("# committed by mistake\n")
    git(repo, "add", "-f", ".agent-vault")
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(
        app, ["init", "--new", "--vault", str(tmp_path / "v"), "--force"], prog_name="lifecycle"
    )
    assert result.exit_code == 5 and "git rm --cached" in result.stderr
    assert (repo / ".agent-vault").read_text() == "# committed by mistake\n"


def test_a_folder_that_is_not_a_vault_is_refused(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mistyped path must not be turned into half a vault."""
    monkeypatch.chdir(repo)
    notvault = tmp_path / "Drive"
    notvault.mkdir()
    (notvault / "a.txt").write_text("mine\n")
    result = CliRunner().invoke(app, ["init", "--vault", str(notvault)], prog_name="lifecycle")
    assert result.exit_code == 5 and "is not a vault" in result.stderr
    assert sorted(p.name for p in notvault.iterdir()) == ["a.txt"]
    afile = tmp_path / "file"
    afile.write_text("x")
    result = CliRunner().invoke(app, ["init", "--vault", str(afile)], prog_name="lifecycle")
    assert result.exit_code == 5 and "is not a folder" in result.stderr
