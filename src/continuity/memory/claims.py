"""What a proposed claim may be: its kind, where it holds, and how sure its evidence makes it.

The library's own vocabulary of a note (`review.new_candidate` refuses anything else), read as it is
by every surface that offers a choice of it: the MCP server's `propose_note` schema lists these tuples
rather than its own copy. It imports nothing, so the server lists its tools without loading the
write path.
"""

from __future__ import annotations

KINDS = ("fact", "decision", "lesson", "preference")
SCOPES = ("global", "project", "device")
CONFIDENCES = ("low", "medium", "high")
DEFAULT_SCOPE = "project"
DEFAULT_CONFIDENCE = "medium"
