"""The gate with the lowest and the newest detect-secrets that pyproject allows.

The range in pyproject is a promise that every release in it works; this installs the two ends of it
with pip into a temporary directory and runs a small gate check in a subprocess whose import path
puts that copy first. It needs the package index: when pip cannot reach it, the test is skipped and
says so (any other pip failure fails the test).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"


def allowed_range() -> str:
    """The detect-secrets requirement as pyproject states it (`detect-secrets>=1.4,<2`)."""
    found = re.findall(r'"(detect-secrets[^"]*)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert len(found) == 1, found
    return found[0]


def test_the_requirement_is_a_range_not_a_pin() -> None:
    requirement = allowed_range()
    assert "==" not in requirement
    assert re.fullmatch(r"detect-secrets>=[0-9.]+,<[0-9.]+", requirement), requirement


def lowest_allowed() -> str:
    low = re.search(r">=([0-9.]+)", allowed_range())
    assert low is not None
    version = low.group(1)
    return version + ".0" * (2 - version.count("."))  # ">=1.4" allows 1.4.0 first


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pip", *args], capture_output=True, text=True, check=False, timeout=300, env=env
    )


# Run in the subprocess: the installed copy must be the one imported, and the gate's adapter must
# find a Discord bot token (a plugin only detect-secrets has) through it, and leave its settings alone.
CHECK = r"""
import random, string, sys
import detect_secrets
from detect_secrets.__version__ import VERSION
from detect_secrets.settings import get_settings
from continuity.gate.detectsecrets import detect_secrets_scan
from continuity.gate.secrets import scan_text

assert detect_secrets.__file__.startswith(sys.argv[1]), detect_secrets.__file__
r = random.Random(9)
pick = lambda alphabet, n: "".join(r.choice(alphabet) for _ in range(n))
urlsafe = string.ascii_letters + string.digits + "-_"
token = "M" + pick(string.ascii_letters + string.digits, 23) + "." + pick(urlsafe, 6) + "." + pick(urlsafe, 27)
before = get_settings().json()
found = detect_secrets_scan([(3, "discord bot " + token), (7, "nothing here")])
assert [(n, d) for n, d, _ in found] == [(3, "discord-bot-token")], found
assert get_settings().json() == before
assert "discord-bot-token" in {f.detector for f in scan_text("a\nb\ndiscord: " + token + "\n")}
assert scan_text("The password is kept in the team's manager.\n") == []
print(VERSION)
"""


@pytest.mark.parametrize("which", ["lowest", "newest"])
def test_gate_runs_with_each_end_of_the_allowed_range(which: str, tmp_path: Path) -> None:
    reach = _pip("index", "versions", "detect-secrets")
    if reach.returncode != 0:
        pytest.skip(f"pip cannot reach the package index: {reach.stderr.strip().splitlines()[-1:]}")
    wanted = f"detect-secrets=={lowest_allowed()}" if which == "lowest" else allowed_range()
    target = tmp_path / "site"
    # --no-deps: its own dependencies (PyYAML, requests) are this environment's; only the package varies.
    installed = _pip("install", "--quiet", "--no-deps", "--target", str(target), wanted)
    assert installed.returncode == 0, installed.stderr
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(target), str(SRC)))}
    run = subprocess.run(
        [sys.executable, "-c", CHECK, str(target)], capture_output=True, text=True, check=False, env=env, timeout=120
    )
    assert run.returncode == 0, run.stderr
    version = run.stdout.strip()
    if which == "lowest":
        assert version == lowest_allowed()
    else:
        newest = re.search(r"Available versions: ([0-9.]+)", reach.stdout)
        assert newest is not None and version == newest.group(1)
