"""The warm startup path: same bytes as the cold path, served without the heavy imports.

These run the checked-in hook command through a real shell in a copy of the checkout, so they prove
what a harness gets, and read `-X importtime` to prove which modules a warm start loads.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import marshal
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hookkit import command, connect, context_of, hook_env, hooks_doc, make_checkout, payload, run_shell

from continuity.brief import record
from continuity.local import userdirs
from continuity.trust import pin

# What an unchanged vault must not cost: the heavy dependencies, and the standard library's slowest
# imports (typing, pathlib and dataclasses take several milliseconds each on a session start; json
# loads re, enum, functools and collections, a third of the warm start: `lightjson` reads instead).
HEAVY = ("ruamel", "detect_secrets", "typer", "portalocker", "click", "pathlib", "dataclasses", "typing")
HEAVY += ("json", "re", "enum", "functools", "collections", "contextlib")
WARM = pin.module_closure(Path(__file__).resolve().parents[2] / "src", ("continuity.hook.warm",))


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("fast")
    (base / "home").mkdir()
    tree = make_checkout(base / "copy")
    with pytest.MonkeyPatch.context() as patch:  # init records the connection in the home `home_env` keeps
        patch.setenv("HOME", str(base / "home"))
        patch.setenv("XDG_STATE_HOME", str(base / "home" / ".st"))
        connect(tree, base / "vault")
    # the default state folder too, which a relative XDG_STATE_HOME falls back to
    shutil.copytree(base / "home" / ".st" / "continuity" / "made", base / "home" / ".local/state/continuity/made")
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
def test_the_warm_path_serves_the_cold_bytes_without_heavy_imports(checkout: Path, home_env: None, event: str) -> None:
    cold = start(checkout, event, CONTINUITY_NO_CACHE="1")
    first = start(checkout, event)  # fills the cache
    assert first == cold
    loaded = warm_imports(checkout, event)
    assert not {name for name in loaded if name.split(".")[0] in HEAVY}, sorted(loaded)
    ours = {name.replace(".", "/") for name in loaded if name.split(".")[0] == "continuity"}
    assert ours <= {rel.removesuffix(".py").removesuffix("/__init__") for rel in WARM}, sorted(ours)
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
    folder = Path(userdirs.cache_dir()) / "startup"
    records = list(folder.glob("*.rec"))
    assert records
    for damage in (b"", b"{", record.RECORD_MAGIC + b'{"code": 1}\n', records[0].read_bytes()[:-1]):
        for found in records:
            found.write_bytes(damage)
        assert start(checkout) == expected


def test_a_relative_cache_folder_is_never_used(checkout: Path, home_env: None) -> None:
    """XDG_CACHE_HOME is ignored when relative: read in the session's folder, a repository could plant a
    startup record there."""
    expected = start(checkout)
    planted = checkout / "src" / "planted"
    planted.mkdir()
    for relative in ("planted", "./planted"):
        assert start(checkout, XDG_CACHE_HOME=relative) == expected
    assert list(planted.iterdir()) == []  # nothing was written there either
    assert userdirs.cache_dir() == str(checkout.parent / "home" / ".cache" / "continuity")


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
    assert os.path.isabs(userdirs.home()) and os.path.isabs(userdirs.cache_dir())


def test_the_warm_modules_are_the_closure_of_fastpath(checkout: Path) -> None:
    """The script checks WARM_MODULES before the warm answer: they must be all that fastpath imports."""
    text = (checkout / "scripts" / "agent-startup-context.py").read_text()
    [warm] = [
        ast.literal_eval(node.value)
        for node in ast.parse(text).body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "WARM_MODULES"
    ]
    assert sorted(warm) == sorted(pin.module_closure(checkout / "src", ("continuity.hook.warm",)))


PLANTED = "import pathlib; pathlib.Path({marker!r}).write_text('ran')"


def test_compiled_code_in_the_cache_folder_or_beside_the_modules_never_runs(checkout: Path, home_env: None) -> None:
    """Nothing runs in the hook whose bytes were not hashed in that same run: compiled code planted
    where a code cache would sit (the user's cache folder, the package's __pycache__, under the names
    the old compiled-code cache used) is never loaded, on the warm path or the full one."""
    marker = checkout.parent / "planted-code-ran"
    code = marshal.dumps(compile(PLANTED.format(marker=str(marker)), "planted", "exec"))
    digest = command(hooks_doc(checkout), "SessionStart").split(" scripts/agent-startup-context.py ")[1].split()[0]
    magic = sys.implementation.cache_tag
    cache = Path(userdirs.cache_dir())
    places = [
        cache / "pycache" / f"startup-{digest}-{magic}.code",
        cache / "pycache" / f"warm-{digest[:32]}-{magic}.code",
    ]
    for place in places:
        place.parent.mkdir(parents=True, exist_ok=True)
        place.write_bytes(code)
    for rel in [*WARM, "continuity/hook/entry.py", "continuity/hook/run.py"]:  # valid for the usual importer
        source = checkout / "src" / rel
        info = source.stat()
        header = importlib.util.MAGIC_NUMBER + bytes(4) + int(info.st_mtime).to_bytes(4, "little")
        pyc = Path(importlib.util.cache_from_source(str(source)))
        pyc.parent.mkdir(exist_ok=True)
        pyc.write_bytes(header + (info.st_size & 0xFFFFFFFF).to_bytes(4, "little") + code)
    cold = start(checkout, CONTINUITY_NO_CACHE="1")
    warm = start(checkout)
    assert start(checkout) == warm == cold and 'status="restored"' in warm
    assert not marker.exists()


@pytest.fixture
def home_env(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the module's home (where its cache lives) for every test of this file."""
    home = checkout.parent / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".st"))


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
