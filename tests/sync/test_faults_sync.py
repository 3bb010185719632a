"""Two replicas of one vault behind a simulated sync engine: conflict copies, half-written files, two
current handoffs written in the same minute, and leases seen from each computer.

`Syncer` copies changed files from one replica to the other when told to (so the delay is explicit),
and when both sides changed a file since the last sync it keeps the receiver's version and writes the
sender's under the conflict-copy name of the chosen engine, exactly as that engine would.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import shutil
from pathlib import Path

import pytest
from briefkit import (
    DEVICE,
    HANDOFF_DIR,
    OTHER_DEVICE,
    PROJECT,
    SESSION,
    SOURCE_REL,
    connection_file,
    handoff_note,
    hot_note,
    make_vault,
    write,
)
from writer_support import write_lease

from continuity.brief import render, sources
from continuity.health import doctor
from continuity.memory import handoff
from continuity.records import leases as lease_records
from continuity.vault.conflicts import ENGINES, conflict_engine

NOW = dt.datetime(2026, 11, 30, 12, 0, 0, tzinfo=dt.timezone.utc)


def conflict_name(name: str, engine: str) -> str:
    stem, ext = name.rsplit(".", 1)
    ext = "." + ext
    return {
        "google-drive": f"{stem} (1){ext}",
        "dropbox": f"{stem} (conflicted copy 2026-11-30){ext}",
        "syncthing": f"{stem}.sync-conflict-20261130-120000-ABCDEFG{ext}",
        "onedrive": f"{stem}-LAPTOP{ext}",
        "icloud": f"{stem} 2{ext}",
    }[engine]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Syncer:
    """A two-replica sync engine with an explicit delay: nothing moves until `sync` is called."""

    def __init__(self, a: Path, b: Path, engine: str) -> None:
        self.roots = {"a": a, "b": b}
        self.engine = engine
        self.base: dict[str, str] = {rel: _digest(a / rel) for rel in self._files(a)}

    @staticmethod
    def _files(root: Path) -> set[str]:
        return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}

    def sync(self, src: str, dst: str, *, half: set[str] | None = None) -> list[str]:
        """Carry `src`'s changes to `dst`; `half` files arrive half-written. Returns conflict copies made."""
        s, d = self.roots[src], self.roots[dst]
        made = []
        for rel in sorted(self._files(s)):
            sd = _digest(s / rel)
            if sd == self.base.get(rel):
                continue
            target = d / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists() and _digest(target) not in (self.base.get(rel), sd):
                copy = target.with_name(conflict_name(target.name, self.engine))
                shutil.copy2(s / rel, copy)
                made.append(copy.relative_to(d).as_posix())
                continue
            data = (s / rel).read_bytes()
            target.write_bytes(data[: len(data) // 2] if half and rel in half else data)
        for rel in self._files(s):
            self.base[rel] = _digest(s / rel)
        return made


@pytest.fixture
def replicas(tmp_path: Path) -> tuple[Path, Path]:
    a = make_vault(tmp_path / "replica-a")
    b = tmp_path / "replica-b"
    shutil.copytree(a, b)
    return a, b


def cold_brief(root: Path, device: str = DEVICE) -> render.Brief:
    """The brief straight from the replica: the sources as validated, without any cache."""
    views, notices = sources.validate(sources.gather(root, PROJECT, device, SESSION))
    return render.render(SESSION, "codex", views, notices)


def brief_text(root: Path, device: str) -> str:
    return cold_brief(root, device).text


def doctor_checks(root: Path, device: str, tmp_path: Path) -> dict[str, tuple[str, str]]:
    conn = connection_file(tmp_path / f"conn-{device}-{root.name}.yaml", root, device=device)
    report = doctor.run(tmp_path, {"AGENT_VAULT_CONNECTION": str(conn), "HOME": str(tmp_path / "home")}, now=NOW)
    return {c.id: (c.level, c.message) for c in report.checks}


@pytest.mark.parametrize("engine", ENGINES)
def test_conflict_copies_are_never_sources_and_doctor_names_them(
    engine: str, replicas: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = replicas
    syncer = Syncer(a, b, engine)
    project_rel = SOURCE_REL["project"]
    # Both computers edit the project profile and the current handoff before either syncs.
    write(a, project_rel, hot_note("project", "- fromdevicea project"))
    write(b, project_rel, hot_note("project", "- fromdeviceb project"))
    handoff_rel = f"{HANDOFF_DIR}/20250102T030405Z-{DEVICE}-start.md"
    write(a, handoff_rel, handoff_note("2025-01-02T03:04:05Z", goal="fromdevicea handoff"))
    write(b, handoff_rel, handoff_note("2025-01-02T03:04:05Z", goal="fromdeviceb handoff"))
    made = syncer.sync("a", "b")
    assert len(made) == 2
    names = {rel.rsplit("/", 1)[1] for rel in made}
    for rel in made:
        folder = b / rel.rsplit("/", 1)[0]
        assert conflict_engine(rel.rsplit("/", 1)[1], lambda n, f=folder: (f / n).exists()) == engine, names

    text = brief_text(b, DEVICE)
    assert "fromdeviceb project" in text and "fromdeviceb handoff" in text
    assert "fromdevicea" not in text, "a conflict copy was loaded as a source"
    chosen = handoff.select(handoff.read_all(b), PROJECT)
    assert all(h.rel not in made for h in chosen.current), "a conflict copy counted as a current handoff"

    checks = doctor_checks(b, DEVICE, tmp_path)
    level, message = checks["scan.conflicts"]
    assert level == "warn"
    for rel in made:
        assert rel in message, (rel, message)


def test_half_written_hot_source_is_left_out_then_restored(replicas: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = replicas
    syncer = Syncer(a, b, "syncthing")
    write(a, SOURCE_REL["soul"], hot_note("soul", "- newsoulmarker " + "word " * 200))
    syncer.sync("a", "b", half={SOURCE_REL["soul"]})
    brief = cold_brief(b)
    assert "newsoulmarker" not in brief.text or brief.status in ("partial", "restored")
    assert brief.text.count("<private-memory") == 1 and brief.text.count("</private-memory") == 1
    syncer.base.pop(SOURCE_REL["soul"])
    syncer.sync("a", "b")
    brief = cold_brief(b)
    assert brief.status == "restored" and "newsoulmarker" in brief.text


def test_half_written_newest_handoff_falls_back_to_the_newest_valid(
    replicas: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = replicas
    syncer = Syncer(a, b, "dropbox")
    rel = f"{HANDOFF_DIR}/20261130T115900Z-{OTHER_DEVICE}-later.md"
    write(a, rel, handoff_note("2026-11-30T11:59:00Z", hid="h-later", device=OTHER_DEVICE, goal="laterhandoff"))
    syncer.sync("a", "b", half={rel})
    text = brief_text(b, DEVICE)
    assert "laterhandoff" not in text
    assert "h-start" in text
    checks = doctor_checks(b, DEVICE, tmp_path)
    assert rel in checks["handoffs.invalid"][1]


def test_two_devices_write_current_handoffs_in_the_same_minute(replicas: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = replicas
    syncer = Syncer(a, b, "google-drive")
    ra = f"{HANDOFF_DIR}/20261130T120005Z-{DEVICE}-fix-login.md"
    rb = f"{HANDOFF_DIR}/20261130T120040Z-{OTHER_DEVICE}-fix-logout.md"
    write(a, ra, handoff_note("2026-11-30T12:00:05Z", hid="h-a", goal="handoffmarkera"))
    write(b, rb, handoff_note("2026-11-30T12:00:40Z", hid="h-b", device=OTHER_DEVICE, goal="handoffmarkerb"))
    # The old handoff is superseded on both sides the same way, so only the two new ones are current.
    old = f"{HANDOFF_DIR}/20250102T030405Z-{DEVICE}-start.md"
    for root in (a, b):
        write(root, old, handoff_note(status="superseded"))
    syncer.base[old] = _digest(a / old)
    assert syncer.sync("a", "b") == []
    assert syncer.sync("b", "a") == []
    for root, device in ((a, DEVICE), (b, OTHER_DEVICE)):
        text = brief_text(root, device)
        assert "handoffmarkerb" in text and "handoffmarkera" not in text  # the newest valid one
        level, message = doctor_checks(root, device, tmp_path)["handoffs"]
        assert level == "warn"
        assert ra in message and rb in message


def test_leases_on_two_replicas_report_what_each_computer_sees(replicas: tuple[Path, Path]) -> None:
    a, b = replicas
    syncer = Syncer(a, b, "onedrive")
    write_lease(a, DEVICE, NOW + dt.timedelta(hours=2), acquired=NOW)
    # Before the sync engine carries the lease, the other computer sees nothing: a lease cannot stop it.
    assert lease_records.status(a, DEVICE, NOW).state == "held"
    assert lease_records.status(b, OTHER_DEVICE, NOW).state == "none"
    syncer.sync("a", "b")
    assert lease_records.status(b, OTHER_DEVICE, NOW).state == "foreign"
    assert lease_records.status(b, OTHER_DEVICE, NOW + dt.timedelta(hours=3)).state == "stale"
    # Both computers took a lease before either synced: after the sync each sees the other's as foreign.
    write_lease(b, OTHER_DEVICE, NOW + dt.timedelta(hours=2), acquired=NOW)
    syncer.sync("b", "a")
    assert lease_records.status(a, DEVICE, NOW).state == "foreign"
    assert lease_records.status(b, OTHER_DEVICE, NOW).state == "foreign"
