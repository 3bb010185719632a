"""What runs in the harnesses' hooks: the startup script's full path (`entry`), the warm path
(`warm`), the full hook's answer (`run`), hook state and compaction recovery (`hookstate`), the Stop
nudge (`nudge`) and the tool events it counts (`tool_events`), delivery receipts (`receipts`), and
the re-run with the connection's Python when an import fails (`reexec`). Hooks never write the
vault. Every hook event is waited for, so each module here imports what one event alone needs (the
brief, the connection, receipts, the re-run, git) inside the function that answers that event, and
only when that event gets there: a turn event never pays for the brief.

Never imports: continuity.store, continuity.cli, typer, click, portalocker.
"""
