"""Running the git command-line tool on a vault, with every setting that could change the outcome fixed.

A person's global configuration is theirs to keep (credential helpers, `url.insteadOf`, the ssh
command), so it is not switched off; instead every setting that would change *what* a sync does is
pinned on the command line with `-c`, which outranks every configuration file:

* no hook runs (`core.hooksPath` points at the null device), nothing is signed, no editor or pager
  opens, and the identity is the device's own (`continuity <device>`), so a missing or global
  `user.name` cannot stop a commit and no key prompt can hang it;
* bytes are kept exactly: no end-of-line conversion (`core.autocrlf`, `core.eol`, and
  `.git/info/attributes` turning off `text`, `filter`, `ident` and `working-tree-encoding` for every
  path, whatever a `.gitattributes` in the remote says), and symbolic links from a remote are checked
  out as small plain files (`core.symlinks=false`), so a link can never point a reader out of the vault;
* nothing is hidden from `status`: the global excludes file is ignored, so only the vault's own
  `.gitignore` decides what stays local;
* no prompt: `GIT_TERMINAL_PROMPT=0`, ssh in batch mode unless the person chose an ssh command, and
  the Git Credential Manager told not to open a window; an unreachable remote fails instead of waiting;
* no automatic garbage collection or maintenance in the middle of a sync, no submodules, no tags.

Environment variables that would point git elsewhere (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`,
extra configuration passed through the environment…) are removed; the messages are parsed with
`LC_ALL=C`. Only this module starts git.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from continuity import tunables
from continuity.errors import ContinuityError, NotConnected
from continuity.sync.remote import strip_credentials

BRANCH = "main"
REMOTE = "origin"
TRACKING = f"refs/remotes/{REMOTE}/{BRANCH}"
HEAD_REF = f"refs/heads/{BRANCH}"

# Attributes that would make a checked-out file differ from its committed bytes, turned off for all.
INFO_ATTRIBUTES = "* -text -filter -ident -working-tree-encoding -export-subst\n"

_DROPPED_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_REPLACE_REF_BASE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_GRAFT_FILE",
    "GIT_SHALLOW_FILE",
    "GIT_QUARANTINE_PATH",
    "GIT_TRACE",
    "GIT_TRACE2",
    "GIT_TRACE2_EVENT",
    "GIT_TRACE_PACKET",
    "GIT_CURL_VERBOSE",
)


def pinned_config(device: str) -> list[str]:
    """The `-c key=value` arguments every git command of a sync runs with."""
    settings = {
        "core.hooksPath": os.devnull,
        "core.autocrlf": "false",
        "core.eol": "lf",
        "core.safecrlf": "false",
        "core.symlinks": "false",
        "core.excludesFile": os.devnull,
        "core.fsmonitor": "false",
        "core.untrackedCache": "false",
        "core.quotePath": "false",
        "core.editor": "true",
        "core.pager": "cat",
        "core.askPass": "",
        "commit.gpgSign": "false",
        "tag.gpgSign": "false",
        "push.gpgSign": "false",
        "push.followTags": "false",
        "push.recurseSubmodules": "no",
        "fetch.recurseSubmodules": "false",
        "submodule.recurse": "false",
        "fetch.fsckObjects": "true",
        "init.defaultBranch": BRANCH,
        "pull.rebase": "false",
        "gc.auto": "0",
        "maintenance.auto": "false",
        "user.name": f"continuity {device}",
        "user.email": f"{device}@continuity.invalid",
        "user.useConfigOnly": "false",
        "advice.detachedHead": "false",
    }
    args: list[str] = []
    for key, value in settings.items():
        args += ["-c", f"{key}={value}"]
    return args


def environment(device: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process environment of a sync's git commands (see the module docstring)."""
    env = {key: value for key, value in (os.environ if base is None else base).items() if key not in _DROPPED_ENV}
    env = {key: value for key, value in env.items() if not key.startswith("GIT_CONFIG_KEY_")}
    env = {key: value for key, value in env.items() if not key.startswith("GIT_CONFIG_VALUE_")}
    name, email = f"continuity {device}", f"{device}@continuity.invalid"
    env.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "GCM_INTERACTIVE": "never",
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
            "GIT_OPTIONAL_LOCKS": "0",
            "LC_ALL": "C",
            "LANGUAGE": "C",
        }
    )
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    return env


class GitFailed(ContinuityError):
    """A git command that failed; `stderr` is kept for the caller to classify, never printed whole."""

    def __init__(self, message: str, stderr: str = "", returncode: int = 1) -> None:
        super().__init__(message)
        self.stderr = stderr
        self.returncode = returncode


@dataclass(frozen=True)
class Git:
    """git on one vault, as one device: `run` returns stdout, `probe` the whole result."""

    vault: Path
    device: str

    def command(self, args: Sequence[str]) -> list[str]:
        return ["git", *pinned_config(self.device), "-C", str(self.vault), *args]

    def probe(
        self,
        args: Sequence[str],
        *,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = tunables.SYNC_GIT_TIMEOUT_SECONDS,
    ) -> subprocess.CompletedProcess[bytes]:
        merged = environment(self.device)
        if env:
            merged.update(env)
        try:
            return subprocess.run(
                self.command(args),
                input=stdin,
                capture_output=True,
                env=merged,
                timeout=timeout,
                check=False,
            )
        except FileNotFoundError:
            raise NotConnected("git is not installed on this computer; install git to sync the vault") from None
        except subprocess.TimeoutExpired:
            raise GitFailed(f"git {args[0]} did not finish within {timeout:g}s; nothing more was done") from None

    def run(
        self,
        args: Sequence[str],
        *,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = tunables.SYNC_GIT_TIMEOUT_SECONDS,
    ) -> bytes:
        proc = self.probe(args, stdin=stdin, env=env, timeout=timeout)
        if proc.returncode != 0:
            detail = first_line(proc.stderr)
            raise GitFailed(f"git {args[0]} failed ({detail})", proc.stderr.decode("utf-8", "replace"), proc.returncode)
        return proc.stdout

    def text(self, args: Sequence[str]) -> str:
        return self.run(args).decode("utf-8", "surrogateescape").strip()

    def rev(self, name: str) -> str | None:
        """The commit `name` points at, or None when it does not exist."""
        proc = self.probe(["rev-parse", "-q", "--verify", f"{name}^{{commit}}"])
        return proc.stdout.decode("ascii").strip() if proc.returncode == 0 else None

    def git_dir(self) -> Path:
        return self.vault / ".git"


def first_line(stderr: bytes) -> str:
    """The first meaningful line of git's stderr, with any URL credentials cut out."""
    for raw in stderr.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if line and not line.startswith("hint:"):
            return strip_credentials(line.removeprefix("fatal: ").removeprefix("error: "))[:200]
    return "no message"


def is_git_vault(vault: Path) -> bool:
    """A vault that `lifecycle sync --remote` (or `init --clone`) made a Git vault: `.git` is a folder."""
    marker = vault / ".git"
    return marker.is_dir() and not marker.is_symlink()


def reach(git: Git, url: str) -> None:
    """Ask the remote for its branches before it is saved: NotConnected with git's own reason when it
    cannot answer, so a mistyped or unusable remote is never kept (nothing is saved)."""
    proc = git.probe(["ls-remote", "--heads", url])
    if proc.returncode == 0:
        return
    raise NotConnected(
        f"the remote cannot be used ({first_line(proc.stderr)}); nothing was saved: check the URL, that this "
        "computer can reach it and that you may read it, then run 'lifecycle sync --remote URL' again"
    )
