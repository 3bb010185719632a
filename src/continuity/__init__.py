"""continuity: a private, reviewed memory for coding agents that follows a person across computers.

Sub-packages by concept, each saying in its docstring what it owns and what it never imports:
`local` (this computer: the connection, the repository root, the user's folders), `vault` (the vault
as files), `gate` (the secret gate), `store` (writing the vault), `memory` (the improvement loop and
handoffs), `brief` (the startup brief), `hook` (what runs in the hooks), `recall` (warm retrieval),
`trust` (the pinned hook commands), `outbox` (the delivery outbox), `health` (doctor), `server` (the MCP
server) and `cli`.
Beside them, what every package may use: `errors`, `limits`, `ids`, `names` (the harnesses and their hook
events), `safeio` and `lightjson` (JSON without importing `json`, for the warm start).
"""

__version__ = "0.1.0"
