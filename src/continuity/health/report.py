"""What `lifecycle doctor` returns: checks, and the report that turns them into an exit code and JSON.

Each check is an id, a level (`LEVELS`, SPEC section 7) and one line that says what to do. Every
message goes through `check`, which redacts anything secret-like and escapes non-printable
characters, so neither a secret nor a crafted vault file name can reach the terminal; the CLI's table
uses the same `printable` for the lines it adds. The JSON document is a contract (`version` 1, its
keys pinned by the tests). Tracebacks of checks that crashed (kept only under CONTINUITY_DEBUG=1) are
for stderr, never part of the JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from continuity.gate.secrets import redact

if TYPE_CHECKING:
    from continuity.vault.scan import ScanResult

LEVELS = ("ok", "warn", "error")
MAX_NAMED = 10  # names listed in one check's message before "and N more"


def printable(text: str) -> str:
    """One line, with every non-printable character shown as an escape instead of being emitted."""
    out = []
    for char in " ".join(text.split()):
        out.append(char if char.isprintable() else f"\\u{ord(char):04x}")
    return "".join(out)


@dataclass(frozen=True)
class Check:
    id: str
    level: str  # ok | warn | error
    message: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "level": self.level, "message": self.message}


def check(ident: str, level: str, message: str) -> Check:
    assert level in LEVELS
    return Check(ident, level, printable(redact(message)))


def names(items: list[str]) -> str:
    """Names, `MAX_NAMED` of them, then "and N more"."""
    shown = ", ".join(items[:MAX_NAMED])
    more = len(items) - MAX_NAMED
    return shown + (f" and {more} more" if more > 0 else "")


def described(invalid: list[tuple[str, str]]) -> str:
    """Unusable files as "path: why", `MAX_NAMED` of them, then "and N more"."""
    found = [message if rel in message else f"{rel}: {message}" for rel, message in invalid]
    more = len(found) - MAX_NAMED
    return "; ".join(found[:MAX_NAMED]) + (f"; and {more} more" if more > 0 else "")


@dataclass(frozen=True)
class Report:
    checks: tuple[Check, ...]
    resolved: dict[str, Any]
    connected: bool
    scan: ScanResult | None = None
    tracebacks: tuple[str, ...] = ()  # of crashed checks, under CONTINUITY_DEBUG=1 only

    @property
    def ok(self) -> bool:
        return not any(c.level == "error" for c in self.checks)

    def count(self, level: str) -> int:
        return sum(1 for c in self.checks if c.level == level)

    @property
    def scan_complete(self) -> bool:
        return self.scan is not None and self.scan.complete

    def exit_code(self, strict: bool) -> int:
        """3 when not connected; 1 with any error, or under `strict` any warning or incomplete scan."""
        if not self.connected:
            return 3
        if not self.ok:
            return 1
        if strict and (self.count("warn") or not self.scan_complete):
            return 1
        return 0

    def to_json(self) -> dict[str, Any]:
        result = self.scan
        return {
            "version": 1,
            "ok": self.ok,
            "checks": [c.to_json() for c in self.checks],
            "scan": {
                "entries": result.entries if result else 0,
                "dirs": result.dirs if result else 0,
                "complete": result.complete if result else False,
            },
            "resolved": self.resolved,
        }
