"""`lifecycle scan`: the secret gate over notes, as the loader and the write path apply it.

Real files, real links, real git and one real `lifecycle` process; the rest through typer's CliRunner.
Token-shaped values are built at run time (`secret_corpus`), so this file holds none.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from briefkit import connect, make_vault, write
from click.testing import Result
from conftest import git, use_connection
from secret_corpus import checksummed, j
from typer.testing import CliRunner

from continuity import limits, tunables
from continuity.cli import app
from continuity.errors import EXIT_REJECTED
from continuity.gate.secrets import scan_text
from continuity.health import notescan
from continuity.health.scanfiles import Target

TOKEN = checksummed(random.Random(7), j("gh", "p_"))
TOP_KEYS = {"version", "files", "scanned"}
FILE_KEYS = {"path", "secret", "findings"}
FINDING_KEYS = {"line", "type"}
NOTE = "---\nid: fact-{n}\ntype: fact\nstatus: approved\n---\n# A fact\n\nThe build runs on two cores.\n"


def lifecycle(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), prog_name="lifecycle")


def scan_json(*args: str) -> tuple[int, dict[str, object]]:
    result = lifecycle("scan", "--json", *args)
    assert TOKEN not in result.stdout + result.stderr
    return result.exit_code, json.loads(result.stdout)


def secret_note(line_before: str = "") -> str:
    return f"---\nid: leak\ntype: fact\n---\n{line_before}deploy with token: {TOKEN}\n"


@pytest.fixture
def vault(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A valid vault connected from `repo`, which is the current directory."""
    root = make_vault(tmp_path / "vault")
    connect(repo, root)
    use_connection(monkeypatch, repo)
    return root


def test_a_clean_vault_passes_and_the_json_keys_are_pinned(vault: Path) -> None:
    result = lifecycle("scan")
    assert result.exit_code == 0, result.stderr
    counted = sum(1 for path in vault.rglob("*.md") if not any(p.startswith(".") for p in path.parts))
    assert result.stdout.strip() == f"{counted} files scanned: nothing found"
    code, doc = scan_json()
    assert code == 0 and set(doc) == TOP_KEYS
    assert doc == {"version": notescan.JSON_VERSION, "files": [], "scanned": counted}


def test_a_secret_is_reported_by_path_line_and_detector_never_by_value(vault: Path) -> None:
    write(vault, "30-memory/facts/leak.md", secret_note("Some context first.\n"))
    result = lifecycle("scan")
    assert result.exit_code == EXIT_REJECTED
    expected = {(f.line, f.detector) for f in scan_text(secret_note("Some context first.\n"))}
    assert expected and all(line == 6 for line, _ in expected)
    for line, detector in expected:
        assert f"30-memory/facts/leak.md:{line}: {detector}" in result.stdout.splitlines()
    assert result.stderr.startswith("lifecycle: error: 1 of ") and result.stderr.count("\n") == 1
    assert TOKEN not in result.stdout + result.stderr

    code, doc = scan_json()
    assert code == 5 and set(doc) == TOP_KEYS
    [entry] = doc["files"]  # type: ignore[misc]
    assert set(entry) == FILE_KEYS and entry["path"] == "30-memory/facts/leak.md" and entry["secret"] is True
    assert all(set(finding) == FINDING_KEYS for finding in entry["findings"])
    assert {(f["line"], f["type"]) for f in entry["findings"]} == expected


def test_the_allowlist_pragma_works_line_by_line_as_in_the_loader(vault: Path) -> None:
    write(vault, "30-memory/facts/ok-note.md", secret_note().rstrip("\n") + "  # Pragma: Allowlist Secret\n")
    write(vault, "30-memory/facts/other-line.md", secret_note("pragma: allowlist secret\n"))
    code, doc = scan_json()
    assert code == 5
    assert [entry["path"] for entry in doc["files"]] == ["30-memory/facts/other-line.md"]  # type: ignore[attr-defined]


def test_scan_agrees_with_the_brief_on_a_hot_source(vault: Path) -> None:
    """The soul the loader leaves out for a secret is the file scan reports, at the same line."""
    write(vault, "00-system/SOUL.md", f"---\ntype: soul\n---\n# Soul\n\n## Brief\n\nkey: {TOKEN}\n")
    rendered = json.loads(lifecycle("render", "--format", "json").stdout)
    soul = next(source for source in rendered["sources"] if source["name"] == "soul")
    assert soul["reason"] == "secret"
    code, doc = scan_json()
    [entry] = doc["files"]  # type: ignore[misc]
    assert code == 5 and entry["path"] == "00-system/SOUL.md"
    for finding in entry["findings"]:
        assert f"line {finding['line']}: {finding['type']}" in " ".join(rendered["notices"])


def test_caps_are_the_loaders_and_an_oversized_file_is_not_read(vault: Path, tmp_path: Path) -> None:
    write(vault, "00-system/SOUL.md", "---\ntype: soul\n---\n" + "a" * (limits.SOUL_CAP_BYTES + 1))
    exact = "---\ntype: project\nproject: demo-app\n---\n"
    write(vault, "10-project/demo-app/PROJECT.md", exact + "b" * (limits.PROJECT_CAP_BYTES - len(exact)))
    huge = vault / "60-inbox" / "huge.md"
    with huge.open("wb") as handle:  # sparse: reading it would take minutes, its size one fstat
        handle.truncate(8 * limits.MIB * 1024)
    code, doc = scan_json()
    assert code == 5
    found = {entry["path"]: entry["findings"] for entry in doc["files"]}  # type: ignore[attr-defined]
    assert found == {
        "00-system/SOUL.md": [{"line": None, "type": notescan.TOO_LARGE}],
        "60-inbox/huge.md": [{"line": None, "type": notescan.TOO_LARGE}],
    }


@pytest.mark.parametrize(
    ("rel", "cap"),
    [
        ("00-system/SOUL.md", limits.SOUL_CAP_BYTES),
        ("00-system/PREFERENCES.md", limits.PREFERENCES_CAP_BYTES),
        ("10-project/demo-app/PROJECT.md", limits.PROJECT_CAP_BYTES),
        ("50-devices/laptop/DEVICE.md", limits.DEVICE_CAP_BYTES),
        ("20-state/handoffs/2026-01-01T000000Z-laptop-x.md", limits.HANDOFF_CAP_BYTES),
        ("20-state/candidates/idea.md", tunables.RECALL_NOTE_CAP_BYTES),
        ("30-memory/facts/a.md", tunables.RECALL_NOTE_CAP_BYTES),
        ("40-documents/demo-app/x/original.md", tunables.PRESERVE_TEXT_MAX_BYTES),
        ("00-system/INDEX.md", limits.LIFECYCLE_TEXT_CAP_BYTES),
        ("10-project/demo-app/notes/PROJECT.md", limits.LIFECYCLE_TEXT_CAP_BYTES),
    ],
)
def test_each_place_has_the_cap_its_reader_or_writer_applies(rel: str, cap: int, tmp_path: Path) -> None:
    assert notescan.cap_for(Target(tmp_path, rel, rel, True)) == cap
    assert notescan.cap_for(Target(tmp_path, rel, rel, False)) == limits.LIFECYCLE_TEXT_CAP_BYTES


def test_links_are_reported_and_never_followed(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    write(outside, "leak.md", secret_note())
    (vault / "30-memory" / "facts" / "linked.md").symlink_to(outside / "leak.md")
    (vault / "30-memory" / "lessons").symlink_to(outside, target_is_directory=True)
    code, doc = scan_json()
    assert code == 5
    assert doc["files"] == [
        {"path": "30-memory/facts/linked.md", "secret": False, "findings": [{"line": None, "type": "link"}]},
        {"path": "30-memory/lessons", "secret": False, "findings": [{"line": None, "type": "link"}]},
    ]
    code, doc = scan_json(str(vault / "30-memory" / "lessons" / "leak.md"))
    assert code == 5 and doc["files"][0]["findings"] == [{"line": None, "type": "link"}]  # type: ignore[index]


def test_frontmatter_is_checked_as_the_loader_parses_it(vault: Path) -> None:
    write(vault, "30-memory/facts/dup.md", "---\nid: a\ntype: fact\nid: b\n---\nbody\n")
    write(vault, "30-memory/facts/open.md", "---\nid: a\ntype: fact\n")
    write(vault, "60-inbox/plain.md", "A clip with no frontmatter at all.\n")
    write(vault, "40-documents/demo-app/x/original.md", "---\nkept: exactly\nkept: as delivered\n---\n")
    code, doc = scan_json()
    found = {entry["path"]: entry["findings"] for entry in doc["files"]}  # type: ignore[attr-defined]
    assert code == 5
    assert found == {
        "30-memory/facts/dup.md": [{"line": 4, "type": notescan.INVALID_FRONTMATTER}],
        "30-memory/facts/open.md": [{"line": 1, "type": notescan.INVALID_FRONTMATTER}],
    }


def test_line_numbers_count_from_the_first_line_of_the_file(vault: Path) -> None:
    crlf = "\ufeff" + secret_note("first\nsecond\n").replace("\n", "\r\n")
    (vault / "30-memory" / "facts" / "crlf.md").write_bytes(crlf.encode("utf-8"))
    code, doc = scan_json()
    assert code == 5 and {f["line"] for f in doc["files"][0]["findings"]} == {7}  # type: ignore[index]


def test_invalid_utf8_is_reported_and_the_rest_still_scanned(vault: Path) -> None:
    data = secret_note().encode() + b"caf\xe9\n"
    (vault / "30-memory" / "facts" / "latin1.md").write_bytes(data)
    code, doc = scan_json()
    [entry] = doc["files"]  # type: ignore[misc]
    types = [(f["line"], f["type"]) for f in entry["findings"]]
    assert code == 5 and entry["secret"] is True
    assert (6, notescan.INVALID_UTF8) in types and any(line == 5 for line, kind in types if kind != "invalid-utf8")


def test_a_secret_like_file_name_is_withheld(vault: Path) -> None:
    write(vault, f"20-state/handoffs/2026-01-01T000000Z-laptop-{TOKEN}.md", "---\nid: h\n---\nfine\n")
    result = lifecycle("scan")
    assert result.exit_code == 5 and TOKEN not in result.stdout + result.stderr
    code, doc = scan_json()
    [entry] = doc["files"]  # type: ignore[misc]
    assert code == 5 and entry["path"] == "20-state/handoffs/(file name withheld)" and entry["secret"] is True
    assert [f["line"] for f in entry["findings"]] == [None]


def test_given_paths_need_no_connection_and_name_files_from_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drafts = tmp_path / "drafts"
    write(drafts, "clean.md", "Plain prose about passwords: rotate them yearly.\n")
    write(drafts, "deep/leak.md", secret_note())
    write(drafts, "leak.txt", secret_note())  # not Markdown: skipped in a folder
    write(drafts, ".hidden/leak.md", secret_note())  # hidden: skipped in a folder, as the loader skips it
    monkeypatch.chdir(tmp_path)
    code, doc = scan_json("drafts")
    assert code == 5 and doc["scanned"] == 2
    assert [entry["path"] for entry in doc["files"]] == ["drafts/deep/leak.md"]  # type: ignore[attr-defined]
    code, doc = scan_json("drafts/leak.txt", "drafts/.hidden/leak.md", "drafts/deep/leak.md", "drafts")
    assert code == 5 and doc["scanned"] == 4  # each file once, named ones checked whatever their name
    paths = ["drafts/.hidden/leak.md", "drafts/deep/leak.md", "drafts/leak.txt"]
    assert [entry["path"] for entry in doc["files"]] == paths  # type: ignore[attr-defined]
    monkeypatch.chdir(drafts / "deep")
    code, doc = scan_json("../clean.md", str(drafts))
    assert code == 5 and [e["path"] for e in doc["files"]] == ["leak.md"]  # type: ignore[attr-defined]


def test_a_path_inside_a_vault_is_vault_relative_from_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_vault(tmp_path / "v")
    write(root, "30-memory/facts/leak.md", secret_note())
    monkeypatch.chdir(root / "30-memory")
    code, doc = scan_json("facts")
    assert code == 5 and [e["path"] for e in doc["files"]] == ["30-memory/facts/leak.md"]  # type: ignore[attr-defined]
    monkeypatch.chdir(tmp_path)
    code, doc = scan_json("v/30-memory/facts/leak.md")
    assert code == 5 and [e["path"] for e in doc["files"]] == ["30-memory/facts/leak.md"]  # type: ignore[attr-defined]


def test_bad_input_is_one_line_and_its_exit_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    missing = lifecycle("scan", "no-such-note.md")
    assert missing.exit_code == 2 and missing.stdout == ""
    assert missing.stderr == "lifecycle: error: no-such-note.md: no such file or folder\n"
    pasted = lifecycle("scan", f"notes/{TOKEN}.md")
    assert pasted.exit_code == 2 and TOKEN not in pasted.stderr and pasted.stderr.count("\n") == 1
    unconnected = lifecycle("scan")
    assert unconnected.exit_code == 3 and unconnected.stderr.startswith("lifecycle: error: ")
    assert unconnected.stderr.count("\n") == 1 and "Traceback" not in unconnected.stderr


def test_a_fifo_is_reported_without_blocking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    monkeypatch.chdir(tmp_path)
    code, doc = scan_json(".")
    assert code == 5 and doc["files"] == [
        {"path": "pipe.md", "secret": False, "findings": [{"line": None, "type": notescan.NOT_A_FILE}]}
    ]


def test_the_installed_command_checks_files_as_pre_commit_passes_them(tmp_path: Path) -> None:
    """A real `lifecycle` process in a vault kept in Git, given staged names as pre-commit gives them."""
    root = make_vault(tmp_path / "vault")
    git(root, "init", "-q", "-b", "main")
    write(root, "30-memory/facts/leak.md", secret_note())
    write(root, "30-memory/facts/fine.md", NOTE.format(n=1))
    git(root, "add", "-A")
    staged = git(root, "diff", "--cached", "--name-only", "--", "*.md").split()
    command = Path(sys.executable).with_name("lifecycle")
    proc = subprocess.run([str(command), "scan", *staged], cwd=root, capture_output=True, text=True, check=False)
    assert proc.returncode == 5, proc.stderr
    assert [line.split(":")[0] for line in proc.stdout.splitlines()[:-1]] == ["30-memory/facts/leak.md"] * len(
        scan_text(secret_note())
    )
    assert proc.stdout.splitlines()[-1].startswith(f"{len(staged)} files scanned: 1 with findings")
    assert TOKEN not in proc.stdout + proc.stderr and proc.stderr.count("\n") == 1
    clean = [name for name in staged if name != "30-memory/facts/leak.md"]
    proc = subprocess.run([str(command), "scan", *clean], cwd=root, capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and proc.stderr == ""


def test_worker_processes_give_the_same_report_as_one(vault: Path) -> None:
    write(vault, "30-memory/facts/leak.md", secret_note())
    write(vault, "30-memory/facts/dup.md", "---\nid: a\nid: b\n---\n")
    (vault / "30-memory" / "facts" / "linked.md").symlink_to(vault / "30-memory" / "facts" / "dup.md")
    for n in range(40):
        write(vault, f"30-memory/decisions/d-{n}.md", NOTE.format(n=n))
    from continuity.health.scanfiles import vault_targets

    targets = vault_targets(vault)
    serial = notescan.scan(targets, workers=1)
    assert len(serial.files) == 3 and serial == notescan.scan(targets, workers=2)


def test_workers_start_only_for_many_files() -> None:
    assert notescan.workers_for(tunables.SCAN_PARALLEL_MIN_FILES - 1) == 1
    assert notescan.workers_for(tunables.SCAN_PARALLEL_MIN_FILES) == 1  # each worker gets at least the minimum
    many = notescan.workers_for(tunables.SCAN_PARALLEL_MIN_FILES * 100)
    assert 1 <= many <= tunables.SCAN_MAX_WORKERS
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    assert many == min(tunables.SCAN_MAX_WORKERS, cores)


def test_a_control_character_in_a_name_cannot_forge_report_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "two\nlines.md", secret_note())
    monkeypatch.chdir(tmp_path)
    result = lifecycle("scan", ".")
    assert result.exit_code == 5
    assert all(line.startswith("two\\u000alines.md:5: ") for line in result.stdout.splitlines()[:-1])
    code, doc = scan_json(".")
    assert code == 5 and doc["files"][0]["path"] == "two\nlines.md"  # type: ignore[index]
