"""The recall evaluation's data: a vault of one developer's notes and the queries judged against it.

`notes/*.txt` hold the notes in a compact form, one file per project (scope `project`), one for
notes that hold everywhere (scope `global`) and one per device (its `50-devices/<device>/notes/`,
scope `device`). A note starts with a line `### <id> <type> <created date>`, then optional
`tags:`, `aliases:` and `superseded_by:` lines, a `# Title` line, and its body up to the next
`###`. Lines starting with `#` before the first note are comments.

`queries.txt` holds one query a line: `kind | project | device | query | wanted ids | stale id`,
where `wanted ids` is `-` when no note answers it, and the optional last field names an older note
that the wanted one contradicts (it is not marked superseded, as happens in real vaults).

Both were written before recall's ranking was changed; see docs/recall.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
FOLDERS = {"fact": "30-memory/facts", "decision": "30-memory/decisions", "lesson": "30-memory/lessons"}
PROJECTS = ("ledgerly", "tidepool", "atlas-web")
# Each device's profile: the names a person uses for the computer.
DEVICES = {
    "ws-7950": ("Linux desktop at home", ["desktop", "workstation", "tower", "home PC", "Linux box"]),
    "mbp-m3": ("MacBook Pro laptop", ["laptop", "MacBook", "Mac", "notebook"]),
}


@dataclass
class EvalNote:
    id: str
    type: str
    created: str
    title: str
    body: str
    scope: str
    owner: str | None  # the project or device of a scoped note
    tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    superseded_by: str | None = None

    @property
    def rel(self) -> str:
        if self.scope == "device":
            return f"50-devices/{self.owner}/notes/{self.id}.md"
        return f"{FOLDERS[self.type]}/{self.id}.md"

    def visible(self, project: str, device: str) -> bool:
        """Whether recall may serve it to a query made in `project` on `device` (same rules as recall)."""
        if self.superseded_by:
            return False
        if self.scope == "project":
            return self.owner == project
        if self.scope == "device":
            return self.owner == device
        return True

    def markdown(self) -> str:
        meta: dict[str, object] = {
            "id": self.id,
            "type": self.type,
            "status": "superseded" if self.superseded_by else "approved",
            "title": self.title,
            "scope": self.scope,
        }
        if self.scope == "project":
            meta["project"] = self.owner
        if self.scope == "device":
            meta["device"] = self.owner
        meta["created"] = f"{self.created}T09:00:00Z"
        meta["verified"] = self.created
        meta["revalidate_by"] = "2099-01-01"
        if self.tags:
            meta["tags"] = self.tags
        if self.aliases:
            meta["aliases"] = self.aliases
        if self.superseded_by:
            meta["superseded_by"] = self.superseded_by
        lines = ["---", *(f"{key}: {json.dumps(value)}" for key, value in meta.items()), "---"]
        return "\n".join(lines) + f"\n# {self.title}\n\n{self.body.strip()}\n"


@dataclass(frozen=True)
class Query:
    kind: str
    project: str
    device: str
    text: str
    wanted: tuple[str, ...]
    stale: str | None


def _scope_of(name: str) -> tuple[str, str | None]:
    if name.startswith("device-"):
        return "device", name.removeprefix("device-")
    if name == "global":
        return "global", None
    return "project", name


def load_notes() -> list[EvalNote]:
    out: list[EvalNote] = []
    for file in sorted((HERE / "notes").glob("*.txt")):
        scope, owner = _scope_of(file.stem)
        for chunk in file.read_text(encoding="utf-8").split("\n### ")[1:]:
            head, *rest = chunk.strip("\n").split("\n")
            note_id, note_type, created = head.split()
            note = EvalNote(note_id, note_type, created, "", "", scope, owner)
            body: list[str] = []
            for line in rest:
                if not note.title and line.startswith("tags: "):
                    note.tags = [t.strip() for t in line[6:].split(",")]
                elif not note.title and line.startswith("aliases: "):
                    note.aliases = [a.strip() for a in line[9:].split(";")]
                elif not note.title and line.startswith("superseded_by: "):
                    note.superseded_by = line[15:].strip()
                elif not note.title and line.startswith("# "):
                    note.title = line[2:].strip()
                else:
                    body.append(line)
            note.body = "\n".join(body).strip()
            out.append(note)
    return out


def load_queries() -> list[Query]:
    out: list[Query] = []
    for line in (HERE / "queries.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split("|")]
        kind, project, device, text, wanted = fields[:5]
        stale = fields[5] if len(fields) > 5 else None
        ids = () if wanted == "-" else tuple(w.strip() for w in wanted.split(","))
        out.append(Query(kind, project, device, text, ids, stale))
    return out


def check(notes: list[EvalNote], queries: list[Query]) -> None:
    """Every wanted note exists and is visible where the query is made; ids are unique."""
    by_id = {n.id: n for n in notes}
    if len(by_id) != len(notes):
        raise SystemExit("duplicate note ids in the evaluation")
    for q in queries:
        for wanted in (*q.wanted, *([q.stale] if q.stale else [])):
            note = by_id.get(wanted)
            if note is None:
                raise SystemExit(f"query {q.text!r}: no note {wanted}")
            if not note.visible(q.project, q.device):
                raise SystemExit(f"query {q.text!r}: {wanted} is not visible in {q.project} on {q.device}")


def device_profile(device: str) -> str:
    title, aliases = DEVICES[device]
    return (
        f"---\nid: device-{device}\ntype: device\ndevice: {device}\nstatus: approved\nscope: device\n"
        f'created: "2024-09-01T09:00:00Z"\ntitle: {json.dumps(title)}\naliases: {json.dumps(aliases)}\n---\n'
        f"# Device {device}\n\n## Brief\n\n- The {title}.\n"
    )


def write_vault(root: Path, notes: list[EvalNote]) -> None:
    """The notes as a vault (folders as `lifecycle init` makes them), plus each device's profile."""
    for folder in (*FOLDERS.values(), *(f"50-devices/{d}/notes" for d in DEVICES)):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for project in PROJECTS:
        (root / "10-project" / project).mkdir(parents=True, exist_ok=True)
    for device in DEVICES:
        (root / f"50-devices/{device}/DEVICE.md").write_text(device_profile(device), encoding="utf-8")
    for note in notes:
        (root / note.rel).write_text(note.markdown(), encoding="utf-8")
