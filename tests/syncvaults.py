"""Real Git vaults for the sync tests: a bare remote in tmp_path and device clones of one vault."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from continuity.store import onboard
from continuity.sync import engine
from continuity.vault import layout, registry, resources

FAKE_TOKEN_PREFIX = "AKIA"


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True)
    return proc.stdout


def bare_remote(tmp_path: Path, name: str = "remote.git") -> Path:
    path = tmp_path / name
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    return path


def new_vault(path: Path, device: str) -> Path:
    """A fresh vault from the template, with this device's folder (what `init --new` creates)."""
    onboard.copy_template(resources.resource_dir("vault-template"), path)
    for rel in (*layout.ALL_DIRS, layout.device_dir(device) + "/notes"):
        (path / rel).mkdir(parents=True, exist_ok=True)
    (path / registry.DEVICE.at(device=device)).write_text(
        f"---\ntype: device\ndevice: {device}\n---\n## Brief\nThe {device} computer.\n"
    )
    return path


@dataclass
class Device:
    name: str
    vault: Path

    def sync(self) -> engine.SyncResult:
        return engine.sync(self.vault, self.name)

    def write(self, rel: str, text: str) -> None:
        target = self.vault / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def devices(tmp_path: Path, count: int) -> tuple[Path, list[Device]]:
    """A remote and `count` devices: the first makes its vault a Git vault, the others clone it."""
    remote = bare_remote(tmp_path)
    first = Device("dev-a", new_vault(tmp_path / "vault-a", "dev-a"))
    engine.connect_remote(first.vault, first.name, str(remote))
    out = [first]
    for index in range(1, count):
        name = f"dev-{chr(ord('a') + index)}"
        vault = tmp_path / f"vault-{name[-1]}"
        engine.clone(str(remote), vault, name)
        (vault / layout.device_dir(name) / "notes").mkdir(parents=True, exist_ok=True)
        device = Device(name, vault)
        device.write(registry.DEVICE.at(device=name), f"---\ntype: device\ndevice: {name}\n---\n## Brief\n{name}\n")
        device.sync()
        out.append(device)
    return remote, out


def remote_history(remote: Path) -> str:
    """Every version of every file and every message the remote holds."""
    return git(remote, "log", "-p", "--all", "--no-color", "--format=%B")


def remote_file(remote: Path, rel: str) -> str | None:
    proc = subprocess.run(["git", "-C", str(remote), "show", f"main:{rel}"], capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else None


def vault_files(vault: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(vault):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = Path(folder) / name
            found[str(path.relative_to(vault))] = path.read_text("utf-8", "replace")
    return found
