"""This computer's side of a checkout: the connection file (`.agent-vault`, `connfile`) and its
discovery across worktrees (`connection`), the repository root (`repo`), the repository's identity
that every clone shares (`identity`), and the user's cache and
state folders (`userdirs`). Standard library only: the hook's warm path reads all of it. So each
module here imports what a rarer path needs (git through subprocess, json, hashing, `pathlib`, the
user database) inside the function that needs it, and only when that path is taken.

Never imports: continuity.vault, continuity.gate, continuity.store, continuity.brief,
continuity.hook, continuity.cli, typer, click, portalocker, ruamel.
"""
