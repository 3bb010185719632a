"""The hourly `lifecycle sync` entry (installed by `lifecycle sync --install-hourly`, pinned by digest).

The scheduler's command checks this file's SHA-256 before running it, the way the outbox sweeper's
does; it runs in the checkout (so the checkout's connection names the vault) and prints nothing
unless the sync fails or leaves a conflict copy, when cron mails what it printed.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# A checkout keeps the package in src/ beside scripts/; an installed package carries this file in
# continuity/_scripts/, two folders below the folder that holds `continuity`.
SRC = (
    os.path.dirname(os.path.dirname(HERE))
    if os.path.basename(HERE) == "_scripts"
    else os.path.join(os.path.dirname(HERE), "src")
)
sys.path.insert(0, SRC)

from continuity.cli.application import app  # noqa: E402

if __name__ == "__main__":
    app(["sync", "--quiet"], prog_name="lifecycle")
