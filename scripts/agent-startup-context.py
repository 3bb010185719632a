#!/usr/bin/env python3
"""continuity's startup hook, and the manual render when the hook is unavailable.

    agent-startup-context.py --hook --harness codex|claude     (reads the harness's JSON on stdin)
    agent-startup-context.py --render [--event SessionStart|SubagentStart]
                                      [--format text|json] [--harness codex|claude]

It runs from a checkout without installing the package: the checkout's `src/` goes first on
sys.path. In hook mode it always exits 0 and prints at most one JSON object. When the package's
dependencies cannot be imported it re-runs itself once with the `python` named in the connection
file, and failing that injects a notice that private memory was not restored and why.

Pinning: Codex trusts a hook by the hash of its definition, which covers the command string but
not this file. So the command checks this file's SHA-256 before running it, and this file checks
the SHA-256 of every package module the hook may load (PINNED_MODULES below, written by
`lifecycle hook pin`) before importing any of them. A mismatch injects only a notice that the
startup code changed since it was reviewed; nothing else runs. Compiled bytecode is kept under the
user's cache directory, not in the checkout, so a planted `__pycache__` file cannot stand in for a
reviewed module.

Speed: this file is compiled at every run, so it holds only the pinned checks and the warm path's
call; an unchanged vault is answered by `continuity.fastpath` after checking just the two modules
it loads, and everything else by `continuity.entry` after checking them all.
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
sys.path.insert(0, SRC)

# BEGIN PINNED MODULES (written by `lifecycle hook pin`; edit the code, then run it again)
PINNED_MODULES = {
    "continuity/__init__.py": "1778d1865c0b43376fe93ddcb9266a8eb16816ad4bb10647b427514a1e0e2ace",
    "continuity/atomic.py": "c4d8d181dab5313b5a10452fe101d7184251e068b6dd734e6398c51ed14c188c",
    "continuity/budget.py": "a5540270d79da361c5911bdb19b7940bfc34f434431b26db5ff5f94695e3a55a",
    "continuity/conflicts.py": "20dc2b2c2b589992fd80779953f46ea819bf556969eb6820b4ed42af5c854e2e",
    "continuity/connection.py": "3fb67b7647b3be20be5e3e30cdffeb66cd8d72d9cfdae441021d2df445366aba",
    "continuity/entry.py": "22b6504842faadf9b8dfa70f5ba797c630d4cf4940eb194c3ce505f2810dcd6e",
    "continuity/errors.py": "4346b587ecccd1522fa385c6d74c9e5dca45cf8debdac7c4afd2b9a3da7de7ba",
    "continuity/escape.py": "54c351d6316419e4003de5a6af7022964011ef1f30145a341252dac72fc6d393",
    "continuity/fastpath.py": "ce803419096bbe243e513cdc7f2e5876a84f4ee24708ed8a7af7bd46418baecc",
    "continuity/handoff.py": "5e65e06098ed821f1ec68b8c298f8b80216fd95254438764dc16f2009d80abe2",
    "continuity/hook.py": "e15c154b3c44b953cf30f0d32b5f0ddb15dc005315a35ec6346a229fba622d16",
    "continuity/hookstate.py": "2189d59b488c6618a47bee0fd2446ec0270638df373db40cb7ebafb310bebf05",
    "continuity/journal.py": "1d849efb3cb5721d8883832de6439978f327311dfed236080548d73f1490c3e0",
    "continuity/layout.py": "12adf5111323046247c53a5ae5ad914645255e78794737708714733c39fae079",
    "continuity/lease.py": "366e16832c9ddaed472790eb9b24163163cdc73a752f2e2dc0a75deda904d3ef",
    "continuity/limits.py": "04b80bfa83626125591ac580306dc939cc6746f583e9c7f444af0563d1195dce",
    "continuity/minijson.py": "e906cad0cce5a4bd7a4f38d089be4f7935bcc7a8464635394a7d009a76b228ad",
    "continuity/notes.py": "561fc0865e203535a4f2e58fefaaf28a913224b9d5cc28bd9e420de5663c5d7b",
    "continuity/onboard.py": "b25739339de093fec821615a5efb4ae8afa4be8b583e0001f3e3405e7d3564f3",
    "continuity/receipts.py": "a118aff677395565b76199f02bb1993cf522af052a38111a81464eb4d7698c8c",
    "continuity/render.py": "8295544859fd06e3422657a21e0e908988d1478e23ce663fe1d9dbf0062d1e69",
    "continuity/scan.py": "8de5c4eb5b813fb784fc7b71a58340b4444de2425ac71dfd5c5ffc789517aa86",
    "continuity/secret_assignments.py": "dbaeef413724cfd2fed307580ec078e54e41a404f10042a937d3371fbf03a441",
    "continuity/secret_context.py": "6684a0011290fc9c0ee943f47ba38bef0af66cbdca149ea45cf95a653151e2c3",
    "continuity/secret_doc.py": "9e683c67f74b704d428675f1b7a6794e74fd2a5fda4fcc4f3a47773db60d2f53",
    "continuity/secret_rules.py": "ffd26209a75fa66fac63708c352af9306ec67ae70ba0dba1f4938e8eed2c9e92",
    "continuity/secret_structures.py": "32d451aec85bb833bb6b0d3a48294e526d502230becdb4b11ce1fc9503b243da",
    "continuity/secrets.py": "d8592d61aa2e58079eb94636fbf7760ba1fddbdc01c02e8aa4ea8eaa13e213aa",
    "continuity/sources.py": "5a2c5dbb2ef937c3096c069d3395b924805f94b950742d2905a93a1c37833ebc",
    "continuity/startup_cache.py": "719bb583d709e54cf0c756e3526bc45a45dca2efdfed5840a242bec9d86d2b46",
    "continuity/tool_events.py": "a00c930c4a8f3ed0cd561bd058e36a53c86e043d3a8432d076a5242c112d391f",
    "continuity/vault.py": "8b7c4aa491c13156450c06fe679ac5d4ea103a71c50aed5d1149b03792cc761a",
    "continuity/writer.py": "07dac0eb1ee739ba2342e675b45c7f06047f04bd173c0200356328cb9e8cf7e2",
}
# END PINNED MODULES
WARM_MODULES = (
    "continuity/__init__.py",
    "continuity/fastpath.py",
    "continuity/layout.py",
    "continuity/limits.py",
    "continuity/minijson.py",
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


def _pin_mismatch(names=None):
    """The first pinned module whose bytes differ from its digest (or that is missing), else None."""
    sha256 = _sha256()
    if not PINNED_MODULES:
        return "the module digests (none are pinned)"
    for rel in sorted(PINNED_MODULES) if names is None else names:
        digest = PINNED_MODULES.get(rel)
        try:
            with open(os.path.join(SRC, *rel.split("/")), "rb") as handle:
                data = handle.read()
        except OSError:
            return "src/" + rel
        if digest is None or sha256(data).hexdigest() != digest:
            return "src/" + rel
    return None


def _code_digest():
    """One digest of the pinned code: part of the startup cache's key."""
    sha256 = _sha256()
    return sha256("".join(f"{k}={v};" for k, v in sorted(PINNED_MODULES.items())).encode()).hexdigest()


def _private_bytecode():
    """Read and write compiled modules under the user's cache directory, never the checkout's."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    sys.pycache_prefix = os.path.join(base, "continuity", "pycache")
    sys.dont_write_bytecode = False  # the cache is ours; without it every cold start recompiles everything


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
    _private_bytecode()
    hook = "--hook" in argv
    data = None
    rest = None  # the pinned modules still to check: all of them, unless the warm ones just were
    if hook and not _pin_mismatch(WARM_MODULES):
        from continuity import fastpath

        warm = fastpath.main_warm(_option(argv, "--harness", "codex"), _code_digest())
        if warm is not None:
            sys.stdout.write(warm.decode("utf-8") + "\n")
            return 0
        data = fastpath.DATA
        rest = sorted(set(PINNED_MODULES) - set(WARM_MODULES))
    changed = _pin_mismatch(rest)
    if changed:
        if hook:
            out = _changed_output(changed, data)
            if out:
                sys.stdout.write(out + "\n")
            return 0
        sys.stdout.write(_changed_text(_option(argv, "--event", "SessionStart"), changed) + "\n")
        return 3
    from continuity import entry

    return entry.main(argv, data, _code_digest())


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except BaseException:
        if "--hook" not in sys.argv or os.environ.get("CONTINUITY_DEBUG") == "1":
            raise
        code = 0
    sys.exit(code)
