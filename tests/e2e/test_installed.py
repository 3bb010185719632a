"""User-scope hooks from a real package installation follow the installation, not a checkout.

A wheel is built from a copy of this checkout and installed (`pip install --no-deps`) into a new
virtual environment whose dependencies come from this test environment's site-packages (a `.pth`
line, which is not read as a site folder: the editable install's own `.pth` there is not processed,
so `continuity` is the installed copy). The copy is then deleted: the hooks must still restore the
brief. An upgrade is a changed installed script: the hook then refuses it until `hooks install` pins
it again.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from hookkit import ROOT, context_of, hook_env, payload, run_shell

from continuity.trust import harness, hookcommand, installation, registered

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _copy_sources(dest: Path) -> Path:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        if (ROOT / rel).is_file() and not rel.startswith((".venv/", "tests/", "bench/")):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A virtual environment with continuity installed from a wheel; the source copy already deleted."""
    base = tmp_path_factory.mktemp("installed")
    source = _copy_sources(base / "source")
    wheels = base / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels)]
    subprocess.run([*build, str(source)], check=True, capture_output=True, timeout=300)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    [wheel] = wheels.glob("continuity-*.whl")
    install = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "-q",
        "--no-deps",
        "--no-compile",
        "--ignore-installed",
        "--target",
        str(site),
    ]
    subprocess.run([*install, str(wheel)], check=True, capture_output=True, timeout=300)
    shutil.rmtree(source)  # nothing may depend on the checkout it came from
    return {"python": python, "package": site / "continuity"}


def run_installed(installed: dict[str, Path], cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    code = "from continuity.cli import main; main()"
    return subprocess.run(
        [str(installed["python"]), "-c", code, *args],
        cwd=cwd,
        env=hook_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_every_package_of_the_checkout_imports_from_the_installed_copy(installed: dict[str, Path]) -> None:
    """The wheel holds every sub-package and the three folders of data, and nothing is read from a checkout."""
    packages = sorted(
        ".".join(init.parent.relative_to(ROOT / "src").parts)
        for init in (ROOT / "src" / "continuity").rglob("__init__.py")
    )
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    print(importlib.import_module(name).__file__)"
    done = subprocess.run(
        [str(installed["python"]), "-I", "-c", code, *packages], capture_output=True, text=True, timeout=120, check=True
    )
    files = done.stdout.split()
    assert len(files) == len(packages) and all(Path(file).is_relative_to(installed["package"]) for file in files)
    for folder, sample in (("_templates", "fact.md"), ("_vault_template", "10-project"), ("_scripts", "vault-sync.py")):
        assert (installed["package"] / folder / sample).exists(), folder


def test_the_wheel_carries_the_scripts_the_hooks_run(installed: dict[str, Path]) -> None:
    scripts = installed["package"] / "_scripts"
    for name in ("agent-startup-context.py", "artifactctl.py", "vault-sync.py"):
        assert (scripts / name).read_bytes() == (ROOT / "scripts" / name).read_bytes()


def _no_cron_path(tmp_path: Path) -> str:
    """A PATH with git and nothing else: no `crontab`, as on a machine without cron."""
    tools = tmp_path / "tools"
    tools.mkdir()
    found = shutil.which("git")
    assert found is not None
    (tools / "git").symlink_to(found)
    return str(tools)


def test_schedulers_from_a_package_pin_its_own_scripts_and_the_entry_runs(
    installed: dict[str, Path], tmp_path: Path
) -> None:
    """`sync --install-hourly --dry-run` and `outbox install-sweeper --dry-run` from a wheel, on a machine
    without cron: each shows its entry pinned to the installed copy, and the sync entry really syncs."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    vault = tmp_path / "vault"
    assert run_installed(installed, repo, "init", "--vault", str(vault), "--new", "--device", "dev-a").returncode == 0
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    done = run_installed(installed, repo, "sync", "--remote", str(remote))
    assert done.returncode == 0, done.stderr
    path = _no_cron_path(tmp_path)
    scripts = installed["package"] / "_scripts"

    done = run_installed(installed, repo, "sync", "--install-hourly", "--dry-run", "--json", PATH=path)
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)["entry"]
    assert str(scripts / "vault-sync.py") in entry and harness.sha256_file(scripts / "vault-sync.py") in entry
    # What cron would run: the part after the five schedule fields, without the marker comment.
    command = entry.split(None, 5)[5].rsplit(" # ", 1)[0]
    (vault / "30-memory" / "facts").mkdir(parents=True, exist_ok=True)
    (vault / "00-system" / "INDEX.md").write_text((vault / "00-system" / "INDEX.md").read_text() + "\nmore\n")
    ran = subprocess.run(["sh", "-c", command], env=hook_env(), capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0 and ran.stdout == "" and ran.stderr == ""
    shown = subprocess.run(
        ["git", "-C", str(remote), "show", "main:00-system/INDEX.md"], capture_output=True, text=True, check=True
    )
    assert shown.stdout.endswith("more\n")

    done = run_installed(installed, repo, "outbox", "install-sweeper", "--dry-run", "--json", PATH=path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["script"] == str(scripts / "artifactctl.py") and report["dry_run"] is True
    # Without --dry-run the missing scheduler is named, with the command it schedules.
    done = run_installed(installed, repo, "sync", "--install-hourly", PATH=path)
    assert done.returncode == 1 and "crontab was not found" in done.stderr and "'lifecycle sync'" in done.stderr
    assert "artifactctl" not in done.stderr


def test_user_scope_hooks_from_a_package_run_its_own_copy(
    installed: dict[str, Path], tmp_path: Path, isolated_home: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    done = run_installed(installed, outside, "hooks", "install", "--harness", "codex", "--scope", "user", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    scripts = installed["package"] / "_scripts"
    assert report["installation"] == {"kind": "package", "scripts": str(scripts), "python": str(installed["python"])}
    doc = json.loads((isolated_home / ".codex" / "hooks.json").read_text())
    for group in doc["hooks"].values():
        for handler in group[0]["hooks"]:
            named = hookcommand.split(handler["command"])
            assert named is not None and named[0] == str(installed["python"])
            assert Path(named[1]).parent == scripts and named[2] == harness.sha256_file(Path(named[1]))
            assert not hookcommand.too_long(handler["command"]) and not hookcommand.too_long(handler["commandWindows"])
            assert str(ROOT) not in handler["command"]
    start = doc["hooks"]["SessionStart"][0]["hooks"][0]["command"]

    # The checkout the package was built from is gone; a connected repository still gets its brief.
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    init = run_installed(installed, repo, "init", "--vault", str(tmp_path / "vault"), "--new", "--device", "dev-a")
    assert init.returncode == 0, init.stderr
    answer = run_shell(start, payload("SessionStart", repo, source="startup"), repo)
    assert answer.returncode == 0, answer.stderr
    brief = context_of(answer.stdout, "SessionStart")
    assert brief.startswith("<private-memory") and "changed since" not in brief and "unavailable" not in brief

    shown = json.loads(run_installed(installed, outside, "hooks", "show", "--json").stdout)
    [user] = [r for r in shown["registrations"] if r["harness"] == "codex" and r["scope"] == "user"]
    assert user["handlers"] and all(h["state"] == "current" for h in user["handlers"])


def test_after_an_upgrade_hooks_install_pins_the_new_script(
    installed: dict[str, Path], tmp_path: Path, isolated_home: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    assert run_installed(installed, outside, "hooks", "install", "--harness", "claude").returncode == 0
    script = installed["package"] / "_scripts" / "agent-startup-context.py"
    original = script.read_bytes()
    try:
        script.write_bytes(original + b"# the next release\n")  # what an upgrade does to the bytes
        shown = run_installed(installed, outside, "hooks", "show")
        assert "agent-startup-context.py" in shown.stdout and ": stale" in shown.stdout
        settings = json.loads((isolated_home / ".claude" / "settings.json").read_text())
        start = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        refused = run_shell(start, payload("SessionStart", outside, source="startup"), outside)
        assert hookcommand.CHANGED_NOTICE in refused.stdout
        again = run_installed(installed, outside, "hooks", "install", "--harness", "claude")
        assert again.returncode == 0 and "wrote" in again.stdout and "installed package" in again.stdout
        shown = run_installed(installed, outside, "hooks", "show", "--json")
        [user] = [r for r in json.loads(shown.stdout)["registrations"] if r["harness"] == "claude"]
        assert {h["state"] for h in user["handlers"]} == {"current"}
    finally:
        script.write_bytes(original)


def test_from_an_editable_install_it_says_what_the_hooks_depend_on(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from writer_support import cli

    monkeypatch.chdir(tmp_path)  # outside this checkout, whose project file already registers the hooks
    found = installation.find()
    assert found.kind == installation.CHECKOUT_KIND and found.scripts == ROOT / "scripts"
    result = cli(["hooks", "install", "--harness", "codex"])
    assert result.exit_code == 0, result.stderr
    assert "editable install" in result.stderr and str(ROOT) in result.stderr


def test_hooks_show_names_each_file_and_a_missing_script(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from writer_support import cli

    gone = tmp_path / "moved-checkout" / "scripts"
    gone.mkdir(parents=True)
    for name in ("agent-startup-context.py", "artifactctl.py"):
        shutil.copy2(ROOT / "scripts" / name, gone / name)
    harness.install("codex", "user", gone.parent)
    shutil.rmtree(gone.parent)
    monkeypatch.chdir(tmp_path)
    result = cli(["hooks", "show", "--json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc) == {"version", "registrations"}
    assert [(r["harness"], r["scope"]) for r in doc["registrations"]] == [("codex", "user"), ("claude", "user")]
    codex, claude = doc["registrations"]
    assert set(codex) == {"harness", "scope", "file", "exists", "error", "handlers"}
    assert set(codex["handlers"][0]) == {"event", "script", "python", "sha256", "current", "state"}
    assert {h["state"] for h in codex["handlers"]} == {registered.MISSING}
    assert claude["exists"] is False and claude["handlers"] == []
    text = cli(["hooks", "show"]).stdout
    assert f"codex user: {isolated_home / '.codex' / 'hooks.json'}: 6 handlers" in text
    assert ": missing" in text and "claude user:" in text and "no such file" in text
