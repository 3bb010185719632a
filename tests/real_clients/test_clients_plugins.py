"""The continuity plugins, installed from this repository's own marketplaces into the real clients.

A wheel of this checkout is installed (`pip install --no-deps`) into a new virtual environment whose
`bin/` comes first on the clients' PATH, as `pipx install` or `uv tool install` would put `lifecycle`
there; the package's dependencies come from this test environment (a `.pth` line). The clients'
homes are fresh; the copy of the checkout is both the marketplace and the project the session opens
(its own project hooks removed, so that the brief can only come from the plugin).

What the clients do with the plugins, as these tests pin it:
- Codex 0.171.0 reads `.agents/plugins/marketplace.json` (`codex plugin marketplace add <folder>`),
  copies the plugin to `$CODEX_HOME/plugins/cache/continuity/continuity/<version>/` and records
  `[plugins."continuity@continuity"] enabled = true`. It puts that folder in place of `${PLUGIN_ROOT}`
  in the hook commands, lists the hooks under keys `continuity@continuity:hooks/hooks.json:<event>:…`
  (`source: plugin`, untrusted), each with a `currentHash` of two digests, `sha256:<definition>/
  sha256:<plugin files>`, and runs them only once `[hooks.state."<key>"] trusted_hash` holds the first
  (with both, it reports the hook `modified` and runs nothing). The hooks run in the session's folder
  with PLUGIN_ROOT, PLUGIN_DATA and their CLAUDE_-prefixed twins in the environment.
  The plugin's server keeps its name: its tools reach the model as the namespace `mcp__continuity`.
- Claude Code reads `.claude-plugin/marketplace.json` (`claude plugin marketplace add <folder>`,
  `claude plugin install continuity@continuity`, which sets `enabledPlugins` in settings.json) and
  runs the plugin's hooks without a trust step; the plugin's `recall` tool is
  `mcp__plugin_continuity_continuity__recall`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from clients import CODEX, Package, Site, codex_rpc, install, missing_tools, opening
from mockmodel import occurrences

pytestmark = pytest.mark.clients

# The newest releases when this was written (`npm view … version`).
CLAUDE_NEWEST = Package("@anthropic-ai/claude-code", "2.1.337", "claude")
ROOT = Path(__file__).resolve().parents[2]
CANARY = "PLUGIN-NOTE-CANARY-7c2e90"


def build_installation(base: Path) -> Path:
    """A virtual environment with continuity installed from a wheel of this checkout; returns its bin/."""
    source = base / "source"
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        if (ROOT / rel).is_file() and not rel.startswith((".venv/", "tests/", "bench/")):
            (source / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, source / rel)
    wheels = base / "wheels"
    pip = [sys.executable, "-m", "pip"]
    subprocess.run([*pip, "wheel", "-q", "--no-deps", "-w", str(wheels), str(source)], check=True, timeout=600,
                   capture_output=True)  # fmt: skip
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    Path(purelib, "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    [wheel] = wheels.glob("continuity-*.whl")
    subprocess.run([*pip, "--python", str(python), "install", "-q", "--no-deps", str(wheel)], check=True,
                   timeout=600, capture_output=True)  # fmt: skip
    shutil.rmtree(source)
    assert (venv / "bin" / "lifecycle").is_file()
    return venv / "bin"


class PluginSite(Site):
    """A `Site` whose clients find the installed package's `lifecycle` first on PATH, and whose Codex
    configuration keeps the marketplace and plugin tables `codex plugin` wrote."""

    def __init__(self, root: Path, installed: Path) -> None:
        super().__init__(root)
        self.installed = installed
        self.codex_tables = ""

    def env(self, **extra: str) -> dict[str, str]:
        env = super().env(**extra)
        env["PATH"] = f"{self.installed}{os.pathsep}{env['PATH']}"
        return env

    def write_codex_config(self) -> None:
        super().write_codex_config()
        if self.codex_tables:
            config = self.codex_home / "config.toml"
            config.write_text(config.read_text(encoding="utf-8") + self.codex_tables, encoding="utf-8")

    def client(self, cwd: Path, *argv: str) -> str:
        """A client's own command (plugin add, install…), without network, in this site's home."""
        env = self.env(CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
        done = subprocess.run(["unshare", "-n", *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{argv[1:4]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        return done.stdout + done.stderr

    def project_without_hooks(self, name: str) -> Path:
        """A connected copy of the checkout, without its own project hook files."""
        clone = self.clone(name)
        self.sh(clone, "git", "rm", "-q", "--cached", ".codex/hooks.json")
        (clone / ".codex" / "hooks.json").unlink()
        self.sh(clone, "git", "commit", "-q", "-m", "no project hooks: the plugin brings them")
        return clone


@pytest.fixture(scope="module")
def installation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = missing_tools()
    if reason:
        pytest.skip(reason)
    return build_installation(tmp_path_factory.mktemp("installation"))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, installation: Path) -> PluginSite:
    return PluginSite(tmp_path_factory.mktemp("plugins") / "site", installation)


def write_note(vault: Path, note_id: str, body: str) -> None:
    head = f'---\nid: "{note_id}"\ntype: fact\nstatus: approved\ntitle: "{note_id}"\nscope: global\n'
    head += 'verified: "2026-11-01"\nrevalidate_by: "2099-01-01"\n---\n'
    (vault / "30-memory" / "facts" / f"{note_id}.md").write_text(head + body + "\n", encoding="utf-8")


def tool_names(body: dict[str, Any]) -> list[str]:
    return [str(tool.get("name")) for tool in body.get("tools", [])]


def test_codex_plugin_from_the_local_marketplace_delivers_the_brief_once_and_recall(site: PluginSite) -> None:
    codex = install(CODEX)
    clone = site.project_without_hooks("codex-plugin")
    site.trust_codex(codex, clone, hooks=False)  # the folder only: there are no project hooks now
    said = site.client(clone, str(codex), "plugin", "marketplace", "add", str(clone))
    assert "Added marketplace `continuity`" in said, said
    said = site.client(clone, str(codex), "plugin", "add", "continuity@continuity")
    assert "Added plugin `continuity`" in said, said
    written = (site.codex_home / "config.toml").read_text(encoding="utf-8")
    assert '[plugins."continuity@continuity"]' in written and "enabled = true" in written, written
    site.codex_tables = "\n" + written[written.index("[marketplaces.continuity]") :]
    site.write_codex_config()

    listing = codex_rpc(codex, site.env(), clone, "hooks/list", {"cwds": [str(clone)]})["data"][0]
    ours = [hook for hook in listing["hooks"] if hook.get("pluginId") == "continuity@continuity"]
    assert ours and all(hook["source"] == "plugin" and hook["trustStatus"] == "untrusted" for hook in ours), listing
    assert all(hook["key"].startswith("continuity@continuity:hooks/hooks.json:") for hook in ours)
    assert all("${PLUGIN_ROOT}" not in hook["command"] and "/plugins/cache/" in hook["command"] for hook in ours)
    untrusted = site.run(clone, [str(codex), "exec", "Say hello."], [])
    assert untrusted.requests and occurrences(untrusted.requests, "<private-memory event=") == 0, "untrusted ran"

    for hook in ours:  # `<definition>/<plugin files>`: what /hooks files, and what Codex compares, is the first
        definition, _, files = hook["currentHash"].partition("/")
        assert definition.startswith("sha256:") and files.startswith("sha256:"), hook["currentHash"]
        site._codex_trust[hook["key"]] = definition
    site.write_codex_config()
    write_note(site.vault, "fact-plugin-canary", f"pluginterm: {CANARY} is where recall through the plugin lands.")
    rules = [
        {"match": "Recall", "reply": {"tool": "exec_command", "input": {"cmd": "sleep 8"}}},
        {"match": "function_call_output", "reply": {"tool": "recall", "namespace": "mcp__continuity",
                                                    "input": {"terms": "pluginterm"}}},
        {"match": "function_call_output", "reply": {"text": "Recalled."}},
    ]  # fmt: skip
    run = site.run(clone, [str(codex), "exec", "Recall what the vault says."], rules)
    assert run.returncode == 0 and run.requests, run.describe()
    first = run.requests[0]
    assert occurrences(first, opening("SessionStart")) == 1, run.describe()
    assert "mcp__continuity" in tool_names(run.requests[-1]), tool_names(run.requests[-1])
    assert any(occurrences(body, CANARY) for body in run.requests[1:]), run.describe()


def test_claude_plugin_from_the_local_marketplace_delivers_the_brief_once_and_recall(site: PluginSite) -> None:
    claude = install(CLAUDE_NEWEST)
    clone = site.project_without_hooks("claude-plugin")
    said = site.client(clone, str(claude), "plugin", "marketplace", "add", str(clone))
    said += site.client(clone, str(claude), "plugin", "install", "continuity@continuity")
    settings = json.loads((site.claude_config / "settings.json").read_text(encoding="utf-8"))
    assert settings.get("enabledPlugins", {}).get("continuity@continuity") is True, (said, settings)

    write_note(site.vault, "fact-plugin-canary-c", f"pluginclaudeterm: {CANARY} arrives through the plugin.")
    tool = "mcp__plugin_continuity_continuity__recall"
    rules = [
        {"match": "Recall", "reply": {"tool": tool, "input": {"terms": "pluginclaudeterm"}}},
        {"match": "tool_result", "reply": {"text": "Recalled."}},
    ]
    run = site.run(clone, [str(claude), "-p", "Recall what the vault says.", "--allowedTools", tool], rules)
    assert run.returncode == 0 and run.requests, run.describe()
    assert occurrences(run.requests[0], opening("SessionStart")) == 1, run.describe()
    assert any(occurrences(body, CANARY) for body in run.requests[1:]), run.describe()

    # `lifecycle setup` after the plugin: it says the plugin serves Claude Code and writes nothing.
    before = {p: p.read_bytes() for p in site.claude_config.rglob("*.json") if p.is_file()}
    done = subprocess.run(["lifecycle", "setup", "claude"], cwd=clone, env=site.env(), capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and "the continuity plugin" in done.stdout, done.stdout + done.stderr
    assert {p: p.read_bytes() for p in before} == before


def test_setup_for_both_clients_delivers_the_brief_and_the_tools_and_uninstall_gives_the_bytes_back(
    tmp_path: Path, installation: Path
) -> None:
    """The acceptance path: a package installation, `lifecycle setup codex` and `lifecycle setup claude`,
    a session in each client, then `lifecycle uninstall` for both.

    Claude Code itself rewrites `.claude.json` during a session (start counts, project entries), so that
    file is compared without the keys Claude Code added; every other file byte for byte."""
    site = PluginSite(tmp_path / "site", installation)
    codex, claude = install(CODEX), install(CLAUDE_NEWEST)
    clone = site.project_without_hooks("setup")
    site.trust_codex(codex, clone, hooks=False)
    files = [site.codex_home / name for name in ("hooks.json", "config.toml", "AGENTS.md")]
    files += [site.claude_config / name for name in ("settings.json", "CLAUDE.md")]
    before = {path: path.read_bytes() if path.exists() else None for path in files}
    claude_json = site.claude_config / ".claude.json"
    assert not claude_json.exists()

    def lifecycle(*args: str) -> str:
        done = subprocess.run(["lifecycle", *args], cwd=clone, env=site.env(), capture_output=True, text=True,
                              timeout=120)  # fmt: skip
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
        return done.stdout

    said = lifecycle("setup", "codex")
    assert "/hooks" in said and f"wrote {site.codex_home / 'hooks.json'}" in said, said
    lifecycle("setup", "claude")

    # Trust our user-scope hooks with Codex's own configuration writer (`config/value/write`), which
    # files them as `/hooks` does: `[hooks.state]`, then one `[hooks.state."<key>"]` table per hook.
    listing = codex_rpc(codex, site.env(), clone, "hooks/list", {"cwds": [str(clone)]})["data"][0]
    ours = [hook for hook in listing["hooks"] if hook["sourcePath"] == str(site.codex_home / "hooks.json")]
    assert ours and all(hook["trustStatus"] == "untrusted" for hook in ours), listing
    for hook in ours:
        edit = {"keyPath": f"hooks.state.{json.dumps(hook['key'])}.trusted_hash", "value": hook["currentHash"],
                "mergeStrategy": "replace"}  # fmt: skip
        assert codex_rpc(codex, site.env(), clone, "config/value/write", edit)["status"] == "ok"
    trusted = codex_rpc(codex, site.env(), clone, "hooks/list", {"cwds": [str(clone)]})["data"][0]["hooks"]
    assert {h["trustStatus"] for h in trusted if h["key"] in {o["key"] for o in ours}} == {"trusted"}

    write_note(site.vault, "fact-setup-canary", f"setupterm: {CANARY} arrives through setup's server.")
    rules = [
        {"match": "Recall", "reply": {"tool": "exec_command", "input": {"cmd": "sleep 8"}}},
        {"match": "function_call_output", "reply": {"tool": "recall", "namespace": "mcp__continuity",
                                                    "input": {"terms": "setupterm"}}},
        {"match": "function_call_output", "reply": {"text": "Recalled."}},
    ]  # fmt: skip
    run = site.run(clone, [str(codex), "exec", "Recall what the vault says."], rules)
    assert run.returncode == 0 and run.requests, run.describe()
    assert occurrences(run.requests[0], opening("SessionStart")) == 1, run.describe()
    assert "mcp__continuity" in tool_names(run.requests[-1])
    assert any(occurrences(body, CANARY) for body in run.requests[1:]), run.describe()

    tool = "mcp__continuity__recall"
    rules = [
        {"match": "Recall", "reply": {"tool": tool, "input": {"terms": "setupterm"}}},
        {"match": "tool_result", "reply": {"text": "Recalled."}},
    ]
    run = site.run(clone, [str(claude), "-p", "Recall what the vault says.", "--allowedTools", tool], rules)
    assert run.returncode == 0 and run.requests, run.describe()
    assert occurrences(run.requests[0], opening("SessionStart")) == 1, run.describe()
    assert any(occurrences(body, CANARY) for body in run.requests[1:]), run.describe()

    lifecycle("uninstall", "codex")
    lifecycle("uninstall", "claude")
    for path in files:
        assert (path.read_bytes() if path.exists() else None) == before[path], f"{path.name} differs"
    left = json.loads(claude_json.read_text(encoding="utf-8")) if claude_json.exists() else {}
    assert "continuity" not in json.dumps(left.get("mcpServers", {})), left.get("mcpServers")


def test_a_plugin_installed_after_setup_stays_quiet_and_the_brief_arrives_once(
    tmp_path: Path, installation: Path
) -> None:
    """Setup first, then each plugin (its hooks trusted in Codex too): one brief per session, from setup's
    handlers; the plugin's runner only tells the person (a `systemMessage`)."""
    site = PluginSite(tmp_path / "site", installation)
    codex, claude = install(CODEX), install(CLAUDE_NEWEST)
    clone = site.project_without_hooks("both")
    site.trust_codex(codex, clone, hooks=False)
    for name in ("codex", "claude"):
        done = subprocess.run(["lifecycle", "setup", name], cwd=clone, env=site.env(), capture_output=True,
                              text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
    site.client(clone, str(codex), "plugin", "marketplace", "add", str(clone))
    site.client(clone, str(codex), "plugin", "add", "continuity@continuity")
    site.client(clone, str(claude), "plugin", "marketplace", "add", str(clone))
    site.client(clone, str(claude), "plugin", "install", "continuity@continuity")

    listing = codex_rpc(codex, site.env(), clone, "hooks/list", {"cwds": [str(clone)]})["data"][0]
    config = site.codex_home / "config.toml"
    trusted = [(h["key"], h["currentHash"].partition("/")[0]) for h in listing["hooks"]]
    assert any(key.startswith("continuity@continuity:") for key, _ in trusted)
    assert any(key.startswith(str(site.codex_home)) for key, _ in trusted)
    tables = [f"\n[hooks.state.{json.dumps(key)}]\ntrusted_hash = {json.dumps(digest)}\n" for key, digest in trusted]
    config.write_text(config.read_text(encoding="utf-8") + "".join(tables), encoding="utf-8")

    run = site.run(clone, [str(codex), "exec", "Say hello."], [])
    assert run.returncode == 0 and run.requests, run.describe()
    assert occurrences(run.requests[0], "<private-memory event=") == 1, run.describe()
    run = site.run(clone, [str(claude), "-p", "Say hello."], [])
    assert run.returncode == 0 and run.requests, run.describe()
    assert occurrences(run.requests[0], "<private-memory event=") == 1, run.describe()
