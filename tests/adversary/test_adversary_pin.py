"""Only pinned bytes run in the trusted hook, on every path it can take.

The adversary is a repository the person clones, or anything that can write into the checkout or the
environment the harness starts the hook in. The first run is isolated by the hook command (`-I -S`,
the script's digest); these tests hold the two later paths to the same pin: the re-run with the
connection's interpreter when the first one lacks the dependencies, and the outbox sweep handler's
package code. Each plants code in every place an interpreter would look (a module beside the script,
PYTHONPATH's `sitecustomize`, the user site's `usercustomize` and `.pth`, the checkout's `src/`, a
swap of the script between its check and a re-read), runs the real pinned command, and asserts the
planted code never ran while the hook still did its work.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from hookkit import command, connect, hook_env, hooks_doc, make_checkout, payload

from continuity.local import userdirs

BASE_PYTHON = Path(sys.base_prefix) / "bin" / "python3"
PLANT = "import pathlib; pathlib.Path({marker!r}).write_text('ran')\n"


def base_lacks_dependencies() -> bool:
    done = subprocess.run([str(BASE_PYTHON), "-I", "-c", "import ruamel.yaml"], capture_output=True, check=False)
    return done.returncode != 0


needs_bare_python = pytest.mark.skipif(
    not BASE_PYTHON.is_file() or sys.prefix == sys.base_prefix or not base_lacks_dependencies(),
    reason="needs a virtual environment whose base interpreter lacks the dependencies",
)


def plant_everywhere(checkout: Path, tmp_path: Path, marker: Path) -> dict[str, str]:
    """Code in every place an interpreter might import from; the environment that points at them."""
    code = PLANT.format(marker=str(marker))
    for name in ("hashlib", "json", "stat", "subprocess"):
        (checkout / "scripts" / f"{name}.py").write_text(code)  # beside the script: sys.path[0] without -I
        (checkout / f"{name}.py").write_text(code)  # the working folder
    extra = tmp_path / "pythonpath"
    extra.mkdir()
    (extra / "sitecustomize.py").write_text(code)
    (extra / "usercustomize.py").write_text(code)
    user_site = Path(sysconfig.get_path("purelib", f"{os.name}_user", vars={"userbase": str(tmp_path / "userbase")}))
    user_site.mkdir(parents=True)
    (user_site / "usercustomize.py").write_text(code)
    (user_site / "planted.pth").write_text(
        "import pathlib; pathlib.Path(" + repr(str(marker)) + ").write_text('pth')\n"
    )
    return {
        "PYTHONPATH": str(extra),
        "PYTHONUSERBASE": str(tmp_path / "userbase"),
        "PYTHONSTARTUP": str(extra / "sitecustomize.py"),
    }


def swapping_python(tmp_path: Path, script: Path, marker: Path) -> Path:
    """The connection's interpreter, wrapped so that the moment it starts the startup script on disk
    is replaced with code that writes the marker: the window between the first run's hash and any
    second read of the script, made certain instead of raced."""
    wrapper = tmp_path / "bin" / "python-with-continuity"
    wrapper.parent.mkdir(exist_ok=True)
    evil = tmp_path / "evil-script.py"
    evil.write_text(PLANT.format(marker=str(marker)))
    wrapper.write_text(f'#!/bin/sh\ncp "{evil}" "{script}"\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


@needs_bare_python
def test_the_rerun_with_the_connections_python_runs_only_the_checked_bytes(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "checkout")
    vault = tmp_path / "vault"
    connect(checkout, vault)
    marker = tmp_path / "planted-code-ran"
    script = checkout / "scripts" / "agent-startup-context.py"
    python = swapping_python(tmp_path, script, marker)
    conn = checkout / ".agent-vault"
    conn.write_text(conn.read_text().replace(json.dumps(sys.executable), json.dumps(str(python))))
    from continuity.local import made

    made.remember(made.CONNECTION, conn, made.file_digest(conn, 1 << 16) or "")
    env = hook_env(**plant_everywhere(checkout, tmp_path, marker))
    bare = tmp_path / "bare-bin"
    bare.mkdir()
    (bare / "python3").symlink_to(BASE_PYTHON)  # the hook command's `python3`: no ruamel.yaml here
    env["PATH"] = f"{bare}{os.pathsep}{env['PATH']}"
    env["CONTINUITY_NO_CACHE"] = "1"
    shutil.rmtree(os.path.join(userdirs.cache_dir(), "startup"), ignore_errors=True)

    hook = command(hooks_doc(checkout), "SessionStart")
    done = subprocess.run(
        ["bash", "-c", hook], cwd=checkout, input=json.dumps(payload("SessionStart", checkout)).encode(),
        env=env, capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert 'status="restored"' in context or 'status="partial"' in context, context[:300]
    assert not marker.exists(), marker.read_text()


def test_the_sweep_handler_runs_no_package_code_that_was_not_checked(tmp_path: Path) -> None:
    """The handler's command checks `scripts/artifactctl.py`; the package modules the sweep imports
    from the checkout's `src/` must be held to the digests that script pins."""
    checkout = make_checkout(tmp_path / "checkout")
    marker = tmp_path / "planted-code-ran"
    folder = checkout / "src" / "continuity" / "outbox" / "folder.py"
    future = "from __future__ import annotations\n"
    folder.write_text(folder.read_text().replace(future, future + PLANT.format(marker=str(marker)), 1))
    (checkout / "output").mkdir()
    (checkout / "output" / "stray.txt").write_text("something due: the sweep imports the package\n")
    (checkout / "output" / ".outbox.json").write_text(
        json.dumps(
            {"version": 1, "activated": "2020-01-01T00:00:00Z", "activation": "0" * 32, "packages": {}, "enrolled": {}}
        )
    )
    doc = hooks_doc(checkout)
    handlers = doc["hooks"]["SessionStart"][0]["hooks"]
    sweep = next(h["command"] for h in handlers if "artifactctl" in h["command"])
    done = subprocess.run(["bash", "-c", sweep], cwd=checkout, env=hook_env(), capture_output=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, b"")
    assert not marker.exists()
