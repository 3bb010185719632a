#!/usr/bin/env python3
"""continuity's startup hook, and the manual render when the hook is unavailable.

    agent-startup-context.py --hook --harness codex|claude     (reads the harness's JSON on stdin)
    agent-startup-context.py --render [--event SessionStart|SubagentStart]
                                      [--format text|json] [--harness codex|claude]

Pinning. Codex trusts a hook by the hash of its definition, which covers the command string but not
this file, so the hook command checks this file's SHA-256 and runs exactly the bytes it hashed. This
file in turn checks the SHA-256 of every package module it runs against PINNED_MODULES (written by
`lifecycle hook pin`) and runs each module from the very bytes it hashed, compiled in this run: an
import finder placed first on sys.meta_path serves `continuity` and its modules from those bytes and
refuses any other `continuity.*` name. The checkout's `src/` is never put on sys.path and no compiled
code is kept anywhere, so a planted module, a file swapped after the check or a doctored cache of
compiled code never runs. A mismatch injects only a notice that private memory was not restored.

Speed. An unchanged vault is answered by `continuity.fastpath` from the record the full path left;
only the few standard-library-only modules it needs (WARM_MODULES) are read, checked and compiled
before that answer. Anything else checks every pinned module and goes to `continuity.entry`, which
validates everything and, when the package's dependencies cannot be imported, re-runs this script
once with the `python` named in the connection file. In hook mode it always exits 0 and prints at
most one JSON object.
"""

import hashlib
import os
import stat
import sys

TYPE_CHECKING = False  # not typing's: importing typing, or importlib.abc, costs milliseconds at every start
if TYPE_CHECKING:
    from importlib.abc import Loader
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import NoReturn
else:
    Loader = object
    ModuleSpec = type(sys.__spec__)  # importlib.machinery.ModuleSpec, without importing importlib (0.6 ms)

SCRIPT = os.path.abspath(sys.argv[0])  # the hook command runs these bytes with their path as argv[0]
SRC = os.path.join(os.path.dirname(os.path.dirname(SCRIPT)), "src")

# BEGIN PINNED MODULES (written by `lifecycle hook pin`; edit the code, then run it again)
PINNED_MODULES = {
    "continuity/__init__.py": "1778d1865c0b43376fe93ddcb9266a8eb16816ad4bb10647b427514a1e0e2ace",
    "continuity/atomic.py": "0b0fdeed4f2f61e9455effac6f69c5ee9f34e688870d28f96df3181dfab0cb6e",
    "continuity/budget.py": "a5540270d79da361c5911bdb19b7940bfc34f434431b26db5ff5f94695e3a55a",
    "continuity/build.py": "a4daa142110944f5b47a382ffe1610a4ab743dfa4b234e38bba39a37c01c8cb8",
    "continuity/conflicts.py": "20dc2b2c2b589992fd80779953f46ea819bf556969eb6820b4ed42af5c854e2e",
    "continuity/connection.py": "2d4e634f74282101848fc5157334236813bcba3f0f1aa5e8758b04f15e6f17dd",
    "continuity/connfile.py": "6c62450ee310777318ca7f457be900b7677a6f557d72edf49bfc356ddbf44943",
    "continuity/entry.py": "85d9a193d88586044e264a30fea77f5ebc2c1d88c3c75cd0ecc525f4f22ecda5",
    "continuity/envelope.py": "e12abada4b1cbc1f598129eba132352b5a22b44f3e25436d1720085f978e635d",
    "continuity/errors.py": "4346b587ecccd1522fa385c6d74c9e5dca45cf8debdac7c4afd2b9a3da7de7ba",
    "continuity/escape.py": "54c351d6316419e4003de5a6af7022964011ef1f30145a341252dac72fc6d393",
    "continuity/fastpath.py": "e824bcf74c1b91c4d347f56ef9c562f4197ff03dd4cd2667989e562ad78d1c63",
    "continuity/handoff.py": "4b51a084bcae37c0a514bfe39f3e7134f1cae5572ea342335da5972523df28bd",
    "continuity/hookstate.py": "82549601c1ad0060c1707e781e870883c9ae4aedfb400e81f188771ff565cae3",
    "continuity/ids.py": "fedcefe266dd1188462d058b0d9c1cf3e3eb467c0451d0bc8afcb9634beccdc8",
    "continuity/layout.py": "9a84f658013304005d7876cf3d909f0d4a3fba85bbec31f54ed280e2ca56fd2b",
    "continuity/limits.py": "373051c6ad807db0a467d761f333073543696d50e33d25d86e6a3d245e2a57af",
    "continuity/notes.py": "d72c7da0d60cfa4c0d9777a0a4575b96fa878e192780c6513c45916b6cf75b51",
    "continuity/nudge.py": "b5a25259f3e8da00e4956c23b0e6bd9cff1a1448396594c264479c5e6b58dcf1",
    "continuity/receipts.py": "fc9d0ce2e8b38a4ce256f7ad49d7af420a9037ee0ff10450f4a414070fdc52b7",
    "continuity/reexec.py": "b222b34753f57272454664c735119405005f2e307c635b107d0e1b6150650815",
    "continuity/render.py": "235ffecbdbdf95150fa658812556c945bec18c331c5b9333be23ac3b490ed519",
    "continuity/repo.py": "5bbae872e392823bdd718ac9e2077d345fe5597b265bc3876f9faec9796f64de",
    "continuity/run.py": "c3bbdf221dc1d989ac8b5c613750f9e444920ab049eb88c652f3835053818ff0",
    "continuity/safeio.py": "dc1d206089037b56e57df7cfcf62d698e336dfdbb2d0bfe677aa0b5670a1c724",
    "continuity/scan.py": "8de5c4eb5b813fb784fc7b71a58340b4444de2425ac71dfd5c5ffc789517aa86",
    "continuity/secret_assignments.py": "533f150168ae115662a494b6e4948f2be014f314a4d52b60248d7acb129d5c9e",
    "continuity/secret_context.py": "c0c874ec19c40660d6951931e7643d7fad7f60cd2c089be98182f6b263f7319e",
    "continuity/secret_doc.py": "0981d1f455cf6cf6df2d4dab944ef635e1ee4c36b7dfccb63d62d9ce585fb759",
    "continuity/secret_labels.py": "2f54c475a46646434f08878028cbf38c2346c345e082f39662126c874015a4d1",
    "continuity/secret_rules.py": "b397b808e26438cccdb06d9611ff5324ccd711e2a8304438a6f02adca018d0d7",
    "continuity/secret_structures.py": "6d04c6ab072cfe9948a1e145c9269dffade4a1b2b756798bc62e364ba5febc4a",
    "continuity/secret_values.py": "576a005cf903c837e95393def3bbe439e3c07d8b76f0a10ff205135e19eb173c",
    "continuity/secrets.py": "fb3a55f7b36690edef9f9cd4b58ffd487acb219f3f233a44dca06bf1cd1d60e9",
    "continuity/sources.py": "dae0e7cf8fe64e3e288a30bcdb63a9466f1dfa1793e940e0a31efb1ef5d91c38",
    "continuity/startup_cache.py": "728daf0b837c65e52e2b938e1ef02f67ae302c17728e28ebd60354f6ce530f8b",
    "continuity/tool_events.py": "38a0696072b7d6623b3644312cf21acc7aed9b98108186c2af8d9e43640186bb",
    "continuity/userdirs.py": "d3b9fc915ff95ca9baea69be8a1b2c3a211835711d4476efdff046ba3cab2c59",
    "continuity/vault.py": "dd15a75586f3c991a08f3d5e42b30fdc0536c66846beb405852d92ddc5fe9ee2",
}
# END PINNED MODULES
# What the warm path runs (a test checks that it is the import closure of continuity.fastpath).
WARM_MODULES = (
    "continuity/__init__.py",
    "continuity/connfile.py",
    "continuity/fastpath.py",
    "continuity/ids.py",
    "continuity/limits.py",
    "continuity/repo.py",
    "continuity/safeio.py",
    "continuity/userdirs.py",
)
START_EVENTS = ("SessionStart", "SubagentStart")
MODULE_CAP_BYTES = 1 << 20  # far above any reviewed module; limits.py is not trusted before it is checked
OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def read_module(rel: str) -> bytes:
    """The bytes of `src/<rel>`: a regular file (never a link, never a FIFO) within MODULE_CAP_BYTES."""
    fd = os.open(os.path.join(SRC, rel), OPEN_FLAGS)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MODULE_CAP_BYTES:
            raise OSError(f"src/{rel} is not a regular file within {MODULE_CAP_BYTES} bytes")
        return handle.read(MODULE_CAP_BYTES + 1)


def checked(rels: list[str] | tuple[str, ...]) -> dict[str, bytes] | str:
    """{rel: bytes} when every module in `rels` has its pinned digest, else the first one that has not."""
    if not PINNED_MODULES:
        return "the module digests (none are pinned)"
    found: dict[str, bytes] = {}
    for rel in rels:
        try:
            data = read_module(rel)
        except OSError:
            return "src/" + rel
        if hashlib.sha256(data).hexdigest() != PINNED_MODULES.get(rel):
            return "src/" + rel
        found[rel] = data
    return found


def code_digest() -> str:
    """One digest of all the pinned code: part of the startup cache's key."""
    listing = "".join(f"{rel}={digest};" for rel, digest in sorted(PINNED_MODULES.items()))
    return hashlib.sha256(listing.encode()).hexdigest()


class PinnedLoader(Loader):
    """Runs a module from the bytes that were checked, compiled now (never from a cache)."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path, self.data = path, data

    def create_module(self, spec: ModuleSpec) -> None:
        return None  # the usual module object

    def exec_module(self, module: "ModuleType") -> None:
        exec(compile(self.data, self.path, "exec", dont_inherit=True), module.__dict__)  # noqa: S102 -- checked bytes


class PinnedFinder:
    """First on sys.meta_path: `continuity` and its modules come only from checked bytes."""

    continuity_pinned = True  # `entry` keeps it first when site-packages add finders of their own

    def __init__(self) -> None:
        self.sources: dict[str, bytes] = {}

    def find_spec(self, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        if name != "continuity" and not name.startswith("continuity."):
            return None
        base = name.replace(".", "/")
        for rel, package in ((base + ".py", False), (base + "/__init__.py", True)):
            if rel in self.sources:
                where = os.path.join(SRC, rel)
                spec = ModuleSpec(name, PinnedLoader(where, self.sources[rel]), origin=where, is_package=package)
                spec.has_location = True
                if package:
                    spec.submodule_search_locations = []  # only this finder serves its modules
                return spec
        raise ImportError(f"{name} is not among the reviewed startup modules", name=name)


def changed_text(event: str, what: str) -> str:
    return (
        f'<private-memory event="{event}" status="unavailable">\n'
        f"Private memory was not restored: the startup code changed since it was reviewed ({what} does not "
        "match the digest pinned in scripts/agent-startup-context.py). Continue under AGENTS.md and the "
        "repository's instructions, and do not claim that private identity, preferences or handoffs were "
        "restored. After reviewing the change, the person can run `lifecycle hook pin` and trust the hook "
        "again (in Codex: /hooks).\n</private-memory>"
    )


def changed_output(what: str, data: bytes) -> str:
    """The hook's answer when pinned code changed: the notice for a start event, nothing otherwise."""
    import json

    try:
        payload = json.loads(data)
    except ValueError:
        return ""
    event = payload.get("hook_event_name") if isinstance(payload, dict) else None
    if event not in START_EVENTS:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": changed_text(event, what)}})


def leave(text: str) -> "NoReturn":
    """Print the warm answer and exit 0 at once, without the interpreter's teardown.

    Freeing every module and object the process is about to drop costs more than a quarter of the
    whole warm hook (about 7 ms of 36 on a 2-core test machine), and nothing is left to finish: the
    receipt is written and closed, and stdout is flushed here.
    """
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except (OSError, ValueError):
        pass  # the harness stopped reading: there is no one left to answer
    os._exit(0)


def option(argv: list[str], name: str, default: str) -> str:
    return argv[argv.index(name) + 1] if name in argv[:-1] else default


def main(argv: list[str]) -> int:
    hook = "--hook" in argv
    code = code_digest()
    finder = PinnedFinder()
    sys.meta_path.insert(0, finder)
    data: bytes | None = None
    if hook:
        warm = checked(WARM_MODULES)
        if isinstance(warm, dict):
            finder.sources.update(warm)
            from continuity import fastpath

            data = fastpath.read_stdin()
            payload = fastpath.parse_payload(data)
            answer = None if payload is None else fastpath.serve(payload, option(argv, "--harness", "codex"), code)
            if answer is not None:
                leave(answer.decode("utf-8") + "\n")
    everything = checked(sorted(PINNED_MODULES))
    if not isinstance(everything, dict):
        if not hook:
            sys.stdout.write(changed_text(option(argv, "--event", "SessionStart"), everything) + "\n")
            return 3
        if data is None:
            data = sys.stdin.buffer.read(MODULE_CAP_BYTES)
        notice = changed_output(everything, data)
        sys.stdout.write(notice + "\n" if notice else "")
        return 0
    finder.sources.update(everything)
    from continuity import entry

    return entry.main(argv, data, code)


if __name__ == "__main__":
    try:
        status = main(sys.argv[1:])
    except BaseException:
        if "--hook" not in sys.argv or os.environ.get("CONTINUITY_DEBUG") == "1":
            raise
        status = 0  # a hook never fails the session
    sys.exit(status)
