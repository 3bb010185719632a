"""Writing the vault: temporary-sibling writes and folder creation (`atomic`), the local lock and the
writer leases (`lease`) with the record of another device's lease removed (`removals`), the per-device
journal (`journal`), and the one write path (`writer`: lock, lease refusal, secret gate, atomic write,
journal line), the checks of an original kept byte for byte (`documents`); `init` (`onboard`) and
`doctor --fix` (`cleanup`) write through it.

Never imports: continuity.memory, continuity.brief, continuity.hook, continuity.recall,
continuity.health, continuity.trust, continuity.outbox, continuity.cli, typer, click.
"""
