"""The vault's shared records as they are read: the writer leases and the status they give
(`leases`), the record of a lease another device removed (`removals`), writes found under another
computer's lease (`overlaps`), the per-device journal's entries and readers (`journal`), and the one
tolerant way a folder of per-device record files is read (`devicefiles`). Read-only: doctor, `lease
status`, `log` and the sync read here without loading the write path; `store` builds its writes of
these same records on these types and parsers, so each format has one reader.

Never imports: continuity.store, continuity.sync, continuity.memory, continuity.brief,
continuity.hook, continuity.recall, continuity.health, continuity.trust, continuity.outbox,
continuity.server, continuity.cli, typer, click, portalocker.
"""
