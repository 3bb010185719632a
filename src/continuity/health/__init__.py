"""`lifecycle doctor`: every check of whether restoration is ready here (`doctor`, and a current
handoff that names the expiring outbox, `outbox_paths`, a Git vault's sync state, `sync_state`) and
the report it returns (`report`). Checks only: `doctor --fix` writes through `store.cleanup`.

Never imports: continuity.store.writer, continuity.cli, typer, click.
"""
