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

A shell command is split as a POSIX shell splits it, by `shlex` (words, quotes, escapes, the
operators `;`, `&&`, `|`, `>` and the like, `#` comments); a line with an unclosed quote or escape
cannot be read with certainty, so it counts for nothing.
"""

from __future__ import annotations

import itertools
import os
import shlex
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


def _tokens(line: str) -> list[str] | None:
    """The line's words and operators, its comment left out; None for an unclosed quote or escape."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True  # a word ends only at white space or an operator, as in a shell
    try:
        return list(lexer)
    except ValueError:
        return None


def _segments(tokens: list[str]) -> Iterator[list[str]]:
    """The simple commands between the separators (`;`, `&&`, `|`, parentheses, …)."""
    for separator, group in itertools.groupby(tokens, lambda token: token in SEPARATORS):
        if not separator:
            yield list(group)


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
    program = os.path.basename(words[0]) if words else ""
    args = words[1:]
    if program.startswith("python") and args[:1] in (["-I"], ["-P"]):
        args = args[1:]
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
    program = os.path.basename(words[0])
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
