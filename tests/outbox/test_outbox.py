"""The delivery outbox: deliver, inspect, sweep, install-sweeper, through both entries.

Real git repositories, real files and links, the real script run as a subprocess, and fake `crontab`
and `schtasks` programs on PATH (small scripts that keep the table in a file), never mocks.
"""

from __future__ import annotations

import hashlib
import json
import os
import runpy
import shlex
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from continuity import limits
from continuity.cli import app
from continuity.outbox.folder import MANIFEST_NAME, STATE_NAME, format_time, parse_time
from continuity.outbox.sweep import install_sweeper, marker_for, merge_crontab
from continuity.trust import hookcommand

CHECKOUT = Path(__file__).resolve().parents[2]
SCRIPT = CHECKOUT / "scripts" / "artifactctl.py"
T0 = "2025-03-01T12:00:00Z"
LIFETIME = timedelta(seconds=limits.OUTBOX_LIFETIME_SECONDS)
SECOND = timedelta(seconds=1)

DELIVER_KEYS = {"version", "package", "path", "files", "created", "expires"}
FILE_KEYS = {"name", "bytes", "sha256"}
INSPECT_KEYS = {
    "version",
    "package",
    "path",
    "managed",
    "created",
    "expires",
    "intact",
    "files",
    "unexpected",
}
INSPECT_FILE_KEYS = {"name", "bytes", "sha256", "status"}
SWEEP_KEYS = {
    "version",
    "outbox",
    "now",
    "activated",
    "dry_run",
    "deleted_packages",
    "deleted_unmanaged",
    "enrolled",
    "pending",
    "failed",
    "deleted",
    "next_expiry",
}
INSTALL_KEYS = {
    "version",
    "outbox",
    "scheduler",
    "entry",
    "marker",
    "script",
    "sha256",
    "activated",
    "changed",
    "dry_run",
}


def at(base: str, delta: timedelta = timedelta()) -> str:
    return format_time(parse_time(base) + delta)


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "README.md").write_text("demo\n")
    return path


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh repository as the current directory, with HOME and XDG inside tmp_path."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(name, str(home / name.lower()))
    repo = make_repo(tmp_path / "repo")
    (repo / "report.md").write_text("# Report\n\nfinal numbers\n")
    (repo / "data.csv").write_bytes(b"a,b\n1,2\n")
    monkeypatch.chdir(repo)
    return repo


@pytest.fixture
def crontab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `crontab` on PATH: `-l` prints the table file, `crontab FILE` replaces it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    table = tmp_path / "crontab.txt"
    fake = bin_dir / "crontab"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import os, sys\n"
        "table = os.environ['FAKE_CRONTAB']\n"
        "with open(table + '.calls', 'a') as log: log.write(' '.join(sys.argv[1:]) + '\\n')\n"
        "if os.environ.get('FAKE_CRONTAB_FAIL'):\n"
        "    sys.exit('crontab: cannot open the spool directory')\n"
        "if sys.argv[1:] == ['-l']:\n"
        "    if not os.path.exists(table): sys.exit('no crontab for tester')\n"
        "    sys.stdout.write(open(table).read()); sys.exit(0)\n"
        "data = open(sys.argv[1]).read()\n"
        "if data and not data.endswith('\\n'): sys.exit('crontab: missing newline before EOF')\n"
        "open(table, 'w').write(data)\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CRONTAB", str(table))
    return table


@pytest.fixture
def checkout_copy(tmp_path: Path) -> Path:
    """A copy of scripts/artifactctl.py and src/continuity, so a test may edit the script."""
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy2(SCRIPT, root / "scripts" / "artifactctl.py")
    shutil.copytree(
        CHECKOUT / "src" / "continuity",
        root / "src" / "continuity",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return root


def lifecycle(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["outbox", *args], prog_name="lifecycle")
    return result.exit_code, result.stdout, result.stderr


def artifactctl(*args: str, cwd: Path | None = None, script: Path = SCRIPT) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=cwd or Path.cwd(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr


def ok_json(outcome: tuple[int, str, str]) -> Any:
    code, out, err = outcome
    assert code == 0, err
    assert err == ""
    return json.loads(out)


def listing(folder: Path) -> dict[str, bytes | str]:
    """Every entry under `folder` (links by their target text), for before/after comparisons."""
    found: dict[str, bytes | str] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                found[rel] = "link:" + os.readlink(path)
            elif path.is_file():
                found[rel] = path.read_bytes()
            else:
                found[rel] = "dir"
    return found


# --- deliver -----------------------------------------------------------------------------------------


def test_deliver_copies_files_records_evidence_and_prints_exact_expiry(work: Path) -> None:
    doc = ok_json(lifecycle("deliver", "report.md", "data.csv", "--name", "Q1 numbers", "--json", "--now", T0))
    assert set(doc) == DELIVER_KEYS
    assert doc["version"] == 1
    assert doc["created"] == T0
    assert doc["expires"] == "2025-03-08T12:00:00Z"
    assert parse_time(doc["expires"]) - parse_time(doc["created"]) == LIFETIME
    package = Path(doc["path"])
    assert package.is_absolute()
    assert package.parent == work / "output"
    assert doc["package"] == package.name
    assert package.name.startswith("20250301T120000Z-q1-numbers-")
    for item, source in zip(doc["files"], ("report.md", "data.csv"), strict=True):
        assert set(item) == FILE_KEYS
        data = (work / source).read_bytes()
        assert item == {"name": source, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        assert (package / source).read_bytes() == data
    manifest = json.loads((package / ".manifest.json").read_text())
    assert manifest["version"] == 1
    assert manifest["files"] == doc["files"]
    assert (manifest["created"], manifest["expires"]) == (doc["created"], doc["expires"])

    code, out, err = lifecycle("deliver", "report.md")
    assert code == 0, err
    assert "/output/" in out and str(work / "output") in out
    expires_line = next(line for line in out.splitlines() if line.startswith("expires "))
    assert expires_line.split()[1].endswith("Z")


def test_deliver_makes_git_ignore_output_without_touching_tracked_files(work: Path) -> None:
    subprocess.run(["git", "add", "README.md"], check=True)
    ok_json(lifecycle("deliver", "report.md", "--json"))
    assert not (work / ".gitignore").exists()
    ignored = subprocess.run(["git", "check-ignore", "-q", "output/"], check=False)
    assert ignored.returncode == 0
    status = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True, check=True)
    assert "output" not in status.stdout
    ok_json(lifecycle("deliver", "data.csv", "--json"))
    exclude = (work / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/output") == 1


def test_deliver_refuses_bad_input_without_creating_anything(work: Path) -> None:
    (work / "folder").mkdir()
    (work / "sub").mkdir()
    (work / "sub" / "report.md").write_text("other\n")
    os.symlink(work / "report.md", work / "alias.md")
    cases = [
        ("missing.md",),
        ("folder",),
        ("alias.md",),
        ("report.md", "sub/report.md"),
    ]
    for files in cases:
        code, out, err = lifecycle("deliver", *files)
        assert code == (2 if files == ("missing.md",) else 5), (files, err)  # a missing input is a usage error
        assert out == ""
        assert err.startswith("lifecycle: error: ") and err.count("\n") == 1
    assert not (work / "output").exists()


def test_not_in_a_git_checkout_exits_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.txt").write_text("a")
    monkeypatch.chdir(plain)
    for args in (("deliver", "a.txt"), ("sweep",), ("inspect", "x"), ("install-sweeper", "--dry-run")):
        code, out, err = lifecycle(*args)
        assert code == 3, args
        assert out == ""
        assert "not inside a git checkout" in err


# --- sweep: expiry and enrollment --------------------------------------------------------------------


def test_package_expires_exactly_seven_days_after_delivery(work: Path) -> None:
    doc = ok_json(lifecycle("deliver", "report.md", "--json", "--now", T0))
    package = Path(doc["path"])

    early = ok_json(lifecycle("sweep", "--json", "--now", at(T0, LIFETIME - SECOND)))
    assert set(early) == SWEEP_KEYS
    assert early["deleted_packages"] == 0 and early["pending"] == 1
    assert early["next_expiry"] == doc["expires"]
    assert package.is_dir()

    dry = ok_json(lifecycle("sweep", "--json", "--dry-run", "--now", at(T0, LIFETIME + SECOND)))
    assert dry["dry_run"] is True and dry["deleted_packages"] == 1
    assert package.is_dir()

    late = ok_json(lifecycle("sweep", "--json", "--now", at(T0, LIFETIME + SECOND)))
    assert late["deleted_packages"] == 1
    assert late["deleted"] == [package.name]
    assert late["pending"] == 0 and late["next_expiry"] is None
    assert not package.exists()
    assert json.loads((work / "output" / STATE_NAME).read_text())["packages"] == {}


def test_stray_entries_are_enrolled_then_deleted_seven_days_after_discovery(work: Path) -> None:
    ok_json(lifecycle("deliver", "report.md", "--json", "--now", T0))
    outbox = work / "output"
    (outbox / "notes.txt").write_text("left by hand\n")
    (outbox / "scratch").mkdir()
    (outbox / "scratch" / "a.bin").write_bytes(b"\0" * 10)

    seen = at(T0, timedelta(days=2))
    first = ok_json(lifecycle("sweep", "--json", "--now", seen))
    assert (first["enrolled"], first["deleted_unmanaged"], first["pending"]) == (2, 0, 3)
    state = json.loads((outbox / STATE_NAME).read_text())
    assert state["enrolled"]["notes.txt"] == {"discovered": seen, "expires": at(seen, LIFETIME)}

    again = ok_json(lifecycle("sweep", "--json", "--now", at(seen, LIFETIME - SECOND)))
    assert (again["enrolled"], again["deleted_unmanaged"], again["deleted_packages"]) == (0, 0, 1)
    assert (outbox / "notes.txt").exists() and (outbox / "scratch").exists()

    last = ok_json(lifecycle("sweep", "--json", "--now", at(seen, LIFETIME + SECOND)))
    assert last["deleted_unmanaged"] == 2 and last["pending"] == 0
    assert sorted(p.name for p in outbox.iterdir()) == [STATE_NAME]


def test_sweep_of_an_outbox_never_activated_does_nothing(work: Path) -> None:
    doc = ok_json(lifecycle("sweep", "--json"))
    assert doc["activated"] is False
    assert not (work / "output").exists()
    (work / "output").mkdir()
    doc = ok_json(lifecycle("sweep", "--json"))
    assert doc["activated"] is False
    assert list((work / "output").iterdir()) == []


# --- legacy data -------------------------------------------------------------------------------------


def test_legacy_outbox_is_refused_untouched_until_moved_away(work: Path, crontab: Path) -> None:
    legacy = work / "output"
    (legacy / "old-report").mkdir(parents=True)
    (legacy / "old-report" / "r.pdf").write_bytes(b"%PDF old")
    (legacy / "loose.txt").write_text("old\n")
    before = listing(legacy)
    exclude = work / ".git" / "info" / "exclude"
    exclude_before = exclude.read_text() if exclude.exists() else None

    for args in (
        ("deliver", "report.md"),
        ("sweep", "--now", "2099-01-01T00:00:00Z"),
        ("install-sweeper",),
        ("install-sweeper", "--dry-run"),
    ):
        code, out, err = lifecycle(*args)
        assert code == 5, (args, err)
        assert out == ""
        assert err.startswith("lifecycle: error: ") and err.count("\n") == 1
        assert str(legacy) in err
        assert "outside the repository" in err
        assert "legacy" in err
    assert listing(legacy) == before
    assert not (legacy / STATE_NAME).exists()
    assert (exclude.read_text() if exclude.exists() else None) == exclude_before
    assert not crontab.exists()

    code, out, err = lifecycle("sweep", "--hook")
    assert (code, out, err) == (0, "", "")
    assert listing(legacy) == before

    legacy.rename(work.parent / "reviewed-legacy-output")
    doc = ok_json(lifecycle("install-sweeper", "--json"))
    assert doc["activated"] is True
    assert (legacy / STATE_NAME).is_file()


def test_newer_or_damaged_record_is_a_clear_error(work: Path) -> None:
    ok_json(lifecycle("deliver", "report.md", "--json"))
    record = work / "output" / STATE_NAME
    record.write_text(json.dumps({"version": 2, "activated": T0}))
    code, _, err = lifecycle("sweep")
    assert code == 5
    assert "format version 2" in err and "newer" in err
    record.write_text("{not json")
    code, _, err = lifecycle("sweep")
    assert code == 5 and "not valid JSON" in err
    assert len(list((work / "output").iterdir())) == 2


# --- links -------------------------------------------------------------------------------------------


def test_links_are_deleted_as_links_and_their_targets_survive(work: Path, tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("never delete me\n")
    doc = ok_json(lifecycle("deliver", "report.md", "--json", "--now", T0))
    package = Path(doc["path"])
    os.symlink(precious, package / "inside-link")
    outbox = work / "output"
    os.symlink(precious, outbox / "dir-link")
    os.symlink(precious / "keep.txt", outbox / "file-link")
    os.symlink(tmp_path / "nowhere", outbox / "dangling")

    first = ok_json(lifecycle("sweep", "--json", "--now", T0))
    assert first["enrolled"] == 3
    last = ok_json(lifecycle("sweep", "--json", "--now", at(T0, LIFETIME + SECOND)))
    assert (last["deleted_packages"], last["deleted_unmanaged"]) == (1, 3)
    assert sorted(p.name for p in outbox.iterdir()) == [STATE_NAME]
    assert (precious / "keep.txt").read_text() == "never delete me\n"


def test_an_outbox_that_is_a_link_is_never_followed(work: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "file.txt").write_text("x")
    os.symlink(elsewhere, work / "output")
    for args in (("deliver", "report.md"), ("sweep",), ("install-sweeper", "--dry-run")):
        code, _, err = lifecycle(*args)
        assert code == 5, args
        assert "link" in err
    assert listing(elsewhere) == {"file.txt": b"x"}


# --- inspect -----------------------------------------------------------------------------------------


def test_inspect_reports_evidence_and_tampering(work: Path) -> None:
    doc = ok_json(lifecycle("deliver", "report.md", "data.csv", "--json", "--now", T0))
    name = doc["package"]
    fine = ok_json(lifecycle("inspect", name, "--json"))
    assert set(fine) == INSPECT_KEYS
    assert all(set(f) == INSPECT_FILE_KEYS for f in fine["files"])
    assert fine["intact"] is True and fine["managed"] is True
    assert (fine["created"], fine["expires"]) == (doc["created"], doc["expires"])
    assert [f["status"] for f in fine["files"]] == ["intact", "intact"]
    assert ok_json(lifecycle("inspect", f"output/{name}", "--json")) == fine
    assert ok_json(lifecycle("inspect", doc["path"], "--json")) == fine

    package = Path(doc["path"])
    (package / "report.md").write_text("# Report\n\nedited numbers\n")
    (package / "data.csv").unlink()
    (package / "extra.txt").write_text("added later\n")
    code, out, err = lifecycle("inspect", name, "--json")
    assert code == 1 and err == ""
    bad = json.loads(out)
    assert bad["intact"] is False
    assert [f["status"] for f in bad["files"]] == ["modified", "missing"]
    assert bad["files"][0]["sha256"] == doc["files"][0]["sha256"]  # the evidence, not the edit
    assert bad["unexpected"] == ["extra.txt"]

    code, out, _ = lifecycle("inspect", name)
    assert code == 1
    assert "intact   no" in out and "modified" in out

    # Editing the manifest cannot postpone the deletion: the schedule lives in the outbox record.
    manifest = json.loads((package / ".manifest.json").read_text())
    manifest["expires"] = "2099-01-01T00:00:00Z"
    (package / ".manifest.json").write_text(json.dumps(manifest))
    assert json.loads(lifecycle("inspect", name, "--json")[1])["expires"] == doc["expires"]
    swept = ok_json(lifecycle("sweep", "--json", "--now", at(T0, LIFETIME)))
    assert swept["deleted_packages"] == 1


def test_inspect_never_follows_a_link_that_replaced_a_delivered_file(work: Path, tmp_path: Path) -> None:
    doc = ok_json(lifecycle("deliver", "report.md", "--json", "--now", T0))
    package = Path(doc["path"])
    (tmp_path / "same.md").write_bytes((package / "report.md").read_bytes())  # identical bytes elsewhere
    (package / "report.md").unlink()
    (package / "report.md").symlink_to(tmp_path / "same.md")
    code, out, _ = lifecycle("inspect", doc["package"], "--json")
    assert code == 1
    assert [f["status"] for f in json.loads(out)["files"]] == ["not-a-file"]


def test_inspect_refuses_what_is_not_a_package(work: Path) -> None:
    ok_json(lifecycle("deliver", "report.md", "--json"))
    (work / "output" / "loose").mkdir()
    for name in ("no-such-package", "loose", STATE_NAME, "../README.md"):
        code, out, err = lifecycle("inspect", name)
        assert code == 5, name
        assert out == "" and err.startswith("lifecycle: error: ")


# --- the two entries agree ---------------------------------------------------------------------------


def _without(doc: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in keys}


def test_artifactctl_and_lifecycle_outbox_give_the_same_results(work: Path, tmp_path: Path) -> None:
    other = make_repo(tmp_path / "other")
    for name in ("report.md", "data.csv"):
        shutil.copy2(work / name, other / name)

    def both(*args: str) -> tuple[Any, Any]:
        return ok_json(lifecycle(*args)), ok_json(artifactctl(*args, cwd=other))

    one, two = both("deliver", "report.md", "data.csv", "--json", "--now", T0)
    assert _without(one, "package", "path") == _without(two, "package", "path")
    assert Path(two["path"]).parent == other / "output"
    assert one["package"][:-6] == two["package"][:-6]

    for repo in (work, other):
        (repo / "output" / "stray.txt").write_text("stray\n")
    a, b = both("sweep", "--json", "--now", at(T0, timedelta(days=1)))
    assert _without(a, "outbox") == _without(b, "outbox")

    a = ok_json(lifecycle("inspect", one["package"], "--json"))
    b = ok_json(artifactctl("inspect", two["package"], "--json", cwd=other))
    assert _without(a, "package", "path") == _without(b, "package", "path")

    a, b = both("sweep", "--json", "--now", at(T0, LIFETIME + timedelta(days=1)))
    assert _without(a, "outbox", "deleted") == _without(b, "outbox", "deleted")
    assert (a["deleted_packages"], a["deleted_unmanaged"]) == (1, 1)

    code_a, out_a, err_a = lifecycle("deliver", "nothing-here.txt")
    code_b, out_b, err_b = artifactctl("deliver", "nothing-here.txt", cwd=other)
    assert code_a == code_b == 2 and out_a == out_b == ""
    assert err_a.startswith("lifecycle: error: ") and err_b.startswith("artifactctl: error: ")
    assert err_a.removeprefix("lifecycle") == err_b.removeprefix("artifactctl")

    code_a, _, err_a = lifecycle("sweep", "--now", "yesterday")
    code_b, _, err_b = artifactctl("sweep", "--now", "yesterday", cwd=other)
    assert code_a == code_b == 2
    assert err_a.removeprefix("lifecycle") == err_b.removeprefix("artifactctl")


def test_artifactctl_runs_from_a_checkout_without_installation(checkout_copy: Path, work: Path) -> None:
    """The script puts its own checkout's src/ first, ahead of any installed copy of the package."""
    cli = checkout_copy / "src" / "continuity" / "cli" / "outbox.py"
    cli.write_text(cli.read_text().replace("It is not memory.", "It is not memory (checkout copy)."))
    code, out, err = artifactctl("--help", script=checkout_copy / "scripts" / "artifactctl.py")
    assert code == 0, err
    assert "checkout copy" in " ".join(out.split()) and "artifactctl" in out  # help text is wrapped
    doc = ok_json(artifactctl("sweep", "--json", script=checkout_copy / "scripts" / "artifactctl.py"))
    assert doc["activated"] is False


# --- the hook ----------------------------------------------------------------------------------------


def test_hook_sweep_is_silent_and_needs_only_the_standard_library(work: Path) -> None:
    ok_json(lifecycle("deliver", "report.md", "--json", "--now", "2020-01-01T00:00:00Z"))
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(SCRIPT), "sweep", "--hook"],  # -S: no typer, no installed package
        cwd=work,
        capture_output=True,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert sorted(p.name for p in (work / "output").iterdir()) == [STATE_NAME]

    (work / "output" / STATE_NAME).write_text("{broken")
    for run in (lambda: lifecycle("sweep", "--hook"), lambda: artifactctl("sweep", "--hook")):
        assert run() == (0, "", "")


def _bash_hook(command: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, check=False, timeout=60)


def sweep_command(script: Path) -> str:
    digest = hashlib.sha256(script.read_bytes()).hexdigest()
    return hookcommand.posix_command(
        shlex.quote(sys.executable), "scripts/artifactctl.py", digest, ["sweep", "--hook"], notice=False
    )


def test_the_pinned_sweep_handler_runs_from_a_subfolder_and_refuses_a_changed_script(
    checkout_copy: Path, work: Path
) -> None:
    shutil.copytree(checkout_copy / "scripts", work / "scripts")
    shutil.copytree(checkout_copy / "src", work / "src")
    ok_json(lifecycle("deliver", "report.md", "--json", "--now", "2020-01-01T00:00:00Z"))
    (work / "sub" / "deeper").mkdir(parents=True)
    script = work / "scripts" / "artifactctl.py"
    command = sweep_command(script)

    with script.open("a") as handle:
        handle.write("# changed after review\n")
    proc = _bash_hook(command, work / "sub" / "deeper")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert len(list((work / "output").iterdir())) == 2  # the changed script did not run

    proc = _bash_hook(sweep_command(script), work / "sub" / "deeper")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert sorted(p.name for p in (work / "output").iterdir()) == [STATE_NAME]


def _quiet(repo: Path, now: str) -> bool:
    module = runpy.run_path(str(SCRIPT), run_name="artifactctl")
    return bool(module["quiet"](str(repo), parse_time(now).timestamp()))


def test_quiet_says_nothing_is_due_only_when_a_sweep_would_change_nothing(work: Path) -> None:
    """The hook's one small state read agrees with the sweep itself, state by state."""

    def agrees(now: str) -> bool:
        quiet = _quiet(work, now)
        report = ok_json(lifecycle("sweep", "--dry-run", "--json", "--now", now))
        idle = not (report["deleted_packages"] or report["deleted_unmanaged"] or report["enrolled"])
        assert quiet == idle or (not quiet and idle), (now, report)  # "not quiet" may only cost a sweep
        return quiet

    assert agrees(T0)  # no outbox at all
    delivered = ok_json(lifecycle("deliver", "report.md", "--json", "--now", T0))
    assert agrees(at(T0, SECOND))
    assert agrees(at(T0, LIFETIME - SECOND))
    assert not agrees(delivered["expires"])  # due at its expiry, to the second
    (work / "output" / "stray.txt").write_text("dropped here by hand")
    assert not agrees(at(T0, SECOND))  # a new child is to be enrolled
    ok_json(lifecycle("sweep", "--json", "--now", at(T0, SECOND)))
    assert agrees(at(T0, 2 * SECOND))
    (work / "output" / "stray.txt").unlink()
    assert not _quiet(work, at(T0, 2 * SECOND))  # a vanished child: the record is tidied by a sweep
    (work / "output" / STATE_NAME).write_text("{broken")
    assert not _quiet(work, at(T0, 2 * SECOND))  # damaged: for the sweep to judge (it refuses, silently)


def test_a_quiet_outbox_costs_the_hook_no_import_of_the_package(work: Path, checkout_copy: Path) -> None:
    shutil.copytree(checkout_copy / "scripts", work / "scripts")
    shutil.copytree(checkout_copy / "src", work / "src")
    command = sweep_command(work / "scripts" / "artifactctl.py").replace(" -I -S ", " -I -S -X importtime ", 1)
    for setup in (lambda: None, lambda: ok_json(lifecycle("deliver", "report.md", "--json"))):
        setup()
        proc = _bash_hook(command, work / "src")
        assert proc.returncode == 0 and proc.stdout == b""
        assert b"continuity" not in proc.stderr and b"import time" in proc.stderr
    (work / "output" / "stray.txt").write_text("new")
    proc = _bash_hook(command, work / "src")
    assert b"continuity.outbox.sweep" in proc.stderr  # something is due: the sweep itself runs
    assert (work / "output" / "stray.txt").exists()  # enrolled, not deleted


# --- install-sweeper ---------------------------------------------------------------------------------


OTHER_LINES = "# m h dom mon dow command\nMAILTO=me@example.invalid\n30 2 * * * /usr/bin/backup --nightly\n"


def test_install_sweeper_keeps_other_lines_and_is_idempotent(work: Path, crontab: Path) -> None:
    crontab.write_text(OTHER_LINES)
    digest = hashlib.sha256(SCRIPT.read_bytes()).hexdigest()

    dry = ok_json(lifecycle("install-sweeper", "--dry-run", "--json"))
    assert set(dry) == INSTALL_KEYS
    assert dry["dry_run"] is True and dry["activated"] is True and dry["changed"] is True
    assert crontab.read_text() == OTHER_LINES
    assert not (work / "output").exists()
    code, out, _ = lifecycle("install-sweeper", "--dry-run")
    assert code == 0 and dry["entry"] in out and "would install" in out

    first = ok_json(lifecycle("install-sweeper", "--json"))
    assert first["changed"] is True and first["activated"] is True
    assert first["sha256"] == digest and first["script"] == str(SCRIPT)
    assert (work / "output" / STATE_NAME).is_file()
    second = ok_json(lifecycle("install-sweeper", "--json"))
    assert second["changed"] is False and second["activated"] is False

    lines = crontab.read_text().splitlines()
    assert lines[:3] == OTHER_LINES.splitlines()
    ours = [line for line in lines if marker_for(work) in line]
    assert len(ours) == 1 and len(lines) == 4
    entry = ours[0]
    assert entry == first["entry"]
    assert entry.split()[1:5] == ["*", "*", "*", "*"]  # hourly
    assert digest in entry and str(SCRIPT) in entry and "sweep --quiet" in entry
    assert "%" not in entry
    assert (work / "output").is_dir()


def test_each_repository_gets_its_own_entry(work: Path, crontab: Path, tmp_path: Path) -> None:
    other = make_repo(tmp_path / "other")
    ok_json(lifecycle("install-sweeper", "--json"))
    ok_json(artifactctl("install-sweeper", "--json", cwd=other))
    ok_json(lifecycle("install-sweeper", "--json"))
    lines = crontab.read_text().splitlines()
    assert len(lines) == 2
    assert sum(marker_for(work) in line for line in lines) == 1
    assert sum(marker_for(other) in line for line in lines) == 1


def test_an_unreadable_crontab_is_never_overwritten(work: Path, crontab: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    crontab.write_text(OTHER_LINES)
    monkeypatch.setenv("FAKE_CRONTAB_FAIL", "1")
    code, out, err = lifecycle("install-sweeper")
    assert code == 1 and out == ""
    assert "crontab -l failed" in err
    assert crontab.read_text() == OTHER_LINES
    assert not (work / "output").exists()  # not activated either


def test_installed_entry_sweeps_and_refuses_a_changed_script(checkout_copy: Path, work: Path, crontab: Path) -> None:
    script = checkout_copy / "scripts" / "artifactctl.py"
    result = install_sweeper(work, script=script, python=sys.executable)
    ok_json(lifecycle("deliver", "report.md", "--json", "--now", "2020-01-01T00:00:00Z"))
    command = result.entry.split(None, 5)[5]  # the part after the five schedule fields

    with script.open("a") as handle:
        handle.write("# changed after install\n")
    proc = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode != 0
    assert "changed since install-sweeper pinned it" in proc.stderr
    assert len(list((work / "output").iterdir())) == 2

    result = install_sweeper(work, script=script, python=sys.executable)
    assert len(crontab.read_text().splitlines()) == 1
    command = result.entry.split(None, 5)[5]
    proc = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert sorted(p.name for p in (work / "output").iterdir()) == [STATE_NAME]


def test_merge_crontab_replaces_only_its_own_marked_entry() -> None:
    mine, theirs = "continuity-outbox-sweeper:bbbbbbbbbbbb", "continuity-outbox-sweeper:aaaaaaaaaaaa"
    table = f"1 * * * * a # {theirs}\n5 * * * * b\n"
    merged = merge_crontab(table, f"7 * * * * new # {mine}", mine)
    assert merged == table + f"7 * * * * new # {mine}\n"
    doubled = merged + f"9 * * * * stray copy # {mine}\n"
    assert merge_crontab(doubled, f"7 * * * * newer # {mine}", mine) == table + f"7 * * * * newer # {mine}\n"
    assert merge_crontab("", "0 * * * * x # m", "m") == "0 * * * * x # m\n"
    assert merge_crontab("5 * * * * b", "0 * * * * x # m", "m") == "5 * * * * b\n0 * * * * x # m\n"


def test_schtasks_installs_one_pinned_hourly_task(work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "winbin"
    bin_dir.mkdir()
    saved = tmp_path / "tasks"
    saved.mkdir()
    fake = bin_dir / "schtasks"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import os, sys, shutil\n"
        "args = sys.argv[1:]\n"
        "name = args[args.index('/TN') + 1]\n"
        f"shutil.copy(args[args.index('/XML') + 1], os.path.join({str(saved)!r}, name + '.xml'))\n"
        "print('SUCCESS: The scheduled task was successfully created.')\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for _ in range(2):
        result = install_sweeper(work, scheduler="schtasks", python=sys.executable)
    tasks = list(saved.iterdir())
    assert len(tasks) == 1
    xml = tasks[0].read_bytes().decode("utf-16")
    digest = hashlib.sha256(SCRIPT.read_bytes()).hexdigest()
    assert digest in xml and "PT1H" in xml and "sweep --quiet" in xml
    assert f"<WorkingDirectory>{work}</WorkingDirectory>" in xml
    assert result.scheduler == "schtasks" and digest in result.entry


def test_times_parse_and_print_in_utc() -> None:
    assert format_time(parse_time("2025-03-01T13:00:00+01:00")) == T0
    assert format_time(parse_time("2025-03-01T12:00:00")) == T0
    assert parse_time("2025-03-01T12:00:00z") == datetime(2025, 3, 1, 12, tzinfo=timezone.utc)


# --- list --------------------------------------------------------------------------------------------

LIST_KEYS = {"version", "outbox", "activated", "entries"}
LIST_ENTRY_KEYS = {"name", "kind", "created", "expires", "files", "bytes", "problem"}


def test_list_names_every_package_with_its_deletion_time(work: Path) -> None:
    assert ok_json(lifecycle("list", "--json"))["entries"] == []
    assert lifecycle("list")[1].endswith("holds no packages\n")
    first = ok_json(lifecycle("deliver", "report.md", "--json", "--now", T0))
    later = format_time(parse_time(T0) + timedelta(hours=1))
    second = ok_json(lifecycle("deliver", "report.md", "data.csv", "--json", "--now", later))
    doc = ok_json(lifecycle("list", "--json"))
    assert set(doc) == LIST_KEYS and doc["version"] == 1
    assert all(set(entry) == LIST_ENTRY_KEYS for entry in doc["entries"])
    assert [e["name"] for e in doc["entries"]] == [second["package"], first["package"]]  # newest first
    newest = doc["entries"][0]
    assert (newest["kind"], newest["files"], newest["expires"]) == ("package", 2, second["expires"])
    assert newest["bytes"] == sum(f["bytes"] for f in second["files"])
    code, out, _ = lifecycle("list")
    assert code == 0 and out.splitlines()[0].startswith(f"{second['package']}  expires {second['expires']}  2 files")
    # A package whose manifest was damaged is listed with the reason, never skipped.
    (work / "output" / first["package"] / MANIFEST_NAME).write_text("{", encoding="utf-8")
    damaged = ok_json(lifecycle("list", "--json"))["entries"][1]
    assert damaged["name"] == first["package"] and "not valid JSON" in damaged["problem"]
