"""Every number the specification names that no pinned hook reads, with its unit in its name.

Leases, recall, the MCP server's allowances, the journal search, sync, setup and the scanners use
these. They live outside the closure of modules the startup script and the outbox sweep pin
(`continuity.limits` holds what those read), so changing one changes no digest a hook checks: no
re-pin, no re-trust in Codex. `tests/hook/test_limits_split.py` proves both halves.
"""

from continuity.limits import KIB, MIB

# INDEX.md and MEMORY_POLICY.md are validated at startup but never rendered.
WARM_POLICY_CAP_BYTES = 64 * KIB
# Codex spills context above a hook's additionalContextLimit (approximate tokens = ceil(bytes / 4)).
CODEX_SESSION_START_CONTEXT_LIMIT_TOKENS = 3072
CODEX_SUBAGENT_START_CONTEXT_LIMIT_TOKENS = 2048
CODEX_DEFAULT_CONTEXT_LIMIT_TOKENS = 2500
BRIEF_TARGET_TOKENS = 2000
# Hook timeouts written into harness configuration.
HOOK_TIMEOUT_SECONDS = 30
SWEEP_HOOK_TIMEOUT_SECONDS = 60
# A person reads each hook command in Codex's /hooks dialog before trusting it.
HOOK_COMMAND_MAX_CHARS = 600

# `doctor --fix` removes only temporary files at least this old: a younger one may be a write in flight.
TEMP_FILE_STALE_SECONDS = 10 * 60
# How many approved notes and candidates doctor reads and checks (frontmatter, readability, the gate),
# and how many changed files of a Git vault it gates as the next sync would; `lifecycle scan` does all.
DOCTOR_NOTE_CHECK_MAX_FILES = 500

# Leases and the improvement loop.
LEASE_DEFAULT_TTL_SECONDS = 2 * 3600
LEASE_MAX_TTL_SECONDS = 30 * 24 * 3600
REVALIDATE_AFTER_DAYS = 90
# The longest interval MEMORY_POLICY.md's `revalidate_after_days` may set: ten years.
REVALIDATE_MAX_DAYS = 3653
HANDOFF_MAX_NEXT_ACTIONS = 3
HANDOFF_MIN_NEXT_ACTIONS = 1
# A lease file is a few hundred bytes of JSON; anything larger is not one.
LEASE_FILE_CAP_BYTES = 4 * KIB
# One device's record of writes made under another's lease: up to 200 overlaps (OVERLAPS_KEPT) of a few
# hundred bytes each, and the ids it marked reviewed.
OVERLAPS_RECORD_CAP_BYTES = 256 * KIB
LEASE_TASK_MAX_CHARS = 200
# A device whose lease another removed (`release --force`) is told so in `lease status` and doctor for
# this long, unless it takes a lease again; each remover's record keeps its latest removals only.
LEASE_REMOVAL_NOTICE_DAYS = 30
LEASE_REMOVALS_KEPT = 20
LEASE_REMOVALS_CAP_BYTES = 16 * KIB
# An edit of SOUL.md or PREFERENCES.md takes the lease for at most this long when none is held.
EDIT_LEASE_TTL_SECONDS = 10 * 60
# One-line frontmatter values given on the command line.
TITLE_MAX_CHARS = 200
SESSION_ID_MAX_CHARS = 128
EVIDENCE_MAX_CHARS = 2000
# Same-second handoff names get a counter suffix; give up (exit 5) after this many.
HANDOFF_NAME_ATTEMPTS = 100
# A new note whose id is taken gets `-2`, `-3`…; give up (exit 5) after this many.
NOTE_ID_ATTEMPTS = 100

# Warm retrieval.
RECALL_MAIN_ALLOWANCE_BYTES = 12 * KIB
RECALL_SUBAGENT_ALLOWANCE_BYTES = 8 * KIB
RECALL_DEFAULT_LIMIT = 3
RECALL_NOTE_CAP_BYTES = 64 * KIB
# A search names at most this many terms, in at most this many characters (typed by a person or agent).
RECALL_MAX_TERMS = 32
RECALL_MAX_QUERY_CHARS = 1000
# Folder levels searched below 30-memory/ and 50-devices/<device>/notes/ (the folder itself is level 1).
RECALL_MAX_FOLDER_DEPTH = 8
# How long a recall waits for another one that is refreshing the same index.
RECALL_INDEX_BUSY_TIMEOUT_SECONDS = 30.0
# A note that changes while it is being served sends the search round again at most this many times.
RECALL_MAX_ATTEMPTS = 3
# One non-blocking read of the server's inotify queue (recall/watch.py); a fuller queue takes more reads.
RECALL_WATCH_READ_BYTES = 64 * KIB
# BM25 weight of each indexed field: id, aliases, tags, title, body, parts of mixed-case identifiers.
RECALL_BM25_WEIGHTS = (5.0, 4.0, 3.0, 3.0, 1.0, 1.0)
# The best note a query can see must match terms that carry at least this share of the query's weight
# (inverse document frequency), or nothing is returned: a query no note answers returns nothing.
RECALL_MIN_COVERAGE_PERCENT = 30
# Below the best one, a note that matches less than this share of the query's weight is not returned.
RECALL_MIN_NOTE_COVERAGE_PERCENT = 15
# With fewer searchable notes than this, word rarity says too little for either floor: none applies.
RECALL_FLOOR_MIN_NOTES = 50
# Notes whose scores are within this share of a better one's are near-equals: the newest comes first.
RECALL_NEAR_EQUAL_PERCENT = 10
# A note of the project the query is made in, or of this device, scores this much more than a note that
# holds everywhere with the same words: what the person meant is more often the note of the work at hand.
RECALL_LOCAL_BONUS_PERCENT = 25
# SQLite ranks the matches and hands over this many first; the rest only when recall reads that far.
RECALL_RANKED_CANDIDATES = 200

# What one MCP server process (`lifecycle mcp`, one client session) returns of private memory in all:
# warm retrieval within the RECALL_*_ALLOWANCE_BYTES above, and everything, the startup brief included,
# within these (seed 003's per-task allowance).
SESSION_MEMORY_MAIN_ALLOWANCE_BYTES = 24 * KIB
SESSION_MEMORY_SUBAGENT_ALLOWANCE_BYTES = 16 * KIB
# A startup brief whose receipt is at most this much older than the server's start belongs to its session
# (the client starts its MCP servers and runs its SessionStart hook at about the same moment).
MCP_STARTUP_RECEIPT_WINDOW_SECONDS = 120
# One tool call's text arguments: a handoff section or a note body within its note's cap, a log query
# within the query cap of recall.
MCP_LOG_QUERY_MAX_CHARS = 1000
# What one server process may write in all (handoffs and candidates): the UTF-8 bytes of the text its
# write calls carry, and how many writes. A main session's room is one handoff at its cap and two notes
# at the working set's per-file budget (32 + 2 x 16 KiB); a subagent's half of it. Past either, a write
# is refused as a tool error, so a runaway or hostile client cannot fill the working set unseen.
MCP_WRITE_MAIN_ALLOWANCE_BYTES = 64 * KIB
MCP_WRITE_SUBAGENT_ALLOWANCE_BYTES = 32 * KIB
MCP_WRITE_MAIN_ALLOWANCE_COUNT = 8
MCP_WRITE_SUBAGENT_ALLOWANCE_COUNT = 4
# One JSON-RPC message (one line on stdin): a write_handoff at every cap, each character escaped as
# \uXXXX surrogate pairs, is under 1.3 MiB. A longer line is answered with an error and dropped unkept.
MCP_MESSAGE_MAX_BYTES = 4 * MIB
# On SIGINT or SIGTERM a tool call already running (a write waiting for the lock at most
# LOCAL_LOCK_TIMEOUT_SECONDS) is given this long to finish before the server exits.
MCP_SHUTDOWN_GRACE_SECONDS = 15

# Journal search.
LOG_DEFAULT_LIMIT = 20
LOG_DEFAULT_WINDOW_LINES = 50_000
LOG_MAX_WINDOW_LINES = 1_000_000
LOG_WINDOW_GROWTH_FACTOR = 4
# A journal line is a few hundred bytes; a longer one is skipped as malformed without being kept whole.
LOG_MAX_LINE_BYTES = 64 * KIB
# Bytes read from the end of one journal in one search, whatever its lines look like.
LOG_MAX_READ_BYTES = 1024 * MIB
# Journals are read backwards in blocks of this size.
LOG_READ_BLOCK_BYTES = 256 * KIB
OUTBOX_SWEEP_INTERVAL_SECONDS = 3600
OUTBOX_MANIFEST_CAP_BYTES = 1 * MIB

# Preserving a delivered file in 40-documents/ (`lifecycle preserve`): modest originals only, since every
# byte is synchronized to every computer. A binary file cannot be read by the secret gate, so it is kept
# (unscanned, with --yes) only below its limit; a text file is scanned whole, about a second of the gate
# at its limit.
PRESERVE_BINARY_MAX_BYTES = 10 * MIB
PRESERVE_TEXT_MAX_BYTES = 10 * MIB
# The one-line reason a person gives with --why, kept in the document's record.
PRESERVE_WHY_MAX_CHARS = 500
# The longest file name the common file systems hold (ext4, APFS, NTFS count it in bytes or units of 255).
FILE_NAME_MAX_BYTES = 255

# `lifecycle scan`: from this many files on, the checks run in worker processes (most of a note's cost
# is parsing its frontmatter in pure Python), one per core up to the maximum, each with at least this many.
SCAN_PARALLEL_MIN_FILES = 256
SCAN_MAX_WORKERS = 8
# Hook state, receipts and harness configuration files (all machine-local, all small).
HOOK_STATE_TIMEOUT_SECONDS = 10
HARNESS_CONFIG_CAP_BYTES = 1 * MIB
# Claude Code keeps its whole user state in ~/.claude.json (history per project included), so the MCP
# registration reads files up to this size; anything larger is refused rather than read whole.
MCP_CONFIG_CAP_BYTES = 16 * MIB

# `lifecycle init`: how long one git query (remote URL, root commit) may take, and how many entries of
# the folders around a missing vault path are looked at for a vault that is already there.
GIT_QUERY_TIMEOUT_SECONDS = 10
INIT_NEIGHBOUR_SCAN_MAX_ENTRIES = 256
SLUG_MAX_CHARS = 48
DEVICE_SUFFIX_CHARS = 4

# What a pyenv shim in front of `python3` added to one run of the bare interpreter, median of 21 pairs
# on a busy two-core machine (bench/bench_shim.py: 37 ms real, 180 ms through the shim; the hook
# handlers paid 210 to 330 ms more). Doctor quotes it; it measures nothing itself.
PYTHON_SHIM_COST_MS = 140

# The secret gate's targets, measured on the corpus in tests/secret_formats.py: the share of secrets
# caught over every gitleaks rule and every assignment shape, the share of hard negatives flagged, and
# how many hard negatives that share is taken over.
SECRET_GATE_MIN_RECALL_PERCENT = 97
SECRET_GATE_MAX_FALSE_POSITIVE_PERCENT = 3
SECRET_GATE_MIN_HARD_NEGATIVES = 300
# Measured blind to formats (the format table switched off, tests/format_blind.py) on the corpus of
# tests/blind_corpus.py: the share of credentials caught overall and in each family; and, with the
# table on, the share of clean engineering notes flagged (tests/clean_notes.py) over at least so many.
SECRET_GATE_MIN_BLIND_RECALL_PERCENT = 90
SECRET_GATE_MAX_CLEAN_FALSE_POSITIVE_PERCENT = 1
SECRET_GATE_MIN_CLEAN_NOTES = 1000

# A vault kept in a private Git remote (`lifecycle sync`).
# One git command (a local one, or a fetch or push over the network) is given up after this long.
SYNC_GIT_TIMEOUT_SECONDS = 120
# Checking anonymously whether an https remote is readable by anyone is given up after this long.
SYNC_PRIVACY_PROBE_TIMEOUT_SECONDS = 15
# A push that loses the race to another computer fetches, integrates and tries again this many times in all.
SYNC_PUSH_ATTEMPTS = 5
# A file larger than this is held back instead of committed (the largest preserved original is 10 MiB).
SYNC_FILE_MAX_BYTES = 10 * MIB
# A sync state file in `.git/continuity/` is a few hundred bytes; anything larger is not ours.
SYNC_STATE_CAP_BYTES = 64 * KIB
# Lines of operations named in one sync commit's message; the rest are counted.
SYNC_MESSAGE_MAX_LINES = 50
# Doctor warns when the last completed sync is older than this.
SYNC_STALE_AFTER_SECONDS = 24 * 3600
# The optional scheduler entry runs `lifecycle sync` this often.
SYNC_SCHEDULE_INTERVAL_SECONDS = 3600
# Every sync adds loose objects to `.git`, which the whole-vault budget counts as files; past this many
# a sync packs them (git's own automatic gc is off during a sync, and waits for 6,700).
SYNC_LOOSE_OBJECTS_MAX = 300
