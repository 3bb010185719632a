"""What a person trusts before a hook runs: the text of each pinned hook command (`hookcommand`), the
pin of the startup script and of every module it loads (`pin`), and the handlers merged into each
harness's configuration (`harness`).

Never imports: continuity.brief, continuity.hook, continuity.cli, typer, click, portalocker.
"""
