"""Delivered packages: a uniquely named folder of copied files plus a manifest of their evidence.

`deliver` copies final files into `output/<UTC time>-<label>-<random>/` next to `.manifest.json` (each
file's name, size and SHA-256, the package's `created` and `expires`), builds it under a temporary
name and renames it into place, so a sweep never sees half a package. `inspect` re-reads that evidence
and says whether every file is still exactly what was delivered, for a file-specific preservation
proposal, and `read_member` reads one file for `lifecycle preserve` only when it is still exactly what was
delivered. The deletion schedule itself is kept in the outbox record (`folder.py`), not here.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from continuity import tunables
from continuity.errors import InputRejected, UsageError
from continuity.ids import make_id
from continuity.local.repo import find_repo_root
from continuity.outbox.activation import activate
from continuity.outbox.folder import (
    FORMAT_VERSION,
    LIFETIME,
    MANIFEST_NAME,
    NOFOLLOW,
    PRIVATE_DIR_MODE,
    STATE_NAME,
    Scheduled,
    format_time,
    load_json,
    locked,
    outbox_exists,
    outbox_path,
    parse_time,
    read_state,
    remove_entry,
    require_repo,
    utc_now,
    whole_second,
    write_state,
)
from continuity.store import atomic

_CHUNK_BYTES = 1024 * 1024

# --- deliver -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PackageFile:
    name: str
    bytes: int
    sha256: str


@dataclass(frozen=True)
class Delivery:
    package: str
    path: Path
    files: tuple[PackageFile, ...]
    created: datetime
    expires: datetime
    activated: bool


def _check_sources(files: Sequence[Path]) -> list[Path]:
    if not files:
        raise UsageError("deliver needs at least one file")
    seen: dict[str, Path] = {}
    for source in files:
        try:
            info = os.lstat(source)
        except FileNotFoundError:
            raise UsageError(f"{source} does not exist") from None  # a missing input is a usage error (exit 2)
        if stat.S_ISLNK(info.st_mode):
            raise InputRejected(f"{source} is a link; deliver the file it points to instead")
        if not stat.S_ISREG(info.st_mode):
            raise InputRejected(f"{source} is not a regular file; deliver files, not folders")
        name = source.name
        if name == MANIFEST_NAME:
            raise InputRejected(f"{source}: {MANIFEST_NAME} is the package manifest's own name; rename the file")
        if name in seen:
            raise InputRejected(f"{seen[name]} and {source} have the same name; one package holds one of each")
        seen[name] = source
    return list(files)


def _copy(source: Path, target: Path) -> PackageFile:
    """Copy without following links, hashing exactly the bytes that land in the package."""
    digest = hashlib.sha256()
    size = 0
    src_fd = os.open(source, os.O_RDONLY | NOFOLLOW)
    with os.fdopen(src_fd, "rb") as reader:
        if not stat.S_ISREG(os.fstat(reader.fileno()).st_mode):
            raise InputRejected(f"{source} is not a regular file")
        dst_fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, atomic.PRIVATE_FILE_MODE)
        with os.fdopen(dst_fd, "wb") as writer:
            while chunk := reader.read(_CHUNK_BYTES):
                writer.write(chunk)
                digest.update(chunk)
                size += len(chunk)
            writer.flush()
            os.fsync(writer.fileno())
    return PackageFile(target.name, size, digest.hexdigest())


def package_name(created: datetime, label: str) -> str:
    slug = make_id(label, "package")[: tunables.SLUG_MAX_CHARS].strip("-") or "package"
    return f"{created.strftime('%Y%m%dT%H%M%SZ')}-{slug}-{secrets.token_hex(3)}"


def manifest_document(package: str, created: datetime, expires: datetime, files: Sequence[PackageFile]) -> str:
    doc = {
        "version": FORMAT_VERSION,
        "package": package,
        "created": format_time(created),
        "expires": format_time(expires),
        "files": [{"name": f.name, "bytes": f.bytes, "sha256": f.sha256} for f in files],
    }
    return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"


def deliver(repo: Path, files: Sequence[Path], *, name: str | None = None, now: datetime | None = None) -> Delivery:
    """Copy `files` into a new package under `repo/output/` that expires exactly seven days from now."""
    sources = _check_sources(files)
    created = whole_second(now or utc_now())
    expires = created + LIFETIME
    _, activated = activate(repo, created)
    outbox = outbox_path(repo)
    label = name if name is not None else sources[0].stem
    while True:
        package = package_name(created, label)
        if not os.path.lexists(outbox / package):
            break
    staging = atomic.tmp_name_for(outbox / package)
    staging.mkdir(mode=PRIVATE_DIR_MODE)
    try:
        copied = tuple(_copy(source, staging / source.name) for source in sources)
        atomic.write_text(staging / MANIFEST_NAME, manifest_document(package, created, expires, copied))
        atomic.fsync_dir(staging)
        with locked(outbox):
            state = read_state(outbox)
            if state is None:
                raise InputRejected(f"{outbox / STATE_NAME} disappeared during delivery; nothing was delivered")
            if os.path.lexists(outbox / package):
                raise InputRejected(f"{outbox / package} appeared during delivery; deliver again")
            staging.rename(outbox / package)
            state.packages[package] = Scheduled(created, expires)
            state.enrolled.pop(package, None)
            write_state(outbox, state)
        atomic.fsync_dir(outbox)
    finally:
        if os.path.lexists(staging):
            remove_entry(staging)
    return Delivery(package, outbox / package, copied, created, expires, activated)


# --- inspect -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileCheck:
    name: str
    bytes: int
    sha256: str
    status: str  # intact | modified | missing | not-a-file


@dataclass(frozen=True)
class Inspection:
    package: str
    path: Path
    managed: bool
    created: datetime
    expires: datetime
    files: tuple[FileCheck, ...]
    unexpected: tuple[str, ...]

    @property
    def intact(self) -> bool:
        return all(f.status == "intact" for f in self.files)


def _safe_member(name: object) -> bool:
    return (
        isinstance(name, str)
        and name not in ("", ".", "..", MANIFEST_NAME)
        and "/" not in name
        and "\\" not in name
        and "\x00" not in name
    )


def read_manifest(package_dir: Path) -> tuple[datetime, datetime, list[PackageFile]]:
    doc = load_json(package_dir / MANIFEST_NAME, tunables.OUTBOX_MANIFEST_CAP_BYTES, "package manifest")
    where = package_dir / MANIFEST_NAME
    items = doc.get("files")
    if not isinstance(items, list) or not items:
        raise InputRejected(f"{where}: 'files' must be a non-empty list")
    files: list[PackageFile] = []
    for item in items:
        if not isinstance(item, dict) or not _safe_member(item.get("name")):
            raise InputRejected(f"{where}: a file entry has no usable name")
        size, digest = item.get("bytes"), item.get("sha256")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0 or not isinstance(digest, str):
            raise InputRejected(f"{where}: the entry for {item['name']!r} is malformed")
        files.append(PackageFile(item["name"], size, digest.lower()))
    try:
        created, expires = parse_time(str(doc.get("created"))), parse_time(str(doc.get("expires")))
    except UsageError:
        raise InputRejected(f"{where}: 'created' or 'expires' is not a valid time") from None
    return created, expires, files


def _check_file(path: Path, expected: PackageFile) -> FileCheck:
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW)
    except FileNotFoundError:
        return FileCheck(expected.name, expected.bytes, expected.sha256, "missing")
    except OSError:
        return FileCheck(expected.name, expected.bytes, expected.sha256, "not-a-file")
    digest = hashlib.sha256()
    size = 0
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return FileCheck(expected.name, expected.bytes, expected.sha256, "not-a-file")
        while chunk := handle.read(_CHUNK_BYTES):
            digest.update(chunk)
            size += len(chunk)
    same = size == expected.bytes and digest.hexdigest() == expected.sha256
    return FileCheck(expected.name, expected.bytes, expected.sha256, "intact" if same else "modified")


def locate_package(start: Path, package: str) -> tuple[Path, str]:
    """(repository, package name) for a bare package name or a path to a package folder."""
    given = Path(package)
    if len(given.parts) == 1 and given.name not in (".", ".."):
        return require_repo(start), given.name
    folder = Path(os.path.abspath(start / given))
    repo = find_repo_root(folder.parent.parent)
    if repo is None or os.path.realpath(folder.parent) != os.path.realpath(outbox_path(repo)):
        raise InputRejected(f"{folder} is not a package directly inside a repository's output/ folder")
    return repo, folder.name


@dataclass(frozen=True)
class Evidence:
    """A package's recorded evidence: the manifest's files and the record's times (for `managed`)."""

    package: str
    path: Path
    managed: bool
    created: datetime
    expires: datetime
    files: tuple[PackageFile, ...]


def evidence(repo: Path, package: str) -> Evidence:
    """What was delivered as `package`: refuses (exit 5) anything that is not a package folder in output/."""
    outbox = outbox_path(repo)
    folder = outbox / package
    if package == STATE_NAME or not outbox_exists(outbox):
        raise InputRejected(f"there is no package {package!r} in {outbox}")
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        raise InputRejected(f"there is no package {package!r} in {outbox}") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise InputRejected(f"{folder} is a link or not a folder, so it is not a delivered package")
    try:
        created, expires, listed = read_manifest(folder)
    except FileNotFoundError:
        raise InputRejected(f"{folder} has no {MANIFEST_NAME}, so it is not a delivered package") from None
    state = read_state(outbox)
    managed = state is not None and package in state.packages
    if state is not None and package in state.packages:
        created, expires = state.packages[package].since, state.packages[package].expires
    elif state is not None and package in state.enrolled:
        expires = state.enrolled[package].expires
    return Evidence(package, folder, managed, created, expires, tuple(listed))


def inspect(repo: Path, package: str) -> Inspection:
    """The manifest's evidence and each file's present state, for a file-specific preservation proposal."""
    found = evidence(repo, package)
    folder = found.path
    checks = tuple(_check_file(folder / f.name, f) for f in found.files)
    names = {f.name for f in found.files} | {MANIFEST_NAME}
    with os.scandir(folder) as listing:
        unexpected = tuple(sorted(e.name for e in listing if e.name not in names))
    return Inspection(package, folder, found.managed, found.created, found.expires, checks, unexpected)


@dataclass(frozen=True)
class Member:
    """One delivered file read for keeping: `data` holds its bytes only when they are the delivered ones."""

    name: str
    status: str  # intact | modified | missing | not-a-file | too-large
    data: bytes | None = None


def read_member(package_dir: Path, expected: PackageFile, cap: int) -> Member:
    """The delivered file's exact bytes, read once, so what is kept is exactly what was checked.

    The size is compared with the manifest and with `cap` before anything is read, and at most cap + 1
    bytes are; a link or anything but a regular file is never opened for reading.
    """
    name = expected.name
    try:
        fd = os.open(package_dir / name, os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return Member(name, "missing")
    except OSError:
        return Member(name, "not-a-file")
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return Member(name, "not-a-file")
        if info.st_size != expected.bytes:
            return Member(name, "modified")
        if info.st_size > cap:
            return Member(name, "too-large")
        data = handle.read(cap + 1)
    if len(data) != expected.bytes or hashlib.sha256(data).hexdigest() != expected.sha256:
        return Member(name, "modified")
    return Member(name, "intact", data)
