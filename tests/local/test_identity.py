"""A project is found by its repository's identity, never by the clone's folder name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, use_connection
from typer.testing import CliRunner, Result

from continuity import errors
from continuity.cli import app
from continuity.errors import UsageError
from continuity.local import identity
from continuity.vault import layout, projects, registry


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/Owner/Repo.git",
        "https://github.com/owner/repo",
        "https://user:ghp_notarealtoken@github.com/owner/repo.git/",
        "http://github.com/owner/repo",
        "git@github.com:owner/repo.git",
        "github.com:owner/repo",
        "ssh://git@github.com/owner/repo.git",
        "ssh://git@github.com:22/owner/repo",
        "git+ssh://git@github.com/owner/repo",
        "git://github.com/owner/repo.git",
        "https://github.com/owner/repo.git?token=abc#frag",
    ],
)
def test_every_form_of_one_remote_is_one_identity(url: str) -> None:
    assert identity.normalize_remote(url) == "github.com/owner/repo"


@pytest.mark.parametrize(
    "url", ["", "/srv/git/repo.git", "../repo", "file:///srv/git/repo.git", "C:\\repos\\app", "ftp://h/r", "https://h/"]
)
def test_local_paths_and_odd_urls_give_no_identity(url: str) -> None:
    assert identity.normalize_remote(url) is None


def test_a_repository_identity_comes_from_git(repo: Path) -> None:
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    assert identity.of_repo(repo) == identity.RepoIdentity(None, root)
    git(repo, "remote", "add", "origin", "https://me:pw@example.org/me/demo-app.git")
    assert identity.of_repo(repo) == identity.RepoIdentity("example.org/me/demo-app", root)


ROOT_A, ROOT_B = "a" * 40, "b" * 40


@pytest.mark.parametrize(
    ("entries", "repository", "root", "expected"),
    [
        ([projects.Project("app", "h/me/app", ROOT_A)], "h/me/app", ROOT_A, ("app", "repository")),
        ([projects.Project("app", None, ROOT_A)], "h/me/app", ROOT_A, ("app", "root_commit")),
        ([projects.Project("app", "h/me/app", ROOT_A)], None, ROOT_A, ("app", "root_commit")),
        ([projects.Project("other", "h/me/other", ROOT_B)], "h/me/app", ROOT_A, ("my-app", "new")),
        ([], "h/me/app", ROOT_A, ("my-app", "new")),
        ([projects.Project("my-app", None, None)], "h/me/app", ROOT_A, ("my-app", "folder")),
        ([projects.Project("other", "h/x/y", ROOT_B)], None, None, ("my-app", "new")),
    ],
)
def test_choose(
    entries: list[projects.Project], repository: str | None, root: str | None, expected: tuple[str, str]
) -> None:
    assert tuple(projects.choose(entries, repository, root, "my-app")) == expected


@pytest.mark.parametrize(
    "entries",
    [
        # a fork shares its upstream's first commit but is another repository: no match, and the
        # folder's name belongs to the upstream's project
        [projects.Project("my-app", "h/them/app", ROOT_A)],
        # two projects record this repository
        [projects.Project("one", "h/me/app", ROOT_A), projects.Project("two", "h/me/app", ROOT_A)],
        # a project that records nothing may be this one
        [projects.Project("old", None, None)],
    ],
)
def test_when_it_cannot_tell_it_asks_for_a_project(entries: list[projects.Project]) -> None:
    with pytest.raises(UsageError) as caught:
        projects.choose(entries, "h/me/app", ROOT_A, "my-app")
    assert "rerun with --project ID" in errors.message(caught.value, errors.COMMAND_LINE)
    assert all(entry.id in str(caught.value) for entry in entries)


def lifecycle(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), prog_name="lifecycle")


def test_init_asks_for_a_project_rather_than_making_one(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "vault"
    use_connection(monkeypatch, repo)
    assert lifecycle("init", "--vault", str(vault), "--new", "--project", "old").exit_code == 0
    (vault / registry.PROJECT.at("old")).write_text("---\ntype: project\nproject: old\n---\n## Brief\n- x\n")
    (repo / ".agent-vault").unlink()
    result = lifecycle("init", "--vault", str(vault))
    assert result.exit_code == 2, result.stderr
    assert "old (records no repository)" in result.stderr and "--project" in result.stderr
    assert sorted(p.name for p in (vault / layout.PROJECTS).iterdir()) == ["old"]


def test_a_second_checkout_on_one_computer_is_the_same_device(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "vault"
    use_connection(monkeypatch, repo)
    first = json.loads(lifecycle("init", "--vault", str(vault), "--new", "--json").stdout)
    other = tmp_path / "elsewhere" / "second-clone"
    git(tmp_path, "clone", "-q", str(repo), str(other))
    monkeypatch.chdir(other)
    second = json.loads(lifecycle("init", "--vault", str(vault), "--json").stdout)
    assert second["device"] == first["device"]
    assert (second["project"], second["project_found_by"]) == ("demo-app", "root_commit")


def test_doctor_warns_when_the_project_records_another_repository(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "vault"
    use_connection(monkeypatch, repo)
    assert lifecycle("init", "--vault", str(vault), "--new").exit_code == 0
    report = json.loads(lifecycle("doctor", "--json").stdout)
    check = next(c for c in report["checks"] if c["id"] == "project.identity")
    assert check["level"] == "ok"
    git(repo, "remote", "add", "origin", "git@example.org:someone/else.git")
    profile = vault / registry.PROJECT.at("demo-app")
    profile.write_text(profile.read_text().replace('repository: ""', 'repository: "example.org/me/demo-app"'))
    report = json.loads(lifecycle("doctor", "--json").stdout)
    check = next(c for c in report["checks"] if c["id"] == "project.identity")
    assert check["level"] == "warn" and "example.org/someone/else" in check["message"]
    assert "--project ID --force" in check["message"]
