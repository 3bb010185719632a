"""The hook pin: the checked-in digests are current, and `hook pin` / `hook pin --check` keep them so.

`test_checked_in_pin_is_current` is the guard the specification asks for: any change to the startup
script or to a module the hook may load fails it until `lifecycle hook pin` is run and the result
(the script's PINNED_MODULES block and `.codex/hooks.json`) is committed with the change.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hookkit import ROOT, lifecycle, make_checkout
from typer.testing import CliRunner

from continuity.cli import app
from continuity.errors import InputRejected, UsageError
from continuity.trust import harness, pin


def test_checked_in_pin_is_current() -> None:
    ok, message = pin.check(ROOT)
    assert ok, f"{message}\nRun `lifecycle hook pin` in the checkout and commit the result."


def test_the_closure_covers_the_hook_path_and_nothing_of_the_cli() -> None:
    closure = pin.module_closure(ROOT / "src")
    for name in ("__init__", "hook/run", "brief/build", "brief/envelope", "local/connection", "hook/hookstate",
                 "brief/render", "brief/cache", "brief/sources", "hook/tool_events", "hook/receipts", "limits",
                 "errors"):  # fmt: skip
        assert f"continuity/{name}.py" in closure
    assert not [rel for rel in closure if rel.startswith(("continuity/cli/", "continuity/store/"))]
    assert "continuity/trust/pin.py" not in closure and "continuity/trust/harness.py" not in closure


def test_the_closure_follows_lazy_and_relative_imports_but_not_type_checking(tmp_path: Path) -> None:
    pkg = tmp_path / "continuity"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "run.py": "from . import a\nif TYPE_CHECKING:\n    from continuity import typing_only\n",
        "connection.py": "def f():\n    import continuity.sub.b\n",
        "a.py": "from .sub import c\n",
        "typing_only.py": "",
        "unused.py": "",
        "sub/__init__.py": "",
        "sub/b.py": "from ..a import x\n",
        "sub/c.py": "",
    }
    for rel, text in files.items():
        (pkg / rel).write_text(text)
    assert pin.module_closure(tmp_path, ("continuity.run", "continuity.connection")) == [
        "continuity/__init__.py", "continuity/a.py", "continuity/connection.py", "continuity/run.py",
        "continuity/sub/__init__.py", "continuity/sub/b.py", "continuity/sub/c.py",
    ]  # fmt: skip


def test_the_embedded_block_round_trips() -> None:
    text = "head\n# BEGIN PINNED MODULES (x)\nPINNED_MODULES = {}\n# END PINNED MODULES\ntail\n"
    assert pin.embedded(text) == {}
    digests = {"continuity/b.py": "b" * 64, "continuity/a.py": "a" * 64}
    written = pin.with_digests(text, digests)
    assert pin.embedded(written) == digests
    assert written.startswith("head\n# BEGIN PINNED MODULES (x)\n") and written.endswith("# END PINNED MODULES\ntail\n")
    assert pin.with_digests(written, digests) == written
    with pytest.raises(InputRejected):
        pin.with_digests("no block here", digests)
    assert pin.embedded("PINNED_MODULES = {1: }") == {}


def test_pin_and_check_on_a_copy(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "copy")
    assert pin.check(checkout) == (True, "the hook pin is current")
    assert pin.pin(checkout).changed == []

    module = checkout / "src" / "continuity" / "limits.py"
    module.write_text(module.read_text() + "# a comment changes the digest too\n")
    ok, message = pin.check(checkout)
    assert not ok and "src/continuity/limits.py" in message and "lifecycle hook pin" in message
    result = pin.pin(checkout)
    assert result.changed == [pin.SCRIPT_REL, harness.SWEEP_REL, ".codex/hooks.json"]  # both closures hold limits.py
    assert result.script_sha256 in (checkout / ".codex" / "hooks.json").read_text()
    assert pin.check(checkout)[0]

    sweep = checkout / harness.SWEEP_REL
    if sweep.exists():  # the outbox sweep handler is pinned the same way
        sweep.write_text(sweep.read_text() + "# changed\n")
        ok, message = pin.check(checkout)
        assert not ok and ".codex/hooks.json" in message
        assert pin.pin(checkout).changed == [".codex/hooks.json"]


def test_a_module_that_does_not_parse_or_a_script_that_is_not_text_is_one_clear_line(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "copy")
    module = checkout / "src" / "continuity" / "vault" / "layout.py"
    module.write_text(module.read_text() + "\ndef broken(:\n")
    ok, message = pin.check(checkout)
    assert not ok and "src/continuity/vault/layout.py is not valid Python" in message
    done = lifecycle(checkout, "hook", "pin", "--check")
    assert done.returncode != 0 and "not valid Python" in done.stderr and "Traceback" not in done.stderr
    assert "unexpected" not in done.stderr
    module.write_bytes(module.read_bytes().replace(b"def broken(:", b"x = '\0'"))
    module.write_bytes(module.read_bytes() + b"\0")
    assert "not valid Python" in pin.check(checkout)[1]
    module.write_text("")
    script = checkout / pin.SCRIPT_REL
    script.write_bytes(b"\xff\xfe" + script.read_bytes())
    ok, message = pin.check(checkout)
    assert not ok and "not UTF-8" in message


def test_check_names_stale_user_scope_files(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "copy")
    harness.install("claude", "user", checkout)
    assert pin.check(checkout)[0]
    script = checkout / pin.SCRIPT_REL
    script.write_text(script.read_text() + "\n")
    pin.pin(checkout)
    ok, message = pin.check(checkout)
    assert not ok and "--harness claude --scope user" in message


def test_pin_keeps_claude_project_settings_pinned_once_installed(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "copy")
    settings = checkout / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"allow": []}}))
    assert pin.pin(checkout).changed == []  # no handlers of ours there: left alone
    harness.install("claude", "project", checkout)
    script = checkout / pin.SCRIPT_REL
    script.write_text(script.read_text() + "\n")
    assert pin.pin(checkout).changed == [".codex/hooks.json", ".claude/settings.json"]
    assert json.loads(settings.read_text())["permissions"] == {"allow": []}


def test_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = make_checkout(tmp_path / "copy")
    done = lifecycle(checkout / "scripts", "hook", "pin", "--check", "--json")
    assert done.returncode == 0
    assert json.loads(done.stdout) == {"version": 1, "ok": True, "checkout": str(checkout), "problems": []}
    (checkout / "src" / "continuity" / "hook" / "run.py").write_text("# replaced\n")
    stale = lifecycle(checkout, "hook", "pin", "--check")
    assert stale.returncode == 1 and "stale" in stale.stdout and "src/continuity/hook/run.py" in stale.stdout
    pinned = lifecycle(checkout, "hook", "pin", "--json")
    assert pinned.returncode == 0
    assert set(json.loads(pinned.stdout)) == {"version", "checkout", "script_sha256", "modules", "changed"}
    monkeypatch.chdir(tmp_path)
    outside = CliRunner().invoke(app, ["hook", "pin"])
    assert outside.exit_code == 2 and "continuity checkout" in outside.output


def test_find_checkout_refuses_other_repositories(repo: Path) -> None:
    with pytest.raises(UsageError):
        pin.find_checkout(repo)


def test_check_for_falls_back_to_the_package_checkout(repo: Path, tmp_path: Path) -> None:
    copy = make_checkout(tmp_path / "copy")
    assert pin.check_for(copy / "src") == pin.check(copy)
    assert pin.check_for(repo) == pin.check(ROOT)
