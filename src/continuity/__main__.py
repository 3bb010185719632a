"""`python -m continuity` is `lifecycle`: what a user-scope MCP registration runs with this exact interpreter."""

from continuity.cli import main

if __name__ == "__main__":  # importing the module (as a walk of the package does) runs nothing
    main()
