"""`lifecycle doctor`: every check of whether restoration is ready here (`doctor`, and a current
handoff that names the expiring outbox, `outbox_paths`; the connection's project against this
repository's identity, `project_identity`) and the report it returns (`report`). Checks
only: `doctor --fix` writes through `store.cleanup`.

Never imports: continuity.store.writer, continuity.cli, typer, click.
"""
