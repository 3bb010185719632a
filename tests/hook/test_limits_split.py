"""The numbers a pinned hook reads, and only those, live in the pinned closure.

`continuity.limits` is in the closure of modules the startup script and the outbox sweep pin by digest;
`continuity.tunables` is not. So a change to a number that no hook reads (a sync, MCP, lease or
scheduler number) leaves `lifecycle hook pin --check` current, and nobody has to re-trust a hook for
it; a change to a number a hook does read makes the pin stale, as it must.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from continuity import limits, tunables
from continuity.trust import pin

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"


def _names(module: Path) -> list[str]:
    return [n.targets[0].id for n in ast.parse(module.read_text()).body if isinstance(n, ast.Assign)]


def _closure() -> set[str]:
    return {rel for _, roots in pin.PINNED_SCRIPTS for rel in pin.module_closure(SRC, roots)}


def _read_by_hooks() -> set[str]:
    """Every `limits.NAME` the pinned modules name, and the names those definitions use in turn."""
    used: set[str] = set()
    for rel in _closure() - {"continuity/limits.py"}:
        text = (SRC / rel).read_text()
        used |= set(re.findall(r"\blimits\.([A-Z][A-Z0-9_]*)", text))
        for found in re.finditer(r"from continuity\.limits import \(?([^)\n]*)", text):
            used |= {part.strip().split(" as ")[0] for part in found.group(1).split(",") if part.strip()}
    tree = {
        n.targets[0].id: n
        for n in ast.parse((SRC / "continuity/limits.py").read_text()).body
        if isinstance(n, ast.Assign)
    }
    pending = list(used & set(tree))
    while pending:
        for ref in (x.id for x in ast.walk(tree[pending.pop()].value) if isinstance(x, ast.Name)):
            if ref in tree and ref not in used:
                used.add(ref)
                pending.append(ref)
    return used


def test_tunables_are_outside_every_pinned_closure_and_limits_inside() -> None:
    closure = _closure()
    assert "continuity/limits.py" in closure
    assert "continuity/tunables.py" not in closure


def test_limits_holds_exactly_what_the_pinned_hooks_read() -> None:
    held = set(_names(SRC / "continuity/limits.py"))
    assert held == _read_by_hooks(), "move a number no hook reads to tunables.py, or one a hook reads to limits.py"
    assert not held & set(_names(SRC / "continuity/tunables.py"))


def _copy(dest: Path) -> Path:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "-co", "--exclude-standard"], capture_output=True, check=True
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        source = ROOT / rel
        if source.is_file() and not source.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    return dest


def _bump(module: Path, name: str) -> None:
    text = module.read_text()
    changed, count = re.subn(rf"^{name} = (.*)$", rf"{name} = (\1) + 1", text, count=1, flags=re.M)
    assert count == 1, name
    module.write_text(changed)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = _copy(tmp_path_factory.mktemp("checkout"))
    assert pin.check(copy) == (True, "the hook pin is current")
    return copy


@pytest.mark.parametrize(
    "name",
    [
        "SYNC_PUSH_ATTEMPTS",  # sync
        "MCP_WRITE_MAIN_ALLOWANCE_COUNT",  # the MCP server
        "LEASE_DEFAULT_TTL_SECONDS",  # leases
        "OUTBOX_SWEEP_INTERVAL_SECONDS",  # the outbox's scheduler, which the sweep itself never reads
        "RECALL_DEFAULT_LIMIT",  # recall
    ],
)
def test_changing_a_number_no_hook_reads_leaves_the_pin_current(checkout: Path, name: str) -> None:
    assert hasattr(tunables, name) and not hasattr(limits, name)
    module = checkout / "src/continuity/tunables.py"
    before = module.read_text()
    try:
        _bump(module, name)
        assert pin.check(checkout) == (True, "the hook pin is current")
    finally:
        module.write_text(before)


@pytest.mark.parametrize("name", ["SESSION_START_CEILING_BYTES", "OUTBOX_LIFETIME_SECONDS"])
def test_changing_a_number_a_hook_reads_makes_the_pin_stale(checkout: Path, name: str) -> None:
    module = checkout / "src/continuity/limits.py"
    before = module.read_text()
    try:
        _bump(module, name)
        ok, message = pin.check(checkout)
        assert not ok and "limits.py" in message
    finally:
        module.write_text(before)
