"""`lifecycle setup` and `lifecycle uninstall`: one harness's hooks, MCP server and instruction pointer.

Setup composes what `hooks install` and `mcp install` do (`harness.install`, `mcpconfig.install`) with
the pointer block of `instructions`, all decided before anything is written: when the other scope
already registers the handlers or the server, or the continuity plugin is enabled for the harness,
nothing is written and the result says which file serves it (the model would otherwise get the brief
twice). Hook files are written in their own indentation, so that removing our part gives back the
bytes the person had.

A record of what setup added (`$XDG_STATE_HOME/continuity/setup/<harness>-<scope>[-<repo>].json`:
which files it created, which top-level keys and tables it added, the separator before the pointer
block; never any file's content) lets uninstall take away exactly that; a second setup keeps the first
record's facts. Without a record uninstall still removes our entries and keeps every file.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit

from continuity import tunables
from continuity.errors import UsageError
from continuity.local import userdirs
from continuity.local.repo import find_repo_root
from continuity.store import atomic
from continuity.trust import harness, installation, instructions, mcpconfig, pin, plugin, undo

NEXT_STEPS = {
    harness.CODEX: [
        "Codex runs a new or changed hook only after you trust it: start codex, open /hooks and trust "
        "continuity's hooks; then start a new session (/mcp lists 'continuity').",
    ],
    harness.CLAUDE: ["Start a new Claude Code session: the brief arrives at its start and /mcp lists 'continuity'."],
}


@dataclass(frozen=True)
class Change:
    """One file setup or uninstall touches: what part of ours, and whether it changes."""

    part: str  # "hooks", "mcp", "instructions" or "trust"
    path: Path
    changed: bool
    removed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"part": self.part, "path": str(self.path), "changed": self.changed, "removed": self.removed}


@dataclass
class Result:
    action: str  # "setup" or "uninstall"
    harness: str
    scope: str
    dry_run: bool
    changes: list[Change] = field(default_factory=list)
    served_by: str | None = None  # why nothing was written: the file (or plugin) that already serves it
    next_steps: list[str] = field(default_factory=list)
    installation: dict[str, str] | None = None

    @property
    def changed(self) -> bool:
        return any(change.changed for change in self.changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "action": self.action,
            "harness": self.harness,
            "scope": self.scope,
            "dry_run": self.dry_run,
            "changed": self.changed,
            "changes": [change.to_json() for change in self.changes],
            "served_by": self.served_by,
            "next_steps": self.next_steps,
            "installation": self.installation,
        }


def record_path(name: str, scope: str, repo: Path | None) -> Path:
    suffix = "" if scope == "user" or repo is None else "-" + hashlib.sha256(str(repo).encode()).hexdigest()[:16]
    return Path(userdirs.state_dir()) / "setup" / f"{name}-{scope}{suffix}.json"


def _load_record(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes()[: tunables.HARNESS_CONFIG_CAP_BYTES])
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and isinstance(data.get("files"), dict) else {}


def _check(name: str, scope: str) -> None:
    if name not in harness.HARNESSES or scope not in harness.SCOPES:
        raise UsageError(f"unknown harness or scope: {name} {scope}")


def _hooks_target(name: str, scope: str, cwd: Path) -> tuple[Path, harness.Location | None, dict[str, str] | None]:
    """(checkout whose scripts project scope runs, the user-scope location, the installation as JSON, with
    `warning` set for an editable install, whose user-scope hooks depend on its checkout)."""
    if scope == "project":
        return pin.find_checkout(cwd), None, None
    found = installation.find()
    described = found.to_json()
    if found.kind == installation.CHECKOUT_KIND:
        described["warning"] = found.describe()
    return found.scripts.parent, harness.Location(found.scripts, "user", found.python), described


def _codex_config() -> Path:
    return mcpconfig.user_config_path(harness.CODEX)


def _top_keys(path: Path, toml: bool) -> set[str]:
    text = harness.read_config(path, tunables.MCP_CONFIG_CAP_BYTES)
    if not text:
        return set()
    if toml:
        return set(tomlkit.parse(text).keys())
    return set(harness.parse_object(path, text))


def setup(name: str, scope: str, cwd: Path, *, dry_run: bool = False) -> Result:
    """Register the hooks, the MCP server and the pointer block for `name` at `scope` (idempotent)."""
    _check(name, scope)
    repo = find_repo_root(cwd)
    if scope == "project" and repo is None:
        raise UsageError("project scope needs a git repository; run this inside the checkout")
    result = Result("setup", name, scope, dry_run)
    enabled = plugin.installed(name, repo)
    if enabled is not None:
        result.served_by = f"the continuity plugin, enabled in {enabled}"
        return result
    checkout, where, described = _hooks_target(name, scope, cwd)
    result.installation = described
    hooks = harness.install(name, scope, checkout, dry_run=True, repo=repo, where=where)
    if hooks.duplicate_of is not None:
        result.served_by = str(hooks.duplicate_of)
        return result
    server = mcpconfig.install(name, scope, repo, dry_run=True)
    if server.duplicate_of is not None:
        result.served_by = str(server.duplicate_of)
        return result
    pointer = instructions.add(instructions.path_for(name, scope, repo))
    before_hooks = harness.read_config(hooks.path, tunables.HARNESS_CONFIG_CAP_BYTES)
    record_file = record_path(name, scope, repo)
    record = _load_record(record_file)
    files: dict[str, Any] = record.get("files", {})
    facts = {
        "hooks": {
            "path": str(hooks.path),
            "created": before_hooks is None,
            "added": sorted({"hooks", "description"} - _top_keys(hooks.path, toml=False)),
        },
        "mcp": {
            "path": str(server.path),
            "created": not server.path.exists(),
            "table_added": mcpconfig.TABLE[name] not in _top_keys(server.path, toml=name == harness.CODEX),
        },
        "instructions": {"path": str(pointer.path), "created": pointer.before is None, "lead": pointer.lead},
    }
    if name == harness.CODEX:  # Codex files its trust of our hooks in the user's config.toml, after setup
        trust_file = _codex_config()
        facts["trust"] = {
            "path": str(trust_file),
            "had_hooks_table": "hooks" in _top_keys(trust_file, toml=True),
            "created": not trust_file.exists(),
        }
    for part, fact in facts.items():
        if files.get(part, {}).get("path") != fact["path"]:
            files[part] = fact  # a first setup of this file: its facts; later runs keep them
    result.changes = [
        Change("hooks", hooks.path, hooks.changed),
        Change("mcp", server.path, server.changed),
        Change("instructions", pointer.path, pointer.changed),
    ]
    result.next_steps = list(NEXT_STEPS[name])
    if dry_run:
        return result
    if hooks.changed:
        undo.write_text(hooks.path, undo.render_like(json.loads(hooks.text), before_hooks), before_hooks is not None)
    if server.changed:
        if name == harness.CODEX and files["mcp"].get("chunks") is None:
            before = harness.read_config(server.path, tunables.MCP_CONFIG_CAP_BYTES) or ""
            files["mcp"]["chunks"] = undo.inserted(before, server.text)
        mcpconfig.install(name, scope, repo)
    instructions.write(pointer)
    _save_record(record_file, {"version": 1, "harness": name, "scope": scope, "files": files})
    return result


def _save_record(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, json.dumps(record, indent=2) + "\n")


def uninstall(name: str, scope: str, cwd: Path, *, dry_run: bool = False) -> Result:
    """Remove exactly what setup added for `name` at `scope`, and Codex's trust of those hooks."""
    _check(name, scope)
    repo = find_repo_root(cwd)
    if scope == "project" and repo is None:
        raise UsageError("project scope needs a git repository; run this inside the checkout")
    record_file = record_path(name, scope, repo)
    files = _load_record(record_file).get("files", {})
    result = Result("uninstall", name, scope, dry_run)
    hooks_path = harness.config_path(name, scope, repo or cwd)
    fact = files.get("hooks", {})
    before, after, keys = undo.hooks_without_ours(
        hooks_path, added=list(fact.get("added", [])), created=bool(fact.get("created"))
    )
    result.changes.append(Change("hooks", hooks_path, before != after, after is None and before is not None))
    mcp_path = mcpconfig.config_path(name, scope, repo)
    fact = files.get("mcp", {})
    mcp_before, mcp_after = undo.mcp_without_ours(
        name, mcp_path, table_added=bool(fact.get("table_added")), created=bool(fact.get("created")),
        chunks=fact.get("chunks"),
    )  # fmt: skip
    result.changes.append(
        Change("mcp", mcp_path, mcp_before != mcp_after, mcp_after is None and mcp_before is not None)
    )
    fact = files.get("instructions", {})
    pointer = instructions.remove(
        instructions.path_for(name, scope, repo), fact.get("lead") if fact else None, bool(fact.get("created"))
    )
    result.changes.append(
        Change("instructions", pointer.path, pointer.changed, pointer.after is None and pointer.changed)
    )
    if not dry_run:
        if before != after:
            undo.write_text(hooks_path, after, True)
        if mcp_before != mcp_after:
            undo.write_text(mcp_path, mcp_after, True)
        instructions.write(pointer)
    if name == harness.CODEX and keys:
        keep = bool(files.get("trust", {}).get("had_hooks_table", True))
        path, trust_before, trust_after = undo.codex_trust_without(keys, keep_tables=keep)
        if trust_after is not None and not trust_after.strip() and files.get("trust", {}).get("created"):
            trust_after = None  # setup created the file; with our trust gone nothing of anyone's is left
        result.changes.append(Change("trust", path, trust_before != trust_after, trust_after is None))
        if not dry_run and trust_before != trust_after:
            undo.write_text(path, trust_after, True)
    if not dry_run:
        record_file.unlink(missing_ok=True)
    return result
