"""`lifecycle doctor`: every check of whether restoration is ready here (`doctor`, and a current
handoff that names the expiring outbox, `outbox_paths`; the connection's project against this
repository's identity, `project_identity`; a Git vault's sync state, `sync_state`) and the report it
returns (`report`); and `lifecycle scan`, the secret gate over notes as the loader and the write path
apply it (`notescan`) over the files it is given or the whole vault (`scanfiles`). Checks only:
`doctor --fix` writes through `store.cleanup`.

Never imports: continuity.store.writer, continuity.cli, typer, click.
"""
