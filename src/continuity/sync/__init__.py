"""A vault kept in a private Git remote: running git with every outcome-changing setting pinned
(`git`), which remotes are acceptable (`remote`), this computer's changes as one gated commit
(`commit`), integrating two histories without a conflict marker (`combine`), moving the working tree
so that a killed sync is finished by the next (`recovery`), the sync itself and setting a vault up
(`engine`), the vault's ignore rules, which no line that arrived may use to hide a note (`ignore`),
what doctor reports (`state`), the lease made exclusive by the push (`leases`) and the
optional hourly entry (`schedule`).

Never imports: continuity.brief, continuity.hook, continuity.health, continuity.recall,
continuity.trust, continuity.cli, continuity.store.writer, typer, click.
"""
