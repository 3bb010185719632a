"""The brief's sources, one record each: the one place a source of the startup brief is declared.

A source is a note every session start may show: where it lives in the vault, its byte cap (the
spec's numbers, kept in `limits` because the startup hook reads them), the `type` its frontmatter
must carry, the events that show it, when it is left out if the brief would pass its ceiling,
whether `lifecycle edit` changes it, and what doctor tells the person when it is missing or still
holds only its template's placeholder text.

Every other view of the sources is derived from `SOURCES`, never restated: which sources an event
shows and in what order (`shown_in`), which are left out first (`left_out_order`), the files the
startup cache stamps, doctor's hints and caps, the profiles `lifecycle edit` accepts with their caps,
and the cap `lifecycle scan` and the conflict resolver apply to a file (`holding`). So adding a
source is one entry here and its cap in `limits`; the brief's code gives it a section by itself.

Standard library only and cheap to import: the startup hook's cold path reads it (the warm path,
which answers from the cache's record, does not import it). A record is a `NamedTuple`, immutable like
a frozen dataclass, because `typing` is loaded on that path already and `dataclasses` is not.
"""

from __future__ import annotations

from typing import NamedTuple

from continuity import limits
from continuity.names import SESSION_START, SUBAGENT_START
from continuity.vault import layout

# What stands for the connection's ids in a path; the frontmatter key of the same name must match it.
LABELS = ("project", "device")


class Source(NamedTuple):
    """One source of the brief. `path` is vault-relative; `{project}` and `{device}` stand for this
    connection's ids. A source whose `folder` is true is a folder of notes of which one is shown (the
    handoffs: `memory.handoff` chooses), and its `path` names the folder."""

    name: str  # also the `type` its frontmatter must carry (`note_type`)
    path: str
    cap_bytes: int
    events: tuple[str, ...]
    # Under a ceiling, sources are left out whole, the lowest rank first. Ranks only need to differ;
    # they go in tens so that a new source takes its place between two others without renumbering.
    left_out_rank: int
    editable: bool  # changed through `lifecycle edit NAME`, which applies `cap_bytes`
    missing_hint: str | None  # doctor's remedy when the file is missing; None: missing is normal
    placeholder_hint: str  # doctor's remedy when it holds only its template's placeholder text
    folder: bool = False

    @property
    def note_type(self) -> str:
        """The `type` its frontmatter must carry: a source's type is its name (`type: soul`)."""
        return self.name

    @property
    def label(self) -> str | None:
        """The frontmatter key that must name this connection's id (`project: ID`), when the path
        holds one: a profile copied from another project's or device's folder is not shown."""
        return next((key for key in LABELS if "{" + key + "}" in self.path), None)

    @property
    def shared(self) -> bool:
        """Written by every computer that syncs the vault (not one device's own file), so an edit
        asks that other writers be stopped first."""
        return "{device}" not in self.path

    @property
    def may_be_missing(self) -> bool:
        """A missing file is no problem (no handoff yet: nothing to resume), not a partial brief."""
        return self.missing_hint is None

    def at(self, project: str = "", device: str = "") -> str:
        """The vault-relative path for this connection's project and device."""
        return self.path.format_map({"project": project, "device": device})

    def holds(self, rel: str) -> bool:
        """Whether the vault-relative `rel` is this source's file, for any project and device (for a
        folder source: any file under its folder)."""
        if self.folder:
            return rel.startswith(self.path + "/")
        want, parts = self.path.split("/"), rel.split("/")
        placeholders = {"{" + key + "}" for key in LABELS}
        return len(want) == len(parts) and all(w in placeholders or w == p for w, p in zip(want, parts, strict=True))


SOUL = Source(
    name="soul",
    path=f"{layout.SYSTEM}/SOUL.md",
    cap_bytes=limits.SOUL_CAP_BYTES,
    events=(SESSION_START,),
    left_out_rank=50,
    editable=True,
    missing_hint="restore it from your sync history or copy vault-template/00-system/SOUL.md",
    placeholder_hint="write its ## Brief section (lifecycle edit soul)",
)
PREFERENCES = Source(
    name="preferences",
    path=f"{layout.SYSTEM}/PREFERENCES.md",
    cap_bytes=limits.PREFERENCES_CAP_BYTES,
    events=(SESSION_START,),
    left_out_rank=20,
    editable=True,
    missing_hint="restore it from your sync history or copy vault-template/00-system/PREFERENCES.md",
    placeholder_hint="write its ## Brief section (lifecycle edit preferences)",
)
PROJECT = Source(
    name="project",
    path=f"{layout.PROJECTS}/{{project}}/PROJECT.md",
    cap_bytes=limits.PROJECT_CAP_BYTES,
    events=(SESSION_START, SUBAGENT_START),
    left_out_rank=40,
    editable=True,
    missing_hint="run 'lifecycle init' in this checkout to create it",
    placeholder_hint="write what an agent must know about this project in its ## Brief section",
)
DEVICE = Source(
    name="device",
    path=f"{layout.DEVICES}/{{device}}/DEVICE.md",
    cap_bytes=limits.DEVICE_CAP_BYTES,
    events=(SESSION_START, SUBAGENT_START),
    left_out_rank=10,
    editable=True,
    missing_hint="run 'lifecycle init' in this checkout to create it",
    placeholder_hint="write what an agent must know about this computer in its ## Brief section",
)
HANDOFF = Source(
    name="handoff",
    path=layout.HANDOFFS,
    cap_bytes=limits.HANDOFF_CAP_BYTES,
    events=(SESSION_START, SUBAGENT_START),
    left_out_rank=30,
    editable=False,
    missing_hint=None,
    placeholder_hint="write a real handoff with 'lifecycle handoff new --from FILE', or mark this one historical",
    folder=True,
)
# In the order the brief shows them.
SOURCES: tuple[Source, ...] = (SOUL, PREFERENCES, PROJECT, DEVICE, HANDOFF)
BY_NAME = {source.name: source for source in SOURCES}
EDITABLE = tuple(source for source in SOURCES if source.editable)


def names(sources: tuple[Source, ...]) -> tuple[str, ...]:
    return tuple(source.name for source in sources)


def shown_in(event: str) -> tuple[Source, ...]:
    """The sources `event` shows, in the brief's order."""
    return tuple(source for source in SOURCES if event in source.events)


def left_out_order(event: str) -> tuple[Source, ...]:
    """The sources `event` shows, in the order they are left out when the brief would pass a ceiling."""
    return tuple(sorted(shown_in(event), key=lambda source: source.left_out_rank))


def holding(rel: str) -> Source | None:
    """The source whose file the vault-relative `rel` is, if any (for the cap that applies to it)."""
    return next((source for source in SOURCES if source.holds(rel)), None)
