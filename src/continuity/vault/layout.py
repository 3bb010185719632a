"""The vault's layout: folder and file names, relative to the vault, with nothing to import.

Both the startup hook's warm path (which must not import `pathlib`) and `vault` take their names from
here, so the two can never disagree about where a folder is. Where each source of the brief lives
(SOUL.md, a project's PROJECT.md …) is part of its record in `vault.registry`.
"""

SYSTEM = "00-system"
PROJECTS = "10-project"
STATE = "20-state"
HANDOFFS = "20-state/handoffs"
CANDIDATES = "20-state/candidates"
SESSIONS = "20-state/sessions"
MEMORY = "30-memory"
FACTS = "30-memory/facts"
DECISIONS = "30-memory/decisions"
LESSONS = "30-memory/lessons"
APPROVED_FOLDERS = (FACTS, DECISIONS, LESSONS)
DOCUMENTS = "40-documents"
DEVICES = "50-devices"
INBOX = "60-inbox"
ARCHIVE = "90-archive"
TOOL_STATE = ".continuity"
LEASES = ".continuity/leases"

INDEX = "00-system/INDEX.md"
MEMORY_POLICY = "00-system/MEMORY_POLICY.md"

WORKING_SET_DIRS = (SYSTEM, PROJECTS, STATE, MEMORY, DEVICES)
ALL_DIRS = (
    SYSTEM,
    PROJECTS,
    STATE,
    HANDOFFS,
    CANDIDATES,
    SESSIONS,
    MEMORY,
    FACTS,
    DECISIONS,
    LESSONS,
    DOCUMENTS,
    DEVICES,
    INBOX,
    ARCHIVE,
    TOOL_STATE,
    LEASES,
)


def device_dir(device: str) -> str:
    return f"{DEVICES}/{device}"
