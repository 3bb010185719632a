"""A seeded, randomized interleaving of three computers writing one Git vault, with syncs killed mid-way.

Every step is one of: a note of the device's own, a handoff, a bare journal append, an edit of a
shared note (as a person in Obsidian would, outside `lifecycle`), a planted secret, a sync, a lease
attempt or release, or a real `lifecycle sync` subprocess killed (SIGKILL, its git children too) at a
random moment. After every step: no conflict marker in any note of any computer, never two unexpired
leases at the remote's tip, and none of the planted secrets anywhere in the remote's history. At the
end, once every computer has synced, nothing any computer wrote is lost from any computer's view.
Set CONTINUITY_SYNC_SEED to replay another interleaving.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import write_connection
from syncvaults import Device, devices, git, remote_history

from continuity import limits
from continuity.errors import LeaseHeld
from continuity.local import connection
from continuity.records import leases as lease_records
from continuity.store import journal, lease, writer
from continuity.sync import leases
from continuity.vault import access

STEPS = 200
SEED = int(os.environ.get("CONTINUITY_SYNC_SEED", "18"))
SHARED = ("30-memory/facts/shared-a.md", "30-memory/facts/shared-b.md")
ACTIONS = (
    ("own_note", 24),
    ("handoff", 6),
    ("journal", 5),
    ("shared", 12),
    ("secret", 4),
    ("sync", 30),
    ("lease", 8),
    ("release", 4),
    ("kill", 7),
)
RUN_SYNC = "from continuity.cli.application import app; app(prog_name='lifecycle')"


def note(body: str) -> str:
    return f"---\ntype: fact\nstatus: approved\n---\n{body}\n"


class World:
    def __init__(self, tmp_path: Path, rng: random.Random) -> None:
        self.rng = rng
        self.remote, self.devices = devices(tmp_path, 3)
        self.conns: dict[str, Path] = {}
        for device in self.devices:
            conn = tmp_path / f"{device.name}.agent-vault"
            write_connection(conn, connection.render_connection(device.vault, device.name, "demo", sys.executable))
            self.conns[device.name] = conn
        self.counter = 0
        self.own: dict[str, str] = {}  # rel -> latest content (each written by one device only)
        self.shared_versions: set[str] = set()
        self.superseded: set[str] = set()
        self.secrets: list[str] = []

    def unique(self, device: Device) -> str:
        self.counter += 1
        return f"{device.name} wrote this at step {self.counter} ({self.rng.random():.6f})"

    def ctx(self, device: Device) -> writer.WriteContext:
        return writer.WriteContext(device.vault, device.name, "demo")

    def own_note(self, device: Device) -> None:
        rel = f"50-devices/{device.name}/notes/n{self.rng.randrange(4)}.md"
        text = note(self.unique(device))
        try:
            with writer.transaction(self.ctx(device)) as tx:
                if (device.vault / rel).exists():
                    tx.replace(rel, text, op="note.edit", note_id=None, cap=limits.LIFECYCLE_TEXT_CAP_BYTES)
                else:
                    tx.create(rel, text, op="note.new", note_id=None, cap=limits.LIFECYCLE_TEXT_CAP_BYTES)
        except LeaseHeld:
            return  # another computer's lease: writes refuse, as they should
        self.own[rel] = text

    def handoff(self, device: Device) -> None:
        self.counter += 1
        rel = f"20-state/handoffs/20261202T0000{self.counter:04d}Z-{device.name}-step.md"
        text = (
            f"---\nid: h{self.counter}-{device.name}\ntype: handoff\nstatus: current\nproject: demo\n"
            f"device: {device.name}\ncreated: 2026-12-02T00:00:00Z\n---\n## Goal and status\n{self.unique(device)}\n"
        )
        try:
            with writer.transaction(self.ctx(device)) as tx:
                tx.create(rel, text, op="handoff.new", note_id=None, cap=limits.HANDOFF_CAP_BYTES)
        except LeaseHeld:
            return
        self.own[rel] = text

    def journal(self, device: Device) -> None:
        with lease.local_lock(device.vault):
            journal.append(
                device.vault / access.journal(device.name),
                device.name,
                "note.verify",
                None,
                "x.md",
                None,
                lease_records.utcnow(),
            )

    def shared(self, device: Device) -> None:
        rel = self.rng.choice(SHARED)
        target = device.vault / rel
        if target.exists():
            self.superseded.add(target.read_text())
        text = note(self.unique(device))
        device.write(rel, text)
        self.shared_versions.add(text)

    def secret(self, device: Device) -> None:
        token = "AKIA" + "".join(self.rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
        self.secrets.append(token)
        device.write(f"30-memory/facts/leak-{len(self.secrets)}.md", note(f"key {token}"))

    def sync(self, device: Device) -> None:
        device.sync()

    def lease(self, device: Device) -> None:
        try:
            writer.acquire_lease(self.ctx(device), self.rng.choice((60, 600, 3600)))
            leases.publish(device.vault, device.name)
        except LeaseHeld:
            pass

    def release(self, device: Device) -> None:
        try:
            writer.release_lease(self.ctx(device))
            leases.publish(device.vault, device.name, releasing=True)
        except LeaseHeld:
            pass

    def kill(self, device: Device) -> None:
        env = dict(os.environ, AGENT_VAULT_CONNECTION=str(self.conns[device.name]))
        proc = subprocess.Popen(
            [sys.executable, "-c", RUN_SYNC, "sync"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        time.sleep(self.rng.uniform(0.0, 1.2))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        # The server is not the computer that lost power: a real one finishes or drops the push itself.
        for lock in (self.remote / "refs").rglob("*.lock"):
            lock.unlink()

    def check(self) -> None:
        for device in self.devices:
            for path in device.vault.rglob("*.md"):
                if ".git" in path.parts:
                    continue
                for line in path.read_text("utf-8", "replace").splitlines():
                    assert not line.startswith(("<<<<<<<", ">>>>>>>", "=======")), path
        now = lease_records.utcnow()
        listing = git(self.remote, "ls-tree", "--name-only", "main", ".continuity/leases/")
        unexpired = []
        for rel in listing.split():
            doc = json.loads(git(self.remote, "show", f"main:{rel}"))
            data = json.dumps(doc, indent=2, ensure_ascii=False).encode() + b"\n"
            if lease_records.parse_lease(data, rel).expires > now:
                unexpired.append(rel)
        assert len(unexpired) <= 1, unexpired
        history = remote_history(self.remote)
        for token in self.secrets:
            assert token not in history


def _all_texts(device: Device) -> list[str]:
    return [path.read_text() for path in device.vault.rglob("*.md") if ".git" not in path.parts]


def test_randomized_interleaving(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    world = World(tmp_path, rng)
    names = [name for name, _weight in ACTIONS]
    weights = [weight for _name, weight in ACTIONS]
    done: dict[str, int] = dict.fromkeys(names, 0)
    for _step in range(STEPS):
        action = rng.choices(names, weights)[0]
        device = rng.choice(world.devices)
        getattr(world, action)(device)
        done[action] += 1
        world.check()
    assert all(done.values()), done  # every kind of step happened
    for _round in range(2):
        for device in world.devices:
            device.sync()
    world.check()
    journals = {d.name: (d.vault / access.journal(d.name)).read_text() for d in world.devices}
    for device in world.devices:
        texts = _all_texts(device)
        for rel, text in world.own.items():
            assert (device.vault / rel).read_text() == text, (device.name, rel)
        for name, lines in journals.items():
            assert (device.vault / access.journal(name)).read_text() == lines
        for version in world.shared_versions - world.superseded:
            assert version in texts, (device.name, version)
