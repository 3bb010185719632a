"""Writing the vault: temporary-sibling writes and folder creation (`atomic`), the local lock and
taking, extending and releasing the writer lease (`lease`), the line one write adds to this device's
journal (`journal`), this device's own record files of lease removals and overlaps (`records`), and
the one write path (`writer`: lock, lease refusal, secret gate, atomic write, journal line), the
checks of an original kept byte for byte (`documents`); `init` (`onboard`) and `doctor --fix`
(`cleanup`) write through it. The formats and readers of those records are `continuity.records`,
which the writes here build on: one reader each, and the read side never loads this package.

Never imports: continuity.memory, continuity.brief, continuity.hook, continuity.recall,
continuity.health, continuity.trust, continuity.outbox, continuity.cli, typer, click.
"""
