"""The startup brief: its sources gathered and validated (`sources`), vault text made safe inside the
wrapper (`escape`), the brief rendered within its ceilings (`render`), a checkout's folder turned
into its brief (`build`), the startup cache (`record`, read by the warm path with the standard
library; `cache`, the cold path that writes it) and the hook's JSON shape (`envelope`). Read-only:
it never writes the vault and never takes the lease.

Never imports: continuity.store, continuity.hook, continuity.cli, typer, click, portalocker.
"""
