"""What a person trusts before a hook runs: the text of each pinned hook command (`hookcommand`), the
pin of the startup script and of every module it loads (`pin`), the handlers merged into each
harness's configuration (`harness`), and the MCP server's registration there (`mcpconfig`); `setup`
composes those with a pointer block in the instruction file (`instructions`) and takes them out again
(`undo`); `plugin` keeps the repository's Codex and Claude Code plugins pinned and tells whether one is
enabled.

Never imports: continuity.brief, continuity.hook, continuity.cli, typer, click, portalocker.
"""
