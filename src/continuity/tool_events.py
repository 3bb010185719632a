"""Classify one harness tool event: did it change files, and did it write memory through `lifecycle`?

The Stop nudge counts mutations within a turn, so this classifier decides which tool events are
mutations. It is conservative on purpose: an edit tool (`apply_patch`, `Edit`, `Write`, `MultiEdit`,
`NotebookEdit`) always counts, and a shell command counts only when it plainly writes (a redirection
to a file, `rm`/`mv`/`cp`/`mkdir`/…, `sed -i`, `tee`, a git or package-manager subcommand that
changes the tree). Anything it cannot read with certainty is not a mutation: a missed mutation only
delays a question, while a false one asks it for nothing.

It also notices `lifecycle handoff new` and `lifecycle note new` in a shell command, so that a turn
that already wrote a handoff or a candidate is not asked to write one. Only the verdicts leave this
module; the command text itself is never stored.

It runs inside the PostToolUse hook, after every tool call, so it imports nothing: the command is
split by `_tokens`, which gives exactly what `shlex.shlex(line, posix=True, punctuation_chars=True)`
gives with whitespace splitting and `#` comments (a test compares them on generated text), without
`shlex`'s import of `re`, which alone costs several milliseconds.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: importing typing costs milliseconds on every tool event
if TYPE_CHECKING:
    from collections.abc import Iterator

EDIT_TOOLS = frozenset({"apply_patch", "Edit", "Write", "MultiEdit", "NotebookEdit"})
SHELL_TOOLS = frozenset({"Bash", "shell", "local_shell", "exec_command", "shell_command", "PowerShell"})
WRITE_COMMANDS = frozenset(
    {"rm", "rmdir", "mv", "cp", "mkdir", "touch", "ln", "chmod", "chown", "truncate", "install", "patch",
     "tee", "rsync", "unzip", "shred"}
)  # fmt: skip
INPLACE_COMMANDS = frozenset({"sed", "perl"})  # they write only with -i
GIT_WRITES = frozenset(
    {"add", "am", "apply", "checkout", "cherry-pick", "clean", "clone", "commit", "init", "merge", "mv",
     "pull", "rebase", "reset", "restore", "revert", "rm", "stash", "switch"}
)  # fmt: skip
PACKAGE_TOOLS = frozenset({"npm", "pnpm", "yarn", "pip", "pip3", "uv", "cargo", "poetry", "bundle", "gem"})
PACKAGE_WRITES = frozenset({"install", "add", "remove", "uninstall", "update", "upgrade", "i", "sync"})
WRAPPERS = frozenset({"sudo", "env", "command", "time", "nice", "nohup", "exec", "xargs"})
SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&"})
REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
MEMORY_WRITES = (("handoff", "new"), ("note", "new"))
_MAX_DEPTH = 3
_MAX_COMMAND_CHARS = 64 * 1024


def _command(tool_input: object) -> object:
    """A tool event's shell command: a string, a list of arguments, or anything else (ignored)."""
    if isinstance(tool_input, dict):
        return tool_input.get("command", tool_input.get("cmd"))
    return tool_input


_WHITESPACE = " \t\r\n"
_PUNCTUATION = "();<>|&"
_QUOTES = "'\""


def _tokens(line: str) -> list[str] | None:
    """`list(shlex.shlex(line, posix=True, punctuation_chars=True))` with `whitespace_split` and `#`
    comments, by the same state machine; None where shlex raises (an unclosed quote or escape)."""
    out: list[str] = []
    state, token, quoted, escaped = " ", "", False, " "
    i, end = 0, len(line)
    while True:
        ch = line[i] if i < end else ""
        i += 1
        emit = False
        if state == " ":
            if not ch or ch == "#":
                return out
            if ch == "\\":
                escaped, state = "a", ch
            elif ch in _PUNCTUATION:
                token, state = ch, "c"
            elif ch in _QUOTES:
                state = ch
            elif ch not in _WHITESPACE:
                token, state = ch, "a"
        elif state in _QUOTES:
            quoted = True
            if not ch:
                return None
            if ch == state:
                state = "a"
            elif ch == "\\" and state == '"':
                escaped, state = state, ch
            else:
                token += ch
        elif state == "\\":
            if not ch:
                return None
            if escaped in _QUOTES and ch != state and ch != escaped:
                token += state
            token += ch
            state = escaped
        elif not ch or ch in _WHITESPACE or ch == "#":  # states "a" and "c"
            if ch == "#":
                i = end  # the rest of the line is a comment
            state, emit = " ", bool(token or quoted)
            if not ch:
                if emit:
                    out.append(token)
                return out
        elif state == "c":
            if ch in _PUNCTUATION:
                token += ch
            else:
                i -= 1  # read it again as the start of the next token
                state, emit = " ", True
        elif ch in _QUOTES:
            state = ch
        elif ch == "\\":
            escaped, state = "a", ch
        elif ch not in _PUNCTUATION:
            token += ch
        else:
            i -= 1
            state, emit = " ", bool(token or quoted)
        if emit:
            out.append(token)
            token, quoted, escaped = "", False, " "


def _segments(tokens: list[str]) -> Iterator[list[str]]:
    current: list[str] = []
    for token in tokens:
        if token in SEPARATORS:
            if current:
                yield current
            current = []
        else:
            current.append(token)
    if current:
        yield current


def _redirects_to_file(tokens: list[str]) -> bool:
    for index, token in enumerate(tokens):
        if token not in REDIRECTS or index + 1 >= len(tokens):
            continue
        if index > 0 and tokens[index - 1].isdigit() and tokens[index - 1] != "1":
            continue  # 2> err.log: a log, not a change to the work
        target = tokens[index + 1]
        if target != "/dev/null" and not target.startswith("&"):
            return True
    return False


def _words(segment: list[str]) -> list[str]:
    """The segment without leading `NAME=value` assignments, wrappers and redirections."""
    words: list[str] = []
    skip = False
    for token in segment:
        if skip:
            skip = False
            continue
        if token in REDIRECTS or token in ("<", "<<", "<<<", ">&", "<&"):
            skip = True
            continue
        words.append(token)
    while words and (("=" in words[0] and not words[0].startswith("=")) or words[0] in WRAPPERS):
        words.pop(0)
    return words


def _program(word: str) -> str:
    """The program's name without its folder (`os.path.basename`, without importing os)."""
    if sys.platform == "win32":  # pragma: no cover
        word = word.replace("\\", "/")
    return word.rpartition("/")[2]


def _subcommand(words: list[str]) -> str:
    """The first word after the program that is not an option (git -C dir commit -> commit)."""
    rest = words[1:]
    while rest:
        word = rest.pop(0)
        if word in ("-C", "-c") and rest:
            rest.pop(0)
            continue
        if not word.startswith("-"):
            return word
    return ""


def _memory_write(words: list[str]) -> bool:
    program = _program(words[0]) if words else ""
    args = words[1:]
    if program.startswith("python") and args[:2] in (["-m", "continuity"], ["-m", "continuity.cli"]):
        program, args = "lifecycle", args[2:]
    if program not in ("lifecycle", "lifecycle.exe"):
        return False
    plain = [word for word in args if not word.startswith("-")]
    return tuple(plain[:2]) in MEMORY_WRITES


def _segment_writes(words: list[str], depth: int) -> tuple[bool, bool]:
    """(mutation, memory write) for one simple command."""
    if not words:
        return False, False
    program = _program(words[0])
    if _memory_write(words):
        return False, True
    if program in SHELLS and depth < _MAX_DEPTH:
        for index, word in enumerate(words[1:-1], start=1):
            if word.startswith("-") and "c" in word.lstrip("-") and not word.startswith("--"):
                return classify_shell(words[index + 1], depth + 1)
        return False, False
    if program in WRITE_COMMANDS:
        return True, False
    if program in INPLACE_COMMANDS:
        return any(w.startswith(("-i", "--in-place")) for w in words[1:]), False
    if program == "dd":
        return any(w.startswith("of=") and w != "of=/dev/null" for w in words[1:]), False
    if program == "git":
        return _subcommand(words) in GIT_WRITES, False
    if program in PACKAGE_TOOLS:
        return _subcommand(words) in PACKAGE_WRITES, False
    return False, False


def classify_shell(command: str, depth: int = 0) -> tuple[bool, bool]:
    """(mutation, memory write) for a shell command; unreadable text is neither."""
    mutation = memory = False
    for line in command[:_MAX_COMMAND_CHARS].splitlines():
        tokens = _tokens(line)
        if tokens is None:
            continue
        for segment in _segments(tokens):
            if _redirects_to_file(segment):
                mutation = True
            seg_mutation, seg_memory = _segment_writes(_words(segment), depth)
            mutation = mutation or seg_mutation
            memory = memory or seg_memory
    return mutation, memory


def classify(tool_name: object, tool_input: object) -> tuple[bool, bool]:
    """(mutation, memory write) for one PostToolUse event."""
    if not isinstance(tool_name, str):
        return False, False
    if tool_name in EDIT_TOOLS:
        return True, False
    if tool_name in SHELL_TOOLS:
        command = _command(tool_input)
        if isinstance(command, list) and all(isinstance(part, str) for part in command):
            return _segment_writes(_words(command[:_MAX_COMMAND_CHARS]), 0)  # arguments: no shell syntax
        return classify_shell(command) if isinstance(command, str) else (False, False)
    return False, False
