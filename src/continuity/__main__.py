"""`python -m continuity` is `lifecycle`: what a user-scope MCP registration runs with this exact interpreter."""

from continuity.cli import main

main()
