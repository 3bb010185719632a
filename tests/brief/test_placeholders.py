"""Template text is not memory: the placeholder sentences are recognised, and left out of the brief."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from briefkit import ROOT

from continuity.vault import notes, placeholders

TEMPLATES = ("device.md", "project.md", "handoff.md")


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_sentence_of_the_templates_is_known(name: str) -> None:
    """A changed template cannot silently turn its sentences into memory."""
    from continuity.store import onboard

    values = {"device": "laptop", "project": "demo", "created": "2025-01-02T03:04:05Z", "id": "x", "title": "T"}
    values |= {"session": "s", "commit": "c", "supersedes": "", "repository": "", "root_commit": "", "host": "h"}
    text = onboard.fill((ROOT / "templates" / name).read_text(encoding="utf-8"), values)
    note = notes.parse_note(text.encode("utf-8"), name)
    lines = [line for line in note.body.split("\n") if line.strip() and not line.lstrip().startswith("#")]
    assert lines
    assert [line for line in lines if not placeholders.is_placeholder_line(line)] == []
    assert placeholders.only_placeholders(note.body)


def test_every_known_sentence_is_still_in_a_template() -> None:
    text = "\n".join((ROOT / "templates" / name).read_text(encoding="utf-8") for name in TEMPLATES)
    assert [s for s in placeholders.TEMPLATE_SENTENCES if s not in text] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- What this project is, in one line.", True),
        (
            "## Brief\n\n*  what this project is,   in one line.\n\n"
            "1. How to build and test it; where the important code lives.",
            True,
        ),
        ("- What this project is, in one line.\n- A Rust CLI that syncs photos.", False),
        ("", False),
        ("## Brief\n", False),
    ],
)
def test_only_placeholders(text: str, expected: bool) -> None:
    assert placeholders.only_placeholders(text) is expected


def test_a_template_only_source_is_left_out_with_a_notice_and_doctor_warns(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conftest import use_connection
    from typer.testing import CliRunner

    from continuity.cli import app

    use_connection(monkeypatch, repo)
    runner = CliRunner()
    vault = tmp_path / "vault"
    assert runner.invoke(app, ["init", "--vault", str(vault), "--new", "--device", "laptop"]).exit_code == 0
    doc = json.loads(runner.invoke(app, ["render", "--format", "json"]).stdout)
    device = next(s for s in doc["sources"] if s["name"] == "device")
    assert (device["included"], device["reason"]) == (False, "placeholder")
    assert "Operating system, shell" not in doc["brief"]
    assert any(n.startswith("device (50-devices/laptop/DEVICE.md) is not filled in yet") for n in doc["notices"])
    report = json.loads(runner.invoke(app, ["doctor", "--json"]).stdout)
    levels = {c["id"]: c["level"] for c in report["checks"]}
    assert levels["source.device"] == levels["source.project"] == "warn"
    # Once the person writes one true line, the profile is memory and is loaded.
    profile = vault / "50-devices" / "laptop" / "DEVICE.md"
    profile.write_text(profile.read_text().replace("## Brief\n", "## Brief\n\n- Debian 12, fish shell.\n"))
    doc = json.loads(runner.invoke(app, ["render", "--format", "json"]).stdout)
    assert next(s for s in doc["sources"] if s["name"] == "device")["included"]
    assert "Debian 12, fish shell." in doc["brief"]


def test_a_secret_notice_says_what_happened_but_not_how_to_pass_the_gate(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conftest import use_connection
    from typer.testing import CliRunner

    from continuity.cli import app

    use_connection(monkeypatch, repo)
    runner = CliRunner()
    vault = tmp_path / "vault"
    assert runner.invoke(app, ["init", "--vault", str(vault), "--new", "--device", "laptop"]).exit_code == 0
    key = "AKIA" + "Q7XK3LP9" + "ZQ8WM2RT"
    soul = vault / "00-system" / "SOUL.md"
    soul.write_text(soul.read_text().replace("## Brief\n", f"## Brief\n\n- aws key {key}\n"))
    doc = json.loads(runner.invoke(app, ["render", "--format", "json"]).stdout)
    notice = next(n for n in doc["notices"] if n.startswith("soul"))
    assert "secret-like content at line" in notice
    assert "pragma" not in doc["brief"] and "allowlist" not in doc["brief"]
    report = json.loads(runner.invoke(app, ["doctor", "--json"]).stdout)
    soul_check = next(c for c in report["checks"] if c["id"] == "source.soul")
    assert "pragma: allowlist secret" in soul_check["message"]
