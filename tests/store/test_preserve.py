"""`lifecycle preserve`: an exact delivered file kept in 40-documents/ on purpose, with its evidence.

Real git repositories, real outbox packages delivered by `lifecycle outbox deliver`, a real vault
connected through the checkout's `.agent-vault`, the real write path (local lock, leases, journal),
the real sweep, recall and doctor; the terminal questions are answered through a real pseudo-terminal.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from briefkit import DEVICE, HANDOFF_DIR, PROJECT, connect, handoff_note, make_vault, write
from click.testing import Result
from conftest import use_connection
from typer.testing import CliRunner
from writer_support import on_terminal, write_lease

from continuity import limits, tunables
from continuity.cli import app
from continuity.errors import NoteError
from continuity.memory import preserve
from continuity.outbox.folder import format_time, parse_time
from continuity.outbox.package import PackageFile, read_member
from continuity.recall import search as recall
from continuity.store import documents
from continuity.store.writer import WriteContext
from continuity.vault import budget, layout, notes

T0 = "2025-03-01T12:00:00Z"
LIFETIME = timedelta(seconds=limits.OUTBOX_LIFETIME_SECONDS)
SECOND = timedelta(seconds=1)
# An AWS access key id that belongs to nobody, assembled here so that no file of the repository holds it.
TOKEN = "AKIA" + "Q7XK3LP9" + "ZQ8WM2RT"
PRESERVE_KEYS = {"version", "preserved", "refused"}
PRESERVED_KEYS = {"file", "path", "record", "sha256", "bytes", "scanned"}
REFUSED_KEYS = {"file", "reason", "message"}
RECORD_KEYS = {
    "id",
    "type",
    "status",
    "project",
    "file",
    "source_package",
    "sha256",
    "bytes",
    "scanned",
    "delivered",
    "preserved",
    "device",
    "why",
}
BINARY = bytes(range(256)) * 8  # not UTF-8, with NUL bytes: the gate cannot read it


@pytest.fixture
def vault(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A valid vault connected from the `repo` checkout, which is the current directory."""
    root = make_vault(tmp_path / "vault")
    connect(repo, root)
    use_connection(monkeypatch, repo)
    for name in ("CODEX_SESSION_ID", "CLAUDE_SESSION_ID"):
        monkeypatch.delenv(name, raising=False)
    return root


def lifecycle(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), prog_name="lifecycle")


def deliver(repo: Path, files: dict[str, bytes | str], now: str = T0) -> dict[str, Any]:
    """Write `files` into the checkout and deliver them as one package; its deliver JSON."""
    for name, content in files.items():
        path = repo / "work" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    result = lifecycle("outbox", "deliver", *(str(repo / "work" / n) for n in files), "--json", "--now", now)
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def journal(root: Path) -> list[dict[str, Any]]:
    path = root / layout.DEVICES / DEVICE / "journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def documents_in(root: Path) -> dict[str, bytes]:
    base = root / layout.DOCUMENTS
    return {str(p.relative_to(root)): p.read_bytes() for p in base.rglob("*") if p.is_file()}


def every_vault_byte(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def context_for(root: Path) -> WriteContext:
    return WriteContext(root, DEVICE, PROJECT)


def folder_for(package: str) -> str:
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    return f"{layout.DOCUMENTS}/{PROJECT}/{today}-{package}"


# ---------------------------------------------------------------------------------- acceptance


def test_preserves_the_intact_file_refuses_tampered_and_secret_ones_and_the_outbox_still_expires(
    repo: Path, vault: Path
) -> None:
    delivered = deliver(
        repo,
        {"report.md": "# Q1 report\n\nRevenue grew 4%.\n", "data.csv": "a,b\n1,2\n", "notes.txt": f"aws {TOKEN}\n"},
    )
    package = delivered["package"]
    outbox_copy = Path(delivered["path"])
    (outbox_copy / "data.csv").write_text("a,b\n1,3\n")  # tampered after delivery, same size

    result = lifecycle("preserve", package, "--yes", "--json", "--why", "the numbers the board signed")
    assert result.exit_code == 5
    doc = json.loads(result.stdout)
    assert set(doc) == PRESERVE_KEYS and doc["version"] == 1
    assert [item["file"] for item in doc["preserved"]] == ["report.md"]
    assert {item["file"]: item["reason"] for item in doc["refused"]} == {"data.csv": "modified", "notes.txt": "secret"}
    assert all(set(item) == REFUSED_KEYS for item in doc["refused"])
    secret = next(item for item in doc["refused"] if item["file"] == "notes.txt")
    assert "line 1" in secret["message"] and "aws-access-key-id" in secret["message"]
    assert result.stderr.startswith("lifecycle: error: 2 files refused") and result.stderr.count("\n") == 1
    # The token is never printed and never written anywhere in the vault (journal included).
    assert TOKEN not in result.stdout + result.stderr
    assert TOKEN.encode() not in every_vault_byte(vault)

    kept = doc["preserved"][0]
    assert set(kept) == PRESERVED_KEYS
    folder = folder_for(package)
    assert kept["path"] == f"{folder}/report.md" and kept["record"] == f"{folder}/report.md.record.md"
    assert kept["sha256"] == delivered["files"][0]["sha256"] and kept["bytes"] == delivered["files"][0]["bytes"]
    assert kept["scanned"] is True
    assert (vault / kept["path"]).read_bytes() == (repo / "work" / "report.md").read_bytes()
    assert set(documents_in(vault)) == {kept["path"], kept["record"]}  # nothing for the refused files

    record = notes.parse_note((vault / kept["record"]).read_bytes(), kept["record"])
    assert set(record.meta) == RECORD_KEYS
    assert record.meta["type"] == "document" and record.meta["status"] == "approved"
    assert record.meta["source_package"] == package and record.meta["file"] == "report.md"
    assert record.meta["sha256"] == kept["sha256"] and record.meta["bytes"] == kept["bytes"]
    assert notes.as_utc(record.meta["delivered"]) == parse_time(T0)
    preserved_at = notes.as_utc(record.meta["preserved"])
    assert preserved_at is not None and abs(dt.datetime.now(dt.timezone.utc) - preserved_at) < timedelta(minutes=5)
    assert record.meta["device"] == DEVICE and record.meta["project"] == PROJECT
    assert record.meta["why"] == "the numbers the board signed" and record.meta["scanned"] is True
    assert "[report.md](report.md)" in record.body  # Obsidian links the record to its file

    lines = journal(vault)
    assert [(line["op"], line["path"]) for line in lines] == [
        ("document.preserve", kept["path"]),
        ("document.record", kept["record"]),
    ]
    assert lines[0]["sha256"] == kept["sha256"] and lines[0]["id"] == record.meta["id"] == lines[1]["id"]

    # Another device's lease refuses the next preservation (exit 4) before anything is written or asked.
    second = deliver(repo, {"summary.md": "# Summary\n\nAll good.\n"})
    lease = write_lease(vault, "desktop", dt.datetime.now(dt.timezone.utc) + timedelta(hours=2))
    refused = lifecycle("preserve", second["package"], "--yes")
    assert refused.exit_code == 4 and refused.stderr.startswith("lifecycle: error: ")
    assert lifecycle("preserve", second["package"]).exit_code == 4  # not even a question without --yes
    assert set(documents_in(vault)) == {kept["path"], kept["record"]} and len(journal(vault)) == 2
    lease.unlink()

    # Preserving cancels nothing: the outbox copy is deleted at its own expiry, the vault copy stays.
    assert json.loads(lifecycle("outbox", "inspect", package, "--json").stdout)["expires"] == delivered["expires"]
    keep = lifecycle("outbox", "sweep", "--json", "--now", format_time(parse_time(T0) + LIFETIME - SECOND))
    assert json.loads(keep.stdout)["deleted_packages"] == 0 and outbox_copy.is_dir()
    swept = lifecycle("outbox", "sweep", "--json", "--now", format_time(parse_time(T0) + LIFETIME))
    assert json.loads(swept.stdout)["deleted_packages"] == 2 and not outbox_copy.exists()
    assert (vault / kept["path"]).read_bytes() == b"# Q1 report\n\nRevenue grew 4%.\n"


def test_text_output_names_each_outcome(repo: Path, vault: Path) -> None:
    delivered = deliver(repo, {"report.md": "# Report\n", "notes.txt": f"key {TOKEN}\n"})
    result = lifecycle("preserve", delivered["package"], "--yes")
    assert result.exit_code == 5
    folder = folder_for(delivered["package"])
    assert f"preserved report.md: {folder}/report.md (record report.md.record.md)" in result.stdout
    assert "refused notes.txt (secret): notes.txt line 1 looks like a secret" in result.stdout
    assert f"the outbox copy is still deleted at {delivered['expires']}" in result.stdout
    assert TOKEN not in result.stdout + result.stderr


def test_named_files_only_and_unknown_names_are_refused(repo: Path, vault: Path) -> None:
    delivered = deliver(repo, {"a.txt": "first\n", "b.txt": "second\n"})
    result = lifecycle("preserve", delivered["package"], "b.txt", "b.txt", "c.txt", "--yes", "--json")
    assert result.exit_code == 5
    doc = json.loads(result.stdout)
    assert [item["file"] for item in doc["preserved"]] == ["b.txt"]
    assert [(item["file"], item["reason"]) for item in doc["refused"]] == [("c.txt", "not_in_package")]
    everything = lifecycle("preserve", f"output/{delivered['package']}", "--yes", "--json")  # a path works too
    assert everything.exit_code == 0, everything.stderr
    assert [item["file"] for item in json.loads(everything.stdout)["preserved"]] == ["a.txt", "b.txt"]


def test_confirmation_is_needed_without_a_terminal(repo: Path, vault: Path) -> None:
    delivered = deliver(repo, {"report.md": "# Report\n"})
    result = lifecycle("preserve", delivered["package"])
    assert result.exit_code == 2 and "--yes" in result.stderr and result.stdout == ""
    assert not (vault / layout.DOCUMENTS / PROJECT).exists() and journal(vault) == []


# ---------------------------------------------------------------------------------- binary files


def test_binary_files_need_yes_are_recorded_unscanned_and_refused_over_the_limit(repo: Path, vault: Path) -> None:
    big = b"\x00" * (tunables.PRESERVE_BINARY_MAX_BYTES + 1)
    delivered = deliver(repo, {"chart.png": BINARY, "dump.bin": big})
    assert lifecycle("preserve", delivered["package"], "chart.png").exit_code == 2  # no terminal, no --yes
    result = lifecycle("preserve", delivered["package"], "--yes", "--json")
    assert result.exit_code == 5
    doc = json.loads(result.stdout)
    assert [(i["file"], i["scanned"]) for i in doc["preserved"]] == [("chart.png", False)]
    assert [(i["file"], i["reason"]) for i in doc["refused"]] == [("dump.bin", "too_large")]
    kept = doc["preserved"][0]
    assert (vault / kept["path"]).read_bytes() == BINARY
    record = notes.parse_note((vault / kept["record"]).read_bytes(), kept["record"])
    assert record.meta["scanned"] is False and "unscanned" in record.body
    assert not any(name.endswith("dump.bin") for name in documents_in(vault))


def test_budget_counts_preserved_files_in_the_whole_vault_never_in_the_working_set(repo: Path, vault: Path) -> None:
    large = BINARY * ((limits.BUDGET_FILE_BYTES // len(BINARY)) + 1)  # over the one-file review limit
    before = budget.walk(vault)
    delivered = deliver(repo, {"chart.png": large})
    assert lifecycle("preserve", delivered["package"], "--yes").exit_code == 0
    after = budget.walk(vault)
    record = next(p for p in documents_in(vault) if p.endswith(".record.md"))
    journal_size = (vault / layout.DEVICES / DEVICE / "journal.jsonl").stat().st_size
    assert after.vault.bytes == before.vault.bytes + len(large) + (vault / record).stat().st_size + journal_size
    assert after.vault.files == (before.vault.files or 0) + 3  # the copy, its record, the new journal
    assert after.working_set.bytes == before.working_set.bytes + journal_size  # only the journal
    assert after.working_set.files == (before.working_set.files or 0) + 1
    assert after.file.over == 0 and after.file.state == "ok"  # a preserved file is never a working-set file


def test_the_vault_budget_after_preserving_is_shown_before_asking(repo: Path, vault: Path) -> None:
    delivered = deliver(repo, {"chart.png": BINARY})
    plan = preserve.plan(context_for(vault), repo, delivered["package"])
    after = preserve.vault_after(vault, plan)
    now = budget.walk(vault).vault
    assert (after.bytes, after.files) == (now.bytes + len(BINARY), (now.files or 0) + 2)
    assert after.state == "ok" and after.limit_bytes == limits.BUDGET_VAULT_BYTES


# ---------------------------------------------------------------------------------- evidence


def test_a_package_that_was_not_delivered_here_is_no_evidence(repo: Path, vault: Path) -> None:
    delivered = deliver(repo, {"report.md": "# Report\n"})
    copied = repo / "output" / "20250301T120000Z-copied-abcdef"
    subprocess.run(["cp", "-a", delivered["path"], str(copied)], check=True)
    result = lifecycle("preserve", copied.name, "--yes")
    assert result.exit_code == 5 and "not listed as a delivery" in result.stderr
    for name in ("no-such-package", "../README.md", ".outbox.json"):
        assert lifecycle("preserve", name, "--yes").exit_code == 5, name
    assert not (vault / layout.DOCUMENTS / PROJECT).exists()


def test_missing_linked_and_oversized_members_are_refused_without_being_read(
    repo: Path, vault: Path, tmp_path: Path
) -> None:
    delivered = deliver(repo, {"gone.txt": "x\n", "link.txt": "y\n", "ok.txt": "z\n"})
    folder = Path(delivered["path"])
    (folder / "gone.txt").unlink()
    (folder / "link.txt").unlink()
    (tmp_path / "elsewhere.txt").write_text("y\n")
    (folder / "link.txt").symlink_to(tmp_path / "elsewhere.txt")
    doc = json.loads(lifecycle("preserve", delivered["package"], "--yes", "--json").stdout)
    assert {i["file"]: i["reason"] for i in doc["refused"]} == {"gone.txt": "missing", "link.txt": "not_a_file"}
    assert [i["file"] for i in doc["preserved"]] == ["ok.txt"]

    # Sizes are compared before reading: a file larger than the manifest says is never read.
    big = tmp_path / "big.bin"
    with open(big, "wb") as handle:
        handle.truncate(tunables.PRESERVE_BINARY_MAX_BYTES * 4)  # sparse: costs nothing unless read
    digest = "0" * 64
    assert read_member(tmp_path, PackageFile("big.bin", 7, digest), 100).status == "modified"
    too_big = PackageFile("big.bin", big.stat().st_size, digest)
    assert read_member(tmp_path, too_big, tunables.PRESERVE_BINARY_MAX_BYTES).status == "too-large"


def test_names_that_cannot_live_in_the_vault_are_refused(repo: Path, vault: Path) -> None:
    delivered = deliver(repo, {".env.example": "X=1\n", "a.txt": "a\n", "a.txt.record.md": "b\n"})
    doc = json.loads(lifecycle("preserve", delivered["package"], "--yes", "--json").stdout)
    assert {i["file"]: i["reason"] for i in doc["refused"]} == {".env.example": "name", "a.txt": "name"}
    assert [i["file"] for i in doc["preserved"]] == ["a.txt.record.md"]

    secret_name = deliver(repo, {f"{TOKEN}.txt": "plain text\n"})
    result = lifecycle("preserve", secret_name["package"], "--yes", "--json")
    assert result.exit_code == 5
    [refused] = json.loads(result.stdout)["refused"]
    assert (refused["file"], refused["reason"]) == (preserve.WITHHELD, "secret")
    assert TOKEN not in result.stdout + result.stderr


def test_why_is_checked_before_anything_is_written(repo: Path, vault: Path) -> None:
    delivered = deliver(repo, {"report.md": "# Report\n"})
    secret = lifecycle("preserve", delivered["package"], "--yes", "--why", f"key {TOKEN}")
    assert secret.exit_code == 5 and TOKEN not in secret.stdout + secret.stderr
    long = lifecycle("preserve", delivered["package"], "--yes", "--why", "x" * (tunables.PRESERVE_WHY_MAX_CHARS + 1))
    assert long.exit_code == 2
    assert not (vault / layout.DOCUMENTS / PROJECT).exists() and journal(vault) == []


# ---------------------------------------------------------------------------------- running again


def test_preserving_again_is_safe_and_completes_a_missing_record(repo: Path, vault: Path) -> None:
    delivered = deliver(repo, {"report.md": "# Report\n"})
    first = json.loads(lifecycle("preserve", delivered["package"], "--yes", "--json").stdout)
    again = lifecycle("preserve", delivered["package"], "--yes")
    assert again.exit_code == 0 and "already preserved report.md" in again.stdout
    assert len(journal(vault)) == 2  # nothing written twice

    record = vault / first["preserved"][0]["record"]
    text = record.read_text()
    record.unlink()  # as if the writer died between the copy and its record
    completed = json.loads(lifecycle("preserve", delivered["package"], "--yes", "--json").stdout)
    assert completed == first
    assert [line["op"] for line in journal(vault)] == ["document.preserve", "document.record", "document.record"]
    assert record.read_text().split("preserved:")[0] == text.split("preserved:")[0]

    copy = vault / first["preserved"][0]["path"]
    copy.chmod(0o600)
    copy.write_text("# Edited in the vault\n")  # someone changed the kept copy: it is never overwritten
    clash = json.loads(lifecycle("preserve", delivered["package"], "--yes", "--json").stdout)
    assert [(i["file"], i["reason"]) for i in clash["refused"]] == [("report.md", "exists")]
    assert copy.read_text() == "# Edited in the vault\n"


# ---------------------------------------------------------------------------------- terminal


def test_on_a_terminal_the_plan_is_shown_and_binary_files_are_asked_about_apart(repo: Path, vault: Path) -> None:
    delivered = deliver(repo, {"report.md": "# Report\n", "chart.png": BINARY})
    package = delivered["package"]
    declined = on_terminal(["preserve", package], "n\nn\n", cwd=repo)
    assert declined.returncode == 2 and b"Preserve 1 file in the vault?" in declined.stderr
    assert b"chart.png: binary, so the secret gate cannot read it" in declined.stderr
    assert b"text, no secret found" in declined.stderr and delivered["expires"].encode() in declined.stderr
    assert not (vault / layout.DOCUMENTS / PROJECT).exists()

    text_only = on_terminal(["preserve", package], "n\ny\n", cwd=repo)  # no to the binary, yes to the rest
    assert text_only.returncode == 5, text_only.stderr
    assert b"preserved report.md" in text_only.stdout and b"refused chart.png (unconfirmed)" in text_only.stdout
    both = on_terminal(["preserve", package], "y\ny\n", cwd=repo)
    assert both.returncode == 0, both.stderr
    assert b"already preserved report.md" in both.stdout and b"preserved chart.png" in both.stdout


# ---------------------------------------------------------------------------------- cold tier


def test_preserved_documents_are_never_recalled_nor_loaded_at_start(repo: Path, vault: Path) -> None:
    delivered = deliver(repo, {"zebra-report.md": "# Zebra migration\n\nThe zebra migration numbers.\n"})
    assert lifecycle("preserve", delivered["package"], "--yes").exit_code == 0
    write(
        vault,
        "30-memory/facts/zebra.md",
        "---\nid: zebra-fact\ntype: fact\nstatus: approved\n---\nThe zebra fact is the only zebra note.\n",
    )
    found = recall.recall(vault, DEVICE, PROJECT, ["zebra"], use_cache=False)
    assert [r.path for r in found.results] == ["30-memory/facts/zebra.md"]
    assert "migration" not in found.text
    rendered = lifecycle("render", "--format", "json")
    assert "zebra" not in json.loads(rendered.stdout)["brief"].lower()


# ---------------------------------------------------------------------------------- doctor


def test_doctor_warns_about_a_current_handoff_that_names_an_outbox_path(repo: Path, vault: Path) -> None:
    delivered = deliver(repo, {"report.md": "# Report\n"})
    package = delivered["package"]

    def doctor() -> dict[str, tuple[str, str]]:
        doc = json.loads(lifecycle("doctor", "--json").stdout)
        return {c["id"]: (c["level"], c["message"]) for c in doc["checks"]}

    assert "handoffs.outbox" not in doctor()
    rel = f"{HANDOFF_DIR}/20250103T000000Z-{DEVICE}-numbers.md"
    goal = f"The report is in output/{package}/report.md; send it on Monday."
    write(vault, rel, handoff_note("2025-01-03T00:00:00Z", hid="numbers", goal=goal))
    level, message = doctor()["handoffs.outbox"]
    assert level == "warn" and rel in message and package in message and "lifecycle preserve" in message

    absolute = f"Look in {repo / 'output'}/ for the results."
    write(vault, rel, handoff_note("2025-01-03T00:00:00Z", hid="numbers", goal=absolute))
    assert doctor()["handoffs.outbox"][0] == "warn"
    write(vault, rel, handoff_note("2025-01-03T00:00:00Z", hid="numbers", goal=goal, status="historical"))
    write(vault, rel.replace("numbers", "plain"), handoff_note("2025-01-04T00:00:00Z", hid="plain", goal="my-output/x"))
    assert "handoffs.outbox" not in doctor()  # history is left alone, and lookalike names are not outbox paths


# ---------------------------------------------------------------------------------- the gate for documents


def test_check_document_tells_text_from_binary_and_counts_lines_as_an_editor_does() -> None:
    text = documents.check_document("40-documents/p/a.txt", b"plain\r\ntext\r\n", text_cap=100, binary_cap=10)
    assert text.scanned is True and text.data == b"plain\r\ntext\r\n"  # the bytes are kept exactly
    binary = documents.check_document("40-documents/p/a.bin", b"\x00\x01", text_cap=100, binary_cap=10)
    assert binary.scanned is False
    latin1 = documents.check_document("40-documents/p/b.txt", "café".encode("latin-1"), text_cap=100, binary_cap=10)
    assert latin1.scanned is False  # not UTF-8: the gate cannot read it as text
    with pytest.raises(NoteError) as found:
        documents.check_document(
            "40-documents/p/c.txt", f"one\r\ntwo\r\nkey {TOKEN}\r\n".encode(), text_cap=100, binary_cap=10
        )
    assert found.value.reason == "secret" and "line 3" in str(found.value) and TOKEN not in str(found.value)
    with pytest.raises(NoteError) as large:
        documents.check_document("40-documents/p/d.bin", b"\x00" * 11, text_cap=100, binary_cap=10)
    assert large.value.reason == "too_large"
    with pytest.raises(Exception, match="leave the vault"):
        documents.check_document("../outside.txt", b"x", text_cap=100, binary_cap=10)


def test_document_ids_are_unique_within_a_package_and_follow_the_manifest() -> None:
    files = [PackageFile(name, 1, "0" * 64) for name in ("a.txt", "a-txt", "B.TXT")]
    found = preserve.document_ids("20250301T120000Z-q1-abcdef", files)
    assert found == {
        "a.txt": "doc-20250301t120000z-q1-abcdef-a-txt",
        "a-txt": "doc-20250301t120000z-q1-abcdef-a-txt-2",
        "B.TXT": "doc-20250301t120000z-q1-abcdef-b-txt",
    }
