"""The numbers the pinned hooks read, each with its unit in its name.

The startup script and the outbox sweep embed the SHA-256 of every module they import, this one
included, so a change here changes their pins: re-pin (`lifecycle hook pin`) and re-trust in Codex.
That is why only what those hooks read lives here (caps and ceilings of the brief, the frontmatter
bounds, hook state, the outbox's lifetime and caps); every other number the specification names is in
`continuity.tunables`, outside the pinned closure, where a change needs no re-pin.
`tests/hook/test_limits_split.py` keeps the two in step with the closure.

Tests import these instead of repeating the figures, so a change of policy is one edit here.
Ceilings and caps are safety limits, not quotas: spare room is never a reason to write memory.
"""

KIB = 1024
MIB = 1024 * KIB

# Reading: sizes are checked before decoding, and at most cap + 1 bytes are ever read.
LIFECYCLE_TEXT_CAP_BYTES = 1 * MIB
SOUL_CAP_BYTES = 20 * KIB
PREFERENCES_CAP_BYTES = 20 * KIB
PROJECT_CAP_BYTES = 20 * KIB
DEVICE_CAP_BYTES = 20 * KIB
HANDOFF_CAP_BYTES = 32 * KIB
STARTUP_TOTAL_CAP_BYTES = 64 * KIB
# A frontmatter block larger than this is refused before YAML sees it (bounds parser work).
FRONTMATTER_CAP_BYTES = 16 * KIB
FRONTMATTER_MAX_DEPTH = 16
# The YAML parser's work is bounded in its scanner, before any tree is built: a block that needs more
# tokens than this, or nests deeper than FRONTMATTER_MAX_DEPTH while being scanned, is refused at
# once. (A reviewed note has a few dozen tokens; the cost of a block is about linear in its tokens.)
FRONTMATTER_MAX_TOKENS = 2048
# What one startup hook run may spend on YAML in all (flat blocks, read without YAML, cost nothing
# here): past it, further notes with YAML frontmatter are left out as invalid, so the hook's cost
# is bounded by the caps whatever the vault holds.
FRONTMATTER_RUN_MAX_TOKENS = 8192
# A note whose file has other hard links is refused, after one look again this long later: the atomic
# writer's own link of its temporary file to a new note's name lasts two system calls.
HARD_LINK_RECHECK_SECONDS = 0.02
# The connection file is a handful of lines.
CONNECTION_CAP_BYTES = 8 * KIB
# What the hook reads from the harness on stdin.
HOOK_STDIN_CAP_BYTES = 1 * MIB
# One startup cache record (a brief of at most 12 KiB, twice, plus its key and folder stamps).
STARTUP_CACHE_RECORD_CAP_BYTES = 256 * KIB

# Rendering: UTF-8 bytes of the whole model-visible text.
SESSION_START_CEILING_BYTES = 12 * KIB
SUBAGENT_START_CEILING_BYTES = 8 * KIB
# Claude Code replaces hook output above this many characters (UTF-16 units) with a short preview.
CLAUDE_CONTEXT_LIMIT_CHARS = 10_000
BYTES_PER_TOKEN = 4

# Doctor's bounded metadata scan.
DOCTOR_SCAN_MAX_ENTRIES = 1024
DOCTOR_SCAN_MAX_DIRS = 512

# Storage budget defaults (seed 003).
BUDGET_WORKING_SET_BYTES = 1 * MIB
BUDGET_WORKING_SET_FILES = 250
BUDGET_FILE_BYTES = 16 * KIB
BUDGET_VAULT_BYTES = 100 * MIB
BUDGET_VAULT_FILES = 1000
BUDGET_WARN_RATIO = 0.8
LOCAL_LOCK_TIMEOUT_SECONDS = 10.0

# Delivery outbox.
OUTBOX_LIFETIME_SECONDS = 7 * 24 * 3600
# Tool-owned records inside output/ are small; anything larger is not ours and is refused unread.
OUTBOX_STATE_CAP_BYTES = 1 * MIB
# How long install-sweeper waits for `crontab` or `schtasks`.
OUTBOX_SCHEDULER_TIMEOUT_SECONDS = 30

# Stop nudge: deterministic signals within one turn.
STOP_NUDGE_MUTATIONS = 4
STOP_NUDGE_TOOL_EVENTS = 10
HOOK_STATE_CAP_BYTES = 4 * KIB
HOOK_STATE_MAX_AGE_SECONDS = 30 * 24 * 3600
HOOK_STATE_PRUNE_MAX_ENTRIES = 1024
RECEIPTS_CAP_BYTES = 64 * KIB
RECEIPTS_MAX_ENTRIES = 64

# Ids.
ID_MAX_CHARS = 63
NOTE_ID_MAX_CHARS = 128
