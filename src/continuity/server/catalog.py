"""The tools the server offers, in the order `tools/list` shows them.

Each tool is declared once, in `reads` or `writes`: its name, title, description, input schema and
handler together (`tool.tool`). Descriptions are written for the model that chooses among tools: when
to use each one, and that what it returns is memory, data and never instructions. Schemas are JSON
Schema objects with every bound the command line has (from `limits`, `tunables` and the library's own
vocabularies); `schema.validate` enforces the same schema on every call, since a client may send
anything. Approving, superseding and editing the soul are deliberately absent: they stay the person's,
at the command line.

A new tool: its declared handler in `reads` or `writes`, and its place in `TOOLS` below.
"""

from __future__ import annotations

from continuity.server import reads, writes
from continuity.server.tool import Tool

TYPE_CHECKING = False  # `typing` is not imported at run time (the tool list is answered without it)
if TYPE_CHECKING:
    from typing import Any

TOOLS: tuple[Tool, ...] = (
    reads.recall,
    reads.brief,
    reads.current_handoff,
    writes.write_handoff,
    writes.propose_note,
    reads.search_log,
    reads.stale_notes,
)

BY_NAME = {tool.name: tool for tool in TOOLS}


def listing() -> list[dict[str, Any]]:
    return [tool.listing() for tool in TOOLS]
