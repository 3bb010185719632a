"""The hourly `lifecycle sync` entry (installed by `lifecycle sync --install-hourly`, pinned by digest).

The scheduler's command checks this file's SHA-256 before running it, the way the outbox sweeper's
does; it runs from the checkout (so the checkout's connection names the vault) and prints nothing
unless the sync fails, when cron mails the one-line error.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from continuity.cli.application import app

if __name__ == "__main__":
    app(["sync", "--quiet"], prog_name="lifecycle")
