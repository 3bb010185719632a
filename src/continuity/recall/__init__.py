"""Warm retrieval: which approved notes are eligible and what is kept of each (`eligible`), the
per-machine SQLite FTS5 index (`index`) and where it lives (`location`), term normalization
(`terms`), what a query means beyond its words (`concepts`), how notes are ranked and when nothing
fits (`rank`), the search that serves whole notes within the allowance (`search`), the inotify
watcher that lets a long-lived process skip the index's walk when nothing changed (`watch`), and the
search of every device's journal (`log`, `journal_search`). Read-only: it imports nothing from
continuity.store, and reads the journal's entries through `continuity.records`.

Never imports: continuity.store, continuity.store.writer, continuity.cli, typer, click, portalocker.
"""
