"""Helpers for the write-side tests (lease, journal, writer, handoff, memory): a vault skeleton, a write
context with a pinned clock, foreign lease files, a connection file, and an in-process CLI runner."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from continuity.store.writer import WriteContext
from continuity.vault import access as vault_access, layout as vault_layout

NOW = dt.datetime(2026, 11, 30, 3, 57, 0, tzinfo=dt.timezone.utc)
# A well-formed AWS access key id that belongs to nobody, split so no scanner flags this file.
FAKE_SECRET = "AKIA" + "Q7XK3LP9ZQ8WM2RT"

HANDOFF_BODY = """# Resume the parser work

## Goal and status

Parser rewrite is half done; the lexer passes its tests.

## Completed work

- src/lexer.py rewritten; `pytest tests/test_lexer.py` passes.

## Risks and decisions

- Keep the old AST shape until the printer is ported.

## Next actions

1. Port the printer.
2. Run the full suite.
"""


def make_vault(root: Path) -> Path:
    """A vault skeleton with every folder the layout names."""
    root.mkdir(parents=True, exist_ok=True)
    for rel in vault_layout.ALL_DIRS:
        (root / rel).mkdir(parents=True, exist_ok=True)
    return root


def context(root: Path, device: str = "laptop", project: str = "demo", **extra: object) -> WriteContext:
    return WriteContext(root, device, project, **extra)  # type: ignore[arg-type]


def write_lease(
    root: Path,
    device: str,
    expires: dt.datetime,
    acquired: dt.datetime | None = None,
    task: str | None = None,
) -> Path:
    """Another device's lease file, as its own computer would have written it."""
    folder = root / vault_layout.LEASES
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "version": 1,
        "device": device,
        "token": "0" * 32,
        "acquired": (acquired or expires - dt.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "expires": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "task": task,
    }
    path = folder / f"{device}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def connect(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    root: Path,
    device: str = "laptop",
    project: str = "demo",
) -> Path:
    """Write a connection file and point AGENT_VAULT_CONNECTION at it."""
    file = tmp_path / "connection.yaml"
    file.write_text(f'vault: "{root}"\ndevice: {device}\nproject: {project}\n', encoding="utf-8")
    monkeypatch.setenv("AGENT_VAULT_CONNECTION", str(file))
    for name in ("CODEX_SESSION_ID", "CLAUDE_SESSION_ID"):
        monkeypatch.delenv(name, raising=False)
    return file


def cli(args: list[str], stdin: str | None = None):  # type: ignore[no-untyped-def]
    """Run `lifecycle ARGS` in process; stdout and stderr stay apart."""
    from continuity.cli import app

    return CliRunner().invoke(app, args, input=stdin, prog_name="lifecycle")


def journal_lines(root: Path, device: str = "laptop") -> list[dict[str, object]]:
    path = root / vault_access.journal(device)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def all_files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def on_terminal(
    args: list[str], answers: str, *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The real command with a pseudo-terminal as standard input, answering its questions."""
    master, slave = os.openpty()
    try:
        os.write(master, answers.encode())
        return subprocess.run(
            [sys.executable, "-c", "from continuity.cli import main; main()", *args],
            stdin=slave,
            cwd=cwd,
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(slave)
        os.close(master)
