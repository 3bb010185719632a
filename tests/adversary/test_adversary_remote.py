"""Sync against an adversary: bytes in any encoding, a remote that rewrites its history, hostile ignore
rules and oversized blobs. Real git throughout: a bare remote in tmp_path that the tests rewrite.

Secret values are generated at run time, so this file holds no secret-shaped text of its own.
"""

from __future__ import annotations

import hashlib
import json
import random
import string
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st
from syncvaults import devices, git, remote_file

from continuity import tunables
from continuity.gate.secrets import scan_bytes
from continuity.sync import commit, engine, ignore
from continuity.sync.git import Git

NOTE = "---\nid: {ident}\ntype: fact\nstatus: approved\n---\n{body}\n"


def token(seed: int = 5) -> str:
    rng = random.Random(seed)
    return "sk" + "_live_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(24))


def remote_blobs(remote: Path) -> list[bytes]:
    """Every blob any ref of the remote reaches (what anyone with access can read)."""
    listing = git(remote, "rev-list", "--objects", "--all").split()
    blobs: list[bytes] = []
    for sha in {item for item in listing if len(item) == 40}:
        kind = git(remote, "cat-file", "-t", sha).strip()
        if kind == "blob":
            shown = subprocess.run(["git", "-C", str(remote), "cat-file", "blob", sha], capture_output=True, check=True)
            blobs.append(shown.stdout)
    return blobs


def encodings_of(value: str) -> list[bytes]:
    """`value` as each encoding a reader might use writes it."""
    return [value.encode(codec) for codec in ("utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")]


def assert_never_published(remote: Path, value: str) -> None:
    forms = encodings_of(value)
    for blob in remote_blobs(remote):
        assert not any(form in blob for form in forms), "a secret reached the remote"


# ---------------------------------------------------------------------- 4: bytes in any encoding


def documents_variants(secret: str) -> dict[str, bytes]:
    text = f"Deploy notes\nstripe: {secret}\npassword = Wört{secret[-6:]}\n"
    return {
        "stray-byte.txt": text.encode() + b"\xff\n",
        "stray-byte-first.txt": b"\xfe" + text.encode(),
        "latin-1.txt": text.encode("latin-1"),
        "cp1252.txt": ("\u201cquoted\u201d " + text).encode("cp1252"),
        "utf-16-bom.txt": text.encode("utf-16"),
        "utf-16-le.txt": text.encode("utf-16-le"),
        "utf-16-be.txt": text.encode("utf-16-be"),
        "utf-32.txt": text.encode("utf-32"),
        "binary-around.bin": bytes(range(256)) + text.encode() + bytes(range(255, -1, -1)),
    }


def preserve_record(vault: Path, rel: str, data: bytes) -> None:
    """The record `lifecycle preserve` writes beside a binary original the person confirmed."""
    digest = hashlib.sha256(data).hexdigest()
    (vault / (rel + ".record.md")).write_text(
        f"---\nid: doc-{digest[:8]}\ntype: document\nstatus: approved\nsha256: {digest}\n"
        f"bytes: {len(data)}\nscanned: false\n---\n# kept\n"
    )


def test_a_secret_in_any_encoding_is_held_back(tmp_path: Path) -> None:
    remote, (a,) = devices(tmp_path, 1)
    secret = token()
    variants = documents_variants(secret)
    for name, data in variants.items():
        target = a.vault / "40-documents" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    image = bytes(range(256)) * 4
    for name in ("kept.bin", "unconfirmed.bin", "changed.bin"):
        (a.vault / "40-documents" / name).write_bytes(image)
    preserve_record(a.vault, "40-documents/kept.bin", image)
    preserve_record(a.vault, "40-documents/changed.bin", image[::-1])  # confirmed other bytes
    result = a.sync()
    held = {item.shown: item for item in result.held}
    assert set(held) == {f"40-documents/{name}" for name in [*variants, "unconfirmed.bin", "changed.bin"]}
    # Text in any encoding is judged (line and detector named); bytes that are text in no encoding are
    # kept here unless the person preserved exactly them.
    for name in variants:
        item = held[f"40-documents/{name}"]
        assert (item.reason, name) in {("secret", name), ("binary", "binary-around.bin")}, item
        assert item.reason != "secret" or (item.line is not None and item.detector)
    assert held["40-documents/unconfirmed.bin"].reason == "binary"
    assert "40-documents/kept.bin" in result.staged
    assert_never_published(remote, secret)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(min_value=0x80, max_value=0xFF), st.integers(0, 3)), max_size=6),
    st.lists(st.tuples(st.integers(min_value=0x80, max_value=0xBF), st.integers(1, 29)), max_size=3),
    st.sampled_from(["utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "cp1252"]),
    st.integers(min_value=0, max_value=3),
)
def test_no_byte_insertion_or_encoding_hides_a_secret(
    around: list[tuple[int, int]], inside: list[tuple[int, int]], codec: str, padding: int
) -> None:
    """Bytes that are not UTF-8 wedged around a token (any byte) and into it (bytes that can never be
    part of a character there), in any encoding, in a short note or a long one: held as a secret."""
    secret = token(len(around) * 7 + len(inside))
    inner = bytearray(secret.encode(codec if codec in ("latin-1", "cp1252", "utf-8") else "utf-8"))
    if codec in ("latin-1", "cp1252", "utf-8"):
        for byte, at in sorted(inside, key=lambda item: -item[1]):
            inner[at:at] = bytes([byte])
        head, tail = f"{'notes ' * (200 * padding)} key: ".encode(codec), b" end"
        data = head + bytes(inner) + tail
    else:
        data = f"{'notes ' * (200 * padding)} key: {secret} end".encode(codec)
    cuts = [0, 6, len(data) - 4, len(data)]
    for byte, at in around:
        data = data[: cuts[at]] + bytes([byte]) + data[cuts[at] :]
    verdict = commit.judge("40-documents/upload.txt", data)
    # Held either way. A long note stays text whatever is wedged in, so the secret is named; in a note
    # of a few dozen bytes, a dozen bytes that are no character may make it read as binary, which is
    # held as well (a binary leaves only as an original the person preserved).
    assert verdict is not None and verdict.reason in ("secret", "binary"), verdict
    if padding:
        assert verdict.reason == "secret", verdict


def test_binary_noise_is_not_text_and_costs_little() -> None:
    """Random bytes read as text in no encoding: the gate is not run over them (no slow scan, no
    assignment found in noise); the caller holds them unless preserved."""
    noise = random.Random(3).randbytes(1 << 20)
    assert scan_bytes(noise) is None
    assert commit.judge("40-documents/noise.bin", noise) == commit.Held(
        "40-documents/noise.bin", "40-documents/noise.bin", "binary"
    )


# ------------------------------------------------------------- 10: ignore rules that arrive with the vault

MEMORY_FILES = (
    "00-system/SOUL.md",
    "10-project/demo/PROJECT.md",
    "20-state/handoffs/20260101T000000Z-dev-a-h.md",
    "20-state/candidates/c.md",
    "30-memory/facts/f.md",
    "30-memory/decisions/deep/er/d.md",
    "40-documents/scan.pdf",
    "50-devices/dev-a/journal.jsonl",
    "50-devices/dev-a/DEVICE.md",
    ".continuity/leases/dev-a.json",
)
PIECES = st.sampled_from(
    ["20-state", "30-memory", "50-devices", "00-system", "facts", "handoffs", ".continuity", "leases", "dev-a",
     "*.md", "*", "**", "?", "[0-9]*", "[2]0-*", "0", "-", ".", "md", "json*", "journal.jsonl", "DEVICE.md",
     "20-STATE", "PROJECT.md", "x", ".obsidian"]
)  # fmt: skip
PATTERNS = st.builds(
    lambda neg, lead, parts, tail: (
        ("!" if neg else "") + ("/" if lead else "") + "/".join(parts) + ("/" if tail else "")
    ),
    st.booleans(),
    st.booleans(),
    st.lists(PIECES, min_size=1, max_size=4),
    st.booleans(),
)


def _vault_repo(root: Path) -> Git:
    if root.exists():
        subprocess.run(["rm", "-rf", str(root)], check=True)
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for rel in MEMORY_FILES:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("---\nid: x\n---\nnote\n")
    return Git(root, "dev-a")


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.lists(PATTERNS, min_size=1, max_size=6), st.sampled_from(["root", "nested", "exclude"]))
def test_no_ignore_rule_hides_a_memory_file(tmp_path: Path, patterns: list[str], where: str) -> None:
    git_ = _vault_repo(tmp_path / "v")
    vault = git_.vault
    text = "\n".join(patterns) + "\n"
    target = {"root": vault / ".gitignore", "nested": vault / "30-memory/.gitignore",
              "exclude": vault / ".git/info/exclude"}[where]  # fmt: skip
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    ignore.tidy(vault)
    kept = (vault / ".gitignore").read_text().splitlines()
    assert all(line in kept for line in ignore.OWN_LINES)
    changed = set(commit.changed_paths(git_))
    assert set(MEMORY_FILES) <= changed, sorted(set(MEMORY_FILES) - changed)
    if where == "root":  # and what the tool keeps of the file ignores none of them, even for plain git
        listed = git(vault, "ls-files", "--others", "--exclude-standard", "--", *ignore.PROTECTED).split("\n")
        assert set(MEMORY_FILES) <= set(listed)


def test_harmless_lines_are_kept() -> None:
    for line in ("", "# a comment", ".obsidian/plugins/", "/scratch/", "/scratch/*.bak", ".continuity/cache/"):
        assert ignore.harmless(line), line
    for line in ("20-state/", "*.md", "!x", "**", "[0-9]*", "/30-memory", "30-Memory/facts/", ".continuity/",
                 "*/", "/", "x", ".continuity/leases/*.json", "50-devices/**/journal.jsonl", " 20-state/"):  # fmt: skip
        assert not ignore.harmless(line), line


def test_a_remote_gitignore_cannot_silence_notes(tmp_path: Path) -> None:
    remote, (a, b) = devices(tmp_path, 2)
    # Someone pushes ignore rules that cover every memory folder, straight to the remote.
    hostile = "20-state/\n30-memory/\n*.md\n50-devices/\n.continuity/\n"
    b.write(".gitignore", (b.vault / ".gitignore").read_text() + hostile)
    git(b.vault, "add", ".gitignore")
    git(b.vault, "commit", "-qm", "ignore everything")
    git(b.vault, "push", "-q", "origin", "main")
    a.sync()
    written = ["30-memory/facts/new.md", "20-state/handoffs/20260101T000000Z-dev-a-new.md", "50-devices/dev-a/n.md"]
    for rel in written:
        a.write(rel, NOTE.format(ident="new", body="a new note"))
    result = a.sync()
    assert result.pushed and not result.held
    for rel in written:
        assert remote_file(remote, rel) is not None, rel
    assert "30-memory/" not in (remote_file(remote, ".gitignore") or "").splitlines()


# ------------------------------------------------- 9: a remote that rewrites its history; huge blobs


def force_push_unrelated(tmp_path: Path, remote: Path, files: dict[str, bytes]) -> None:
    """Replace the remote's `main` with a new history holding only `files` (what a scrub or a hostile
    remote does), from a scratch clone outside every device."""
    scratch = tmp_path / f"scratch-{len(list(tmp_path.iterdir()))}"
    subprocess.run(["git", "init", "-q", "-b", "main", str(scratch)], check=True)
    for rel, data in files.items():
        (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
        (scratch / rel).write_bytes(data)
    git(scratch, "add", "-A")
    git(scratch, "commit", "-qm", "rewritten")
    git(scratch, "push", "-q", "--force", str(remote), "main:main")


def push_by_hand(device_vault: Path, rel: str, data: bytes) -> None:
    target = device_vault / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    git(device_vault, "add", "--", rel)
    git(device_vault, "commit", "-qm", "by hand")
    git(device_vault, "push", "-q", "origin", "main")


def huge_note(size: int) -> bytes:
    line = b"- a line of a note that someone made very long\n"
    return b"---\nid: huge\n---\n" + line * (size // len(line) + 1)


def tree_of(remote: Path) -> set[str]:
    return set(git(remote, "ls-tree", "-r", "--name-only", "main").split())


def test_a_remote_rewrite_after_a_huge_blob_does_not_wedge_sync(tmp_path: Path) -> None:
    remote, (a, b) = devices(tmp_path, 2)
    # b pushes a blob over the cap by hand; a received history that holds it.
    push_by_hand(b.vault, "40-documents/huge.md", huge_note(tunables.SYNC_FILE_MAX_BYTES + 1))
    a.sync()
    # Then the remote is rewritten to an unrelated history (someone scrubbed it).
    force_push_unrelated(tmp_path, remote, {"30-memory/facts/kept.md": NOTE.format(ident="k", body="kept").encode()})
    for round_ in range(3):  # every later sync works, and each new note reaches the remote
        rel = f"30-memory/facts/after-{round_}.md"
        a.write(rel, NOTE.format(ident=f"a{round_}", body="written after the rewrite"))
        result = a.sync()
        assert result.pushed, result
        assert rel in tree_of(remote)
    assert "40-documents/huge.md" not in tree_of(remote)
    assert "30-memory/facts/kept.md" in tree_of(remote)
    assert git(a.vault, "for-each-ref", "refs/continuity/backup/"), "the old history is kept on this computer"


def test_a_scrubbed_secret_is_not_pushed_back_and_no_computer_wedges(tmp_path: Path) -> None:
    remote, (a, b, c) = devices(tmp_path, 3)
    secret = token(9)
    leaked = "30-memory/facts/leaked.md"
    b.sync()
    push_by_hand(b.vault, leaked, NOTE.format(ident="l", body=f"key {secret}").encode())
    for device in (a, c):
        device.sync()
    # The person scrubs the remote: the same files without the leak, as one new history.
    files = {rel: data.encode() for rel, data in _tree_files(remote).items() if rel != leaked}
    force_push_unrelated(tmp_path, remote, files)
    for device in (a, b, c):
        device.write(f"30-memory/facts/from-{device.name}.md", NOTE.format(ident=device.name, body="after"))
        assert device.sync().pushed
    for device in (a, b, c):
        device.sync()
        assert f"30-memory/facts/from-{device.name}.md" in tree_of(remote)
    assert_never_published(remote, secret)


def test_a_remote_history_that_holds_a_secret_is_not_this_computers_to_judge(tmp_path: Path) -> None:
    remote, (a,) = devices(tmp_path, 1)
    secret = token(10)
    files = {rel: data.encode() for rel, data in _tree_files(remote).items()}
    files["30-memory/facts/theirs.md"] = NOTE.format(ident="t", body=f"key {secret}").encode()
    force_push_unrelated(tmp_path, remote, files)
    a.write("30-memory/facts/mine.md", NOTE.format(ident="m", body="mine"))
    result = a.sync()
    assert result.pushed and "30-memory/facts/mine.md" in tree_of(remote)


def _tree_files(remote: Path) -> dict[str, str]:
    return {rel: git(remote, "show", f"main:{rel}") for rel in tree_of(remote)}


def test_an_incoming_blob_over_the_cap_is_never_checked_out(tmp_path: Path) -> None:
    remote, (a, b) = devices(tmp_path, 2)
    a.write("30-memory/facts/grows.md", NOTE.format(ident="g", body="small"))
    a.sync()
    b.sync()
    # b pushes by hand a note that compresses to almost nothing and expands past the cap.
    push_by_hand(b.vault, "30-memory/facts/grows.md", huge_note(tunables.SYNC_FILE_MAX_BYTES + 1))
    push_by_hand(b.vault, "30-memory/facts/bomb.md", b"\n" * (tunables.SYNC_FILE_MAX_BYTES + 1))
    result = a.sync()
    refused = {item.shown: item for item in result.held if item.reason == "incoming_too_large"}
    assert set(refused) == {"30-memory/facts/grows.md", "30-memory/facts/bomb.md"}
    assert "not checked out" in refused["30-memory/facts/bomb.md"].message()
    assert (a.vault / "30-memory/facts/grows.md").stat().st_size < 1000
    assert not (a.vault / "30-memory/facts/bomb.md").exists()
    assert result.pushed and "30-memory/facts/bomb.md" not in tree_of(remote)
    assert a.sync().held == ()  # named once; the next sync has nothing more to refuse


# ------------------------------------------------------ 5: a lease is "on the remote" only when it is


def test_a_lease_the_sync_held_back_is_never_reported_as_on_the_remote(tmp_path: Path) -> None:
    from continuity.store import lease
    from continuity.sync import leases

    remote, (a,) = devices(tmp_path, 1)
    taken = lease.acquire_locked(a.vault, a.name, 3600, "deploying", None)
    # The lease file gains something the gate refuses (a hand, a foreign tool, an older version).
    doc = json.loads(taken.to_json())
    doc["note"] = token(12)
    (a.vault / taken.rel).write_text(json.dumps(doc, indent=2) + "\n")
    published = leases.publish(a.vault, a.name)
    assert not published.remote
    assert "only local" in published.note and "remote records" not in published.note
    assert token(12) not in published.note
    assert remote_file(remote, taken.rel) is None
    # Once the file is what the tool writes, the push publishes it and only then is it reported so.
    (a.vault / taken.rel).write_text(taken.to_json())
    published = leases.publish(a.vault, a.name)
    assert published.remote and remote_file(remote, taken.rel) == taken.to_json()


def test_a_clone_never_checks_out_a_file_over_the_cap(tmp_path: Path) -> None:
    remote, (a,) = devices(tmp_path, 1)
    push_by_hand(a.vault, "30-memory/facts/bomb.md", b"\n" * (tunables.SYNC_FILE_MAX_BYTES + 1))
    told: list[str] = []
    engine.clone(str(remote), tmp_path / "fresh", "dev-z", on_refused=told.append)
    assert not (tmp_path / "fresh/30-memory/facts/bomb.md").exists()
    assert len(told) == 1 and "30-memory/facts/bomb.md" in told[0] and "not checked out" in told[0]
    assert (tmp_path / "fresh/00-system").is_dir()
