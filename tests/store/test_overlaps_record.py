"""A device's record of writes made under another's lease keeps what it promises to keep.

The record holds up to `OVERLAPS_KEPT` overlaps and the ids marked reviewed; it was once read with a
lease file's 4 KiB cap, so after about six overlaps it read as absent, the next write started afresh,
and overlaps the person had reviewed came back in doctor.
"""

from __future__ import annotations

from pathlib import Path

from continuity import tunables
from continuity.records import overlaps
from continuity.store import records


def _overlap(n: int) -> overlaps.Overlap:
    ops = tuple((f"note.new.{k}", f"30-memory/facts/note-{n}-{k}.md", "2026-12-07T10:00:00Z") for k in range(3))
    return overlaps.Overlap(f"ov-{n:03d}", "dev-b", "dev-a", "exporter port", "2026-12-07T09:00:00Z",
                            "2026-12-07T11:00:00Z", ops)  # fmt: skip


def test_a_record_past_a_lease_files_cap_keeps_every_overlap_and_review(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    count = 40
    for n in range(count):
        records.record_overlaps(vault, "dev-b", [_overlap(n)])
    record = vault / overlaps.record_rel("dev-b")
    assert record.stat().st_size > tunables.LEASE_FILE_CAP_BYTES
    found, reviewed = overlaps.read_all(vault)
    assert [item.id for item in found] == [f"ov-{n:03d}" for n in range(count)]
    records.mark_reviewed(vault, "dev-b", ["ov-000", "ov-001"])
    records.record_overlaps(vault, "dev-b", [_overlap(count)])
    found, reviewed = overlaps.read_all(vault)
    assert len(found) == count + 1 and {"ov-000", "ov-001"} <= reviewed
    assert [item.id for item in overlaps.open_overlaps(vault)][:1] == ["ov-002"]
