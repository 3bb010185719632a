"""The delivery outbox, `output/`: its activation record, lock and times (`folder`), delivering and
inspecting packages (`package`), and the sweep with its hourly scheduler entry (`sweep`). Not
memory: packages live seven days and are never loaded.

Never imports: continuity.brief, continuity.hook, continuity.memory, continuity.recall,
continuity.cli, typer, click, portalocker.
"""
