"""The reviewed improvement loop: candidates, approval, supersede, archive and revalidation
(`review`), how an id a person typed finds its note and how a new note gets one (`lookup`), edits
of the soul and preferences (`edits`), handoffs: reading and selecting them (`handoff`) and
writing a new one (`handoff_write`), and originals kept on purpose from a delivered outbox package
(`preserve`, the checked plan; `preserve_write`, the write). Every write goes through `store.writer`.

Never imports: continuity.brief, continuity.hook, continuity.recall, continuity.health,
continuity.cli, typer, click.
"""
