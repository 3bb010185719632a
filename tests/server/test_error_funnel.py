"""The one error funnel: the library names the field that failed, and each surface says it its own way.

Statically, over every module outside the command line: a flag (`--title`) appears in an error only as
the word of its field (`errors.FIELD`), or inside a quoted command the person may run; every field is
declared where its message names it, and every field's command-line word is an option the command line
has. At run time: a tool call's refusal holds no `--` but in a quoted command for the person (generated
over every tool and argument shape); the command line and a tool call say the same refusal, each in
its own words; and the library's own refusals speak through the server (no second check words them).
"""

from __future__ import annotations

import ast
import datetime as dt
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import typer
from briefkit import connect, make_vault
from conftest import use_connection
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner
from writer_support import FAKE_SECRET, write_lease

from continuity import errors, tunables
from continuity.cli import app
from continuity.cli.outbox import standalone_app
from continuity.server import catalog
from continuity.server.meter import Meter
from continuity.server.session import Session

SOURCE = Path(__file__).resolve().parents[2] / "src" / "continuity"
ERROR_CLASSES = {"ContinuityError", "UsageError", "InputRejected", "NotConnected", "LeaseHeld", "NoteError", "Exists"}
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
QUOTED = re.compile(r"'[^']*'")  # a command the person may run, quoted whole: 'lifecycle sync --remote URL'


def core_modules() -> Iterator[Path]:
    """Every module but the command line's own (which may name its flags)."""
    for path in sorted(SOURCE.rglob("*.py")):
        if path.relative_to(SOURCE).parts[0] != "cli":
            yield path


def error_calls(tree: ast.AST) -> Iterator[ast.Call]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in ERROR_CLASSES or name == "free_id":
                yield node


def message_parts(call: ast.Call) -> list[ast.AST]:
    """What a call words: its positional arguments and keywords, but the person's advice (CLI-only)."""
    return [*call.args, *(kw.value for kw in call.keywords if kw.arg not in ("advice", "field"))]


def constants(parts: list[ast.AST]) -> str:
    return "".join(
        sub.value
        for part in parts
        for sub in ast.walk(part)
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str)
    )


def names_field(parts: list[ast.AST]) -> bool:
    return any(isinstance(sub, ast.Name) and sub.id == "FIELD" for part in parts for sub in ast.walk(part))


def declared_fields() -> dict[str, list[str]]:
    """Every field the library raises with, and where: `field="…"` keywords and the field arguments of
    `writer.clean_line` and `review._choice`."""
    found: dict[str, list[str]] = {}
    for path in core_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            values = [kw.value for kw in node.keywords if kw.arg == "field"]
            at = {"clean_line": 1, "_choice": 2}.get(
                name
            )  # clean_line(value, field, …), _choice(value, allowed, field)
            if at is not None and len(node.args) > at:
                values.append(node.args[at])
            for value in values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    found.setdefault(value.value, []).append(f"{path.relative_to(SOURCE)}:{node.lineno}")
    return found


def command_line_options() -> set[str]:
    """Every option of `lifecycle` and `artifactctl`, in every command."""
    options: set[str] = set()

    def walk(command: click.Command) -> None:
        for param in command.params:
            options.update(opt for opt in param.opts if opt.startswith("--"))
        if isinstance(command, click.Group):
            for sub in command.commands.values():
                walk(sub)

    walk(typer.main.get_command(app))
    walk(typer.main.get_command(standalone_app()))
    return options


# ------------------------------------------------------------------------------------- statically


def test_a_flag_in_a_library_error_is_only_ever_its_fields_word() -> None:
    strays = []
    for path in core_modules():
        for call in error_calls(ast.parse(path.read_text(encoding="utf-8"))):
            for flag in FLAG.findall(QUOTED.sub("", constants(message_parts(call)))):
                strays.append(f"{path.relative_to(SOURCE)}:{call.lineno} names {flag}")
    assert strays == []


def test_a_message_that_names_a_field_declares_it() -> None:
    """Else the person would read `{field}` itself."""
    mismatched = []
    for path in core_modules():
        if path.name == "errors.py":
            continue
        for call in error_calls(ast.parse(path.read_text(encoding="utf-8"))):
            has_field = any(kw.arg == "field" for kw in call.keywords)
            if names_field(message_parts(call)) and not has_field:
                mismatched.append(f"{path.relative_to(SOURCE)}:{call.lineno}")
    assert mismatched == []


def test_every_field_maps_to_an_option_the_command_line_has_and_to_no_flag_in_a_tool_call() -> None:
    fields = declared_fields()
    assert {"type", "title", "evidence", "scope", "confidence", "limit", "task"} <= set(fields)
    options = command_line_options()
    for field, where in fields.items():
        word = errors.COMMAND_LINE.word(field)
        assert word in options, (field, word, where)
        assert errors.TOOL_CALL.word(field) == field and not field.startswith("-")
    # A tool names a field by its own argument, where it has one.
    arguments = {name for tool in catalog.TOOLS for name in tool.input_schema["properties"]}
    assert {"type", "title", "evidence", "scope", "confidence", "limit", "body"} <= arguments


def test_the_funnel_words_one_error_per_surface() -> None:
    exc = errors.UsageError(f"{errors.FIELD} must be one of a, b", field="warn_ratio", advice="ask the person")
    assert str(exc) == "warn_ratio must be one of a, b"
    assert errors.describe(exc, errors.COMMAND_LINE) == (
        "lifecycle: error: --warn-ratio must be one of a, b; ask the person",
        errors.EXIT_USAGE,
    )
    assert errors.describe(exc, errors.TOOL_CALL, "artifactctl") == (
        "artifactctl: error: warn_ratio must be one of a, b",
        errors.EXIT_USAGE,
    )
    plain = errors.InputRejected("a {field} that is only text\nover two lines")
    assert (
        errors.describe(plain, errors.COMMAND_LINE)[0] == "lifecycle: error: a {field} that is only text over two lines"
    )
    missing = FileNotFoundError(2, "No such file or directory", "/somewhere/deep/file.md")
    assert errors.describe(missing, errors.TOOL_CALL) == (
        "lifecycle: error: No such file or directory: file.md",
        errors.EXIT_PROBLEMS,
    )
    bug = errors.describe(KeyError("secret value"), errors.COMMAND_LINE)[0]
    assert bug == "lifecycle: error: unexpected KeyError; rerun with CONTINUITY_DEBUG=1 for details"


# ------------------------------------------------------------------------------------------ running


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault")


@pytest.fixture
def checkout(repo: Path, vault: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    connect(repo, vault)
    use_connection(monkeypatch, repo)
    return repo


def session_in(cwd: Path) -> Session:
    """A server session in-process, with an allowance of writes too large to run out during a test."""
    meter = Meter("main", "codex", dt.datetime.now(dt.timezone.utc), list)
    meter.written_count = -(10**6)
    meter.written_bytes = -(10**9)
    return Session(cwd, meter, "codex", watch=False)


def cli(cwd: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(app, list(args), prog_name="lifecycle")
    assert result.exit_code != 0, result.output
    return result.stderr.strip()


VALUES = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=8).map(lambda s: s * 100),
    st.integers(min_value=-3, max_value=3),
    st.booleans(),
    st.none(),
    st.lists(st.text(max_size=12), max_size=12),
    st.sampled_from(["fact", "project", "high", "SessionStart", "/(/", "\x1b[31m", " ", "--force", FAKE_SECRET]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tool=st.sampled_from([tool.name for tool in catalog.TOOLS]),
    data=st.data(),
)
def test_no_tool_refusal_names_a_flag(checkout: Path, tool: str, data: st.DataObject) -> None:
    properties = [*catalog.BY_NAME[tool].input_schema["properties"], "approve"]  # and one it does not take
    args: dict[str, Any] = data.draw(st.dictionaries(st.sampled_from(properties), VALUES, max_size=len(properties)))
    outcome = session_in(checkout).call(tool, args)
    if outcome.is_error:
        assert outcome.text.startswith("lifecycle: error: ")
        # A command the person may run stays whole ('lifecycle init --vault PATH'); nothing else has a flag.
        assert "--" not in QUOTED.sub("", outcome.text), (tool, args, outcome.text)


@pytest.mark.parametrize("tool", [tool.name for tool in catalog.TOOLS])
def test_every_tool_refuses_an_argument_it_does_not_take_without_a_flag(checkout: Path, tool: str) -> None:
    """The refusal branch of the generated test above, taken for certain by every tool."""
    outcome = session_in(checkout).call(tool, {"approve": True})
    assert outcome.is_error and outcome.text.startswith("lifecycle: error: "), outcome.text
    assert "approve" in outcome.text and "--" not in QUOTED.sub("", outcome.text), outcome.text


def test_the_same_refusal_in_each_surfaces_words(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The library's own check speaks through both: the schema lets a title of control characters
    through, and `writer.clean_line` refuses it, naming `--title` or `title`."""
    session = session_in(checkout)
    note = {"type": "fact", "title": "\x1b[31m", "body": "b", "evidence": "e"}
    tool_line = session.call("propose_note", note).text
    command_line = cli(checkout, monkeypatch, "note", "new", "--type", "fact", "--title", "\x1b[31m", "--evidence", "e")
    assert command_line == "lifecycle: error: --title must be printable text"
    assert tool_line == "lifecycle: error: title must be printable text"
    evidence = session.call("propose_note", {**note, "title": "t", "evidence": "\x07"}).text
    assert evidence == "lifecycle: error: evidence must be printable text"
    handoff = session.call(
        "write_handoff",
        {
            "title": "\x07",
            "goal_and_status": "g",
            "completed_work": "c",
            "risks_and_decisions": "r",
            "next_actions": ["one", "two"],
        },
    ).text
    assert handoff == "lifecycle: error: title must be printable text"


def test_ids_run_out_the_tool_is_told_to_change_its_title(checkout: Path, vault: Path) -> None:
    base = "cand-fact-same-claim"
    for attempt in range(1, tunables.NOTE_ID_ATTEMPTS + 1):
        name = base if attempt == 1 else f"{base}-{attempt}"
        (vault / "20-state/candidates" / f"{name}.md").write_text(f"---\nid: {name}\n---\n")
    outcome = session_in(checkout).call(
        "propose_note", {"type": "fact", "title": "Same claim", "body": "b", "evidence": "e"}
    )
    assert outcome.is_error and outcome.text.endswith(
        "are all taken by notes or archived notes; choose a different title"
    )


def test_a_body_over_its_cap_in_bytes_is_the_writers_refusal(checkout: Path, vault: Path) -> None:
    """Within the schema's characters but over the cap in UTF-8 bytes: the writer's own cap speaks."""
    body = "é" * tunables.RECALL_NOTE_CAP_BYTES
    outcome = session_in(checkout).call("propose_note", {"type": "fact", "title": "Big", "body": body, "evidence": "e"})
    assert outcome.is_error
    assert re.fullmatch(
        r"lifecycle: error: 20-state/candidates/cand-fact-big\.md would be \d+ bytes, "
        rf"over its cap of {tunables.RECALL_NOTE_CAP_BYTES}; nothing was written",
        outcome.text,
    )
    assert not list((vault / "20-state/candidates").glob("*.md"))


def test_a_lease_refusal_gives_the_model_no_way_around_it(checkout: Path, vault: Path) -> None:
    write_lease(vault, "dev-b", dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1))
    outcome = session_in(checkout).call(
        "propose_note", {"type": "fact", "title": "Leased", "body": "b", "evidence": "e"}
    )
    assert outcome.is_error and "dev-b" in outcome.text
    assert "--" not in outcome.text and "release" not in outcome.text
