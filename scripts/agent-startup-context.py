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

Speed. Only the few standard-library-only modules of the warm path (WARM_MODULES) are read, checked
and compiled first; `continuity.hook.warm` reads the harness's JSON (once: its object, or None, is
handed on from there) and answers an unchanged vault from the record the full path left. Anything
else checks every pinned module and goes to `continuity.hook.entry`, which validates everything and,
when the package's dependencies cannot be imported, re-runs this script once with the `python` named
in the connection file. In hook mode it always exits 0 and prints at most one JSON object.
"""

import gc
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
HERE = os.path.dirname(SCRIPT)
# A checkout keeps the package in src/ beside scripts/; an installed package carries this file in
# continuity/_scripts/, two folders below the folder that holds `continuity`.
SRC = (
    os.path.dirname(os.path.dirname(HERE))
    if os.path.basename(HERE) == "_scripts"
    else os.path.join(os.path.dirname(HERE), "src")
)

# BEGIN PINNED MODULES (written by `lifecycle hook pin`; edit the code, then run it again)
PINNED_MODULES = {
    "continuity/__init__.py": "63f1acaf7230fbcfc07784a690a8aa8b7d17239e30182ccea9ccdcbe47cfb1e9",
    "continuity/brief/__init__.py": "197698893f5d01b81f41b336fe03a244a6ecbfabd2bdd2ec1c04d1e523c9f3ef",
    "continuity/brief/build.py": "16edc632493318b30c94edaf47cfb55cf36da8db11dffc0d7512a365aa84317c",
    "continuity/brief/cache.py": "53747e32dae4ccd74e746a530cc901c457c11ade6dacc415bca644a3b25c238e",
    "continuity/brief/envelope.py": "3d8f8e1267371a7bc8e48f39701a3cac9f9703e989548fc7cfaf21c52b151996",
    "continuity/brief/escape.py": "b6b3f2619bb45b8b87f571a796f23fdadae4a40ed2e794e0a26494a4b8e5bd99",
    "continuity/brief/record.py": "d152316c7cf125e8d447e486fa77796c1ef43912718645bc1273128bc1d138e4",
    "continuity/brief/render.py": "e9eeb3941ab87978a75cc3404b8296a206c3d5106db7992f801267444cdd144a",
    "continuity/brief/sources.py": "a9809f17592f07233ec526db64032ba34d21b45fbd4ccfd3527d51097ededc8f",
    "continuity/characters.py": "0ee209f636fd3b94297c827ce21464178cc6e32cbf2c80db3a3118ef994d7470",
    "continuity/errors.py": "9b04b4c3e41b17c3444742d9a6700bcbdfd3d99152bbca6cab826b51d7d42911",
    "continuity/gate/__init__.py": "ac8bf8f84e6cdc418508f64d2eadb1116a769d50420c41903c6d46202272fa59",
    "continuity/gate/assignments.py": "c4e256affaf4623b7781126c33e1f6d92e46f10439a3bb8a91b7fac61140a8cb",
    "continuity/gate/context.py": "4103868815881b44efc5fa64e579e309aa41028a375f4f9482648d104b32cedf",
    "continuity/gate/detectsecrets.py": "e9bf4cb9f12afcce61d98ea60c8e43a0c40994918754d385b547a3a170b27b7b",
    "continuity/gate/doc.py": "1177ea580def1ccba0da93f4134f5a53b83dc58052ca30ce2b1b3fb94d9c25a6",
    "continuity/gate/encoded.py": "3cb47344a63c6de22b24844c844cbe85f0b85764a14aedf281e1b6d715fe87b9",
    "continuity/gate/formats.py": "600060a25cf67aee8e8bfcd99444441b7b20dbafc6a4b65dc35f7f7e62af538a",
    "continuity/gate/generic.py": "ea4f46c57332b590697eb5924bfe042f7d485612e7cad461f7eced26bbf267b3",
    "continuity/gate/issued.py": "7f5998ea33e6c5ac414431a1ad648857025a682f103f309bec971b3c36c2e659",
    "continuity/gate/labels.py": "448168d4a6c9571024b457d55d4a6286147747e9ea07061ad9f54b02d2123216",
    "continuity/gate/rules.py": "a0910e87476c2ba5c4c5e9a57c4f63171fc623c9bf803422217af56b2a8d8a3e",
    "continuity/gate/secrets.py": "ae1783389e79894c106043f0fe9d7a70a742c14352490bb51e870594d6afcf29",
    "continuity/gate/services.py": "fb027c32980925f85bfb55d4eb3ccee0b15a1fe40caef2bf8a7c71085dd570a5",
    "continuity/gate/shapes.py": "7954a167b77bf465169211681fdc8950a328d68f9ea2e5686377617a6fe08fa9",
    "continuity/gate/structures.py": "74fcfa15b98058ed6a314f2eac28f24cb64dba02491fe1d9185aaf8e02526ff8",
    "continuity/gate/values.py": "d7a963609395fb3f06da400ba4411beeb677f47fd9ba9f90a77b6fd895c4ace9",
    "continuity/hook/__init__.py": "67f038f5473dc472c71904790588be77437e3e0773f2df63ea015b6d022d1b64",
    "continuity/hook/entry.py": "47da94a752f635d54c249425dcbf2e3154af7d8d0ede6d00d1cc5b00b67db568",
    "continuity/hook/hookstate.py": "7d73697d2164dc7de485638f52aba5d8aab2a2356c4988789c9c03826ee90b82",
    "continuity/hook/nudge.py": "a862a41c052ad09a2e66ae1d7779d6096257917f2abef9d1afe34784b4e545ca",
    "continuity/hook/receipts.py": "f46d3f328cab817137f1e4fc495ca449b8b310619956880cf712ab1cb7fdf415",
    "continuity/hook/reexec.py": "4c709929b398597460c16899de019d16e01c022fee2e35040f22a0892e65e665",
    "continuity/hook/run.py": "2dba25fed961c945df5a44f3c5e812ebf0cc05d6c7a535cd6534f92acc418215",
    "continuity/hook/tool_events.py": "b4420022256443c071919ab26cb3f61c70971ce1925bb2eed0016f8459536cd8",
    "continuity/hook/warm.py": "7cfbb46a8e8aaa425436f2924570f4f6609422425f3b2aeffec994763bc85d43",
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
    "continuity/memory/__init__.py": "47721b6044a3df26cfc75613e45592098925f27d150dde081f713345e3f6da56",
    "continuity/memory/handoff.py": "d1a9630438bd660424720bb60f0712e07e776f3a60ace0d37733f9bac5058c55",
    "continuity/names.py": "6c75a291d26eb693cb58c3608f44e87c74f4c1b033dca9fb3fcc191fa789d3d8",
    "continuity/safeio.py": "5f56a3f108e6ec01f876dc9a1ef9c058633b8bf49001ac44c2c3e135587f7744",
    "continuity/vault/__init__.py": "f280dca42e8bd942ea1bef2a3e10c4c00d2242be6816aeea887b3df63c72c5d9",
    "continuity/vault/access.py": "da66747d739c2d79e89b503230ff6fd7aab965f388bd9f5ce2d4a02137a4cfa6",
    "continuity/vault/budget.py": "763fcf83a76381d1678b1c8733997cbaea753485e39ce6abde72b95a124713da",
    "continuity/vault/conflicts.py": "20dc2b2c2b589992fd80779953f46ea819bf556969eb6820b4ed42af5c854e2e",
    "continuity/vault/flatyaml.py": "586c7ba874e8b7c42d9e450be3dd7c053a70e421a5dbaeb8c7d6b061e4af2ca1",
    "continuity/vault/layout.py": "8782d44f7ee03906786733069c6eaf5c578c35bff00ad3fd04bb10539c073093",
    "continuity/vault/notes.py": "1a76ed3e54b3664ac2f716b8f19c0988791e152a346a2e5147197a62e4dd4264",
    "continuity/vault/placeholders.py": "41d34ebcb69e33c6f86e606677bac377c8c02657f9c7f98f68be0b763935b728",
    "continuity/vault/registry.py": "7a7342a19d7682296a77eb6abfac86955c60070986912570576e67a79b95efc5",
    "continuity/vault/scan.py": "16fcbfeaaa247170d66b2ed7b7ca53f28269e9ad20d293711a7d1741f05d8ea9",
}
# END PINNED MODULES
# What the warm path runs (a test checks that it is the import closure of continuity.hook.warm).
WARM_MODULES = (
    "continuity/__init__.py",
    "continuity/brief/__init__.py",
    "continuity/brief/record.py",
    "continuity/hook/__init__.py",
    "continuity/hook/warm.py",
    "continuity/ids.py",
    "continuity/lightjson.py",
    "continuity/limits.py",
    "continuity/local/__init__.py",
    "continuity/local/connfile.py",
    "continuity/local/made_lookup.py",
    "continuity/local/repo.py",
    "continuity/local/userdirs.py",
    "continuity/names.py",
    "continuity/safeio.py",
)
START_EVENTS = ("SessionStart", "SubagentStart")  # continuity.names's, which is not checked yet here
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


def changed_output(what: str, payload: object) -> str:
    """The hook's answer when pinned code changed: the notice for a start event, nothing otherwise."""
    import json

    event = payload.get("hook_event_name") if isinstance(payload, dict) else None
    if event not in START_EVENTS:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": changed_text(event, what)}})


def stdin_json() -> object:
    """The harness's JSON, read here only when the package's reader (`warm.read_payload`) is itself among
    the changed modules: its event chooses between the notice and nothing."""
    import json

    try:
        return json.loads(sys.stdin.buffer.read(MODULE_CAP_BYTES))
    except ValueError:
        return None


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
    payload: dict[str, object] | None = None  # the harness's JSON object, read and parsed once
    read = False
    if hook:
        gc.disable()  # the warm answer only loads modules: collecting would walk them all for nothing (~2%)
        warm = checked(WARM_MODULES)
        if isinstance(warm, dict):
            finder.sources.update(warm)
            from continuity.hook import warm as fastpath

            payload, read = fastpath.read_payload(), True
            answer = fastpath.serve(payload, option(argv, "--harness", "codex"), code)
            if answer is not None:
                leave(answer.decode("utf-8") + "\n")
        gc.enable()
    everything = checked(sorted(PINNED_MODULES))
    if not isinstance(everything, dict):
        if not hook:
            sys.stdout.write(changed_text(option(argv, "--event", START_EVENTS[0]), everything) + "\n")
            return 3
        notice = changed_output(everything, payload if read else stdin_json())
        sys.stdout.write(notice + "\n" if notice else "")
        return 0
    finder.sources.update(everything)
    from continuity.hook import entry

    return entry.main(argv, payload, code)


if __name__ == "__main__":
    try:
        status = main(sys.argv[1:])
    except BaseException:
        if "--hook" not in sys.argv or os.environ.get("CONTINUITY_DEBUG") == "1":
            raise
        status = 0  # a hook never fails the session
    sys.exit(status)
