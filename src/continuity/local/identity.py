"""A repository's identity, the same in every clone on every computer, with no credential in it.

A project in the vault is found again by the repository it belongs to, never by the folder a clone
happens to be called: the second computer's clone may be named `app` where the first one's is
`my-app`. Two facts identify a repository:

* `repository`: the `origin` remote's URL, normalized to `host/path` so that the forms Git accepts
  for one repository agree: `https://github.com/o/r.git`, `git@github.com:o/r`, `ssh://git@github.com:22/o/r/`
  and `https://user:token@github.com/o/r` are all `github.com/o/r`. User names, passwords and tokens,
  ports, query strings and fragments are dropped (a token must never reach a synchronized note), and
  the result is lower-cased, since the hosts people use ignore case and two clones typed differently
  must still agree. A local path or `file://` remote names a folder on one computer, not a repository,
  so it gives no `repository`.
* `root_commit`: the id of the first commit (the smallest of them when histories were merged), the
  same in every full clone; unknown in a shallow clone, whose oldest commit is only where it was cut.

Standard library only; git is asked through a subprocess with a timeout, and any failure is "unknown".
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import NamedTuple

from continuity import tunables

_NETWORK_SCHEMES = ("http", "https", "ssh", "git", "git+ssh", "ssh+git")
# `[user@]host:path` (Git's scp-like form); a one-letter host is a Windows drive, not a host.
_SCP = re.compile(r"^(?:[^@/\\]+@)?(?P<host>[^:/\\]{2,}):(?P<path>[^/].*|/.+)$")
_SAFE = re.compile(r"^[a-z0-9._~%+/-]+$")
_COMMIT = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


class RepoIdentity(NamedTuple):
    repository: str | None  # normalized origin URL, `host/path`
    root_commit: str | None  # the first commit's id

    @property
    def known(self) -> bool:
        return bool(self.repository or self.root_commit)

    def describe(self) -> str:
        if self.repository:
            return self.repository
        return f"root commit {self.root_commit[:12]}" if self.root_commit else "unknown"


def normalize_remote(url: str) -> str | None:
    """`host/path` for a network remote URL, None for a local path or anything unrecognised."""
    text = url.strip()
    if not text or any(ch.isspace() for ch in text):
        return None
    if "://" in text:
        scheme, _, rest = text.partition("://")
        if scheme.lower() not in _NETWORK_SCHEMES:
            return None  # file:// and the like: a folder on one computer
        authority, _, path = rest.partition("/")
        host = authority.rpartition("@")[2]  # user, password or token: never kept
        host = host[1:].partition("]")[0] if host.startswith("[") else host.partition(":")[0]
    else:
        match = _SCP.match(text)
        if match is None:
            return None  # a local path
        host, path = match.group("host").rpartition("@")[2], match.group("path")
    path = path.split("?", 1)[0].split("#", 1)[0]
    parts = [part for part in path.replace("\\", "/").split("/") if part and part != "."]
    if parts:
        parts[-1] = parts[-1].removesuffix(".git")
    parts = [part for part in parts if part]
    if not host or not parts or ".." in parts:
        return None
    normalized = f"{host}/{'/'.join(parts)}".lower()
    # Only plain URL characters: the value is written into frontmatter between double quotes.
    return normalized if _SAFE.match(normalized) else None


def _git(repo: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            timeout=tunables.GIT_QUERY_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def of_repo(repo: Path) -> RepoIdentity:
    """The identity of the repository checked out at `repo` (fields None when git cannot tell)."""
    url = _git(repo, "remote", "get-url", "origin")
    repository = normalize_remote(url) if url else None
    root_commit = None
    if _git(repo, "rev-parse", "--is-shallow-repository") == "false":
        roots = sorted(line for line in (_git(repo, "rev-list", "--max-parents=0", "HEAD") or "").split() if line)
        if roots and _COMMIT.match(roots[0]):
            root_commit = roots[0]
    return RepoIdentity(repository, root_commit)
