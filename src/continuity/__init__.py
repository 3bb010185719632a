"""continuity: a private, reviewed memory for coding agents that follows a person across computers."""

__version__ = "0.1.0"
