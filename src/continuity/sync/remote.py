"""Which remotes a vault may be pushed to: never one with credentials in its URL, never one anyone can read.

What "where it can tell" means, decided here:

* **a URL with credentials** (`https://user:token@host/…`, `https://token@host/…`, `ssh://user:pw@…`)
  is refused, and the URL is never printed: a credential in a URL ends up in `.git/config`, in shell
  history and in error messages. Put it in a credential helper or use an ssh key. A plain ssh user
  name (`git@host:…`, `ssh://git@host/…`) is not a credential and is fine;
* **`git://` and `http://`** are refused: the first is anonymous by design, the second carries every
  note in clear text;
* **a local path, `file://`, or ssh** is accepted: a folder on a disk you control or an ssh account
  needs no further check. For the public forges (GitHub, GitLab, Bitbucket, Codeberg) an ssh URL is
  also checked through its https twin, as below, because a public repository is readable by anyone
  whatever the push protocol;
* **https** is checked by asking the remote anonymously (no credential helper, no prompt) for its
  branch list: when that succeeds, anyone on the internet can read the vault, and it is refused. When
  the remote asks for credentials, it is private. When the question cannot be answered (offline, a
  timeout), nothing can be told, and the remote is accepted with a warning that says so.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from continuity import tunables
from continuity.errors import InputRejected
from continuity.gate.secrets import scan_text

PUBLIC_FORGES = ("github.com", "gitlab.com", "bitbucket.org", "codeberg.org")
_SCP_LIKE = re.compile(r"^(?:(?P<user>[^@/:]+)@)?(?P<host>[A-Za-z0-9.-]+):(?P<path>(?!//).+)$")
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]*@")


@dataclass(frozen=True)
class Remote:
    """A remote URL that passed the offline checks; `kind` is local, ssh or https."""

    url: str
    kind: str
    host: str | None
    https_twin: str | None  # the URL to ask anonymously whether the repository is public


def strip_credentials(text: str) -> str:
    """`text` with the user part of every `scheme://user:pw@` URL replaced, for messages."""
    return _URL_USERINFO.sub(lambda match: match.group("scheme") + "(credentials withheld)@", text)


def classify(url: str) -> Remote:
    """The offline checks of the module docstring; InputRejected (exit 5) names the reason, never the URL."""
    text = url.strip()
    if not text or any(not ch.isprintable() or ch.isspace() for ch in text):
        raise InputRejected("the remote URL is empty or holds spaces or control characters")
    if text.startswith("-"):
        raise InputRejected("the remote URL must not start with '-'")

    if "://" in text:
        parts = urlsplit(text)
        scheme = parts.scheme.lower()
        if parts.password is not None or (scheme in ("http", "https") and parts.username is not None):
            raise InputRejected(
                "the remote URL carries credentials; it was not used or printed. Use a credential helper or an ssh key"
            )
        if scan_text(text):
            raise InputRejected("the remote URL looks like it holds a secret; it was not used or printed")
        host = (parts.hostname or "").lower() or None
        if scheme == "file":
            return Remote(text, "local", None, None)
        if scheme == "https":
            return Remote(text, "https", host, text)
        if scheme == "ssh":
            return Remote(text, "ssh", host, _twin(host, parts.path))
        if scheme in ("git", "http"):
            raise InputRejected(
                f"a {scheme}:// remote is {'anonymous' if scheme == 'git' else 'unencrypted'}; "
                "use ssh or https for a private vault"
            )
        raise InputRejected(f"remotes of the {scheme}:// kind are not supported; use ssh, https or a local path")
    if scan_text(text):
        raise InputRejected("the remote URL looks like it holds a secret; it was not used or printed")
    match = _SCP_LIKE.match(text)
    if match and not Path(text).exists():
        host = match.group("host").lower()
        return Remote(text, "ssh", host, _twin(host, "/" + match.group("path")))
    return Remote(text, "local", None, None)


def _twin(host: str | None, path: str) -> str | None:
    if host not in PUBLIC_FORGES or not path.strip("/"):
        return None
    return f"https://{host}/{path.lstrip('/')}"


@dataclass(frozen=True)
class Privacy:
    """The answer of the anonymous check: `public` refuses, `private` and `unknown` proceed."""

    verdict: str  # private | public | unknown | local
    detail: str


def check_private(remote: Remote) -> Privacy:
    """Ask the https twin anonymously whether anyone can read it (see the module docstring)."""
    if remote.https_twin is None:
        return Privacy("local" if remote.kind == "local" else "private", "no anonymous check applies")
    env = {
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "",
        "SSH_ASKPASS": "",
        "GCM_INTERACTIVE": "never",
        "GIT_CONFIG_NOSYSTEM": "1",
        "LC_ALL": "C",
        "PATH": _path(),
    }
    command = ["git", "-c", "credential.helper=", "-c", "core.askPass=", "ls-remote", "--heads", remote.https_twin]
    try:
        proc = subprocess.run(
            command,
            capture_output=True,
            env=env,
            timeout=tunables.SYNC_PRIVACY_PROBE_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return Privacy("unknown", "the remote could not be asked (offline or slow)")
    if proc.returncode == 0:
        return Privacy("public", "anyone can read it without signing in")
    stderr = proc.stderr.decode("utf-8", "replace").lower()
    if any(word in stderr for word in ("could not read username", "authentication", "terminal prompts disabled")):
        return Privacy("private", "it asks for credentials")
    if "not found" in stderr or "repository" in stderr:
        return Privacy("private", "it is not visible without signing in")
    return Privacy("unknown", "the remote could not be asked (offline or slow)")


def _path() -> str:
    return os.environ.get("PATH", "/usr/bin:/bin")


def refuse_public(remote: Remote, privacy: Privacy) -> None:
    if privacy.verdict == "public":
        host = remote.host or "the remote"
        raise InputRejected(
            f"the repository on {host} is public ({privacy.detail}); make it private, then run this again"
        )


# Words of git's that mean the remote answered but refuses this computer, not that it is offline.
NOT_OFFLINE_WORDS = ("dubious ownership", "permission denied", "access denied")
