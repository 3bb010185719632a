"""`lifecycle init`: connect a checkout to a vault on this computer, creating the vault if asked.

Idempotent by design: running it again with the same answers changes nothing, and the device id of an
existing connection is kept unless another is asked for, because a new random id on every run would
orphan this computer's device profile, journal and lease. For the same reason a second checkout on
this computer reuses the device id the first one's init recorded (machine-local, under the state
folder): a device is a computer, not a checkout. Pointing an existing connection at another vault,
device or project needs `--force`. Profiles are created from templates only when missing; an existing
note is never overwritten.

The project is found by the repository, not by the clone's folder name (`vault.projects.choose`):
a clone called anything on any computer connects to the project whose PROJECT.md records this
repository's identity (`local.identity`), and a new project's PROJECT.md records it. When the vault
cannot tell, init stops and asks for `--project` rather than making a new project beside the right one.
The vault path is checked before anything else (`vault.locate`), so a typo is reported as a missing
path, with both of its explanations, and never as a reason to add `--new` or `--force`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import secrets as random_source
import socket
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from continuity import ids, limits, tunables
from continuity.errors import FIELD, InputRejected, NotConnected, NoteError
from continuity.local import connection, identity as repo_identity, made, userdirs
from continuity.local.repo import find_repo_root
from continuity.store import atomic
from continuity.vault import access, layout, locate, notes, placeholders, projects, registry
from continuity.vault.resources import resource_dir


@dataclass
class InitResult:
    connection_file: Path
    vault: Path
    device: str
    project: str
    created_vault: bool = False
    created: list[str] = field(default_factory=list)
    changed_connection: bool = False
    exclude_added: bool = False
    # How the project was chosen: option, connection, repository, root_commit, folder or new.
    found_by: str = "option"
    identity: repo_identity.RepoIdentity = field(default_factory=lambda: repo_identity.RepoIdentity(None, None))
    neighbours: list[Path] = field(default_factory=list)  # other vaults beside a new one


def default_device() -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    suffix = "".join(random_source.choice(alphabet) for _ in range(tunables.DEVICE_SUFFIX_CHARS))
    base = ids.make_id(socket.gethostname().split(".")[0], "device")
    return f"{base[: limits.ID_MAX_CHARS - tunables.DEVICE_SUFFIX_CHARS - 1].strip('-')}-{suffix}"


def fill(template: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        template = template.replace("{{" + key + "}}", value)
    return template


def copy_template(source: Path, target: Path) -> None:
    """Copy the vault skeleton: folders and notes, never links, never the `.keep` placeholders."""
    for folder, dirs, files in os.walk(source):
        rel = Path(folder).relative_to(source)
        (target / rel).mkdir(parents=True, exist_ok=True, mode=0o700)
        dirs[:] = [d for d in dirs if not (Path(folder) / d).is_symlink()]
        for name in files:
            path = Path(folder) / name
            if name == ".keep" or path.is_symlink():
                continue
            atomic.write_bytes(target / rel / name, path.read_bytes())


def _check_new_target(path: Path) -> None:
    if path.is_symlink():
        raise InputRejected(f"{path} is a symbolic link; give the real folder for a new vault")
    if path.exists():
        if not path.is_dir():
            raise InputRejected(f"{path} exists and is not a folder")
        if any(path.iterdir()):
            raise InputRejected(
                f"{path} is not empty; {FIELD} creates a vault only in an absent or empty folder", field="new"
            )


def _check_placement(repo: Path, root: Path) -> None:
    """Private memory must never be committed: refuse a vault inside the checkout or a tracked connection."""
    real_repo, real_root = repo.resolve(), Path(os.path.realpath(root))
    if real_root == real_repo or real_repo in real_root.parents:
        raise InputRejected(
            f"the vault {root} would sit inside this git checkout, where it could be committed; "
            "choose a folder outside the repository"
        )
    tracked = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "--error-unmatch", connection.CONNECTION_FILE],
        capture_output=True,
        timeout=10,
        check=False,
    )
    if tracked.returncode == 0:
        raise InputRejected(
            f"{connection.CONNECTION_FILE} is tracked by git; run 'git rm --cached {connection.CONNECTION_FILE}' "
            "and commit, then run init again"
        )


def _create_note(root: Path, rel: str, text: str, result: InitResult) -> None:
    target = root / rel
    if os.path.lexists(target):
        return
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        atomic.write_text(target, text, exclusive=True)
    except FileExistsError:
        return
    result.created.append(rel)


def init(
    cwd: Path,
    vault_path: Path,
    *,
    new: bool = False,
    device: str | None = None,
    project: str | None = None,
    force: bool = False,
    now: dt.datetime | None = None,
) -> InitResult:
    repo = find_repo_root(cwd)
    if repo is None:
        raise NotConnected(f"{cwd} is not inside a git checkout; run init in the repository to connect")
    for kind, value in (("device", device), ("project", project)):
        if value is not None and not ids.is_valid_id(value):
            raise InputRejected(f"invalid {kind} id {value!r}: use ^[a-z0-9][a-z0-9-]{{0,62}}$")
    root = Path(os.path.abspath(os.path.expanduser(str(vault_path))))
    # The path first: a mistyped path on a connected checkout is a missing path, not a reason for --force.
    if new:
        _check_new_target(root)
    else:
        locate.check(root)
    file = repo / connection.CONNECTION_FILE
    existing: connection.Connection | None = None
    if os.path.lexists(file):
        try:
            existing = connection.load_connection(file, "checkout", repo, trusted_only=False)
        except NotConnected:
            if not force:
                invalid = f"{file} exists but is invalid; rerun with {FIELD} to replace it"
                raise InputRejected(invalid, field="force") from None
    same_vault = existing is not None and existing.vault == root
    device = device or (existing.device if existing else None) or machine_device(root) or default_device()
    identity = repo_identity.of_repo(repo)
    if project:
        found_by = "option"
    elif existing is not None and same_vault:
        project, found_by = existing.project, "connection"
    elif new:
        project, found_by = ids.make_id(repo.name, "project"), "new"
    else:
        chosen = projects.choose(
            projects.list_projects(root), identity.repository, identity.root_commit, ids.make_id(repo.name, "project")
        )
        project, found_by = chosen.project, chosen.found_by
    if existing and not force and (existing.vault, existing.device, existing.project) != (root, device, project):
        raise InputRejected(
            f"this checkout is already connected (vault {existing.vault}, device {existing.device}, "
            f"project {existing.project}); rerun with {FIELD} to change it",
            field="force",
        )
    _check_placement(repo, root)
    result = InitResult(file, root, device, project, found_by=found_by, identity=identity)
    if new:
        result.neighbours = locate.neighbours(root)
        copy_template(resource_dir("vault-template"), root)
        result.created_vault = True
    for rel in (*layout.ALL_DIRS, layout.device_dir(device) + "/notes", f"{layout.PROJECTS}/{project}"):
        folder = root / rel
        if folder.is_symlink():
            raise InputRejected(f"{rel} in the vault is a symbolic link; links are never followed")
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    moment = notes.format_utc(now or dt.datetime.now(dt.timezone.utc))
    values = {
        "device": device,
        "project": project,
        "created": moment,
        "host": socket.gethostname(),
        # Both are plain ASCII (`local.identity` guarantees it), so the template's quotes hold them.
        "repository": identity.repository or "",
        "root_commit": identity.root_commit or "",
    }
    templates = resource_dir("templates")
    device_text = fill((templates / "device.md").read_text("utf-8"), values)
    _create_note(root, registry.DEVICE.at(device=device), device_text, result)
    _create_note(
        root, registry.PROJECT.at(project), fill((templates / "project.md").read_text("utf-8"), values), result
    )
    text = connection.render_connection(root, device, project, sys.executable)
    old = file.read_bytes() if file.is_file() and not file.is_symlink() else None
    if old != text.encode("utf-8"):
        atomic.write_text(file, text, 0o600)
        result.changed_connection = True
    elif stat.S_IMODE(file.stat().st_mode) != 0o600:
        file.chmod(0o600)
    result.exclude_added = connection.ensure_ignored(repo, connection.CONNECTION_FILE)
    # Only now is the file this computer's: the hook and every command use nothing init did not make.
    made.remember(made.CONNECTION, file, hashlib.sha256(text.encode("utf-8")).hexdigest())
    remember_device(root, device)
    return result


# ------------------------------------------------------------------------ this computer's device


def device_record(root: Path) -> Path:
    """Where this computer keeps its device id for `root` (machine-local, keyed by the vault's real path)."""
    key = hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return Path(userdirs.state_dir()) / "devices" / key


def machine_device(root: Path) -> str | None:
    """The device id an earlier `init` on this computer used for this vault, if any.

    A device profile describes a computer, so every checkout on one computer is one device: the
    second checkout's init reuses the first one's id (its profile, journal and lease) instead of
    inventing another computer.
    """
    try:
        with open(device_record(root), "rb") as handle:
            text = handle.read(limits.ID_MAX_CHARS + 2).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if ids.is_valid_id(text) else None


def remember_device(root: Path, device: str) -> None:
    record = device_record(root)
    if machine_device(root) == device:
        return
    record.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic.write_text(record, device + "\n", 0o600)


def profiles_filled(vault: Path, project: str, device: str) -> dict[str, bool | None]:
    """For each profile a computer that joins may find (soul, preferences, project, device): True when
    its `## Brief` holds text of the person's own, False when it holds only the template's placeholder
    text, None when it is missing or unusable (doctor says why)."""
    rels = {source.name: source.at(project, device) for source in registry.EDITABLE}
    out: dict[str, bool | None] = {}
    for name, rel in rels.items():
        try:
            note = notes.parse_note(access.read_capped(vault, rel, limits.LIFECYCLE_TEXT_CAP_BYTES), rel)
        except NoteError:
            out[name] = None
            continue
        out[name] = not placeholders.only_placeholders(notes.compact_part(note.body))
    return out
