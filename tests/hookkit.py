"""Builders shared by the pin, harness, hook-state and end-to-end hook tests.

`make_checkout` copies this checkout's hook code (scripts, package, `.codex/hooks.json`) into a new
git repository, so a test can change a byte of the copy and watch the pinned command refuse it. When
the checked-in pin is stale (code changed, `lifecycle hook pin` not yet run), the copy is re-pinned
with a warning: `test_pin.py::test_checked_in_pin_is_current` reports the stale pin itself, and the
other hook tests still test behaviour.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

from conftest import env_without_override, git

from continuity.trust import pin

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
LIFECYCLE = BIN / "lifecycle"


def hook_env(**extra: str) -> dict[str, str]:
    """The test's environment without the connection override, with this interpreter first on PATH."""
    env = env_without_override()
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


def lifecycle(cwd: Path, *args: str, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`lifecycle ARGS` in `cwd` with the test's environment; standard input is `stdin`, then closed."""
    return subprocess.run(
        [str(LIFECYCLE), *args], cwd=cwd, env=hook_env(), input=stdin, capture_output=True, text=True, timeout=timeout
    )


def make_checkout(dest: Path) -> Path:
    """A committed git repository holding a copy of the hook code and `.codex/hooks.json`."""
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    dest.mkdir(parents=True)
    shutil.copytree(ROOT / "scripts", dest / "scripts", ignore=ignore)
    shutil.copytree(ROOT / "src" / "continuity", dest / "src" / "continuity", ignore=ignore)
    (dest / ".codex").mkdir()
    shutil.copy2(ROOT / ".codex" / "hooks.json", dest / ".codex" / "hooks.json")
    git(dest, "init", "-q", "-b", "main")
    if not pin.check(dest)[0]:
        warnings.warn("the checked-in hook pin is stale; this test runs on a re-pinned copy", stacklevel=2)
        pin.pin(dest)
    git(dest, "add", "-A")
    # Module-scoped fixtures run before the per-test identity is set: name the committer here.
    git(dest, "-c", "user.name=Test", "-c", "user.email=test@example.invalid", "commit", "-q", "-m", "copy")
    return dest


def connect(checkout: Path, vault: Path) -> None:
    """A new vault, with the profiles' briefs written as the README's set-up asks (the templates' text
    alone is left out of the brief as not filled in yet)."""
    done = lifecycle(checkout, "init", "--vault", str(vault), "--new", "--device", "dev-a", "--project", "demo")
    assert done.returncode == 0, done.stderr
    fill_profiles(vault, "demo", "dev-a")


def fill_profiles(vault: Path, project: str, device: str) -> None:
    """Write one true line into the `## Brief` of the project and device profiles init created."""
    for rel, line in (
        (f"10-project/{project}/PROJECT.md", "- A demo project; run the tests with pytest."),
        (f"50-devices/{device}/DEVICE.md", "- Linux, bash; the checkout lives under work/."),
    ):
        path = vault / rel
        path.write_text(path.read_text(encoding="utf-8").replace("## Brief\n", f"## Brief\n\n{line}\n", 1))


def hooks_doc(checkout: Path, name: str = ".codex/hooks.json") -> dict[str, Any]:
    doc = json.loads((checkout / name).read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def command(doc: dict[str, Any], event: str, index: int = 0) -> str:
    handler = doc["hooks"][event][0]["hooks"][index]
    return str(handler["command"])


def payload(event: str, cwd: Path, session: str = "session-1", **extra: object) -> dict[str, object]:
    base: dict[str, object] = {
        "session_id": session,
        "transcript_path": None,
        "cwd": str(cwd),
        "hook_event_name": event,
        "model": "test-model",
    }
    base.update(extra)
    return base


def run_shell(cmd: str, data: dict[str, object], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run a hook command the way the harness does: `bash -c`, the JSON on stdin, in the session's cwd."""
    return subprocess.run(
        ["bash", "-c", cmd],
        cwd=cwd,
        env=hook_env(**env),
        input=json.dumps(data, separators=(",", ":")),
        capture_output=True,
        text=True,
        timeout=120,
    )


def context_of(stdout: str, event: str) -> str:
    """The injected text, after checking the output has exactly the shape Codex accepts."""
    doc = json.loads(stdout)
    assert list(doc) == ["hookSpecificOutput"]
    assert sorted(doc["hookSpecificOutput"]) == ["additionalContext", "hookEventName"]
    assert doc["hookSpecificOutput"]["hookEventName"] == event
    text = doc["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str)
    return text
