"""Hostile files in the vault: every read command stays bounded, clear and crash-free.

Each hostile kind (random bytes, broken frontmatter, invalid UTF-8, a NUL, 100,000 lines, a 10 MiB
line, a 6 GiB sparse file, a FIFO, a socket, link loops and escapes, a folder for a file, YAML bombs)
is planted as two hot sources at once and in four other places of the working set. Then `lifecycle
render`, the startup hook, `lifecycle doctor`, `lifecycle budget` and `lifecycle recall` run as real
processes under a 2 GiB address-space limit and a timeout. Each must exit 0, 1, 3 or 5 without a
traceback, and every brief printed has exactly one wrapper and fits its ceiling.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from briefkit import (
    DEFAULT_HANDOFF,
    PROJECT,
    SOURCE_REL,
    connect,
    frontmatter,
    hot_note,
    make_vault,
    startup_script,
    subprocess_env,
)
from hookkit import LIFECYCLE

from continuity import limits

ADDRESS_SPACE_BYTES = 2 * 1024**3
TIMEOUT_SECONDS = 60
OUTSIDE_MARK = "outsidevaultmarker"
ALLOWED_EXITS = {0, 1, 3, 5}

HOT = {**SOURCE_REL, "handoff": DEFAULT_HANDOFF}
HOT_ORDER = ["soul", "preferences", "project", "device", "handoff"]
ELSEWHERE = [
    "30-memory/facts/hostile.md",
    "20-state/candidates/hostile.md",
    f"10-project/{PROJECT}/hostile.md",
    "20-state/handoffs/20250103T000000Z-dev-a-hostile.md",
]


def _clear(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)


def _note_with(middle: bytes) -> bytes:
    head = frontmatter({"id": "soul", "type": "soul", "status": "approved"}).encode()
    return head + b"# Soul\n\n## Brief\n\n- before " + middle + b" after\n"


def _socket(path: Path) -> None:
    # A Unix socket path must be short: bind by its name from inside its folder, in a child process.
    code = "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])"
    subprocess.run([sys.executable, "-c", code, path.name], cwd=path.parent, check=True, timeout=30)


def _alias_bomb() -> bytes:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for n in range(1, 10):
        prev, cur = chr(ord("a") + n - 1), chr(ord("a") + n)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    return ("---\nid: soul\ntype: soul\n" + "\n".join(lines) + "\n---\n# Soul\n\n## Brief\n\n- bomb\n").encode()


def _deep_yaml() -> bytes:
    depth = 5000
    flow = "[" * depth + "]" * depth
    block = "".join("  " * i + f"k{i}:\n" for i in range(300)) + "  " * 300 + "leaf: 1\n"
    return f"---\nid: soul\ntype: soul\ndeep: {flow}\nnest:\n".encode() + block.encode() + b"---\n# Soul\n"


Planter = Callable[[Path, Path], None]


def _write(data: bytes) -> Planter:
    def plant(path: Path, outside: Path) -> None:
        path.write_bytes(data)

    return plant


def _sparse(path: Path, outside: Path) -> None:
    with open(path, "wb") as handle:
        handle.write(b"---\nid: soul\n")
        handle.truncate(6 * 1024**3)


def _fifo(path: Path, outside: Path) -> None:
    os.mkfifo(path)


def _link_loop(path: Path, outside: Path) -> None:
    os.symlink(path.name, path)


def _link_out(path: Path, outside: Path) -> None:
    os.symlink(outside, path)


def _folder(path: Path, outside: Path) -> None:
    path.mkdir()
    (path / "inside.md").write_text(hot_note("soul"))


def _sock(path: Path, outside: Path) -> None:
    _socket(path)


KINDS: dict[str, Planter] = {
    "random-bytes": _write(random.Random(7).randbytes(8192)),
    "truncated-frontmatter": _write(b"---\nid: soul\ntype: so"),
    "unclosed-frontmatter": _write(b"---\nid: soul\ntype: soul\nstatus: approved\n# Soul\n\n## Brief\n\n- x\n"),
    "invalid-utf8": _write(_note_with(b"\xff\xfe\xc3\x28\xed\xa0\x80")),
    "nul-in-the-middle": _write(_note_with(b"\x00")),
    "100k-short-lines": _write(frontmatter({"id": "soul", "type": "soul"}).encode() + b"x\n" * 100_000),
    "one-10mib-line": _write(frontmatter({"id": "soul", "type": "soul"}).encode() + b"a" * (10 * 1024**2)),
    "6gib-sparse": _sparse,
    "fifo": _fifo,
    "socket": _sock,
    "link-loop": _link_loop,
    "link-out-of-vault": _link_out,
    "folder-for-a-file": _folder,
    "deep-yaml": _write(_deep_yaml()),
    "alias-bomb": _write(_alias_bomb()),
}


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))


def _hook_payload(cwd: Path) -> bytes:
    return json.dumps(
        {
            "session_id": "s-hostile",
            "transcript_path": None,
            "cwd": str(cwd),
            "hook_event_name": "SessionStart",
            "model": "test-model",
            "permission_mode": "default",
            "source": "startup",
        }
    ).encode()


def run_all(repo: Path) -> dict[str, subprocess.CompletedProcess[bytes]]:
    """The five read commands at once (each its own process, memory-limited, timed out)."""
    env = subprocess_env(CONTINUITY_NO_CACHE="1")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    commands = {
        "render": ([str(LIFECYCLE), "render"], None),
        "hook": ([sys.executable, str(startup_script()), "--hook", "--harness", "codex"], _hook_payload(repo)),
        "doctor": ([str(LIFECYCLE), "doctor"], None),
        "budget": ([str(LIFECYCLE), "budget"], None),
        "recall": ([str(LIFECYCLE), "recall", "x"], None),
    }
    procs = {
        name: subprocess.Popen(
            args,
            cwd=repo,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=_limit_memory,
        )
        for name, (args, _) in commands.items()
    }
    results: dict[str, subprocess.CompletedProcess[bytes]] = {}
    for name, proc in procs.items():
        try:
            out, err = proc.communicate(commands[name][1], timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise AssertionError(f"{name} did not finish within {TIMEOUT_SECONDS} s") from None
        results[name] = subprocess.CompletedProcess(commands[name][0], proc.returncode, out, err)
    return results


def assert_brief(text: str, ceiling: int) -> None:
    assert text.count("<private-memory") == 1, text[:500]
    assert text.count("</private-memory") == 1, text[-500:]
    assert len(text.rstrip("\n").encode("utf-8")) <= ceiling


def check(results: dict[str, subprocess.CompletedProcess[bytes]]) -> None:
    for name, done in results.items():
        err = done.stderr.decode("utf-8", "replace")
        out = done.stdout.decode("utf-8", "replace")
        assert "Traceback" not in err and "Traceback" not in out, (name, err[-2000:])
        assert done.returncode in ALLOWED_EXITS, (name, done.returncode, err[-2000:])
        assert OUTSIDE_MARK not in out and OUTSIDE_MARK not in err, name
        if done.returncode != 0 and err.strip():
            # One clear line per error (warnings before it are allowed, each a line).
            assert all(len(line) < 2000 for line in err.splitlines()), name
    # Two hot sources are hostile in every vault here: the brief says it is partial, never restored.
    assert results["render"].returncode == 1
    render = results["render"].stdout.decode("utf-8")
    assert 'status="partial"' in render.split("\n", 1)[0]
    assert_brief(render, limits.SESSION_START_CEILING_BYTES)
    hook = results["hook"].stdout.decode("utf-8")
    assert hook.endswith("\n") and hook.count("\n") == 1, hook[:500]
    context = json.loads(hook)["hookSpecificOutput"]["additionalContext"]
    assert_brief(context, limits.SESSION_START_CEILING_BYTES)


@pytest.fixture
def planted(repo: Path, tmp_path: Path) -> Callable[[str], Path]:
    vault = make_vault(tmp_path / "vault")
    connect(repo, vault)
    outside = tmp_path / "outside.md"
    outside.write_text(hot_note("soul", f"- {OUTSIDE_MARK}"))

    def plant(kind: str) -> Path:
        index = list(KINDS).index(kind)
        targets = [HOT[HOT_ORDER[index % 5]], HOT[HOT_ORDER[(index + 2) % 5]], *ELSEWHERE]
        for rel in targets:
            path = vault / rel
            _clear(path)
            KINDS[kind](path, outside)
        return vault

    return plant


@pytest.mark.parametrize("kind", list(KINDS))
def test_hostile_file_never_crashes_a_read_command(kind: str, planted: Callable[[str], Path], repo: Path) -> None:
    planted(kind)
    check(run_all(repo))


def test_every_kind_at_once(planted: Callable[[str], Path], repo: Path, tmp_path: Path) -> None:
    """All kinds in one vault, each in its own working-set place, and every hot source hostile."""
    vault = planted("alias-bomb")
    outside = tmp_path / "outside.md"
    for n, plant in enumerate(KINDS.values()):
        path = vault / f"30-memory/facts/x-{n}.md"
        _clear(path)
        plant(path, outside)
    for n, name in enumerate(HOT_ORDER):
        path = vault / HOT[name]
        _clear(path)
        list(KINDS.values())[n * 3](path, outside)
    check(run_all(repo))
