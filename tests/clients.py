"""Helpers for the tests that drive the real Codex and Claude Code CLIs (`test_clients_*.py`).

- `install` puts a pinned npm release into `<cache>/<package>@<version>`, once: later runs reuse it.
  The cache folder is `$CONTINUITY_TEST_CLIENTS`, else `continuity-test-clients` in the real
  `$XDG_CACHE_HOME` (`~/.cache` when unset), read at import (before the autouse fixture points HOME
  and XDG_* at the test's folder); npm's download cache is a temporary folder beside it.
- `Site` is one test home, one vault with a canary in the soul and in the current handoff, and fresh
  copies of this checkout connected to it. A copy holds the working tree's tracked and untracked but
  not ignored files, committed in a new repository: uncommitted changes are what is tested.
- `Site.run` runs one client session inside a new network namespace that has only a loopback
  interface (`unshare -n`), next to the scripted model of `mockmodel.py`, and returns the requests
  the model received: the only proof of what reached it.
- Codex runs a project hook only once its definition's hash is trusted. `Site.trust_codex` asks
  `codex app-server` (`hooks/list`) for each hook's `key` and `currentHash` and writes them to
  `$CODEX_HOME/config.toml` as `[hooks.state."<key>"] trusted_hash = …`, as a person's `/hooks` does.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mockmodel

from continuity import names
from continuity.trust import mcpconfig, pin

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
MOCK = Path(mockmodel.__file__).resolve()
PORT = 8765  # the namespace is new for every run, so a fixed port never collides
REAL_ENV = dict(os.environ)
_USER_CACHE = Path(REAL_ENV.get("XDG_CACHE_HOME") or Path.home() / ".cache")
CACHE = Path(REAL_ENV.get("CONTINUITY_TEST_CLIENTS") or _USER_CACHE / "continuity-test-clients")
SOUL_CANARY = "SOUL-CANARY-5e1f0c9a"
HANDOFF_CANARY = "HANDOFF-CANARY-b72d4e31"
PROJECT = "demo"
MODEL_PATHS = ("/responses", "/messages")


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    command: str


CODEX = Package("@openai/codex", "0.171.0", "codex")
# The newest releases at the time of writing (Codex too); 2.1.332 and 2.1.197 were known to work before.
CLAUDE = Package("@anthropic-ai/claude-code", "2.1.337", "claude")


def missing_tools() -> str | None:
    """Why the client tests cannot run here, or None: npm absent, or no network namespace."""
    if shutil.which("npm", path=REAL_ENV.get("PATH")) is None:
        return "npm is not installed: the tests against the real Codex and Claude Code clients need it"
    probe = subprocess.run(
        ["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True, timeout=30
    )
    if probe.returncode != 0:
        return f"cannot make a loopback-only network namespace (unshare -n, ip link): {probe.stderr.strip()}"
    return None


def install(package: Package) -> Path:
    """The client's executable, installed from npm into the cache folder unless it is already there."""
    folder = CACHE / f"{package.name.replace('/', '+')}@{package.version}"
    exe = folder / "node_modules" / ".bin" / package.command
    if exe.exists() and _version_ok(exe, package):
        return exe
    staging = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    spec = f"{package.name}@{package.version}"
    downloads = folder.with_name(f"npm-cache.tmp-{os.getpid()}")  # npm's own cache, dropped afterwards
    try:
        done = subprocess.run(
            ["npm", "install", "--prefix", str(staging), "--no-save", "--no-audit", "--no-fund", spec],
            env={**REAL_ENV, "npm_config_cache": str(downloads)}, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
    finally:
        shutil.rmtree(downloads, ignore_errors=True)
    assert done.returncode == 0, f"npm install {spec} failed:\n{done.stdout}\n{done.stderr}"
    staged = staging / "node_modules" / ".bin" / package.command
    assert _version_ok(staged, package), f"{spec} installed but `{package.command} --version` disagrees"
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)
    return exe


def _version_ok(exe: Path, package: Package) -> bool:
    try:
        done = subprocess.run([str(exe), "--version"], env=REAL_ENV, capture_output=True, text=True, timeout=60)
    except OSError:
        return False
    return done.returncode == 0 and package.version in done.stdout


def copy_checkout(dest: Path) -> Path:
    """This checkout's tracked and untracked-but-not-ignored files, committed in a new repository."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "-co", "--exclude-standard"],
        capture_output=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    for rel in filter(None, listed.decode("utf-8", "surrogateescape").split("\0")):
        source, target = ROOT / rel, dest / rel
        if not source.is_symlink() and not source.is_file():
            continue  # deleted in the working tree
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    return dest


@dataclass
class Run:
    """One client session: its exit status, its terminal output and the requests the model got."""

    returncode: int
    output: str
    log: list[dict[str, Any]]
    folder: Path
    launched: float | None = None  # the wall-clock time the client was launched (the log's clock)

    @property
    def first_request_seconds(self) -> float | None:
        """From the client's launch to the model's first request: what a person waits before anything."""
        calls = self.model_calls
        return None if self.launched is None or not calls else float(calls[0]["time"]) - self.launched

    @property
    def model_calls(self) -> list[dict[str, Any]]:
        """The recorded model requests (Responses or Messages), in the order they arrived."""
        return [e for e in self.log if e["method"] == "POST" and e["path"].split("?")[0].endswith(MODEL_PATHS)]

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The bodies of the model requests."""
        return [e["body"] for e in self.model_calls]

    def describe(self) -> str:
        return (
            f"exit {self.returncode}, {len(self.requests)} model requests (see {self.folder}); "
            f"output:\n{self.output[-4000:]}"
        )


class Site:
    """A test home, a vault with canaries, and connected copies of this checkout, for one module."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.vault = root / "vault"
        self.codex_home = root / "codex-home"
        self.claude_config = root / "claude-config"
        for folder in (self.home, self.codex_home, self.claude_config):
            folder.mkdir(parents=True)
        self._codex_trust: dict[str, str] = {}
        self._codex_projects: list[Path] = []
        self._codex_mcp: list[str] = []
        self._runs = 0

    def env(self, **extra: str) -> dict[str, str]:
        """Everything a client and its hooks see: this site's home, no connection override, this venv first."""
        env = {
            "PATH": f"{BIN}{os.pathsep}{REAL_ENV.get('PATH', os.defpath)}",
            "HOME": str(self.home),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "CODEX_HOME": str(self.codex_home),
            "CLAUDE_CONFIG_DIR": str(self.claude_config),
            "GIT_CONFIG_GLOBAL": str(self.home / ".gitconfig"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Test",
            "GIT_AUTHOR_EMAIL": "test@example.invalid",
            "GIT_COMMITTER_NAME": "Test",
            "GIT_COMMITTER_EMAIL": "test@example.invalid",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
        }
        if "TMPDIR" in REAL_ENV:
            env["TMPDIR"] = REAL_ENV["TMPDIR"]
        env.update(extra)
        return env

    def sh(self, cwd: Path, *argv: str) -> str:
        done = subprocess.run(argv, cwd=cwd, env=self.env(), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{argv[:3]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def clone(self, name: str, *, claude: bool = False) -> Path:
        """A new copy of this checkout connected to the vault (made with the canaries on first use).

        With `claude`, `.claude/settings.json` is written by `lifecycle hooks install --scope project`."""
        path = copy_checkout(self.root / "work" / name)
        self.sh(path, "git", "init", "-q", "-b", "main")
        if not pin.check(path)[0]:
            # test_pin reports a stale checked-in pin; here the clients' behaviour is what is tested.
            warnings.warn("the checked-in hook pin is stale; the client tests run on a re-pinned copy", stacklevel=2)
            pin.pin(path)
        if claude:
            self.sh(path, "lifecycle", "hooks", "install", "--harness", "claude", "--scope", "project")
        self.sh(path, "git", "add", "-A")
        self.sh(path, "git", "commit", "-q", "-m", "copy of the checkout under test")
        first = not self.vault.exists()
        init = ["lifecycle", "init", "--vault", str(self.vault), "--device", "dev-a", "--project", PROJECT]
        self.sh(path, *init, *(["--new"] if first else []))
        if first:
            self._add_canaries(path)
        brief = self.sh(path, "lifecycle", "render")
        assert SOUL_CANARY in brief and HANDOFF_CANARY in brief, brief
        return path

    def _add_canaries(self, checkout: Path) -> None:
        soul = self.vault / "00-system" / "SOUL.md"
        text = soul.read_text(encoding="utf-8")
        assert "\n## Brief\n\n" in text
        edited = self.root / "soul.md"
        edited.write_text(text.replace("\n## Brief\n\n", f"\n## Brief\n\n- Soul canary: {SOUL_CANARY}.\n", 1))
        self.sh(checkout, "lifecycle", "edit", "soul", "--from", str(edited), "--yes", "--accept-concurrency-risk")
        handoff = self.root / "handoff.md"
        handoff.write_text(
            f"## Goal and status\n\nHandoff canary: {HANDOFF_CANARY}. The client tests are running.\n\n"
            "## Completed work\n\n- The vault was made for this test (tests/clients.py).\n\n"
            "## Risks and decisions\n\n- None.\n\n"
            "## Next actions\n\n1. Check what the model received.\n"
        )
        self.sh(checkout, "lifecycle", "handoff", "new", "--title", "Client test handoff", "--from", str(handoff))

    # --- running a client --------------------------------------------------------------------------

    def run(self, clone: Path, argv: list[str], rules: list[dict[str, Any]], timeout: float = 180) -> Run:
        """One session of `argv` in `clone`, with the mock model answering from `rules`."""
        self._runs += 1
        folder = self.root / "runs" / f"{self._runs:02d}"
        folder.mkdir(parents=True)
        script, log, output = folder / "script.json", folder / "requests.jsonl", folder / "output.txt"
        launched = folder / "launched"
        script.write_text(json.dumps({"rules": rules}))
        driver = [
            "unshare", "-n", sys.executable, str(MOCK), "--script", str(script), "--log", str(log),
            "--port", str(PORT), "--timeout", str(timeout), "--output", str(output), "--cwd", str(clone),
            "--launched", str(launched), "--", *argv,
        ]  # fmt: skip
        env = self.env(
            CONTINUITY_MOCK_API_KEY="not-a-real-key",
            ANTHROPIC_API_KEY="not-a-real-key",
            ANTHROPIC_BASE_URL=f"http://127.0.0.1:{PORT}",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        )
        code = run_group(driver, env, timeout + 60)
        text = output.read_text(encoding="utf-8", errors="replace") if output.exists() else ""
        start = float(launched.read_text(encoding="utf-8")) if launched.exists() else None
        return Run(code, text, mockmodel.read_log(log), folder, start)

    # --- the MCP server --------------------------------------------------------------------------------

    def register_codex_mcp(self, *args: str, command: list[str] | None = None) -> None:
        """`[mcp_servers.continuity]` in Codex's config.toml as `lifecycle setup codex` writes it by
        default (user scope: this interpreter running `python -I -m continuity mcp ARGS`), or `command`,
        a whole argv (bench/bench_clients.py's stand-ins); Codex starts it in the session's folder."""
        entry = mcpconfig.wanted_entry(names.CODEX, "user")
        argv = command or [entry["command"], *entry["args"], *args]
        self._codex_mcp = [
            "",
            "[mcp_servers.continuity]",
            f"command = {json.dumps(argv[0])}",
            f"args = {json.dumps(argv[1:])}",
        ]
        self.write_codex_config()

    def register_codex_mcp_off(self) -> None:
        """Codex's config.toml without the server again, for the other tests of the site."""
        self._codex_mcp = []
        self.write_codex_config()

    def register_claude_mcp(self, clone: Path, *args: str) -> None:
        """The checkout's `.mcp.json` naming `lifecycle mcp ARGS`, approved in its `.claude/settings.json`."""
        server = {"command": str(BIN / "lifecycle"), "args": ["mcp", "--harness", "claude", *args]}
        (clone / ".mcp.json").write_text(json.dumps({"mcpServers": {"continuity": server}}, indent=2) + "\n")
        settings_file = clone / ".claude" / "settings.json"
        settings = json.loads(settings_file.read_text(encoding="utf-8")) if settings_file.exists() else {}
        settings["enabledMcpjsonServers"] = ["continuity"]
        settings_file.parent.mkdir(parents=True, exist_ok=True)
        settings_file.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")

    # --- Codex trust ---------------------------------------------------------------------------------

    def codex_hooks(self, codex: Path, clone: Path) -> dict[str, Any]:
        """`codex app-server`'s `hooks/list` entry for `clone`: its hooks, warnings and errors."""
        return codex_rpc(codex, self.env(), clone, "hooks/list", {"cwds": [str(clone)]})["data"][0]

    def trust_codex(self, codex: Path, clone: Path, *, hooks: bool = True) -> dict[str, Any]:
        """Trust the folder (Codex loads no project hook before) and, with `hooks`, every project hook
        it then lists; returns that listing, taken before the hooks were trusted."""
        if clone not in self._codex_projects:
            self._codex_projects.append(clone)
            self.write_codex_config()
        listing = self.codex_hooks(codex, clone)
        if hooks:
            for hook in listing["hooks"]:
                if Path(hook["sourcePath"]).is_relative_to(clone):
                    self._codex_trust[hook["key"]] = hook["currentHash"]
            self.write_codex_config()
        return listing

    def write_codex_config(self) -> None:
        lines = [
            'model = "mock-model"',
            'model_provider = "mock"',
            'approval_policy = "never"',
            # The run is already fenced (a temporary home, a loopback-only namespace); Codex's own
            # sandbox needs kernel features a container may lack.
            'sandbox_mode = "danger-full-access"',
            "check_for_update_on_startup = false",
            "",
            "[model_providers.mock]",
            'name = "Local mock model"',
            f'base_url = "http://127.0.0.1:{PORT}/v1"',
            'wire_api = "responses"',
            'env_key = "CONTINUITY_MOCK_API_KEY"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "",
            "[analytics]",
            "enabled = false",
        ]
        for project in self._codex_projects:
            lines += ["", f"[projects.{json.dumps(str(project))}]", 'trust_level = "trusted"']
        for key, digest in self._codex_trust.items():
            lines += ["", f"[hooks.state.{json.dumps(key)}]", f"trusted_hash = {json.dumps(digest)}"]
        lines += self._codex_mcp
        (self.codex_home / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def codex_rpc(codex: Path, env: dict[str, str], cwd: Path, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One JSON-RPC call to `codex app-server` over stdio, after `initialize` and `initialized`."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"clientInfo": {"name": "continuity-tests", "version": "1"}, "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": method, "params": params},
    ]  # fmt: skip
    proc = subprocess.Popen(
        ["unshare", "-n", str(codex), "app-server"], cwd=cwd, env=env, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    watchdog = threading.Timer(120, stop_group, [proc])  # ends a hung server: readline then sees EOF
    watchdog.start()
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
        while line := proc.stdout.readline():
            answer = json.loads(line)
            if answer.get("id") == 2:
                assert "error" not in answer, answer
                result: dict[str, Any] = answer["result"]
                return result
        raise AssertionError(f"codex app-server ended (or hung) without answering {method}")
    finally:
        watchdog.cancel()
        proc.stdin.close()
        stop_group(proc)


def run_group(argv: list[str], env: dict[str, str], timeout: float) -> int:
    """Run `argv` in its own process group; on timeout end the whole group (124, as timeout(1) says)."""
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_group(proc)
        return 124


def stop_group(proc: subprocess.Popen[Any]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=5)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


def opening(event: str, status: str = "restored") -> str:
    """The first line of a brief (AGENTS.md mentions `<private-memory …>` too, so match this much)."""
    return f'<private-memory event="{event}" status="{status}">'


# --- the async probe -----------------------------------------------------------------------------------

ASYNC_SLEEP_SECONDS = 4


def async_probe(folder: Path) -> tuple[dict[str, Any], Path, Path]:
    """A SessionStart matcher group whose one handler is async and stamps its start and end times.

    Returns the group and the two stamp files. The handler sleeps `ASYNC_SLEEP_SECONDS` between them."""
    folder.mkdir(parents=True, exist_ok=True)
    started, done = folder / "started", folder / "done"
    first, last = shlex.quote(str(started)), shlex.quote(str(done))
    command = f"date +%s.%N > {first}; sleep {ASYNC_SLEEP_SECONDS}; date +%s.%N > {last}"
    return {"hooks": [{"type": "command", "command": command, "async": True, "timeout": 30}]}, started, done


def wait_for_file(path: Path) -> str:
    """A shell command that waits (at most 20 s) until `path` exists: keeps the turn open meanwhile."""
    return f"for i in $(seq 200); do test -e {shlex.quote(str(path))} && exit 0; sleep 0.1; done; exit 1"


def stamp(path: Path) -> float:
    assert path.exists(), f"{path.name} was never written"
    return float(path.read_text().strip())
