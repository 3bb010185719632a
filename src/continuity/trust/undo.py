"""Taking out of a harness's configuration exactly what `lifecycle setup` put in, formatting kept.

- hooks (`hooks.json`, `settings.json`): our handlers' groups, the `description` and `hooks` keys when
  setup added them, and the file itself when setup created it and nothing else is left;
- Codex's trust of those handlers: `[hooks.state."<hooks file>:<event>:<group>:<handler>"]` tables in
  `$CODEX_HOME/config.toml`, written by Codex when the person trusted them in `/hooks` (the key names
  the handler's position, so only the positions our handlers held are removed);
- the MCP server: `mcp_servers.continuity` (TOML) or `mcpServers.continuity` (JSON), and the enclosing
  table when setup added it.

JSON is rewritten with the file's own indentation and final newline, and TOML through tomlkit, which
keeps every comment and table it does not touch, so after setup and uninstall a file written in the
usual way (two-space JSON, as both clients write it) is byte for byte what it was.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from continuity import tunables
from continuity.store import atomic
from continuity.trust import harness, mcpconfig


def render_like(doc: dict[str, Any], original: str | None) -> str:
    """`doc` as JSON in the style of `original` (its indentation, its final newline); new files as `harness`."""
    if not original:
        return harness.render_doc(doc)
    ending = "\n" if original.endswith("\n") else ""
    return json.dumps(doc, indent=mcpconfig.json_indent(original), ensure_ascii=False) + ending


def write_text(path: Path, text: str | None, existed: bool) -> None:
    """Write `text` (None: remove the file): a temporary sibling, fsync, rename; the mode kept."""
    if text is None:
        path.unlink(missing_ok=True)
        return

    mode = stat.S_IMODE(os.lstat(path).st_mode) if existed and path.exists() else 0o644
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, text, mode)


def snake(event: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", event).lower()


def our_positions(doc: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(event in snake case, group index, handler index) of every handler of ours: Codex's trust key parts."""
    found = []
    hooks = doc.get("hooks")
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for g, group in enumerate(groups if isinstance(groups, list) else ()):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(handlers if isinstance(handlers, list) else ()):
                if harness.is_ours(handler):
                    found.append((snake(event), g, h))
    return found


def hooks_without_ours(path: Path, *, added: list[str], created: bool) -> tuple[str | None, str | None, list[str]]:
    """(text before, text after or None to remove, Codex trust keys of the removed handlers)."""
    text = harness.read_config(path, tunables.HARNESS_CONFIG_CAP_BYTES)
    if text is None:
        return None, None, []
    doc = harness.parse_object(path, text)
    names = {str(path), os.path.realpath(path)}
    keys = [f"{name}:{event}:{g}:{h}" for name in sorted(names) for event, g, h in our_positions(doc)]
    if not keys:
        return text, text, []
    out = harness.merge(doc, {})
    if "description" in added and out.get("description") == harness.DESCRIPTION:
        del out["description"]
    if "hooks" in added and out.get("hooks") == {}:
        del out["hooks"]
    if created and not out:
        return text, None, keys
    return text, render_like(out, text), keys


def _load_toml(path: Path) -> tuple[str | None, Any]:
    text = harness.read_config(path, tunables.MCP_CONFIG_CAP_BYTES)
    return text, tomlkit.parse(text or "")


def inserted(before: str, after: str) -> list[str] | None:
    """The runs of lines `after` adds to `before`, when adding lines is all it does (else None)."""
    if after.startswith(before):  # appended (a last line without its newline gets one: that is ours too)
        return [after[len(before) :]]
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    chunks = []
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if tag != "insert":
            return None
        chunks.append("".join(new[j1:j2]))
    return chunks


def without_chunks(text: str, chunks: list[str]) -> str | None:
    """`text` without each chunk, each found exactly once where a line starts (or starting one); else None."""
    for chunk in chunks:
        at = text.find(chunk)
        starts_line = at == 0 or text[at - 1] == "\n" or chunk.startswith("\n")
        if not chunk or at < 0 or text.find(chunk, at + 1) >= 0 or not starts_line:
            return None
        text = text[:at] + text[at + len(chunk) :]
    return text


def _without_tables(text: str, headers: set[str]) -> str | None:
    """`text` without the tables whose header line is in `headers`, each with the blank line before it.

    Blank lines at the end of a removed table belong to whatever header follows, so they are held
    until it is known whether that one stays."""
    out: list[str] = []
    held: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("["):
            if stripped in headers:
                headers = headers - {stripped}
                if not skipping and out and not out[-1].strip():
                    out.pop()
                skipping, held = True, []
                continue
            skipping, out = False, out + held
            held = []
        if skipping:
            held = [*held, line] if not stripped else []
        else:
            out.append(line)
    return None if headers else "".join(out)


def codex_trust_without(keys: list[str], *, keep_tables: bool) -> tuple[Path, str | None, str | None]:
    """Codex's config.toml without the `[hooks.state]` entries of `keys` (before, after).

    The tables are taken out as lines (header to the next header, and the blank line before), which
    gives back the bytes of before when Codex appended them; tomlkit does it otherwise."""
    path = mcpconfig.user_config_path(harness.CODEX)
    text, doc = _load_toml(path)
    hooks = doc.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    if not isinstance(state, dict) or not any(key in state for key in keys):
        return path, text, text
    present = [key for key in keys if key in state]
    by_lines = _without_tables(text or "", {f"[hooks.state.{json.dumps(key)}]" for key in present})
    if by_lines is not None and not _trust_left(by_lines, present):
        if not keep_tables:  # Codex writes an explicit, empty `[hooks.state]` above the entries
            for header, inner in (("[hooks.state]", ("hooks", "state")), ("[hooks]", ("hooks",))):
                emptied = _without_tables(by_lines, {header}) if _is_empty(by_lines, inner) else None
                by_lines = by_lines if emptied is None else emptied
        return path, text, by_lines
    for key in keys:
        if key in state:
            del state[key]
    if not keep_tables and not state:
        del hooks["state"]
        if not hooks:
            del doc["hooks"]
    return path, text, tomlkit.dumps(doc)


def _toml_or_none(text: str) -> dict[str, Any] | None:
    try:
        return tomlkit.parse(text).unwrap()
    except TOMLKitError:
        return None


def _trust_left(text: str, keys: list[str]) -> bool:
    doc = _toml_or_none(text)
    if doc is None:
        return True
    hooks = doc.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return isinstance(state, dict) and any(key in state for key in keys)


def _is_empty(text: str, keys: tuple[str, ...]) -> bool:
    """True when the table at `keys` exists in `text` and holds nothing."""
    value: Any = _toml_or_none(text)
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return isinstance(value, dict) and not value


def _server_left(text: str) -> bool:
    doc = _toml_or_none(text)
    servers = None if doc is None else doc.get(mcpconfig.TABLE[harness.CODEX])
    return doc is None or (isinstance(servers, dict) and mcpconfig.SERVER_NAME in servers)


def mcp_without_ours(
    harness_name: str, path: Path, *, table_added: bool, created: bool, chunks: list[str] | None = None
) -> tuple[str | None, str | None]:
    """(text before, text after or None to remove) without our MCP server's entry.

    For TOML, `chunks` (the lines setup inserted, from its record) are taken out as they were when
    they are still there unchanged: tomlkit would leave the blank line it put before our table."""
    table, name = mcpconfig.TABLE[harness_name], mcpconfig.SERVER_NAME
    if harness_name == harness.CODEX:
        text, doc = _load_toml(path)
        servers = doc.get(table)
        if text is None or not isinstance(servers, dict) or not mcpconfig.is_ours(mcpconfig.plain(servers.get(name))):
            return text, text
        by_lines = without_chunks(text, chunks) if chunks else None
        if by_lines is not None and not _server_left(by_lines):
            return text, None if created and not by_lines else by_lines
        del servers[name]
        if table_added and not servers:
            del doc[table]
        after = tomlkit.dumps(doc)
        return text, None if created and not after.strip() else after
    text = harness.read_config(path, tunables.MCP_CONFIG_CAP_BYTES)
    if text is None:
        return None, None
    obj = harness.parse_object(path, text)
    servers = obj.get(table)
    if not isinstance(servers, dict) or not mcpconfig.is_ours(servers.get(name)):
        return text, text
    del servers[name]
    if table_added and not servers:
        del obj[table]
    return text, None if created and not obj else render_like(obj, text)
