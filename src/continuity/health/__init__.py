"""`lifecycle doctor`: every check of whether restoration is ready here, each a function of what
doctor resolved once (`context`), listed in report order in `doctor.CHECKS` (the hot sources there;
the policy files, the briefs and the handoff set, `brief_checks`; the lease, `lease_state`; a current
handoff that names the expiring outbox, `outbox_paths`; the connection's project against this
repository's identity, `project_identity`; a Git vault's sync state, `sync_state`; the warm notes,
`memory_notes`) and the report it returns (`report`); and `lifecycle scan`, the secret gate over notes
as the loader and the write path apply it (`notescan`) over the files it is given or the whole vault
(`scanfiles`). Checks only: `doctor --fix` writes through `store.cleanup`, called by the CLI. The
package imports nothing from continuity.store: leases, removals and overlaps are read through
`continuity.records` (tests/test_layout.py holds it to that, type-only imports included).

Never imports: continuity.store.writer, continuity.cli, typer, click.
"""
