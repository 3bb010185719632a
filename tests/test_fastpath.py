"""The warm startup path: same bytes as the cold path, served without the heavy imports.

These run the checked-in hook command through a real shell in a copy of the checkout, so they prove
what a harness gets, and read `-X importtime` to prove which modules a warm start loads.
"""

from __future__ import annotations

import ast
import json
import marshal
import subprocess
import sys
from pathlib import Path

import pytest
from hookkit import command, connect, context_of, hook_env, hooks_doc, lifecycle, make_checkout, payload, run_shell
from hypothesis import given, strategies as st

from continuity import fastpath, minijson, rawos

HEAVY = ("re", "json", "pathlib", "dataclasses", "ruamel", "detect_secrets", "typer", "portalocker", "click")


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("fast")
    (base / "home").mkdir()
    tree = make_checkout(base / "copy")
    connect(tree, base / "vault")
    return tree


def start(tree: Path, event: str = "SessionStart", **env: str) -> str:
    data = payload(event, tree / "src", source="startup")
    done = run_shell(command(hooks_doc(tree), event), data, tree / "src", **env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return context_of(done.stdout, event)


def warm_imports(tree: Path, event: str = "SessionStart") -> set[str]:
    data = json.dumps(payload(event, tree / "src", source="startup"))
    script = tree / "scripts" / "agent-startup-context.py"
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", str(script), "--hook", "--harness", "codex"],
        cwd=tree / "src",
        input=data,
        capture_output=True,
        text=True,
        env=hook_env(),
        timeout=60,
    )
    assert '"restored"' in done.stdout.replace('\\"', '"')
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.parametrize("event", ["SessionStart", "SubagentStart"])
def test_the_warm_path_serves_the_cold_bytes_without_heavy_imports(
    checkout: Path, home_env: None, event: str
) -> None:
    cold = start(checkout, event, CONTINUITY_NO_CACHE="1")
    first = start(checkout, event)  # fills the cache
    assert first == cold
    loaded = warm_imports(checkout, event)
    # The warm modules come from the script's bundle, not the import system: an import of any
    # continuity module here would mean the cold path ran. Not even `os` is imported.
    assert not {name for name in loaded if name.split(".")[0] in (*HEAVY, "os", "continuity")}, sorted(loaded)
    assert start(checkout, event) == cold


def test_a_changed_source_is_seen_at_once(checkout: Path, home_env: None) -> None:
    vault = checkout.parent / "vault"
    project = next((vault / "10-project").iterdir()) / "PROJECT.md"
    before = start(checkout)
    original = project.read_text()
    try:
        project.write_text(original.replace("## Brief\n", "## Brief\n\n- freshly edited line\n"))
        after = start(checkout)
        assert "freshly edited line" in after and after != before
        assert after == start(checkout, CONTINUITY_NO_CACHE="1")
    finally:
        project.write_text(original)


def test_a_conflict_copy_appearing_reaches_the_warm_brief(checkout: Path, home_env: None) -> None:
    vault = checkout.parent / "vault"
    start(checkout)
    copy = vault / "00-system" / "PREFERENCES (1).md"
    copy.write_text("---\ntype: preferences\n---\nother\n")
    try:
        text = start(checkout)
        assert "sync-conflict" in text
        assert text == start(checkout, CONTINUITY_NO_CACHE="1")
    finally:
        copy.unlink()
    assert "sync-conflict" not in start(checkout)


def test_a_corrupt_record_is_a_miss(checkout: Path, home_env: None) -> None:
    expected = start(checkout)
    folder = Path(fastpath.cache_dir())
    for record in folder.glob("*.rec"):
        record.write_bytes(b"continuity-startup-cache 3\nkey x\nend\nblob output 99999\n{")
    assert start(checkout) == expected


def test_a_relative_cache_folder_is_never_used(checkout: Path, home_env: None) -> None:
    """XDG_CACHE_HOME is ignored when relative: read in the session's folder, a repository could plant the
    compiled startup code (its name follows from the public digest) or a startup record there."""
    expected = start(checkout)
    doc_command = command(hooks_doc(checkout), "SessionStart")
    digest = doc_command.split(" scripts/agent-startup-context.py ")[1].split()[0]
    planted = checkout / "src" / "planted" / "continuity" / "pycache"
    planted.mkdir(parents=True)
    name = f"startup-{digest}-{sys.implementation.cache_tag}.code"
    (planted / name).write_bytes(marshal.dumps(compile("print('planted code ran')", "x", "exec")))
    for relative in ("planted", "./planted"):
        assert start(checkout, XDG_CACHE_HOME=relative) == expected
    assert sorted(p.name for p in planted.iterdir()) == [name]  # nothing was written there either
    assert rawos.user_dir("cache") == str(checkout.parent / "home" / ".cache" / "continuity")


def test_relative_home_and_state_folders_are_ignored(
    checkout: Path, home_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = start(checkout)
    before = sorted(p.name for p in (checkout / "src").iterdir())
    assert start(checkout, XDG_CACHE_HOME="cache", XDG_STATE_HOME="state") == expected
    assert sorted(p.name for p in (checkout / "src").iterdir()) == before
    # A relative HOME gives way to the password database's home (only computed here, never used);
    # a process with neither keeps its caches under /dev/null, where nothing can be made.
    monkeypatch.setenv("HOME", "home")
    monkeypatch.setenv("XDG_CACHE_HOME", "cache")
    assert rawos.isabs(rawos.home()) and rawos.isabs(rawos.user_dir("cache"))
    assert rawos.join(rawos.NO_HOME, "x") == "/dev/null/x"


def test_the_warm_modules_are_the_closure_of_fastpath_in_import_order(checkout: Path) -> None:
    """The script loads WARM_MODULES itself, in order: each must follow every module it imports."""
    from continuity import pin

    text = (checkout / "scripts" / "agent-startup-context.py").read_text()
    tree = ast.parse(text)
    [warm] = [
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "WARM_MODULES"
    ]
    src = checkout / "src"
    assert set(warm) == set(pin.module_closure(src, ("continuity.fastpath",)))
    for index, rel in enumerate(warm):
        module = rel[:-3].replace("/", ".").removesuffix(".__init__")
        imported = {name for name in pin.module_closure(src, (module,)) if name != rel}
        assert imported <= set(warm[:index]), (rel, imported - set(warm[:index]))


def test_a_changed_warm_module_is_a_new_bundle_never_a_stale_one(checkout: Path, home_env: None) -> None:
    """The warm modules run from a bundle named by their digests: an edit is refused until pinned, then
    compiled into a new bundle."""
    start(checkout)
    pycache = checkout.parent / "home" / ".cache" / "continuity" / "pycache"
    bundles = set(pycache.glob("warm-*.code"))
    assert len(bundles) == 1
    layout_file = checkout / "src" / "continuity" / "layout.py"
    original = layout_file.read_text()
    try:
        layout_file.write_text(original + "\nEDITED_MARK = 1\n")
        assert 'status="unavailable"' in start(checkout)  # changed since the pin: nothing of it runs
        assert set(pycache.glob("warm-*.code")) == bundles
        assert lifecycle(checkout, "hook", "pin").returncode == 0
        assert 'status="restored"' in start(checkout)
        new = set(pycache.glob("warm-*.code")) - bundles
        assert len(new) == 1 and b"EDITED_MARK" in new.pop().read_bytes()
    finally:
        layout_file.write_text(original)
        assert lifecycle(checkout, "hook", "pin").returncode == 0
    assert 'status="restored"' in start(checkout)


@pytest.fixture
def home_env(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the module's home (where its cache lives) for every test of this file."""
    home = checkout.parent / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".st"))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_the_small_json_reader_agrees_with_the_standard_one(value: object) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1)):
        assert minijson.parse_json(text) == json.loads(text)


@given(st.dictionaries(st.text(), st.none() | st.booleans() | st.integers() | st.text(), max_size=6))
def test_the_object_writer_writes_what_json_reads_back(fields: dict[str, object]) -> None:
    text = minijson.json_object(fields)
    assert json.loads(text) == fields and text.isascii()
    if all(k.isalnum() and k.isascii() for k in fields) and not any(isinstance(v, str) for v in fields.values()):
        assert text == json.dumps(fields)  # the same spacing as json.dumps


@given(st.text())
def test_the_string_writer_round_trips(text: str) -> None:
    assert json.loads(minijson.json_string(text)) == text


@given(st.text(max_size=40))
def test_the_small_json_reader_rejects_what_json_rejects(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises((ValueError, IndexError)):
            minijson.parse_json(text)
    else:
        if isinstance(expected, float) or "Infinity" in text or "NaN" in text:
            return
        assert minijson.parse_json(text) == expected


def test_the_cli_stays_light() -> None:
    """`--help`, `lease status` and `handoff current` load neither YAML nor the secret scanner."""
    for args in (["--help"], ["lease", "status"], ["handoff", "current"]):
        code = (
            "import sys;from continuity.cli import app;"
            f"app({args!r}, prog_name='lifecycle', standalone_mode=False);"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('ruamel','detect_secrets')), file=sys.stderr)"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert done.stderr.strip().splitlines()[-1] == "[]", (args, done.stderr)
