"""Connection files and discovery: the checkout's `.agent-vault`, then the git worktree family."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import git, write_connection
from hypothesis import given, settings, strategies as st

from continuity import ids, limits
from continuity.errors import InputRejected, NotConnected
from continuity.local import connection, connfile
from continuity.local.connection import AmbiguousConnection, NoConnection
from continuity.local.repo import find_repo_root


def write_conn(
    folder: Path, vault: Path, device: str = "dev-a", project: str = "demo-app", python: str | None = None
) -> Path:
    file = folder / connection.CONNECTION_FILE
    write_connection(file, connection.render_connection(vault, device, project, python))
    return file


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    path = tmp_path / "vault"
    path.mkdir()
    return path


# ------------------------------------------------------------------------------------------------- ids


@pytest.mark.parametrize("value", ["a", "0", "dev-a", "a1-b2-c3", "x" * limits.ID_MAX_CHARS, "9lives", "a-"])
def test_valid_ids(value: str) -> None:
    assert ids.is_valid_id(value)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "-a",
        "A",
        "dev_a",
        "dev.a",
        "dev a",
        "x" * (limits.ID_MAX_CHARS + 1),
        "dév",
        "\u0661",
        "a\n",
        "a/b",
        "..",
        None,
        5,
        ["a"],
    ],
)
def test_invalid_ids(value: object) -> None:
    assert not ids.is_valid_id(value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My Laptop.local", "my-laptop-local"),
        ("demo-app", "demo-app"),
        ("Demo_App  v2", "demo-app-v2"),
        ("--x--", "x"),
        ("___", "fallback"),
        ("", "fallback"),
        ("Ünïcode", "n-code"),
        ("a" * 100, "a" * limits.ID_MAX_CHARS),
        ("a" * 62 + "-b", "a" * 62),
    ],
)
def test_make_id(text: str, expected: str) -> None:
    made = ids.make_id(text, "fallback")
    assert made == expected
    assert ids.is_valid_id(made)


@given(st.text(max_size=200))
def test_make_id_always_gives_a_valid_id(text: str) -> None:
    assert ids.is_valid_id(ids.make_id(text, "fallback"))


# ----------------------------------------------------------------------------------------- the file


def test_render_and_parse_round_trip(tmp_path: Path) -> None:
    vault = tmp_path / 'a vault with spaces, "quotes" and # hashes: and ünïcode'
    text = connection.render_connection(vault, "dev-a", "demo-app", "/usr/bin/python3")
    values = connection.parse_connection_text(text)
    assert values == {"vault": str(vault), "device": "dev-a", "project": "demo-app", "python": "/usr/bin/python3"}
    assert text.startswith("#")  # says what it is


@settings(max_examples=200)
@given(st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), min_size=1, max_size=80))
def test_any_vault_path_round_trips(name: str) -> None:
    vault = Path("/") / name
    text = connection.render_connection(vault, "dev-a", "demo-app", None)
    assert connection.parse_connection_text(text)["vault"] == str(vault)
    assert connfile.parse(text)["vault"] == str(vault)  # the hook's warm path agrees


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("vault: /v\ndevice: dev-a\nproject: p\n", {"vault": "/v", "device": "dev-a", "project": "p"}),
        ("\ufeffvault: /v\r\ndevice: dev-a\r\n", {"vault": "/v", "device": "dev-a"}),
        ("---\n# comment\n\nvault: '/it''s'\n...\n", {"vault": "/it's"}),
        ("vault: /v # trailing comment\n", {"vault": "/v"}),
        ("vault: /v\nfuture_key: anything [ at all\n", {"vault": "/v"}),
        ('vault: "/a\\"b\\u00e9"\n', {"vault": '/a"b\u00e9'}),
    ],
)
def test_parse_accepts_the_strict_subset(text: str, expected: dict[str, str]) -> None:
    assert connection.parse_connection_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "vault /v\n",
        " vault: /v\n",
        "vault : /v\n",
        "vault: /v\nvault: /w\n",
        'vault: "unterminated\n',
        "vault: 'unterminated\n",
        "vault: [/v]\n",
        "vault: {a: b}\n",
        "vault: &anchor /v\n",
        "vault: *alias\n",
        "vault: !!python/object x\n",
        "vault: |\n  /v\n",
        'vault: "\\ud800"x\n',
        "- vault\n",
    ],
)
def test_parse_rejects_everything_else(text: str) -> None:
    with pytest.raises(InputRejected):
        connection.parse_connection_text(text)
    with pytest.raises(ValueError):
        connfile.parse(text)


def test_load_connection(tmp_path: Path, vault: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    file = write_conn(checkout, vault, python="/opt/py/bin/python")
    conn = connection.load_connection(file, "checkout", checkout)
    assert (conn.vault, conn.device, conn.project, conn.python) == (vault, "dev-a", "demo-app", "/opt/py/bin/python")
    assert (conn.file, conn.found_via, conn.repo) == (file, "checkout", checkout)


@pytest.mark.parametrize(
    "content",
    [
        b"vault: relative/vault\ndevice: dev-a\nproject: p\n",
        b"device: dev-a\nproject: p\n",
        b"vault: /v\ndevice: Dev_A\nproject: p\n",
        b"vault: /v\ndevice: dev-a\nproject: -p\n",
        b"vault: /v\ndevice: dev-a\n",
        b"vault: /v\xff\ndevice: dev-a\nproject: p\n",
        b"vault: [/v]\ndevice: dev-a\nproject: p\n",
        b"x" * (limits.CONNECTION_CAP_BYTES + 1),
    ],
    ids=["relative", "no-vault", "bad-device", "bad-project", "no-project", "bad-utf8", "flow", "oversized"],
)
def test_invalid_connection_files_are_not_connected_errors(tmp_path: Path, content: bytes) -> None:
    file = tmp_path / connection.CONNECTION_FILE
    file.write_bytes(content)
    with pytest.raises(NotConnected) as info:
        connection.load_connection(file, "checkout", None)
    assert not isinstance(info.value, NoConnection)  # broken is not the same as absent
    assert info.value.exit_code == 3
    assert "\n" not in str(info.value)


def test_missing_file_is_no_connection(tmp_path: Path) -> None:
    with pytest.raises(NoConnection):
        connection.load_connection(tmp_path / "absent", "env", None)


def test_a_linked_or_special_connection_file_is_refused(tmp_path: Path, vault: Path) -> None:
    real = write_conn(tmp_path, vault)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(NotConnected, match="not a regular file"):
        connection.load_connection(link, "env", None)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotConnected, match="not a regular file"):  # refused unopened: no hang
        connection.load_connection(fifo, "env", None)
    with pytest.raises(NotConnected):
        connection.load_connection(tmp_path, "env", None)


# ----------------------------------------------------------------------------------------- discovery


def test_find_repo_root_from_subdirectories(repo: Path, tmp_path: Path) -> None:
    deep = repo / "a" / "b" / "c"
    deep.mkdir(parents=True)
    assert find_repo_root(deep) == repo
    assert find_repo_root(repo) == repo
    outside = tmp_path / "plain"
    outside.mkdir()
    assert find_repo_root(outside) is None
    assert find_repo_root(Path("/nonexistent/\x00/x")) is None


def test_environment_override_comes_first(repo: Path, vault: Path, tmp_path: Path) -> None:
    write_conn(repo, vault, device="from-checkout")
    other = tmp_path / "elsewhere.conn"
    write_connection(other, connection.render_connection(vault, "from-env", "demo-app", None))
    conn = connection.discover(repo, {connection.ENV_CONNECTION: str(other)})
    assert (conn.device, conn.found_via, conn.repo) == ("from-env", "env", repo)
    # an override that names nothing is 'not connected', even inside a connected checkout
    with pytest.raises(NoConnection):
        connection.discover(repo, {connection.ENV_CONNECTION: str(tmp_path / "missing")})
    # an empty override is no override
    assert connection.discover(repo, {connection.ENV_CONNECTION: ""}).device == "from-checkout"


def test_checkout_connection_found_from_any_subdirectory(repo: Path, vault: Path) -> None:
    write_conn(repo, vault)
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    for where in (repo, sub):
        conn = connection.discover(where, {})
        assert (conn.found_via, conn.repo, conn.file) == ("checkout", repo, repo / connection.CONNECTION_FILE)


def test_outside_a_checkout_is_not_connected(tmp_path: Path) -> None:
    with pytest.raises(NoConnection):
        connection.discover(tmp_path, {})


def test_unconnected_checkout_is_not_connected(repo: Path) -> None:
    with pytest.raises(NoConnection):
        connection.discover(repo, {})


def worktree(repo: Path, path: Path, branch: str | None = None) -> Path:
    args = ["worktree", "add", "-q"]
    if branch:
        args += ["-b", branch]
    git(repo, *args, str(path))
    return path


def test_a_second_worktree_reuses_the_one_sibling_connection(repo: Path, vault: Path, tmp_path: Path) -> None:
    write_conn(repo, vault)
    tree = worktree(repo, tmp_path / "tree", "feature")
    (tree / "sub").mkdir()
    conn = connection.discover(tree / "sub", {})
    assert (conn.found_via, conn.vault, conn.device, conn.project) == ("worktree", vault, "dev-a", "demo-app")
    assert conn.repo == tree
    # and the main checkout, unconnected, reuses a linked worktree's connection the same way
    (repo / connection.CONNECTION_FILE).unlink()
    write_conn(tree, vault)
    assert connection.discover(repo, {}).found_via == "worktree"


def test_agreeing_siblings_are_one_connection(repo: Path, vault: Path, tmp_path: Path) -> None:
    one = worktree(repo, tmp_path / "one")
    two = worktree(repo, tmp_path / "two")
    write_conn(one, vault)
    write_conn(two, vault)
    assert connection.discover(repo, {}).vault == vault


@pytest.mark.parametrize("differ", ["vault", "device", "project"])
def test_disagreeing_siblings_are_an_error_that_names_them(
    repo: Path, vault: Path, tmp_path: Path, differ: str
) -> None:
    one = worktree(repo, tmp_path / "one")
    two = worktree(repo, tmp_path / "two")
    other_vault = tmp_path / "other-vault"
    other_vault.mkdir()
    write_conn(one, vault)
    write_conn(
        two,
        other_vault if differ == "vault" else vault,
        device="dev-z" if differ == "device" else "dev-a",
        project="other" if differ == "project" else "demo-app",
    )
    with pytest.raises(AmbiguousConnection) as info:
        connection.discover(repo, {})
    message = str(info.value)
    assert str(one / connection.CONNECTION_FILE) in message and str(two / connection.CONNECTION_FILE) in message
    assert info.value.exit_code == 3
    # a checkout with its own connection is not affected by disagreeing siblings
    write_conn(repo, vault)
    assert connection.discover(repo, {}).found_via == "checkout"


def test_a_broken_sibling_is_ignored_and_a_separate_clone_is_not_a_sibling(
    repo: Path, vault: Path, tmp_path: Path
) -> None:
    one = worktree(repo, tmp_path / "one")
    (one / connection.CONNECTION_FILE).write_text("not: [a connection\n")
    with pytest.raises(NoConnection):
        connection.discover(repo, {})
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True, capture_output=True)
    write_conn(clone, vault)
    with pytest.raises(NoConnection):
        connection.discover(repo, {})


def test_require_vault(tmp_path: Path, vault: Path) -> None:
    conn = connection.load_connection(write_conn(tmp_path, vault), "env", None)
    assert connection.require_vault(conn) == vault
    vault.rmdir()
    with pytest.raises(NotConnected, match="not reachable"):
        connection.require_vault(conn)
    vault.write_text("a file, not a folder")
    with pytest.raises(NotConnected):
        connection.require_vault(conn)


# ------------------------------------------------------------------------------------------ ignoring


def test_ensure_ignored_appends_to_info_exclude_without_touching_tracked_files(repo: Path) -> None:
    (repo / connection.CONNECTION_FILE).write_text("x")
    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_text("# existing line without newline")
    assert connection.ensure_ignored(repo, connection.CONNECTION_FILE) is True
    assert exclude.read_text() == "# existing line without newline\n/.agent-vault\n"
    assert git(repo, "status", "--porcelain") == ""
    assert connection.ensure_ignored(repo, connection.CONNECTION_FILE) is False
    assert exclude.read_text().count(".agent-vault") == 1


def test_ensure_ignored_respects_an_existing_rule(repo: Path) -> None:
    (repo / ".gitignore").write_text(".agent-vault\n")
    exclude = repo / ".git" / "info" / "exclude"
    before = exclude.read_text() if exclude.exists() else None
    assert connection.ensure_ignored(repo, connection.CONNECTION_FILE) is False
    assert (exclude.read_text() if exclude.exists() else None) == before
    assert (repo / ".gitignore").read_text() == ".agent-vault\n"


def test_ensure_ignored_from_a_worktree_uses_the_common_exclude(repo: Path, tmp_path: Path) -> None:
    tree = worktree(repo, tmp_path / "tree")
    assert connection.ensure_ignored(tree, connection.CONNECTION_FILE) is True
    assert "/.agent-vault" in (repo / ".git" / "info" / "exclude").read_text()
    (tree / connection.CONNECTION_FILE).write_text("x")
    assert git(tree, "status", "--porcelain") == ""
    assert not (tree / ".gitignore").exists()
