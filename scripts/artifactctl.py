#!/usr/bin/env python3
"""artifactctl: deliver, inspect and sweep the repository's expiring outbox (`output/`).

The same tool as `lifecycle outbox …`, runnable from a checkout without installing the package: the
checkout's `src/` goes first on `sys.path`. Every form but one needs typer.

`sweep --hook` is the form the session-start hook runs (pinned by SHA-256 in the hook command, run in
the repository's top level, registered so that no session waits for it). It prints nothing and
always exits 0, and it first decides from the outbox's own small record whether a sweep would change
anything (`quiet`): in a repository without an outbox that costs one `lstat`, and otherwise one read
of `output/.outbox.json` and one listing, with the standard library alone, so that the package is
imported only when something is due. Then, as in the startup script, every package module the sweep
may load is read once, checked against PINNED_MODULES (written by `lifecycle hook pin`) and run from
the very bytes checked: a finder first on sys.meta_path serves `continuity` only from them, and the
checkout's `src/` is never put on sys.path. A module that does not match stops the sweep silently.
"""

import hashlib
import json
import os
import stat
import sys
import time

TYPE_CHECKING = False  # not typing's: the hook form imports nothing it does not need
if TYPE_CHECKING:
    from importlib.abc import Loader
    from importlib.machinery import ModuleSpec
    from types import ModuleType
else:
    Loader = object
    ModuleSpec = type(sys.__spec__)  # importlib.machinery.ModuleSpec, without importing importlib

HERE = os.path.dirname(os.path.abspath(sys.argv[0]))
# A checkout keeps the package in src/ beside scripts/; an installed package carries this file in
# continuity/_scripts/, two folders below the folder that holds `continuity`.
SRC = (
    os.path.dirname(os.path.dirname(HERE))
    if os.path.basename(HERE) == "_scripts"
    else os.path.join(os.path.dirname(HERE), "src")
)
STATE_NAME = ".outbox.json"  # continuity.outbox.folder.STATE_NAME
STATE_CAP_BYTES = 1 << 20  # continuity.limits.OUTBOX_STATE_CAP_BYTES
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"  # continuity.outbox.folder.format_time
MODULE_CAP_BYTES = 1 << 20  # far above any reviewed module
OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)

# BEGIN PINNED MODULES (written by `lifecycle hook pin`; edit the code, then run it again)
PINNED_MODULES = {
    "continuity/__init__.py": "63f1acaf7230fbcfc07784a690a8aa8b7d17239e30182ccea9ccdcbe47cfb1e9",
    "continuity/errors.py": "9b04b4c3e41b17c3444742d9a6700bcbdfd3d99152bbca6cab826b51d7d42911",
    "continuity/ids.py": "fedcefe266dd1188462d058b0d9c1cf3e3eb467c0451d0bc8afcb9634beccdc8",
    "continuity/lightjson.py": "7db96f64f53ce7fadf3fefc947ae6f3656dce2948195b8ffe441b89455e8c5ad",
    "continuity/limits.py": "810d9f345a397a41b38e6d4b7c015e36f395f618d0da128487f512353a8e15f4",
    "continuity/local/__init__.py": "94a86ffd997c3dcbf12bc862588619c9a2c780a41fee10a26d75f1863536bf82",
    "continuity/local/connection.py": "88e0675a1a8a01062168afe8cfa21fd3f017f047b21b7ac39629273336363093",
    "continuity/local/connfile.py": "e3e367faa2b6825ec14cc34f3037b89fcda36580cc271754bb9503a7326f36c3",
    "continuity/local/made.py": "75294b9cadbaf47413b87a18117024f9bd46410305e71885bb93d25c6cfd1935",
    "continuity/local/made_lookup.py": "0584477761701bca4afb755c26fb72afe3423a7b09afc47ba0e5f32c192f94ae",
    "continuity/local/repo.py": "3c34b245df698a779854a3ec8c462ca35492cb615d420b08902a5db828238862",
    "continuity/local/userdirs.py": "d3b9fc915ff95ca9baea69be8a1b2c3a211835711d4476efdff046ba3cab2c59",
    "continuity/outbox/__init__.py": "ea5adde80918c1bde8e81df48e675bd870b580eeb3f5aee8db1c1ab4788dbcda",
    "continuity/outbox/activation.py": "d33fc67875713cbaf434a5b023e0bf9f053521a1b6a0a148d05d4d062bca7f7b",
    "continuity/outbox/folder.py": "a461e76c37618513edfb1f428179155b2feacc94e5f08936aad4d7f935844576",
    "continuity/outbox/sweep.py": "bc985375cffcb6e576be32ac48cb37506623db9f76fc7ef2c0ac7c0431651ad3",
    "continuity/safeio.py": "5f56a3f108e6ec01f876dc9a1ef9c058633b8bf49001ac44c2c3e135587f7744",
    "continuity/store/__init__.py": "9841b369a22417fd9ac7f73976924575d1a23d80b914f0285686b15e1f03f655",
    "continuity/store/atomic.py": "76de5b4e2c6efb5b6f9b5d76be3cdc70729d576ceaf48c9253aaf7f891737768",
    "continuity/vault/__init__.py": "f280dca42e8bd942ea1bef2a3e10c4c00d2242be6816aeea887b3df63c72c5d9",
    "continuity/vault/access.py": "da66747d739c2d79e89b503230ff6fd7aab965f388bd9f5ce2d4a02137a4cfa6",
    "continuity/vault/layout.py": "8782d44f7ee03906786733069c6eaf5c578c35bff00ad3fd04bb10539c073093",
}
# END PINNED MODULES


def checked_sources() -> "dict[str, bytes] | None":
    """Every pinned module's bytes when all match their digests (regular files, no links), else None."""
    found: dict[str, bytes] = {}
    for rel, digest in PINNED_MODULES.items():
        try:
            fd = os.open(os.path.join(SRC, rel), OPEN_FLAGS)
            with os.fdopen(fd, "rb") as handle:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode) or info.st_size > MODULE_CAP_BYTES:
                    return None
                data = handle.read(MODULE_CAP_BYTES + 1)
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() != digest:
            return None
        found[rel] = data
    return found or None


class PinnedLoader(Loader):
    """Runs a module from the bytes that were checked, compiled now (never from a cache)."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path, self.data = path, data

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: "ModuleType") -> None:
        exec(compile(self.data, self.path, "exec", dont_inherit=True), module.__dict__)  # noqa: S102 -- checked bytes


class PinnedFinder:
    """First on sys.meta_path: `continuity` and its modules come only from checked bytes."""

    continuity_pinned = True

    def __init__(self, sources: "dict[str, bytes]") -> None:
        self.sources = sources

    def find_spec(self, name: str, path: object = None, target: object = None) -> "ModuleSpec | None":
        if name != "continuity" and not name.startswith("continuity."):
            return None
        base = name.replace(".", "/")
        for rel, package in ((base + ".py", False), (base + "/__init__.py", True)):
            if rel in self.sources:
                where = os.path.join(SRC, rel)
                spec = ModuleSpec(name, PinnedLoader(where, self.sources[rel]), origin=where, is_package=package)
                spec.has_location = True
                if package:
                    spec.submodule_search_locations = []
                return spec
        raise ImportError(f"{name} is not among the reviewed sweep modules", name=name)


def hook_sweep() -> None:
    """The session-start sweep from checked bytes only; nothing at all when a module changed."""
    sources = checked_sources()
    if sources is None:
        return
    sys.meta_path.insert(0, PinnedFinder(sources))
    try:
        from pathlib import Path

        from continuity.outbox.sweep import hook_sweep as sweep

        sweep(Path.cwd())
    except Exception:  # noqa: S110 (a hook must never fail or print)
        pass


def quiet(repo: str, now: float | None = None) -> bool:
    """True when a sweep would change nothing now; anything unexpected is for the sweep to judge.

    Nothing to do: no `output/` (or one the sweep refuses: a link or a file), a record without an
    activation token (one from before tokens, or from elsewhere: the sweep never acts on it), or a
    record of this format whose entries are exactly the folder's children, none of them due. A new child (to be
    enrolled), a vanished one, a due one, a damaged or newer record: not quiet.
    """
    outbox = os.path.join(repo, "output")
    try:
        if not os.path.isdir(outbox) or os.path.islink(outbox):
            return True
        with open(os.path.join(outbox, STATE_NAME), "rb") as handle:
            state = json.loads(handle.read(STATE_CAP_BYTES + 1))
        names = {n for n in os.listdir(outbox) if n != STATE_NAME and not n.startswith(f".{STATE_NAME}.")}
        tables = [state["packages"], state["enrolled"]] if state.get("version") == 1 else None
        if tables is not None and not state.get("activation"):
            return True
    except FileNotFoundError:  # no record: the sweep leaves an outbox alone until it is activated
        return True
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return False
    if not tables or not all(isinstance(table, dict) for table in tables) or names != {*tables[0], *tables[1]}:
        return False
    moment = time.strftime(TIME_FORMAT, time.gmtime(now))
    expiries = [item.get("expires") if isinstance(item, dict) else None for t in tables for item in t.values()]
    return all(isinstance(e, str) and len(e) == len(moment) and e > moment for e in expiries)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["sweep", "--hook"]:
        if not quiet(os.getcwd()):
            hook_sweep()
        return 0
    if SRC not in sys.path[:1]:  # the person's own commands: the checkout's package, as it is
        sys.path.insert(0, SRC)
    from continuity.cli.outbox import standalone_app

    standalone_app()(args=args, prog_name="artifactctl")
    return 0


if __name__ == "__main__":
    sys.exit(main())
