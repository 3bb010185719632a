"""The secret gate: every reader and writer of the vault asks `secrets.scan_text` whether a text holds
something secret-like. One detector family a module (`rules` for token formats, with their table in
`formats`; `structures`, `assignments`, `context`, `labels`, `values`, `services` for service-named
ids, `encoded` for base64-wrapped tokens and keys), the generic layer that needs no format (`generic`,
with its value test in `issued`), the document they all read (`doc`), the value tests they share
(`shapes`), and the adapter for detect-secrets' own plugins. The gate judges text as
`continuity.characters` reads it (one classification of invisible and look-alike characters, shared
with the brief's escaping). Pure functions over text: a finding names a line and a detector, never the value.

Never imports: continuity.vault, continuity.local, continuity.store, continuity.brief,
continuity.hook, continuity.cli, typer, click, portalocker, ruamel.
"""
