"""One envelope, one "not restored" text, one spelling of the events, and the script's copies agree.

The startup script answers a changed module before any module is checked, so it keeps its own start
events, its own notice and its own JSON envelope; these tests hold them to `continuity.names` and
`brief.envelope`, which every other answer of the package goes through, and prove that no second
envelope builder or notice text has crept into the package.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from continuity import names
from continuity.brief import envelope
from continuity.hook import reexec
from continuity.trust import hookcommand

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "agent-startup-context.py"
PACKAGE = ROOT / "src" / "continuity"
SHARED_SENTENCE = envelope.NOT_RESTORED.split("{why}. ", 1)[1]


@pytest.fixture(scope="module")
def script() -> dict[str, Any]:
    """The script's definitions, run as a module (its `main` only runs as __main__)."""
    namespace: dict[str, Any] = {"__name__": "agent_startup_context"}
    exec(compile(SCRIPT.read_bytes(), str(SCRIPT), "exec"), namespace)  # noqa: S102 -- the checked-in script
    return namespace


def test_the_script_spells_the_start_events_as_the_package_does(script: dict[str, Any]) -> None:
    assert script["START_EVENTS"] == names.START_EVENTS


@pytest.mark.parametrize("event", names.START_EVENTS)
def test_the_scripts_notice_has_the_packages_envelope_and_wording(script: dict[str, Any], event: str) -> None:
    what = "src/continuity/limits.py"
    text = script["changed_text"](event, what)
    printed = script["changed_output"](what, {"hook_event_name": event, "cwd": "/"})
    assert json.loads(printed) == json.loads(envelope.hook_output(event, text))
    package = envelope.unavailable_text(event, " (why)")
    assert text.splitlines()[0] == package.splitlines()[0]  # the same wrapper, status unavailable
    assert text.splitlines()[-1] == package.splitlines()[-1]
    assert text.splitlines()[1].startswith("Private memory was not restored")
    assert SHARED_SENTENCE in text and SHARED_SENTENCE in package
    assert hookcommand.CHANGED_NOTICE.startswith("Private memory was not restored")


@pytest.mark.parametrize("payload", [None, [], "SessionStart", *({"hook_event_name": e} for e in names.STATE_EVENTS)])
def test_the_script_says_nothing_to_an_event_that_takes_no_context(script: dict[str, Any], payload: object) -> None:
    assert script["changed_output"]("src/continuity/limits.py", payload) == ""


def test_the_import_failure_notice_goes_through_the_one_envelope() -> None:
    failure = ImportError("no ruamel here", name="ruamel")
    for event in names.START_EVENTS:
        printed = reexec._import_failure_output({"hook_event_name": event}, failure)
        context = json.loads(printed)["hookSpecificOutput"]["additionalContext"]
        assert printed == envelope.hook_output(event, context)
        assert context.startswith(f'<private-memory event="{event}" status="unavailable">\nPrivate memory')
        assert "could not import ruamel" in context and SHARED_SENTENCE in context
    assert reexec._import_failure_output({"hook_event_name": names.STOP}, failure) == ""


def _string_constants(path: Path) -> list[str]:
    """Every string constant of a module but its docstrings."""
    tree = ast.parse(path.read_bytes())
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def test_one_envelope_builder_and_one_notice_text_in_the_package() -> None:
    """Docstrings may talk about them; only `brief.envelope` builds them (and the pinned command keeps
    its fixed line, `hookcommand.CHANGED_NOTICE`, which runs before anything is checked)."""
    builders, notices = set(), set()
    for path in sorted(PACKAGE.rglob("*.py")):
        constants = _string_constants(path)
        rel = path.relative_to(PACKAGE).as_posix()
        if any("hookSpecificOutput" in c for c in constants):
            builders.add(rel)
        if any("Private memory was not restored" in c for c in constants):
            notices.add(rel)
    assert builders == {"brief/envelope.py"}
    assert notices == {"brief/envelope.py", "trust/hookcommand.py"}
