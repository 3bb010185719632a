#!/usr/bin/env python3
"""continuity's startup hook, and the manual render when the hook is unavailable.

    agent-startup-context.py --hook --harness codex|claude     (reads the harness's JSON on stdin)
    agent-startup-context.py --render [--event SessionStart|SubagentStart]
                                      [--format text|json] [--harness codex|claude]

It runs from a checkout without installing the package, but never puts the checkout's `src/` on
sys.path: the package's modules are served only from bytes whose digests were checked (below). In
hook mode it always exits 0 and prints at most one JSON object. When the package's
dependencies cannot be imported it re-runs itself once with the `python` named in the connection
file, and failing that injects a notice that private memory was not restored and why.

Pinning: Codex trusts a hook by the hash of its definition, which covers the command string but
not this file. So the command checks this file's SHA-256 before running it, and this file checks
the SHA-256 of every package module the hook may load (PINNED_MODULES below, written by
`lifecycle hook pin`) before importing any of them. A mismatch injects only a notice that the
startup code changed since it was reviewed; nothing else runs. Each module is read once (a regular
file, no link, at most MODULE_CAP_BYTES), hashed, and compiled from those very bytes; an import
finder placed first serves `continuity` and its modules from them alone and refuses any other
`continuity.*` name, so a file or folder added beside the reviewed ones, or a module swapped after
the check, never runs. Compiled code is cached under the user's cache directory by the digest of
the bytes it came from, and used only when this user owns it and nobody else can write it.

Speed: an unchanged vault is answered by `continuity.fastpath` and the few modules it needs
(WARM_MODULES). They are made from exactly the bytes whose digests were just checked, compiled once
per digest into one cached bundle, so the warm path costs one read and no import machinery; nothing
here imports `os` before the cold path (it costs about a millisecond, as much as the rest of the warm
path); and the warm answer leaves without the interpreter's teardown. Everything else is answered by
`continuity.entry` after all the modules are checked.
"""

import sys

if sys.platform == "win32" or not __file__.startswith("/") or "/." in __file__ or "//" in __file__:
    import os

    ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
else:  # an absolute, normal POSIX path: its parents by hand, as `os` would give them
    ROOT = __file__.rsplit("/", 2)[0] or "/"
SRC = ROOT.rstrip("/") + "/src"

# BEGIN PINNED MODULES (written by `lifecycle hook pin`; edit the code, then run it again)
PINNED_MODULES = {
    "continuity/__init__.py": "1778d1865c0b43376fe93ddcb9266a8eb16816ad4bb10647b427514a1e0e2ace",
    "continuity/atomic.py": "c4d8d181dab5313b5a10452fe101d7184251e068b6dd734e6398c51ed14c188c",
    "continuity/budget.py": "a5540270d79da361c5911bdb19b7940bfc34f434431b26db5ff5f94695e3a55a",
    "continuity/conflicts.py": "20dc2b2c2b589992fd80779953f46ea819bf556969eb6820b4ed42af5c854e2e",
    "continuity/connection.py": "4c974ad8c21bb7d035f6baba5a08424f6f4591355257ff419219b153f6be95f7",
    "continuity/entry.py": "43d5a76fce662fc52c8256b8a09e5bfbaee87c253f9b0ba3217fe1993d91a174",
    "continuity/errors.py": "4346b587ecccd1522fa385c6d74c9e5dca45cf8debdac7c4afd2b9a3da7de7ba",
    "continuity/escape.py": "54c351d6316419e4003de5a6af7022964011ef1f30145a341252dac72fc6d393",
    "continuity/fastpath.py": "0ea2a96088c963ac4232378a71eb4966b57f482f7267c753ac46ace22c00cfd9",
    "continuity/handoff.py": "b1f9f06c8d0ef43e5098094a48362a73a0733ac3b93a8a12f5c898c51a1e172e",
    "continuity/hook.py": "94072ab0ebe575f34ae1166d254425a15d225e49dcaf37a97070cd7b7b1e1e1f",
    "continuity/hookstate.py": "e9b31001fe8c7e466aa0caafe6a6b257d5d58ac89579e36011be7f024033f147",
    "continuity/layout.py": "9a84f658013304005d7876cf3d909f0d4a3fba85bbec31f54ed280e2ca56fd2b",
    "continuity/limits.py": "6301c40ba452d8615b0aa990867d60d811999ea2f58c4638334297f4a3c2d97d",
    "continuity/minijson.py": "df75cbb2c32272d7251f271cfb72ec3acd10d31db6298437beacf12d3389b77d",
    "continuity/notes.py": "561fc0865e203535a4f2e58fefaaf28a913224b9d5cc28bd9e420de5663c5d7b",
    "continuity/rawos.py": "fdd0a241d0f49e09c2e54685fbde0c747de97f5bd0167261b5c18854292b3607",
    "continuity/receipts.py": "601628062d86b445dcf405f29fb2c7536f0fe09fc734d07b265a60a87a0d1d5e",
    "continuity/render.py": "8295544859fd06e3422657a21e0e908988d1478e23ce663fe1d9dbf0062d1e69",
    "continuity/scan.py": "8de5c4eb5b813fb784fc7b71a58340b4444de2425ac71dfd5c5ffc789517aa86",
    "continuity/secret_assignments.py": "533f150168ae115662a494b6e4948f2be014f314a4d52b60248d7acb129d5c9e",
    "continuity/secret_context.py": "c0c874ec19c40660d6951931e7643d7fad7f60cd2c089be98182f6b263f7319e",
    "continuity/secret_doc.py": "0981d1f455cf6cf6df2d4dab944ef635e1ee4c36b7dfccb63d62d9ce585fb759",
    "continuity/secret_labels.py": "2f54c475a46646434f08878028cbf38c2346c345e082f39662126c874015a4d1",
    "continuity/secret_rules.py": "b397b808e26438cccdb06d9611ff5324ccd711e2a8304438a6f02adca018d0d7",
    "continuity/secret_structures.py": "6d04c6ab072cfe9948a1e145c9269dffade4a1b2b756798bc62e364ba5febc4a",
    "continuity/secret_values.py": "576a005cf903c837e95393def3bbe439e3c07d8b76f0a10ff205135e19eb173c",
    "continuity/secrets.py": "55e65ad52c661be5759d516cfeb1b8390f4b3952c85f58ff4764f14423be0286",
    "continuity/sources.py": "5a2c5dbb2ef937c3096c069d3395b924805f94b950742d2905a93a1c37833ebc",
    "continuity/startup_cache.py": "bf762dce3a84df358561fce4e8dd35f6cfda9afc929895e1f06736a77eb2ac2b",
    "continuity/tool_events.py": "38a0696072b7d6623b3644312cf21acc7aed9b98108186c2af8d9e43640186bb",
    "continuity/vault.py": "15da0380b27103322d048df43b41ac3526f084be497a936d5129e6e42a86bd70",
}
# END PINNED MODULES
# The warm path's modules, each after those it imports (a test checks both the set and the order).
WARM_MODULES = (
    "continuity/__init__.py",
    "continuity/limits.py",
    "continuity/layout.py",
    "continuity/minijson.py",
    "continuity/rawos.py",
    "continuity/fastpath.py",
)
START_EVENTS = ("SessionStart", "SubagentStart")


def _sha256():
    """The built-in SHA-256 (OpenSSL's hashlib costs milliseconds to import), else hashlib's."""
    try:
        from _sha256 import sha256
    except ImportError:
        try:
            from _sha2 import sha256
        except ImportError:
            from hashlib import sha256
    return sha256


MODULE_CAP_BYTES = 1 << 20  # a reviewed module is far smaller; this script cannot import limits before checking it


def _read(path, cap=MODULE_CAP_BYTES, private=False):
    """The bytes of a regular file (never through a link, never blocking on a FIFO), at most `cap`.

    OSError for anything else, or when `private` and the file is not this user's alone (a code cache
    that another user could write is never executed).
    """
    if sys.platform == "win32":
        with open(path, "rb") as handle:
            data = handle.read(cap + 1)
    else:
        import posix

        fd = posix.open(path, posix.O_RDONLY | posix.O_NONBLOCK | posix.O_NOFOLLOW)
        try:
            info = posix.fstat(fd)
            if info.st_mode & 0o170000 != 0o100000 or info.st_size > cap:
                raise OSError(f"{path}: not a regular file within {cap} bytes")
            if private and (info.st_uid != posix.getuid() or info.st_mode & 0o022):
                raise OSError(f"{path}: not this user's alone")
            chunks = []  # read by the size fstat gave (a buffer of `cap` would cost more than the read)
            while chunk := posix.read(fd, info.st_size + 1):
                chunks.append(chunk)
                if sum(map(len, chunks)) > cap:
                    break
            data = b"".join(chunks)
        finally:
            posix.close(fd)
    if len(data) > cap:
        raise OSError(f"{path}: over {cap} bytes")
    return data


def _checked(names):
    """{module: bytes} when every module in `names` matches its pinned digest, else the first that does not."""
    sha256 = _sha256()
    if not PINNED_MODULES:
        return "the module digests (none are pinned)"
    found = {}
    for rel in names:
        digest = PINNED_MODULES.get(rel)
        try:
            data = _read(SRC + "/" + rel)
        except OSError:
            return "src/" + rel
        if digest is None or sha256(data).hexdigest() != digest:
            return "src/" + rel
        found[rel] = data
    return found


def _compiled(name, make):
    """The code cached as `name` under the user's cache directory, else `make()`, then kept there.

    `name` carries the digest of the source bytes and Python's bytecode magic, so a cached file is
    never stale; it is used only when it is this user's alone.
    """
    import marshal

    external = sys.modules.get("_frozen_importlib_external")
    magic = external.MAGIC_NUMBER.hex() if external is not None else sys.implementation.cache_tag
    path = f"{_cache_dir()}/{name}-{magic}.code"
    try:
        return marshal.loads(_read(path, 16 * MODULE_CAP_BYTES, private=True))  # noqa: S302 -- checked above
    except Exception:  # noqa: S110 -- missing, foreign, unreadable or damaged: compile again
        pass
    code = make()
    try:
        import os

        os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
        tmp = f"{path}.{os.urandom(6).hex()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(marshal.dumps(code))
        os.replace(tmp, path)
        _prune(os.path.dirname(path))
    except OSError:
        pass  # a cache that cannot be written costs only speed
    return code


CACHE_MAX_AGE_SECONDS = 30 * 24 * 3600  # compiled code of older versions goes; what is in use is remade once


def _prune(folder):
    """Remove cached code not written for a month, when new code is cached (a new version arrived)."""
    import os
    import time

    cutoff = time.time() - CACHE_MAX_AGE_SECONDS
    with os.scandir(folder) as entries:
        for entry in entries:
            ours = entry.name.endswith((".code", ".tmp")) and entry.is_file(follow_symlinks=False)
            if ours and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)


def _code_digest():
    """One digest of the pinned code: part of the startup cache's key."""
    sha256 = _sha256()
    return sha256("".join(f"{k}={v};" for k, v in sorted(PINNED_MODULES.items())).encode()).hexdigest()


def _getenv(name):
    """An environment variable, read without `os` on POSIX (the package's own reader is not checked yet)."""
    if sys.platform == "win32":
        import os

        return os.environ.get(name)
    import posix

    value = posix.environ.get(name.encode())
    return None if value is None else value.decode(sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())


def _cache_dir():
    """`$XDG_CACHE_HOME/continuity/pycache`, else under `~/.cache`; a relative value is ignored.

    A relative path would be taken in the session's folder, where a repository could plant compiled
    code; with no absolute home the folder is one under /dev/null, where nothing can be read or made.
    (This repeats `rawos.user_dir`, which cannot be trusted before it is checked.)
    """
    if sys.platform == "win32":
        import os

        base = os.environ.get("XDG_CACHE_HOME", "")
        return os.path.join(base if os.path.isabs(base) else os.path.expanduser("~\\.cache"), "continuity", "pycache")
    base = _getenv("XDG_CACHE_HOME") or ""
    if not base.startswith("/"):
        home = _getenv("HOME") or ""
        if not home.startswith("/"):
            try:
                import posix
                import pwd

                home = pwd.getpwuid(posix.getuid()).pw_dir
            except (ImportError, KeyError):
                home = ""
        base = (home if home.startswith("/") else "/dev/null") + "/.cache"
    return base + "/continuity/pycache"


def _spec(rel, data):
    """The import spec of the reviewed module `rel`, whose loader runs `data` (its checked bytes)."""
    machinery = sys.modules.get("_frozen_importlib")  # importlib's own, loaded at start-up
    if machinery is None:  # not CPython: the documented name
        import importlib.machinery as machinery
    name = rel[:-3].replace("/", ".").removesuffix(".__init__")
    path = SRC + "/" + rel
    package = rel.endswith("/__init__.py")
    spec = machinery.ModuleSpec(name, _PinnedLoader(path, data), origin=path, is_package=package)
    spec.has_location = True
    if package:  # no folder to search: only the finder below serves its modules
        spec.submodule_search_locations = []
    return spec


class _PinnedLoader:
    """Runs a module from the bytes that were checked (the finder hands them over)."""

    def __init__(self, path, data=None):
        self.path, self.data = path, data

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        data, path = self.data, self.path
        key = _sha256()(path.encode("utf-8", "surrogateescape") + b"\0" + data).hexdigest()[:32]
        code = _compiled(f"pinned-{key}", lambda: compile(data, path, "exec", dont_inherit=True))
        exec(code, module.__dict__)  # noqa: S102 -- the import itself, of code compiled from checked bytes


class _PinnedFinder:
    """First on sys.meta_path: `continuity` and its modules come only from checked bytes, nothing else."""

    continuity_pinned = True  # entry keeps finders so marked first after site-packages are added

    def __init__(self, sources):
        self.sources = sources

    def find_spec(self, name, path=None, target=None):
        if name != "continuity" and not name.startswith("continuity."):
            return None
        base = name.replace(".", "/")
        for rel in (base + ".py", base + "/__init__.py"):
            if rel in self.sources:
                return _spec(rel, self.sources[rel])
        raise ImportError(f"{name} is not among the reviewed startup modules", name=name)


def _load_warm(sources):
    """Make the warm modules from `sources` (their checked bytes), as an import would, and return fastpath.

    The compiled code of all of them is one cached file named by the digests of those bytes, so the
    warm path reads one file and uses no import machinery.
    """
    sha256 = _sha256()
    key = sha256("\0".join([SRC] + [PINNED_MODULES[rel] for rel in WARM_MODULES]).encode()).hexdigest()[:32]
    codes = _compiled(
        f"warm-{key}",
        lambda: tuple(compile(sources[rel], SRC + "/" + rel, "exec", dont_inherit=True) for rel in WARM_MODULES),
    )
    if not isinstance(codes, tuple) or len(codes) != len(WARM_MODULES):
        raise ImportError("the warm modules' cache holds something else")
    for rel, code in zip(WARM_MODULES, codes, strict=True):
        spec = _spec(rel, sources[rel])
        module = type(sys)(spec.name)  # with what importlib's module_from_spec sets, without its lookups
        module.__spec__, module.__loader__, module.__file__ = spec, spec.loader, spec.origin
        module.__package__ = spec.parent
        if spec.submodule_search_locations is not None:
            module.__path__ = spec.submodule_search_locations
        sys.modules[module.__name__] = module
        exec(code, module.__dict__)  # noqa: S102 -- the import itself, of code compiled from checked bytes
        parent, _, child = module.__name__.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)
    return sys.modules["continuity.fastpath"]


def _leave():
    """Exit 0 at once, skipping the interpreter's teardown once the answer is out.

    Freeing every module and object the process is about to drop costs more than the whole warm
    path; nothing is left to finish (stdout is flushed here, the receipt was written and closed).
    """
    try:  # noqa: SIM105 -- contextlib is one more import
        sys.stdout.flush()
    except (OSError, ValueError):
        pass  # the harness stopped reading: there is no one left to answer
    if sys.platform == "win32":
        import os

        os._exit(0)
    import posix

    posix._exit(0)


def _changed_text(event, what):
    return (
        f'<private-memory event="{event}" status="unavailable">\n'
        f"Private memory was not restored (the startup code changed since it was reviewed: {what} does "
        "not match the digest pinned in scripts/agent-startup-context.py). Continue under AGENTS.md and "
        "the repository's instructions, and do not claim that private identity, preferences or handoffs "
        "were restored. After reviewing the change, the person can run `lifecycle hook pin` and trust "
        "the hook again (in Codex: /hooks).\n</private-memory>"
    )


def _changed_output(what, data=None):
    """Valid hook JSON for a start event (nothing for others) when the pinned code changed."""
    import json

    try:
        if data is None:
            data = sys.stdin.buffer.read(1 << 20)
        payload = json.loads(data.decode("utf-8", errors="replace") or "null")
    except (OSError, ValueError, AttributeError):
        return ""
    event = payload.get("hook_event_name") if isinstance(payload, dict) else None
    if event not in START_EVENTS:
        return ""
    text = _changed_text(event, what)
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


def _option(argv, name, default):
    return argv[argv.index(name) + 1] if name in argv[:-1] else default


def main(argv):
    hook = "--hook" in argv
    code = _code_digest()
    data = None
    rest = sorted(PINNED_MODULES)  # the pinned modules still to check: all of them, unless the warm ones were
    sources = {}
    if hook:
        warm = _checked(WARM_MODULES)
        if isinstance(warm, dict):
            sources = warm
            fastpath = _load_warm(sources)
            warm = fastpath.main_warm(_option(argv, "--harness", "codex"), code)
            if warm is not None:
                sys.stdout.write(warm.decode("utf-8") + "\n")
                _leave()
            data = fastpath.DATA
            rest = sorted(set(PINNED_MODULES) - set(WARM_MODULES))
    changed = _checked(rest)
    if isinstance(changed, dict):
        sources.update(changed)
    else:
        if hook:
            out = _changed_output(changed, data)
            if out:
                sys.stdout.write(out + "\n")
            return 0
        sys.stdout.write(_changed_text(_option(argv, "--event", "SessionStart"), changed) + "\n")
        return 3
    sys.meta_path.insert(0, _PinnedFinder(sources))
    from continuity import entry

    return entry.main(argv, data, code)


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except BaseException:
        if "--hook" not in sys.argv or _getenv("CONTINUITY_DEBUG") == "1":
            raise
        code = 0
    sys.exit(code)
