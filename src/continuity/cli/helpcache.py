"""`lifecycle --help` as typer wrote it last time, so that asking for help does not load typer.

typer and click cost about 45 ms to import, five times the bare interpreter, and `--help` is the
first command a new user runs. The top-level help is a pure function of the command modules, the
installed typer and click, the program name, the terminal's size and the locale settings, so the
text typer printed is kept under the user's cache folder, named by a digest of all of those, and
printed again while none of them changes. Any difference (an edited command, an upgraded typer, a
wider terminal) is another name, so a stale text is never shown: typer answers, and its answer is
kept. Only the exact command lines `lifecycle --help` and `lifecycle -h` are answered this way.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from continuity import limits, rawos

ENVIRONMENT = ("COLUMNS", "LINES", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def _library_stamp(name: str) -> str:
    """Where a library is installed and its main file's size and time: a new version changes them."""
    from importlib.machinery import PathFinder

    spec = PathFinder.find_spec(name)
    if spec is None or spec.origin is None:
        return f"{name}:missing"
    try:
        info = os.stat(spec.origin)
    except OSError:
        return f"{name}:{spec.origin}:unreadable"
    return f"{name}:{spec.origin}:{info.st_size}:{info.st_mtime_ns}"


def _terminal() -> str:
    try:
        size = os.get_terminal_size(sys.__stdout__.fileno())  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return "none"
    return f"{size.columns}x{size.lines}"


def key(cli_dir: Path | None = None) -> str:
    """The digest of everything the top-level help text depends on."""
    from continuity.fastpath import digest_hex

    cli_dir = Path(__file__).resolve().parent if cli_dir is None else cli_dir
    parts = [sys.version, os.path.basename(sys.argv[0]), _terminal(), _library_stamp("typer"), _library_stamp("click")]
    parts += [f"{name}={os.environ.get(name, '')}" for name in ENVIRONMENT]
    sources = b""
    for path in sorted(cli_dir.glob("*.py")):
        if path.name.startswith(".") or not stat.S_ISREG(os.lstat(path).st_mode):
            continue  # an editor's lock file or a stray link is not a command module
        sources += path.name.encode() + b"\0" + path.read_bytes() + b"\0"
    return digest_hex("\0".join(parts).encode("utf-8", "surrogateescape") + b"\0" + sources)


def path_for(digest: str) -> str:
    return rawos.join(rawos.user_dir("cache"), "help", digest[:32] + ".txt")


def cached(digest: str) -> str | None:
    """The help text kept under `digest`, or None."""
    try:
        return rawos.read_regular(path_for(digest), limits.HELP_CACHE_CAP_BYTES).decode("utf-8") or None
    except (OSError, UnicodeDecodeError):
        return None


def store(digest: str, text: str) -> None:
    data = text.encode("utf-8")
    if 0 < len(data) <= limits.HELP_CACHE_CAP_BYTES:
        try:  # noqa: SIM105 -- a cache that cannot be written costs only speed
            rawos.write_private(path_for(digest), data)
        except OSError:
            pass
