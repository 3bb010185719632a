"""continuity's plugin hook: runs the INSTALLED package's pinned startup script, or says in one line why not.

    continuity-hook.py --hook --harness codex|claude [--notice]

The plugin carries no copy of the package. It finds the installation through `lifecycle` on PATH (as
`pipx install` and `uv tool install` put it there): the console script's real path lies in the
installation's `bin/` (`Scripts\\` on Windows), beside `lib/python3.X/site-packages/continuity/_scripts/`,
whose `agent-startup-context.py` it runs, in this process, from the very bytes it hashed, once their
SHA-256 is STARTUP_SCRIPT_SHA256 (written by `lifecycle hook pin` together with the package). The
hook command checks this file's own SHA-256 first, so the chain a person reviews is: command ->
this file -> the installed script -> every module it loads (the script's own pin).

It injects nothing when `lifecycle setup` or `lifecycle hooks install` already registered
continuity's handlers for this harness: the model must get the brief once. At session start it then
says so to the person alone (`systemMessage`, which both clients show and neither gives the model). With
`--notice` (the start events) it prints one line when it cannot run: `lifecycle` not on PATH, an
installation without the packaged script (an editable install), or a script of another release
(after an upgrade: update the plugin from the same release). Standard library only; no traceback.
"""

import hashlib
import json
import os
import sys

STARTUP_SCRIPT_SHA256 = "5fa782a76152aa25a95546ddfe6508d33864be939a9c781c50d45eb0c813e88e"
SCRIPT = "agent-startup-context.py"
NOT_RESTORED = "Private memory was not restored"
OUR_SCRIPTS = ("agent-startup-context.py", "artifactctl.py")
DUPLICATE = (
    "continuity: `lifecycle setup` already registers the handlers for {harness}, so this plugin's hooks stay "
    "quiet. Keep one: `lifecycle uninstall {harness}`, or remove the plugin."
)


def find_lifecycle() -> "str | None":
    names = ["lifecycle.exe", "lifecycle"] if os.name == "nt" else ["lifecycle"]
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        for name in names:
            path = os.path.join(folder, name)
            if folder and os.path.isfile(path):
                return path
    return None


def installed_script(lifecycle: str) -> "str | None":
    """The startup script of the installation that `lifecycle` belongs to, None when it has none."""
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(lifecycle)))
    candidates = [os.path.join(prefix, "Lib", "site-packages")]
    lib = os.path.join(prefix, "lib")
    if os.path.isdir(lib):
        candidates += [os.path.join(lib, v, "site-packages") for v in sorted(os.listdir(lib), reverse=True)]
    for site in candidates:
        path = os.path.join(site, "continuity", "_scripts", SCRIPT)
        if os.path.isfile(path):
            return path
    return None


def registered_elsewhere(harness: str) -> bool:
    """True when a user or project configuration file already runs continuity's startup script."""
    home = os.path.expanduser("~")
    if harness == "codex":
        user = os.path.join(os.environ.get("CODEX_HOME") or os.path.join(home, ".codex"), "hooks.json")
        project = os.path.join(".codex", "hooks.json")
    else:
        base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
        user, project = os.path.join(base, "settings.json"), os.path.join(".claude", "settings.json")
    top = os.getcwd()
    while not os.path.exists(os.path.join(top, ".git")) and os.path.dirname(top) != top:
        top = os.path.dirname(top)
    for path in (user, os.path.join(top, project)):
        try:
            with open(path, "rb") as handle:
                doc = json.loads(handle.read(1 << 20) or b"{}")
        except (OSError, ValueError):
            continue
        hooks = doc.get("hooks") if isinstance(doc, dict) else None
        for groups in hooks.values() if isinstance(hooks, dict) else ():
            for group in groups if isinstance(groups, list) else ():
                for handler in group.get("hooks") or () if isinstance(group, dict) else ():
                    if isinstance(handler, dict) and OUR_SCRIPTS[0] in str(handler.get("command", "")):
                        return True
    return False


def say(notice: bool, text: str) -> int:
    if notice:
        print(f"{NOT_RESTORED}: {text}")
    return 0


def main(argv: "list[str]") -> int:
    notice = "--notice" in argv
    args = [a for a in argv if a != "--notice"]
    harness = args[args.index("--harness") + 1] if "--harness" in args[:-1] else "codex"
    if registered_elsewhere(harness):  # `lifecycle setup` (or `hooks install`) serves it: one brief, not two
        if notice and b'"SessionStart"' in sys.stdin.buffer.read(1 << 20):
            print(json.dumps({"systemMessage": DUPLICATE.format(harness=harness)}))
        return 0
    lifecycle = find_lifecycle()
    if lifecycle is None:
        return say(notice, "continuity is not installed (no `lifecycle` on PATH); install it with pipx or uv.")
    script = installed_script(lifecycle)
    if script is None:
        return say(notice, f"{lifecycle} is not a package installation of continuity; install it with pipx or uv.")
    with open(script, "rb") as handle:
        code = handle.read()
    if hashlib.sha256(code).hexdigest() != STARTUP_SCRIPT_SHA256:
        return say(
            notice,
            "the installed continuity is another release than this plugin; update the plugin from the same "
            "release (`codex plugin add continuity@continuity` or `claude plugin update continuity@continuity`).",
        )
    sys.argv = [script, *args]
    exec(compile(code, script, "exec"), {"__name__": "__main__"})  # noqa: S102 - the bytes just hashed
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
