"""A repository that carries an outbox record never makes the sweep delete anything.

The adversary is a repository the person clones (or any folder the tool did not activate): it can
commit `output/.outbox.json` with any dates, tokens and entries, and the person's own untracked files
then sit in `output/`. Only an outbox that this computer's tool activated, recorded in machine-local
state outside every repository, and whose record git does not track, is ever swept.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from continuity.errors import InputRejected
from continuity.outbox import activation, folder
from continuity.outbox.sweep import install_sweeper, sweep

CHECKOUT = Path(__file__).resolve().parents[2]
ARTIFACTCTL = CHECKOUT / "scripts" / "artifactctl.py"
PERSONS_FILES = ("results.csv", "models")
LATER = datetime(2100, 1, 1, tzinfo=timezone.utc)  # far past any expiry a record could claim


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("demo\n")
    return path


def persons_files(repo: Path) -> None:
    outbox = repo / "output"
    outbox.mkdir(exist_ok=True)
    (outbox / "results.csv").write_text("a,b\n1,2\n")
    (outbox / "models").mkdir()
    (outbox / "models" / "weights.bin").write_bytes(b"\0" * 64)


def still_there(repo: Path) -> bool:
    return (
        all((repo / "output" / name).exists() for name in PERSONS_FILES)
        and (repo / "output" / "models" / "weights.bin").is_file()
    )


def hook_sweep_subprocess(repo: Path) -> subprocess.CompletedProcess[bytes]:
    """The session-start sweep as the hook runs it: isolated interpreter, cwd in the repository."""
    return subprocess.run(
        [sys.executable, "-I", str(ARTIFACTCTL), "sweep", "--hook"], cwd=repo, capture_output=True, timeout=60
    )


times = st.datetimes(
    min_value=datetime(1971, 1, 1), max_value=datetime(2099, 1, 1), timezones=st.just(timezone.utc)
).map(folder.format_time)
schedule = st.fixed_dictionaries({"since": times, "expires": times})
records = st.fixed_dictionaries(
    {
        "activated": times,
        "token": st.one_of(st.none(), st.text(min_size=1, max_size=40), st.from_regex(r"[0-9a-f]{32}", fullmatch=True)),
        "listed": st.sets(st.sampled_from(PERSONS_FILES)),
        "as_package": st.booleans(),
        "when": schedule,
    }
)


def forged_record(spec: dict[str, object]) -> str:
    when = spec["when"]
    assert isinstance(when, dict) and isinstance(spec["listed"], set)
    table = {name: {"created" if spec["as_package"] else "discovered": when["since"], "expires": when["expires"]}
             for name in sorted(spec["listed"])}  # fmt: skip
    doc: dict[str, object] = {
        "version": 1,
        "activated": spec["activated"],
        "packages": table if spec["as_package"] else {},
        "enrolled": {} if spec["as_package"] else table,
    }
    if spec["token"] is not None:
        doc["activation"] = spec["token"]
    return json.dumps(doc)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=records, committed=st.booleans())
def test_a_record_this_computer_did_not_make_never_deletes(
    tmp_path_factory: pytest.TempPathFactory, spec: dict[str, object], committed: bool
) -> None:
    repo = new_repo(tmp_path_factory.mktemp("clone") / "repo")
    (repo / "output").mkdir()
    (repo / "output" / folder.STATE_NAME).write_text(forged_record(spec))
    if committed:
        git(repo, "add", "-f", "output/.outbox.json")
        git(repo, "commit", "-q", "-m", "ship a record")
    persons_files(repo)
    before = (repo / "output" / folder.STATE_NAME).read_bytes()

    assert hook_sweep_subprocess(repo).returncode == 0
    with pytest.raises(activation.ForeignOutbox):
        sweep(repo, now=LATER)
    assert still_there(repo)
    assert (repo / "output" / folder.STATE_NAME).read_bytes() == before  # not even enrolled


def test_a_record_this_computer_made_stops_counting_once_git_tracks_it(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    moment = datetime(2020, 1, 1, tzinfo=timezone.utc)
    activation.activate(repo, moment)
    persons_files(repo)
    git(repo, "add", "-f", "output/.outbox.json")  # staged is enough: a commit would carry it
    with pytest.raises(activation.ForeignOutbox, match="tracked by git"):
        sweep(repo, now=LATER)
    assert still_there(repo)

    git(repo, "rm", "-q", "--cached", "output/.outbox.json")
    sweep(repo, now=moment)  # enrolls
    sweep(repo, now=LATER)  # owned again: the policy applies, seven days after enrollment
    assert not any((repo / "output" / name).exists() for name in PERSONS_FILES)


def test_a_record_copied_from_an_activated_outbox_does_not_carry_its_activation(tmp_path: Path) -> None:
    """The token is bound to the folder it was made for: the same bytes elsewhere are not ours."""
    ours = new_repo(tmp_path / "ours")
    activation.activate(ours, datetime(2020, 1, 1, tzinfo=timezone.utc))
    other = new_repo(tmp_path / "other")
    (other / "output").mkdir()
    (other / "output" / folder.STATE_NAME).write_bytes((ours / "output" / folder.STATE_NAME).read_bytes())
    persons_files(other)
    assert hook_sweep_subprocess(other).returncode == 0
    with pytest.raises(activation.ForeignOutbox):
        sweep(other, now=LATER)
    assert still_there(other)


def test_an_outbox_activated_before_tokens_is_left_alone_until_install_sweeper_adopts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The upgrade path: nothing is deleted, `lifecycle outbox list` says what to run, and adopting
    restarts every entry's seven days instead of believing the old dates."""
    repo = new_repo(tmp_path / "repo")
    due = {"discovered": "2020-01-01T00:00:00Z", "expires": "2020-01-08T00:00:00Z"}
    old = {"version": 1, "activated": "2020-01-01T00:00:00Z", "packages": {}, "enrolled": {"results.csv": due}}
    (repo / "output").mkdir()
    (repo / "output" / folder.STATE_NAME).write_text(json.dumps(old))
    persons_files(repo)
    assert hook_sweep_subprocess(repo).returncode == 0
    assert still_there(repo)

    listing = subprocess.run(
        [sys.executable, "-m", "continuity", "outbox", "list"], cwd=repo, capture_output=True, text=True, timeout=60
    )
    assert listing.returncode == 0 and "install-sweeper" in listing.stderr
    swept = subprocess.run(
        [sys.executable, "-m", "continuity", "outbox", "sweep"], cwd=repo, capture_output=True, text=True, timeout=60
    )
    assert swept.returncode == 5 and "install-sweeper" in swept.stderr and "Traceback" not in swept.stderr

    monkeypatch.setenv("PATH", str(tmp_path / "no-bin") + os.pathsep + os.environ["PATH"])
    (tmp_path / "no-bin").mkdir()
    fake = tmp_path / "no-bin" / "crontab"
    fake.write_text("#!/bin/sh\n[ \"$1\" = -l ] && { echo 'no crontab for tester' >&2; exit 1; }\nexit 0\n")
    fake.chmod(0o755)
    now = datetime(2030, 6, 1, tzinfo=timezone.utc)
    install_sweeper(repo, script=ARTIFACTCTL, scheduler="cron", now=now)
    sweep(repo, now=now + timedelta(days=6))
    assert still_there(repo)  # the old 2020 dates were not believed
    sweep(repo, now=now + timedelta(days=7))
    assert not (repo / "output" / "results.csv").exists()


def test_install_sweeper_refuses_a_record_git_tracks(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    (repo / "output").mkdir()
    (repo / "output" / folder.STATE_NAME).write_text(
        json.dumps({"version": 1, "activated": "2020-01-01T00:00:00Z", "packages": {}, "enrolled": {}})
    )
    git(repo, "add", "-f", "output/.outbox.json")
    with pytest.raises(InputRejected, match="tracked by git"):
        install_sweeper(repo, script=ARTIFACTCTL, scheduler="cron", dry_run=True)
