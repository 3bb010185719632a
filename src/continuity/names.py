"""The names the harnesses give their hook events, and the harnesses' own names, spelled once.

Codex and Claude Code call the hooks by these event names (`hook_event_name` on stdin, the keys of
`hooks.json`), and the brief, the hook commands, the MCP server and the command line all choose
among the same two harnesses. Standard library only and tiny: the hook's warm path imports it at
every session start. The startup script keeps its own copy of START_EVENTS, since it needs them
before any module is checked; a test holds the two equal.
"""

SESSION_START = "SessionStart"
SUBAGENT_START = "SubagentStart"
PRE_COMPACT = "PreCompact"
POST_TOOL_USE = "PostToolUse"
STOP = "Stop"
USER_PROMPT_SUBMIT = "UserPromptSubmit"

START_EVENTS = (SESSION_START, SUBAGENT_START)  # the events that receive the brief
STATE_EVENTS = (PRE_COMPACT, POST_TOOL_USE, STOP, USER_PROMPT_SUBMIT)  # these only update the session's state

CODEX = "codex"
CLAUDE = "claude"
HARNESSES = (CODEX, CLAUDE)
