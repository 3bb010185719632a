"""The test-only switch that turns the secret gate's format table off, to measure what it finds blind.

The format table is what names a credential by its issuer's shape: the token rows of
`continuity.gate.formats` (run by `rules.token_candidates`, also on decoded text) and the formats that
only detect-secrets' plugins know. With them off, every finding comes from the generic layer (the
structure around a value and the value's own randomness), which is what a credential of a service
nobody listed meets. The switch patches module attributes for the duration of a `with` block; nothing
in the package reads an environment variable or a flag for it, so no user setting can turn it on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from continuity.gate import detectsecrets, rules, secrets


@contextmanager
def format_table_off() -> Iterator[None]:
    saved = rules.RULES, rules._PREFIXES, secrets._FINDERS
    rules.RULES, rules._PREFIXES = (), ()
    secrets._FINDERS = tuple(finder for finder in secrets._FINDERS if finder is not detectsecrets.candidates)
    try:
        yield
    finally:
        rules.RULES, rules._PREFIXES, secrets._FINDERS = saved
