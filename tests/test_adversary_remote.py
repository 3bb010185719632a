"""Sync against an adversary: bytes in any encoding, a remote that rewrites its history, hostile ignore
rules and oversized blobs. Real git throughout: a bare remote in tmp_path that the tests rewrite.

Secret values are generated at run time, so this file holds no secret-shaped text of its own.
"""

from __future__ import annotations

import random
import string
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st
from syncvaults import devices, git

from continuity.sync import commit

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


def test_a_secret_in_any_encoding_is_held_back(tmp_path: Path) -> None:
    remote, (a,) = devices(tmp_path, 1)
    secret = token()
    variants = documents_variants(secret)
    for name, data in variants.items():
        target = a.vault / "40-documents" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (a.vault / "40-documents/clean.bin").write_bytes(bytes(range(256)) * 4)
    result = a.sync()
    held = {item.shown: item for item in result.held}
    assert set(held) == {f"40-documents/{name}" for name in variants}
    assert all(item.reason == "secret" and item.line is not None and item.detector for item in held.values())
    assert "40-documents/clean.bin" in result.staged
    assert_never_published(remote, secret)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.integers(min_value=0x80, max_value=0xFF), min_size=1, max_size=6),
    st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=6),
    st.sampled_from(["utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1"]),
)
def test_no_byte_insertion_or_encoding_hides_a_secret(insert: list[int], where: list[int], codec: str) -> None:
    """Bytes that are not UTF-8, wedged between the words around a token (or into it), in any encoding."""
    secret = token(len(insert) * 7 + len(where))
    words = ["notes", "key:", secret, "end"]
    data = " ".join(words).encode(codec)
    for byte, at in zip(insert, where, strict=False):
        cut = [0, 6, len(data) // 2, len(data) - 3, len(data)][at]
        data = data[:cut] + bytes([byte]) + data[cut:]
    verdict = commit.judge("40-documents/upload.txt", data)
    assert verdict is not None and verdict.reason == "secret"
