"""The machine-local link between a checkout and a vault: `.agent-vault`.

The file is a tiny YAML mapping (`vault`, `device`, `project`, optional `python`) that is never
committed. It is written and read in a strict subset of YAML (one `key: scalar` per line, strings
double-quoted as JSON) so that the startup hook can read it with the standard library alone; a file
outside that subset is reported as invalid rather than guessed at.

Discovery, in order: `AGENT_VAULT_CONNECTION` (a path to a connection file), the git top level of the
current directory, then the other worktrees of the same repository (`git worktree list`): exactly one
distinct connection among them is reused, several that disagree are an error that names them.

A connection file in a checkout is used only when this computer's `lifecycle init` made it, byte for
byte (`init` records the file's real path and SHA-256 in machine-local state, `local.made`), and git
does not track it: a repository can commit an `.agent-vault` naming a vault of its own (even
`/proc/self/cwd/...`), whose notes the hook would otherwise inject as the person's approved memory.
A connection made before this record existed is confirmed by running `lifecycle init --vault PATH`
again; nothing else (least of all the hook) records one. The vault a connection names is never
inside the checkout it connects. The environment's `AGENT_VAULT_CONNECTION` is the person's own
choice and needs no record, but its vault is held to the same placement rule.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from continuity import ids, limits
from continuity.errors import InputRejected, NotConnected
from continuity.local import connfile
from continuity.local.repo import find_repo_root

CONNECTION_FILE = connfile.NAME
ENV_CONNECTION = "AGENT_VAULT_CONNECTION"


class NoConnection(NotConnected):
    """Nothing connects this checkout: the hook then stays silent."""


class AmbiguousConnection(NotConnected):
    """Sibling worktrees hold connections that disagree."""


class UntrustedConnection(NotConnected):
    """A connection file this computer's `init` did not make, one git tracks, or one whose vault is
    inside the checkout: never used."""


CONFIRM = "run 'lifecycle init --vault PATH' in this checkout with the vault you mean, to make or confirm it"


def _vault_inside(vault: str, repo: Path) -> bool:
    top = os.path.realpath(repo)
    where = os.path.realpath(vault)
    return where == top or where.startswith(top.rstrip(os.sep) + os.sep)


def check_trusted(file: Path, data: bytes, found_via: str, repo: Path | None, vault: str) -> None:
    """UntrustedConnection unless the connection may be used (see the module's docstring)."""
    checkouts = [repo] if found_via == "env" else [repo, file.parent]  # this one, and the file's own
    if any(top is not None and _vault_inside(vault, top) for top in checkouts):
        raise UntrustedConnection(
            f"{file} names a vault inside this checkout, which a repository could supply; it is not used. {CONFIRM}"
        )
    if found_via == "env":
        return
    import hashlib

    from continuity.local import made

    if not made.is_made(made.CONNECTION, file, hashlib.sha256(data).hexdigest()):
        raise UntrustedConnection(
            f"{file} was not made by 'lifecycle init' on this computer (it came with the repository, was "
            f"edited, or predates init's record of it), so it is not used; {CONFIRM}"
        )
    if made.tracked(file.parent, file):  # the checkout (or sibling worktree) whose top level holds it
        raise UntrustedConnection(
            f"{file} is tracked by git: a connection that comes with the repository is never used; run "
            f"'git rm --cached {file.name}', then {CONFIRM}"
        )


class Connection(NamedTuple):
    vault: Path
    device: str
    project: str
    python: str | None
    file: Path
    found_via: str  # "env", "checkout" or "worktree"
    repo: Path | None


def parse_connection_text(text: str, name: str = CONNECTION_FILE) -> dict[str, str]:
    """The strict `key: scalar` subset (`connfile`); InputRejected otherwise."""
    try:
        return connfile.parse(text, name)
    except ValueError as exc:
        raise InputRejected(str(exc)) from None


def load_connection(file: Path, found_via: str, repo: Path | None, *, trusted_only: bool = True) -> Connection:
    """The connection in `file`; with `trusted_only` (everything but `init`), only one `check_trusted` accepts."""
    try:
        info = os.lstat(file)
    except FileNotFoundError:
        raise NoConnection(f"{file} does not exist; run 'lifecycle init --vault PATH'") from None
    import stat

    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise NotConnected(f"{file} is not a regular file; run 'lifecycle init' to rewrite it")
    if info.st_size > limits.CONNECTION_CAP_BYTES:
        raise NotConnected(f"{file} is larger than {limits.CONNECTION_CAP_BYTES} bytes; it is not a connection")
    try:
        with open(file, "rb") as handle:
            data = handle.read(limits.CONNECTION_CAP_BYTES + 1)
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise NotConnected(f"{file} cannot be read ({type(exc).__name__})") from None
    try:
        values = parse_connection_text(text, file.name)
    except InputRejected as exc:
        raise NotConnected(f"invalid connection: {exc}") from None
    vault, device, project = values.get("vault", ""), values.get("device", ""), values.get("project", "")
    if not vault or not os.path.isabs(vault):
        raise NotConnected(f"{file}: 'vault' must be an absolute path; run 'lifecycle init --vault PATH --force'")
    for key, value in (("device", device), ("project", project)):
        if not ids.is_valid_id(value):
            raise NotConnected(f"{file}: '{key}' must match ^[a-z0-9][a-z0-9-]{{0,62}}$")
    if trusted_only:
        check_trusted(file, data, found_via, repo, vault)
    python = values.get("python") or None
    return Connection(Path(vault), device, project, python, file, found_via, repo)


def _worktrees(repo: Path) -> list[Path]:
    import subprocess  # only when the checkout has no connection file: recall and the hook rarely get here

    try:
        proc = subprocess.run(
            ["git", "-C", str(repo), "worktree", "list", "--porcelain"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if proc.returncode != 0:
        return []
    return [Path(line[len("worktree ") :]) for line in proc.stdout.splitlines() if line.startswith("worktree ")]


def sibling_connection(repo: Path) -> Connection:
    """Reuse the one connection that the other worktrees of this repository agree on."""
    found: dict[tuple[str, str, str], list[Connection]] = {}
    for tree in _worktrees(repo):
        if tree == repo or not (tree / CONNECTION_FILE).is_file():
            continue
        try:
            conn = load_connection(tree / CONNECTION_FILE, "worktree", repo)
        except NotConnected:
            continue
        found.setdefault((str(conn.vault), conn.device, conn.project), []).append(conn)
    if not found:
        raise NoConnection(f"{repo} is not connected to a vault; run 'lifecycle init --vault PATH'")
    if len(found) > 1:
        names = ", ".join(str(c.file) for group in found.values() for c in group)
        raise AmbiguousConnection(
            f"sibling worktrees disagree about the vault ({names}); run 'lifecycle init' in this checkout"
        )
    return next(iter(found.values()))[0]


def discover(cwd: Path, environ: dict[str, str] | None = None) -> Connection:
    env = os.environ if environ is None else environ
    repo = find_repo_root(cwd)
    override = env.get(ENV_CONNECTION)
    if override:
        return load_connection(Path(override), "env", repo)
    if repo is None:
        raise NoConnection(f"{cwd} is not inside a git checkout; run 'lifecycle init' in a repository")
    local = repo / CONNECTION_FILE
    if os.path.lexists(local):
        return load_connection(local, "checkout", repo)
    return sibling_connection(repo)


def require_vault(conn: Connection) -> Path:
    """The vault folder, or NotConnected when this computer cannot reach it (sync not mounted)."""
    try:
        if conn.vault.is_dir():
            return conn.vault
    except OSError:
        pass
    raise NotConnected(f"the vault {conn.vault} is not reachable from this computer; is the sync folder mounted?")


def _quoted(value: str) -> str:
    """A JSON string on one line: readers split the file with `splitlines`, which also breaks at
    U+0085, U+2028 and U+2029, characters that JSON leaves unescaped."""
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text.replace("\x85", "\\u0085").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render_connection(vault: Path, device: str, project: str, python: str | None) -> str:
    lines = [
        "# continuity: this checkout's link to its private vault. Machine-local; never commit it.",
        f"vault: {_quoted(str(vault))}",
        f"device: {device}",
        f"project: {project}",
    ]
    if python:
        lines.append(f"python: {_quoted(python)}")
    return "\n".join(lines) + "\n"


def ensure_ignored(repo: Path, name: str) -> bool:
    """Make git ignore `name` without editing tracked files; True when an exclude line was added."""
    import subprocess

    check = subprocess.run(
        ["git", "-C", str(repo), "check-ignore", "-q", "--no-index", name],
        capture_output=True,
        timeout=10,
        check=False,
    )
    if check.returncode == 0:
        return False
    common = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--git-common-dir"],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    if common.returncode != 0:
        return False
    git_dir = Path(common.stdout.strip())
    if not git_dir.is_absolute():
        git_dir = repo / git_dir
    exclude = git_dir / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    existing = exclude.read_text(encoding="utf-8") if exclude.is_file() else ""
    prefix = "" if not existing or existing.endswith("\n") else "\n"
    with open(exclude, "a", encoding="utf-8") as handle:
        handle.write(f"{prefix}/{name}\n")
    return True
