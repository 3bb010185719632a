"""The registry of brief sources (`vault.registry`): consistent in itself, and the one place a source is declared.

First the registry against itself and against the spec (unique names, paths and ranks; every cap a
`limits` constant named after its source; every event one the brief knows; the orders of section 10).
Then that every consumer's view is derived from it: a copy of the package with one source added (its
entry in `vault/registry.py` and its cap in `limits.py`, no other file changed) shows the new source
in the brief and leaves it out in its place under the ceiling, stamps it in the startup cache, checks
it in doctor with its cap and hint, lets `lifecycle edit` change it under its cap, and gives
`lifecycle scan` its cap.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from briefkit import DEVICE, PROJECT, connection_file, frontmatter, make_vault, write

from continuity import limits, names
from continuity.cli import edit as edit_cli
from continuity.health import notescan
from continuity.health.scanfiles import Target
from continuity.memory import edits
from continuity.vault import layout, registry

SRC = Path(__file__).resolve().parents[2] / "src"
SESSION, SUBAGENT = names.SESSION_START, names.SUBAGENT_START


# ------------------------------------------------------------------------------------- the registry


def test_names_paths_and_ranks_are_unique() -> None:
    for field in ("name", "path", "left_out_rank"):
        values = [getattr(source, field) for source in registry.SOURCES]
        assert len(set(values)) == len(values), field
    assert {source.name: source for source in registry.SOURCES} == registry.BY_NAME


def test_every_cap_is_the_limits_constant_named_after_its_source() -> None:
    for source in registry.SOURCES:
        assert source.cap_bytes == getattr(limits, f"{source.name.upper()}_CAP_BYTES"), source.name


def test_every_event_is_one_the_brief_renders_and_each_shows_a_source() -> None:
    for source in registry.SOURCES:
        assert source.events and set(source.events) <= set(names.START_EVENTS), source.name
    for event in names.START_EVENTS:
        assert registry.shown_in(event), event


def test_every_path_lies_in_the_layout_and_belongs_to_its_source_alone() -> None:
    for source in registry.SOURCES:
        assert source.path.startswith(tuple(f"{folder}/" for folder in layout.ALL_DIRS)) or (
            source.folder and source.path in layout.ALL_DIRS
        ), source.path
        rel = source.at(PROJECT, DEVICE) + ("/one.md" if source.folder else "")
        assert "{" not in rel and registry.holding(rel) is source, rel
        if source.label is not None:
            assert (PROJECT if source.label == "project" else DEVICE) in rel.split("/")


def test_an_editable_source_is_one_file_and_every_source_has_its_hints() -> None:
    for source in registry.SOURCES:
        assert source.note_type and source.placeholder_hint, source.name
        assert not (source.editable and source.folder), source.name
        assert source.may_be_missing == (source.missing_hint is None)


def test_the_orders_are_the_spec_s() -> None:
    """Section 10: the brief's order, and the order whole sources are left out under a ceiling."""
    assert registry.names(registry.shown_in(SESSION)) == ("soul", "preferences", "project", "device", "handoff")
    assert registry.names(registry.shown_in(SUBAGENT)) == ("project", "device", "handoff")
    assert registry.names(registry.left_out_order(SESSION)) == ("device", "preferences", "handoff", "project", "soul")
    assert registry.names(registry.left_out_order(SUBAGENT)) == ("device", "handoff", "project")
    assert registry.names(registry.EDITABLE) == ("soul", "preferences", "project", "device")
    assert [source.name for source in registry.EDITABLE if source.shared] == ["soul", "preferences", "project"]


# ------------------------------------------------------------------------------------- its readers


def test_the_readers_views_are_the_registry_s() -> None:
    assert list(edit_cli.EDITABLE.choices) == list(registry.names(registry.EDITABLE))
    for source in registry.SOURCES:
        rel = source.at(PROJECT, DEVICE) + ("/one.md" if source.folder else "")
        assert notescan.cap_for(Target(SRC, rel, rel, True)) == source.cap_bytes
        if source.editable:
            assert edits.editable(source.name) is source
            assert edits.edit_path(source.name, project=PROJECT, device=DEVICE) == rel


# ------------------------------------------------------------------------------------- one entry

STYLE_CAP = "STYLE_CAP_BYTES = 4 * 1024  # a new source's cap\n"
STYLE_ENTRY = """STYLE = Source(
    name="style",
    path=f"{layout.SYSTEM}/STYLE.md",
    cap_bytes=limits.STYLE_CAP_BYTES,
    events=(SESSION_START,),
    left_out_rank=15,
    editable=True,
    missing_hint="copy vault-template/00-system/STYLE.md",
    placeholder_hint="write its ## Brief section (lifecycle edit style)",
)
"""
STYLE_MARK = "stylemarker"

# Run with the copied package first on the path: everything a source's consumers do with the vault.
PROBE = """
import json, sys
from pathlib import Path
from continuity.brief import cache, render
from continuity.cli import edit as edit_cli
from continuity.errors import InputRejected
from continuity.health import doctor, notescan
from continuity.health.scanfiles import Target
from continuity.local import connection
from continuity.memory import edits

vault, project, device = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
conn = connection.Connection(vault, device, project, None, vault.parent / ".agent-vault", "env", None)
out = {"package": render.__file__}
full = cache.cold(vault, conn, "SessionStart", "codex")[0]
out["session"] = full.to_json()
out["subagent"] = cache.cold(vault, conn, "SubagentStart", "codex")[0].to_json()
out["inputs"] = cache.inputs(vault, conn, "SessionStart")
# Every source a fifth of the ceiling long: two must be left out, in the registry's order.
big = [v._replace(text="x" * (render.CEILING_BYTES["SessionStart"] // 5)) for v in full.sources]
out["ceiling"] = [s.name for s in render.render("SessionStart", "codex", big).sources if s.reason == "ceiling"]
out["doctor"] = {c.id: [c.level, c.message] for c in doctor.run(vault.parent).checks}
out["choices"] = list(edit_cli.EDITABLE.choices)
new = "---\\ntype: style\\n---\\n## Brief\\n- terse\\n"
plan = edits.plan_edit(vault, "style", new, project=project, device=device)
out["edit"] = [plan.rel, plan.old is not None]
try:
    edits.plan_edit(vault, "style", "---\\ntype: style\\n---\\n" + "y" * 5000, project=project, device=device)
except InputRejected as exc:
    out["too_large"] = str(exc)
out["scan_cap"] = notescan.cap_for(Target(vault, "00-system/STYLE.md", "00-system/STYLE.md", True))
(vault / "00-system" / "STYLE.md").unlink()
out["doctor_missing"] = {c.id: [c.level, c.message] for c in doctor.run(vault.parent).checks}
print(json.dumps(out))
"""


def _with_style(tmp_path: Path) -> Path:
    """A copy of the package with one source added: its registry entry and its cap, nothing else."""
    copy = tmp_path / "src"
    shutil.copytree(SRC / "continuity", copy / "continuity", ignore=shutil.ignore_patterns("__pycache__"))
    limits_py = copy / "continuity" / "limits.py"
    limits_py.write_text(limits_py.read_text(encoding="utf-8") + STYLE_CAP, encoding="utf-8")
    registry_py = copy / "continuity" / "vault" / "registry.py"
    text = registry_py.read_text(encoding="utf-8")
    listed = "SOURCES: tuple[Source, ...] = (SOUL, PREFERENCES, PROJECT, DEVICE, HANDOFF)"
    assert text.count(listed) == 1
    text = text.replace(listed, f"{STYLE_ENTRY}{listed.replace('PREFERENCES,', 'PREFERENCES, STYLE,')}")
    registry_py.write_text(text, encoding="utf-8")
    changed = _changed(filecmp.dircmp(SRC / "continuity", copy / "continuity"))
    assert changed == ["limits.py", "vault/registry.py"]
    return copy


def _changed(compared: filecmp.dircmp[str], prefix: str = "") -> list[str]:
    found = [prefix + name for name in compared.diff_files + compared.left_only + compared.right_only]
    for name, sub in sorted(compared.subdirs.items()):
        if name != "__pycache__":
            found += _changed(sub, f"{prefix}{name}/")
    return sorted(found)


@pytest.fixture
def probed(tmp_path: Path) -> dict[str, object]:
    copy = _with_style(tmp_path)
    vault = make_vault(tmp_path / "vault")
    note = frontmatter({"id": "style", "type": "style"}) + f"# Style\n\n## Brief\n- {STYLE_MARK}\n"
    write(vault, "00-system/STYLE.md", note)
    file = connection_file(tmp_path / "connection.yaml", vault)
    env = {**os.environ, "PYTHONPATH": str(copy), "AGENT_VAULT_CONNECTION": str(file)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(vault), PROJECT, DEVICE],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    assert str(found["package"]).startswith(str(copy))  # the copy ran, not the installed package
    return found


def test_a_new_source_is_one_registry_entry_and_its_cap(probed: dict[str, object]) -> None:
    session, subagent = probed["session"], probed["subagent"]
    assert isinstance(session, dict) and isinstance(subagent, dict)
    names = [item["name"] for item in session["sources"]]
    assert names == ["soul", "preferences", "style", "project", "device", "handoff"]
    assert session["status"] == "restored"
    assert f'<source name="style" path="00-system/STYLE.md">\n- {STYLE_MARK}\n</source>' in session["brief"]
    assert "style" not in [item["name"] for item in subagent["sources"]] and STYLE_MARK not in subagent["brief"]
    assert probed["ceiling"] == ["style", "device"]  # rank 15: after the device, before the preferences
    assert ["00-system/STYLE.md", "file", 4096] in probed["inputs"]  # type: ignore[operator]


def test_doctor_edit_and_scan_know_the_new_source(probed: dict[str, object]) -> None:
    checks, missing = probed["doctor"], probed["doctor_missing"]
    assert isinstance(checks, dict) and isinstance(missing, dict)
    level, message = checks["source.style"]
    assert level == "ok" and message.startswith("00-system/STYLE.md: valid") and "(cap 4,096)" in message
    assert missing["source.style"] == [
        "error",
        "00-system/STYLE.md is missing; copy vault-template/00-system/STYLE.md",
    ]
    assert "style" in probed["choices"]  # type: ignore[operator]
    assert probed["edit"] == ["00-system/STYLE.md", True]
    assert "4096" in str(probed["too_large"])
    assert probed["scan_cap"] == 4096
