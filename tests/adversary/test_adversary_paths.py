"""Path shapes an adversary can choose: hard links, folders nested past recursion limits, a repository
nested in the checkout, and paths with characters a shell would act on.

A repository the person clones (or an archive they unpack into the vault's sync folder) chooses its
file and folder names and can hard-link a file; the person's own paths can hold `$`, quotes and
spaces. None of these may make a read leave the vault, a command crash with a traceback, or the
Windows hook command run what a path says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from briefkit import MARK, SOURCE_REL, connect, make_vault, startup_script, subprocess_env
from conftest import git
from hookkit import command, hook_env, hooks_doc, make_checkout, payload
from hypothesis import given, settings, strategies as st

from continuity import tunables
from continuity.errors import NoteError
from continuity.store import atomic
from continuity.trust import hookcommand
from continuity.vault import access

# --- hard links -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SOURCE_REL))
def test_a_note_with_another_hard_link_is_refused_like_a_symbolic_link(tmp_path: Path, name: str) -> None:
    vault = make_vault(tmp_path / "vault")
    outside = tmp_path / "outside-secret.md"
    rel = SOURCE_REL[name]
    outside.write_bytes((vault / rel).read_bytes().replace(MARK[name].encode(), b"outsidemarker"))
    (vault / rel).unlink()
    os.link(outside, vault / rel)
    with pytest.raises(NoteError) as info:
        access.read_capped(vault, rel, 1 << 20)
    assert info.value.reason == "link"
    assert access.read_head(vault, rel, 100) is None


def test_the_hook_leaves_out_a_hard_linked_source(repo: Path, tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    connect(repo, vault)
    outside = tmp_path / "elsewhere.md"
    soul = vault / SOURCE_REL["soul"]
    outside.write_bytes(soul.read_bytes().replace(MARK["soul"].encode(), b"outsidemarker"))
    soul.unlink()
    os.link(outside, soul)
    data = json.dumps({"session_id": "s", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup",
                       "transcript_path": None, "model": "m"})  # fmt: skip
    done = subprocess.run(
        [sys.executable, str(startup_script()), "--hook", "--harness", "codex"],
        input=data.encode(), capture_output=True, env=subprocess_env(CONTINUITY_NO_CACHE="1"), timeout=120,
    )  # fmt: skip
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "outsidemarker" not in context and MARK["preferences"] in context


def test_the_atomic_writers_own_link_is_gone_before_any_read(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    for i in range(20):
        atomic.write_text(vault / "notes" / f"n{i}.md", "---\nid: n\n---\nbody\n", exclusive=True)
        assert access.read_capped(vault, f"notes/n{i}.md", 1024).endswith(b"body\n")
        assert os.stat(vault / "notes" / f"n{i}.md").st_nlink == 1


# --- folders deeper than the interpreter's recursion limit ----------------------------------------


def remove_deep(top: Path) -> None:
    """Remove a chain of `d` folders bottom up, without recursion (shutil.rmtree would recurse)."""
    here = os.getcwd()
    os.chdir(top)
    try:
        levels = 0
        while os.path.isdir("d"):
            os.chdir("d")
            levels += 1
        for name in os.listdir("."):
            os.unlink(name)
        for _ in range(levels):
            os.chdir("..")
            os.rmdir("d")
    finally:
        os.chdir(here)


def test_scan_lists_a_folder_nested_past_the_recursion_limit(tmp_path: Path) -> None:
    depth = sys.getrecursionlimit() + 100
    folder = tmp_path / "notes"
    folder.mkdir()
    here = os.getcwd()
    os.chdir(folder)
    try:
        for _ in range(depth):  # relative steps: the whole path is longer than one system call takes
            os.mkdir("d")
            os.chdir("d")
        Path("deep.md").write_text("---\nid: deep\n---\ntoken ghp_" + "a1B2" * 9 + "\n")
    finally:
        os.chdir(here)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "continuity", "scan", "notes"], cwd=tmp_path, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
    finally:
        remove_deep(folder)
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    assert done.returncode in (0, 5), done.stderr
    assert "1 file" in done.stdout + done.stderr or "unreadable" in done.stdout + done.stderr


# --- a repository nested inside the checkout ----------------------------------------------------


@pytest.mark.parametrize("event", ["SessionStart", "SubagentStart", "PostToolUse", "Stop"])
def test_the_project_hook_in_a_nested_repository_never_prints_a_traceback(tmp_path: Path, event: str) -> None:
    checkout = make_checkout(tmp_path / "checkout")
    inner = checkout / "vendor" / "inner"
    inner.mkdir(parents=True)
    git(inner, "init", "-q")
    (inner / "deeper").mkdir()
    for handler in hooks_doc(checkout)["hooks"].get(event, [{}])[0].get("hooks", []):
        for cwd in (inner, inner / "deeper"):
            done = subprocess.run(
                ["bash", "-c", handler["command"]], cwd=cwd, input=json.dumps(payload(event, cwd)).encode(),
                capture_output=True, env=hook_env(), timeout=120,
            )  # fmt: skip
            assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
            assert b"changed since" not in done.stdout  # the reviewed script was found and ran


def test_the_nested_repository_check_uses_the_real_command(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "checkout")
    assert "os.path.isfile(script)" in command(hooks_doc(checkout), "SessionStart")


# --- the PowerShell command for every path shape ---------------------------------------------------

PS_SINGLE = "'\u2018\u2019\u201a\u201b"
PS_DOUBLE = '"\u201c\u201d\u201e'


def powershell_strings(text: str) -> tuple[list[str], list[str], str]:
    """(single-quoted literals, double-quoted strings, the text outside strings) by PowerShell's rules:
    in a single-quoted string a quote character twice is one, and nothing else is special; in a
    double-quoted string a backtick escapes the next character and `$` expands."""
    singles: list[str] = []
    doubles: list[str] = []
    outside: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c in PS_SINGLE:
            value, i = [], i + 1
            while True:
                assert i < len(text), "unterminated single-quoted string"
                if text[i] in PS_SINGLE:
                    if i + 1 < len(text) and text[i + 1] in PS_SINGLE:
                        value.append(text[i])
                        i += 2
                        continue
                    i += 1
                    break
                value.append(text[i])
                i += 1
            singles.append("".join(value))
        elif c in PS_DOUBLE:
            value, i = [], i + 1
            while True:
                assert i < len(text), "unterminated double-quoted string"
                if text[i] == "`":
                    value.append(text[i : i + 2])
                    i += 2
                    continue
                if text[i] in PS_DOUBLE:
                    i += 1
                    break
                value.append(text[i])
                i += 1
            doubles.append("".join(value))
        else:
            outside.append(c)
            i += 1
    return singles, doubles, "".join(outside)


path_text = st.text(
    st.sampled_from(list('abc XYZ019-_.()[]{};&|<>@#%^~!,=+$`"' + PS_SINGLE + PS_DOUBLE + "\u00e9\u4e2d")),
    min_size=1,
    max_size=20,
)


@settings(max_examples=300, deadline=None)
@given(
    drive=st.sampled_from(["C:\\", "D:\\Users\\", "\\\\server\\share\\"]),
    a=path_text,
    b=path_text,
    shared=st.booleans(),
)
def test_every_windows_path_shape_stays_a_literal(drive: str, a: str, b: str, shared: bool) -> None:
    python = f"{drive}{a}\\venv\\Scripts\\python.exe"
    script = (f"{drive}{a}\\venv\\Lib\\site-packages\\continuity\\_scripts\\agent-startup-context.py"
              if shared else f"{drive}{b}\\scripts\\agent-startup-context.py")  # fmt: skip
    line = hookcommand.windows_command(python, script, "0" * 64, ["--hook", "--harness", "codex"], notice=True)
    singles, doubles, outside = powershell_strings(line)
    program = [d for d in doubles if not d.startswith("$base")]
    assert len(program) == 1 and "$" not in program[0] and "`" not in program[0]
    refs = [d[len("$base") :] for d in doubles if d.startswith("$base")]
    assert not any(ch in ref for ref in refs for ch in "$`")  # `$base` itself is the only expansion
    assert not any(ch in outside for ch in "`\"'") and outside.count("$") == outside.count("$base")
    if refs:
        assert [singles[0] + ref for ref in refs] == [python, script]
    else:
        assert singles == [python, script]
    assert len(line) <= tunables.HOOK_COMMAND_MAX_CHARS + 2 * (len(python) + len(script))


@settings(max_examples=100, deadline=None)
@given(a=path_text)
def test_every_posix_path_shape_reaches_the_shell_as_it_is(tmp_path_factory: pytest.TempPathFactory, a: str) -> None:
    """bash itself reports the interpreter path it tried to run: exactly the path, nothing expanded."""
    marker = tmp_path_factory.mktemp("m") / "ran"
    a = a.replace("/", "") + f"$(touch {marker})`touch {marker}`"
    python = f"/nonexistent/{a}/venv/bin/python"
    script = f"/nonexistent/{a}/venv/lib/continuity/_scripts/agent-startup-context.py"
    line = hookcommand.posix_command(python, script, "0" * 64, ["--hook"], notice=True)
    done = subprocess.run(["bash", "-c", line], capture_output=True, timeout=30, check=False)
    assert python.encode() in done.stderr and not marker.exists()
    assert hookcommand.split(line) == (python, script, "0" * 64)
