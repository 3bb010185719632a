"""Regressions found by walking through the README as a new user: what the command line prints when
it is used slightly wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import use_connection, write_connection
from typer.testing import CliRunner
from writer_support import HANDOFF_BODY

from continuity.cli import app


@pytest.mark.parametrize(("args", "where"), [([], "lifecycle"), (["lease"], "lifecycle lease")])
def test_a_group_without_its_command_prints_readable_help_and_one_error_line(args: list[str], where: str) -> None:
    result = CliRunner().invoke(app, args, prog_name="lifecycle")
    assert result.exit_code == 2
    assert result.stdout.startswith(f"Usage: {where} [OPTIONS] COMMAND [ARGS]...")
    assert len(result.stdout.splitlines()) > 5, "the help keeps its lines"
    assert result.stderr == f"lifecycle: error: missing command (see '{where} --help')\n"


def test_a_usage_error_points_at_the_help_of_the_command_that_was_used() -> None:
    result = CliRunner().invoke(app, ["budget", "--vault-files", "0"], prog_name="lifecycle")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("lifecycle: error: Invalid value for '--vault-files'")
    assert result.stderr.rstrip("\n").endswith("(see 'lifecycle budget --help')")


def test_render_explain_refuses_json_instead_of_printing_text(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_connection(monkeypatch, repo)
    assert CliRunner().invoke(app, ["init", "--vault", str(tmp_path / "vault"), "--new"]).exit_code == 0
    result = CliRunner().invoke(app, ["render", "--explain", "--format", "json"], prog_name="lifecycle")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("lifecycle: error: --explain prints text")
    plain = CliRunner().invoke(app, ["render", "--format", "json"])
    assert plain.exit_code == 0 and json.loads(plain.stdout)["version"] == 1


def test_handoff_show_takes_the_file_name_as_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from continuity.cli import app
    from continuity.local import connection
    from continuity.memory.handoff_write import new_handoff
    from continuity.store import writer

    root = tmp_path / "vault"
    for rel in ("00-system", "20-state/handoffs", "50-devices/dev-a"):
        (root / rel).mkdir(parents=True)
    conn = tmp_path / "connection.yaml"
    write_connection(conn, connection.render_connection(root, "dev-a", "demo", None))
    monkeypatch.setenv(connection.ENV_CONNECTION, str(conn))
    monkeypatch.chdir(tmp_path)
    _conn, ctx = writer.connect(tmp_path)
    made = new_handoff(ctx, "Parser refactor", HANDOFF_BODY, commit=None, source_name="handoff.md")
    stem = made.rel.rsplit("/", 1)[1]
    for typed in (stem, stem.removesuffix(".md"), made.id):
        result = CliRunner().invoke(app, ["handoff", "show", typed], prog_name="lifecycle")
        assert result.exit_code == 0, (typed, result.stderr)
        assert "## Next actions" in result.stdout
