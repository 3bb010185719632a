"""The hook pin: digests that tie a trusted hook definition to the exact code it runs.

Codex trusts a hook by the hash of its definition, which covers the command string but not the files
the command runs. So two digests stand between a trusted definition and any later edit:

1. the hook command carries the SHA-256 of `scripts/agent-startup-context.py` (and the outbox sweep
   handler that of `scripts/artifactctl.py`), checked by standard-library code inside the command;
2. each script embeds the SHA-256 of every package module it may load in the hook (`PINNED_MODULES`:
   the startup closure below, and for the sweep handler that of `continuity.outbox.sweep`) and checks
   them before importing any.

The module set is the import closure of `continuity.hook` (entry, run, warm) and the connection, read from the
source with `ast` (lazy imports inside functions included, `if TYPE_CHECKING:` blocks excluded), so a
change to any module the hook could load makes the pin stale, while the command-line modules do not.

`pin` rewrites both digests in a checkout (the script's block, then the project hook files, whose
commands change with the script's digest), after which the person trusts the changed hook again in
Codex (/hooks). `check` says whether they are current; the project's test suite calls it, so a change
to the startup code cannot land unpinned.
"""

from __future__ import annotations

import ast
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from continuity.errors import InputRejected, UsageError
from continuity.local.repo import find_repo_root
from continuity.store import atomic
from continuity.trust import harness, hookcommand, installation, plugin

SCRIPT_REL = harness.SCRIPT_REL
PACKAGE = "continuity"
HOOK_ROOTS = ("continuity.hook.entry", "continuity.hook.run", "continuity.local.connection", "continuity.hook.warm")
SWEEP_ROOTS = ("continuity.outbox.sweep",)  # what `artifactctl.py sweep --hook` imports
# Each pinned script with the roots of the module closure it embeds the digests of.
PINNED_SCRIPTS = ((harness.SCRIPT_REL, HOOK_ROOTS), (harness.SWEEP_REL, SWEEP_ROOTS))
BEGIN = "# BEGIN PINNED MODULES"
END = "# END PINNED MODULES"
TRUST_AGAIN = (
    "Codex skips a changed hook until it is trusted again: review the change, then trust the hook in Codex (/hooks)."
)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def find_checkout(start: Path) -> Path:
    """The git top level at or above `start`, when it is a continuity checkout."""
    root = find_repo_root(start)
    if root is None or not (root / SCRIPT_REL).is_file() or not (root / "src" / PACKAGE).is_dir():
        raise UsageError(
            f"{start} is not inside a continuity checkout (no {SCRIPT_REL}); run this in the checkout "
            "whose hook you pin, or reinstall user-scope hooks with 'lifecycle hooks install'"
        )
    return root


# --- the module closure ----------------------------------------------------------------------------


def _module_file(src: Path, name: str) -> str | None:
    parts = name.split(".")
    for rel in ("/".join(parts) + ".py", "/".join(parts) + "/__init__.py"):
        if (src / rel).is_file():
            return rel
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for statement in node.orelse:
                visit(statement)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {name for name in found if name == PACKAGE or name.startswith(PACKAGE + ".")}


def module_closure(src: Path, roots: tuple[str, ...] = HOOK_ROOTS) -> list[str]:
    """The package files (relative to `src`, with '/') that importing `roots` may load."""
    seen: set[str] = set()
    queue = [PACKAGE, *roots]
    if not any(_module_file(src, root) is not None for root in roots):
        raise UsageError(f"{src} has no module {roots[0]}; is this a continuity checkout?")
    while queue:
        name = queue.pop()
        parts = name.split(".")
        queue.extend(".".join(parts[:i]) for i in range(1, len(parts)))  # parent packages run first
        rel = _module_file(src, name)
        if rel is None or rel in seen:
            continue
        seen.add(rel)
        try:
            tree = ast.parse((src / rel).read_bytes(), filename=rel)
        except (SyntaxError, ValueError) as exc:  # ValueError: a NUL byte
            raise InputRejected(f"src/{rel} is not valid Python ({exc}); fix it before pinning") from None
        queue.extend(_imports(tree, name, rel.endswith("__init__.py")))
    return sorted(seen)


def module_digests(src: Path, roots: tuple[str, ...] = HOOK_ROOTS) -> dict[str, str]:
    return {rel: sha256_bytes((src / rel).read_bytes()) for rel in module_closure(src, roots)}


# --- the script's embedded block -------------------------------------------------------------------


def _block_span(text: str) -> tuple[int, int]:
    start = text.find(BEGIN)
    end = text.find(END, start)
    if start < 0 or end < 0:
        raise InputRejected(f"{SCRIPT_REL} has no '{BEGIN}' … '{END}' block; restore it from git")
    start = text.index("\n", start) + 1
    return start, end


def embedded(text: str) -> dict[str, str]:
    """The module digests written into the script (empty when none or unreadable)."""
    try:
        start, end = _block_span(text)
        node = ast.parse(text[start:end]).body[0]
        value = ast.literal_eval(node.value) if isinstance(node, ast.Assign) else None
    except (InputRejected, SyntaxError, ValueError, IndexError):
        return {}
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items()}


def with_digests(text: str, digests: dict[str, str]) -> str:
    start, end = _block_span(text)
    lines = ["PINNED_MODULES = {"] + [f'    "{rel}": "{digest}",' for rel, digest in sorted(digests.items())]
    return text[:start] + "\n".join([*lines, "}"]) + "\n" + text[end:]


# --- pin and check ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PinResult:
    checkout: Path
    script_sha256: str
    modules: int
    changed: list[str] = field(default_factory=list)  # checkout-relative paths rewritten

    def to_json(self) -> dict[str, object]:
        return {
            "version": 1,
            "checkout": str(self.checkout),
            "script_sha256": self.script_sha256,
            "modules": self.modules,
            "changed": self.changed,
        }


def _has_ours(path: Path) -> bool:
    try:
        doc = harness.load(path)
    except InputRejected:
        return False
    return doc is not None and bool(harness.our_commands(doc))


def _project_harnesses(checkout: Path) -> list[str]:
    """Codex's project file is always kept pinned; Claude Code's only once it holds our handlers."""
    claude = harness.project_config_path(harness.CLAUDE, checkout)
    return [harness.CODEX] + ([harness.CLAUDE] if _has_ours(claude) else [])


def pin(checkout: Path) -> PinResult:
    """Rewrite the module digests in the script, then the project hook files that pin the script."""
    changed: list[str] = []
    count = 0
    for rel, roots in PINNED_SCRIPTS:
        script = checkout / rel
        digests = module_digests(checkout / "src", roots)
        count = count or len(digests)
        text = script.read_text(encoding="utf-8")
        new_text = with_digests(text, digests)
        if new_text != text:
            atomic.write_text(script, new_text, stat.S_IMODE(os.lstat(script).st_mode))
            changed.append(rel)
    script = checkout / SCRIPT_REL
    for name in _project_harnesses(checkout):
        result = harness.install(name, "project", checkout, both=True)  # keeps the checkout's file current
        if result.changed:
            changed.append(str(result.path.relative_to(checkout)))
    changed += plugin.write(checkout)  # the plugins' runner pins the script's new digest
    return PinResult(checkout, sha256_bytes(script.read_bytes()), count, changed)


def user_problems(scripts: Path) -> list[str]:
    """User-scope hook files whose commands point at the scripts in `scripts` with an older digest."""
    problems: list[str] = []
    for name in harness.HARNESSES:
        path = harness.user_config_path(name)
        try:
            doc = harness.load(path)
        except InputRejected:
            continue
        for rel in (harness.SCRIPT_REL, harness.SWEEP_REL):
            target = scripts / Path(rel).name
            if doc is None or not target.is_file():
                continue
            current = sha256_bytes(target.read_bytes())
            named = (hookcommand.split(c) for c in harness.our_commands(doc))
            stale = {found[2] for found in named if found is not None and found[1] == str(target)} - {current}
            if stale:
                problems.append(
                    f"{path} pins an older {target}; run 'lifecycle hooks install --harness {name} --scope user'"
                )
    return problems


def problems(checkout: Path) -> list[str]:
    """What is stale, one line each (empty when the pin is current)."""
    found: list[str] = []
    for script_rel, roots in PINNED_SCRIPTS:
        try:
            have = embedded((checkout / script_rel).read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            raise InputRejected(f"{script_rel} is not UTF-8 text; restore it from git") from None
        want = module_digests(checkout / "src", roots)
        # Changed modules first, then those that entered or left the closure: the edit is what to review.
        differ = sorted(
            (rel for rel in set(have) | set(want) if have.get(rel) != want.get(rel)),
            key=lambda rel: (rel not in have or rel not in want, rel),
        )
        if differ:
            names = ", ".join(f"src/{rel}" for rel in differ[:5]) + (" …" if len(differ) > 5 else "")
            found.append(f"{script_rel} pins other module digests than the code has ({names})")
    for name in _project_harnesses(checkout):
        try:
            result = harness.install(name, "project", checkout, dry_run=True, both=True)
        except InputRejected as exc:
            found.append(str(exc))
            continue
        if result.changed:
            rel = result.path.relative_to(checkout)
            found.append(f"{rel} does not hold the current pinned commands")
    found += plugin.problems(checkout)
    return found + user_problems(checkout / "scripts")


def check(checkout: Path) -> tuple[bool, str]:
    """(ok, one-line message) for doctor and `hook pin --check`."""
    try:
        found = problems(checkout)
    except (OSError, UsageError, InputRejected) as exc:
        return False, f"the hook pin cannot be checked: {exc}"
    if not found:
        return True, "the hook pin is current"
    return False, "the hook pin is stale: " + "; ".join(found) + "; run 'lifecycle hook pin'"


def check_for(start: Path) -> tuple[bool, str]:
    """`check` for the checkout at `start`, or, outside one, for the installation this package runs from.

    Outside a continuity checkout the hooks that can run are user-scope ones, which point at the
    running installation: a package's own copy of the scripts (only the user-scope pins can be
    stale: the copy's module digests were written with it), or an editable install's checkout.
    """
    try:
        checkout = find_checkout(start)
    except UsageError:
        try:
            found = installation.find()
        except UsageError as exc:
            return False, f"the hook pin cannot be checked: {exc}"
        if found.kind == installation.CHECKOUT_KIND:
            return check(found.scripts.parent)
        stale = user_problems(found.scripts)
        if not stale:
            return True, "the user-scope hooks pin the installed startup script"
        return False, "the hook pin is stale: " + "; ".join(stale)
    return check(checkout)
