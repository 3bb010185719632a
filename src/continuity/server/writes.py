"""The tools that write: a new current handoff, and a candidate note for the person to review. Each is
declared once, above its handler (`tool.tool`).

Both write through `store.writer` exactly as `lifecycle handoff new` and `lifecycle note new` do
(secret gate, caps, lease refusal, journal line, atomic write), and the library's refusals speak for
themselves, their fields named as this tool's arguments. Nothing here approves, supersedes or edits the
soul: those stay the person's, at the command line.

The write path is imported inside the handlers only when they run: `tools/list` loads this module for
its declarations, and the first answers must not pay for the writer, the gate or YAML.
"""

from __future__ import annotations

import sys

from continuity import limits, tunables
from continuity.errors import one_line
from continuity.memory import claims
from continuity.server.tool import WRITE_REPLY, Outcome, arguments, choice, text, tool

TYPE_CHECKING = False  # `typing` is not imported at run time (the tool list is answered without it)
if TYPE_CHECKING:
    from typing import Any

    from continuity.server.tool import Session

HANDOFF_SECTION_MAX_CHARS = limits.HANDOFF_CAP_BYTES
# The handoff's sections as the tool takes them, in the order the note holds them (Next actions last).
SECTIONS = (
    ("Goal and status", "goal_and_status"),
    ("Completed work", "completed_work"),
    ("Risks and decisions", "risks_and_decisions"),
)


def _warn(message: str) -> None:
    """Lock waits are announced on stderr, which the client keeps as the server's log."""
    print(message, file=sys.stderr, flush=True)


@tool(
    "write_handoff",
    "Write a handoff",
    "Write a new current handoff for this project when a later task would otherwise have to "
    "rediscover unfinished or non-obvious state; it supersedes the previous one. Writing nothing is "
    "a valid outcome. Never put credentials, tokens or personal data in it: every write is checked "
    "for secrets and refused. A refusal (secret, size, another device's lease) is a tool error with "
    "the reason; do not retry it unchanged. " + WRITE_REPLY,
    arguments(
        {
            "title": text("One line: what this handoff is about.", tunables.TITLE_MAX_CHARS),
            "goal_and_status": text("The goal and where it stands.", HANDOFF_SECTION_MAX_CHARS),
            "completed_work": text("What was done, with evidence: files, commits, tests.", HANDOFF_SECTION_MAX_CHARS),
            "risks_and_decisions": text("Unresolved risks and decisions taken.", HANDOFF_SECTION_MAX_CHARS),
            "next_actions": {
                "type": "array",
                "description": "The next concrete actions, one line each.",
                "items": {"type": "string", "minLength": 1, "maxLength": tunables.TITLE_MAX_CHARS * 5},
                "minItems": tunables.HANDOFF_MIN_NEXT_ACTIONS,
                "maxItems": tunables.HANDOFF_MAX_NEXT_ACTIONS,
            },
        },
        ("title", "goal_and_status", "completed_work", "risks_and_decisions", "next_actions"),
    ),
    read_only=False,
)
def write_handoff(session: Session, args: dict[str, Any]) -> Outcome:
    from continuity.memory import handoff_write
    from continuity.store import writer

    sections = {heading: str(args[key]).strip("\n") for heading, key in SECTIONS}
    sections["Next actions"] = "\n".join(f"- {one_line(item)}" for item in args["next_actions"])
    body = "\n\n".join(f"## {heading}\n\n{section}" for heading, section in sections.items()) + "\n"
    conn, ctx = writer.connect(session.cwd, on_wait=_warn)
    result = handoff_write.new_handoff(
        ctx, args["title"], body, commit=handoff_write.head_commit(conn.repo), source_name="the handoff"
    )
    lines = [f"wrote {result.rel} (id {result.id})"]
    if result.supersedes:
        lines.append(f"superseded {result.supersedes}")
    return Outcome("\n".join(lines))


@tool(
    "propose_note",
    "Propose a note",
    "Propose one durable claim (a fact, decision, lesson or preference) with its evidence as a "
    "candidate for the person to review; only the person approves it, at the command line. Write one "
    "only when a later task would otherwise make a worse decision or repeat costly work. Never put "
    "credentials, tokens or personal data in it: every write is checked for secrets and refused. A "
    "refusal is a tool error with the reason. " + WRITE_REPLY,
    arguments(
        {
            "type": choice(claims.KINDS, "What kind of claim."),
            "title": text("The claim in one line.", tunables.TITLE_MAX_CHARS),
            "body": text("The claim and its context, in Markdown.", tunables.RECALL_NOTE_CAP_BYTES),
            "evidence": text("One line: where this was observed.", tunables.EVIDENCE_MAX_CHARS),
            "scope": choice(claims.SCOPES, "Where the claim holds.", claims.DEFAULT_SCOPE),
            "confidence": choice(claims.CONFIDENCES, "How sure the evidence makes it.", claims.DEFAULT_CONFIDENCE),
        },
        ("type", "title", "body", "evidence"),
    ),
    read_only=False,
)
def propose_note(session: Session, args: dict[str, Any]) -> Outcome:
    from continuity.memory import review
    from continuity.store import writer

    _conn, ctx = writer.connect(session.cwd, on_wait=_warn)
    created = review.new_candidate(
        ctx,
        args["type"],
        args["title"],
        args["body"],
        scope=args["scope"],
        confidence=args["confidence"],
        evidence=args["evidence"],
        source_name="the note body",
    )
    return Outcome(
        f"wrote candidate {created.id} ({created.rel})\n"
        f"a person reviews it and approves it with: lifecycle approve {created.id}"
    )
