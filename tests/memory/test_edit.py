"""`lifecycle edit` with the person's editor, and the line numbers that frontmatter errors name.

The editor is a real program: a small Python script named by $EDITOR (split with shlex, as git does),
run as a subprocess on the working copy. Each run records what it was shown and writes the next
prepared text; it can also change the vault file meanwhile (a sync arriving) or fail.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest
from writer_support import FAKE_SECRET, all_files, cli, connect, make_vault, on_terminal

from continuity.errors import InputRejected, NoteError, UsageError
from continuity.local import userdirs
from continuity.memory import editor
from continuity.vault import notes, registry

SOUL = "---\nid: soul\ntype: soul\nstatus: approved\n---\n# Soul\n\n## Brief\n\n- Careful and brief.\n"
NEW_SOUL = SOUL.replace("Careful and brief.", "Careful, brief, and kind.")
DEVICE = "---\ntype: device\ndevice: laptop\n---\n# Device laptop\n\n## Brief\n\n- Linux, bash, Python 3.12.\n"

EDITOR_SCRIPT = """\
import os, shutil, sys

target, plan = sys.argv[-1], os.environ["EDIT_PLAN"]
texts = sorted(name for name in os.listdir(plan) if name.startswith("text"))
run = len([name for name in os.listdir(plan) if name.startswith("seen")])
shutil.copyfile(target, os.path.join(plan, f"seen{run}"))
shutil.copyfile(os.path.join(plan, texts[min(run, len(texts) - 1)]), target)
if os.environ.get("EDIT_SYNC"):
    with open(os.environ["EDIT_SYNC"], "a") as synced:
        synced.write("- a line that arrived from another computer\\n")
sys.exit(int(os.environ.get("EDIT_EXIT", "0")))
"""


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_vault(tmp_path / "vault")
    connect(monkeypatch, tmp_path, root)
    return root


@pytest.fixture
def plan_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the editor takes its texts from; $EDITOR names it with a space in its path."""
    folder = tmp_path / "my editor"
    folder.mkdir()
    script = folder / "edit.py"
    script.write_text(EDITOR_SCRIPT)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", shlex.join([sys.executable, str(script)]))
    monkeypatch.setenv("EDIT_PLAN", str(folder))
    return folder


def prepare(plan_dir: Path, *texts: str) -> None:
    for number, text in enumerate(texts):
        (plan_dir / f"text{number}").write_text(text)


def seen(plan_dir: Path) -> list[str]:
    return [(plan_dir / f"seen{n}").read_text() for n in range(len(list(plan_dir.glob("seen*"))))]


def working_copies() -> list[Path]:
    folder = Path(userdirs.state_dir()) / "edits"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_the_editor_sees_the_current_file_and_a_checked_copy_is_installed(vault: Path, plan_dir: Path) -> None:
    (vault / registry.SOUL.path).write_text(SOUL)
    prepare(plan_dir, NEW_SOUL)
    result = cli(["edit", "soul", "--accept-concurrency-risk"])
    assert result.exit_code == 0, result.stderr
    assert seen(plan_dir) == [SOUL]
    assert (vault / registry.SOUL.path).read_text() == NEW_SOUL
    archived = [rel for rel in all_files(vault) if rel.startswith("90-archive/00-system/SOUL.")]
    assert len(archived) == 1 and (vault / archived[0]).read_text() == SOUL
    assert f"the previous version is kept at {archived[0]}" in result.stdout
    assert "+- Careful, brief, and kind." in result.stdout  # the diff is shown
    assert working_copies() == []  # the working copy is gone once installed


def test_without_a_terminal_a_shared_file_needs_the_risk_accepted_before_the_editor_opens(
    vault: Path, plan_dir: Path
) -> None:
    (vault / registry.SOUL.path).write_text(SOUL)
    prepare(plan_dir, NEW_SOUL)
    result = cli(["edit", "soul"])
    assert result.exit_code == 2 and "--accept-concurrency-risk" in result.stderr and "--yes" not in result.stderr
    assert seen(plan_dir) == [] and (vault / registry.SOUL.path).read_text() == SOUL


def test_a_yaml_error_is_refused_with_its_line_and_the_text_is_kept(vault: Path, plan_dir: Path) -> None:
    (vault / registry.SOUL.path).write_text(SOUL)
    broken = "---\ntype: soul\nmood careful\nstatus: approved\n---\n# Soul\n"  # line 3 lacks its ':'
    prepare(plan_dir, broken)
    result = cli(["edit", "soul", "--accept-concurrency-risk", "--json"])
    assert result.exit_code == 5
    assert "the new 00-system/SOUL.md line 3: invalid frontmatter" in result.stderr
    assert result.stderr.startswith("lifecycle: error: ") and result.stderr.count("\n") == 1  # one line
    [kept] = working_copies()
    assert kept.read_text() == broken and str(kept) in result.stderr
    assert oct(kept.stat().st_mode & 0o777) == "0o600"
    assert (vault / registry.SOUL.path).read_text() == SOUL
    assert not any(rel.startswith("90-archive/") for rel in all_files(vault))


def test_a_secret_is_refused_without_being_shown_and_never_reaches_the_vault(vault: Path, plan_dir: Path) -> None:
    (vault / registry.SOUL.path).write_text(SOUL)
    prepare(plan_dir, SOUL + f"- deploy key {FAKE_SECRET}\n")
    result = cli(["edit", "soul", "--accept-concurrency-risk"])
    assert result.exit_code == 5 and "line 11" in result.stderr and "secret" in result.stderr
    assert FAKE_SECRET not in result.stderr + result.stdout
    assert not any(FAKE_SECRET.encode() in (vault / rel).read_bytes() for rel in all_files(vault))
    [kept] = working_copies()
    assert FAKE_SECRET in kept.read_text()  # the person's own text, on this computer only


def test_an_unchanged_copy_writes_nothing(vault: Path, plan_dir: Path) -> None:
    (vault / registry.SOUL.path).write_text(SOUL)
    prepare(plan_dir, SOUL)
    result = cli(["edit", "soul", "--accept-concurrency-risk", "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"version": 1, "path": registry.SOUL.path, "archived": None, "changed": False}
    assert all_files(vault) == {registry.SOUL.path} and working_copies() == []


def test_a_file_that_changed_while_it_was_edited_is_not_overwritten(vault: Path, plan_dir: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (vault / registry.SOUL.path).write_text(SOUL)
    monkeypatch.setenv("EDIT_SYNC", str(vault / registry.SOUL.path))
    prepare(plan_dir, NEW_SOUL)
    result = cli(["edit", "soul", "--accept-concurrency-risk"])
    assert result.exit_code == 5 and "changed in the vault while you edited it" in result.stderr
    assert "another computer" in (vault / registry.SOUL.path).read_text()
    [kept] = working_copies()
    assert kept.read_text() == NEW_SOUL


def test_a_failing_editor_writes_nothing_and_names_the_text(vault: Path, plan_dir: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (vault / registry.SOUL.path).write_text(SOUL)
    monkeypatch.setenv("EDIT_EXIT", "3")
    prepare(plan_dir, NEW_SOUL)
    result = cli(["edit", "soul", "--accept-concurrency-risk"])
    assert result.exit_code == 2 and "the editor exited with status 3" in result.stderr
    [kept] = working_copies()
    assert str(kept) in result.stderr and (vault / registry.SOUL.path).read_text() == SOUL


def test_device_profile_edits_need_no_concurrency_confirmation_and_keep_their_label(
    vault: Path, plan_dir: Path
) -> None:
    rel = registry.DEVICE.at(device="laptop")
    (vault / rel).parent.mkdir(parents=True)
    (vault / rel).write_text(DEVICE)
    prepare(plan_dir, DEVICE.replace("device: laptop", "device: desktop"), DEVICE + "- Docker is not installed.\n")
    refused = cli(["edit", "device"])
    assert refused.exit_code == 5 and "'device: laptop'" in refused.stderr
    editor.discard(editor.WorkingCopy(working_copies()[0], None))
    result = cli(["edit", "device", "--json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["path"] == rel and doc["archived"].startswith("90-archive/50-devices/laptop/DEVICE.")
    assert (vault / rel).read_text().endswith("- Docker is not installed.\n")


def test_a_missing_project_profile_starts_from_its_template(vault: Path, plan_dir: Path) -> None:
    rel = registry.PROJECT.at("demo")
    project = "---\ntype: project\nproject: demo\n---\n# Project demo\n\n## Brief\n\n- A demo.\n"
    prepare(plan_dir, project)
    result = cli(["edit", "project", "--accept-concurrency-risk"])
    assert result.exit_code == 0, result.stderr
    [shown] = seen(plan_dir)
    assert "type: project" in shown and "project: demo" in shown and "## Brief" in shown and "{{" not in shown
    assert (vault / rel).read_text() == project


def test_on_a_terminal_a_refused_copy_can_be_edited_again(vault: Path, plan_dir: Path) -> None:
    (vault / registry.SOUL.path).write_text(SOUL)
    broken = "---\ntype: soul\nstatus: [approved\n---\n# Soul\n"
    prepare(plan_dir, broken, NEW_SOUL)
    # Edit again after the refusal; then: the sync is current.
    done = on_terminal(["edit", "soul"], "y\ny\n", env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert b"line 3: invalid frontmatter" in done.stderr and b"Edit it again?" in done.stderr
    assert seen(plan_dir) == [SOUL, broken]  # the second run reopened the person's broken text
    assert (vault / registry.SOUL.path).read_text() == NEW_SOUL and working_copies() == []


def test_from_a_file_reports_the_same_line(vault: Path, tmp_path: Path) -> None:
    source = tmp_path / "soul.md"
    source.write_text("---\ntype: soul\nid: soul\nstatus: approved\nnote this\n---\n# Soul\n")
    result = cli(["edit", "soul", "--from", str(source), "--yes", "--accept-concurrency-risk"])
    assert result.exit_code == 5 and "line 5: invalid frontmatter" in result.stderr


def test_the_editor_command_is_split_like_git_splits_it() -> None:
    assert editor.editor_command({"VISUAL": "code --wait", "EDITOR": "nano"}) == ["code", "--wait"]
    assert editor.editor_command({"EDITOR": "'/opt/my editor/bin/ed' -s"}) == ["/opt/my editor/bin/ed", "-s"]
    assert editor.editor_command({"VISUAL": " ", "EDITOR": ""}) == [editor.DEFAULT_EDITOR]
    with pytest.raises(UsageError, match="unclosed quote"):
        editor.editor_command({"EDITOR": "'vim"})


def test_a_missing_editor_program_is_a_usage_error(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EDITOR", "no-such-editor-program")
    monkeypatch.delenv("VISUAL", raising=False)
    result = cli(["edit", "device"])
    assert result.exit_code == 2 and "cannot run the editor 'no-such-editor-program'" in result.stderr


# ------------------------------------------------------------------------ frontmatter line numbers


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("---\ntype: soul\nmood careful\nstatus: approved\n---\n", 3),  # a line without its ':'
        ("---\na: 1\nb: 2\nc: 3\nmood careful\nz: 1\n---\n", 5),
        ("---\ntype: soul\nmood careful\n---\n", 3),  # the last line of the block
        ('---\ntype: soul\ntitle: "open\nstatus: approved\n---\n', 3),  # an unclosed quote
        ("---\ntype: soul\ntags: [a, b\nstatus: approved\n---\n", 3),  # an unclosed list
        ("---\ntype: soul\na: 1\n b: 2\n---\n", 4),  # a value where none may be
        ("---\ntype: soul\na: 1\ntype: x\n---\n", 4),  # a duplicate key: the duplicate's line
        ("---\ntype: soul\n- item\n---\n", 3),  # a list item inside the mapping
        ("\ufeff---\r\ntype: soul\r\nmood careful\r\n---\r\n", 3),  # BOM and CRLF count no extra line
    ],
)
def test_frontmatter_errors_name_the_line_to_fix(text: str, line: int) -> None:
    with pytest.raises(NoteError, match=rf"^note\.md line {line}: invalid frontmatter"):
        notes.parse_note(text.encode("utf-8"), "note.md")


def test_the_line_numbers_reach_doctor_and_the_brief_alike(vault: Path) -> None:
    (vault / registry.SOUL.path).write_text("---\ntype: soul\nmood careful\n---\n# Soul\n")
    result = cli(["render", "--format", "json"])
    doc = json.loads(result.stdout)
    assert any("line 3" in notice and "SOUL.md" in notice for notice in doc["notices"]), doc["notices"]
    with pytest.raises(InputRejected, match="line 3"):
        notes.parse_note((vault / registry.SOUL.path).read_bytes(), registry.SOUL.path)
