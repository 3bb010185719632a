"""The vault as files: its layout (folder and file names), the one capped, link-refusing way to read a file
from it, frontmatter and Markdown sections, sync-engine conflict copies, and the bounded scan and
storage budget over it; the templates' placeholder sentences (`placeholders`), the projects and the
repositories they record (`projects`), whether a path is a vault (`locate`), and the registry of the
brief's sources, one record each, that the brief, doctor, scan and edit read (`registry`), and where the
note templates and the new vault's skeleton are (`resources`). Read-only:
nothing here writes the vault.

Never imports: continuity.store, continuity.gate, continuity.brief, continuity.hook, continuity.cli,
typer, click, portalocker.
"""
