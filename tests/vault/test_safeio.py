"""safeio: links are refused at every part of a vault path, reads stop at the cap, writes replace whole."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from continuity import safeio

pytestmark = pytest.mark.skipif(os.name != "posix", reason="links and FIFOs as POSIX has them")


def test_open_nofollow_refuses_a_link_at_any_part(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "note.md").write_text("text")
    (tmp_path / "hop").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "alias.md").symlink_to(tmp_path / "real" / "note.md")
    fd = safeio.open_nofollow(str(tmp_path), "real/note.md")
    assert os.read(fd, 10) == b"text"
    os.close(fd)
    for rel in ("hop/note.md", "real/alias.md"):
        with pytest.raises(OSError) as caught:
            safeio.open_nofollow(str(tmp_path), rel)
        assert caught.value.errno in (errno.ELOOP, errno.ENOTDIR)


def test_read_regular_stops_at_the_cap_and_never_blocks(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert safeio.read_regular(str(path), 10) == b"x" * 10
    with pytest.raises(OSError, match="over 9 bytes"):
        safeio.read_regular(str(path), 9)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        safeio.read_regular(str(fifo), 10)
    (tmp_path / "link").symlink_to(path)
    with pytest.raises(OSError):
        safeio.read_regular(str(tmp_path / "link"), 10)


def test_write_private_makes_its_folder_and_never_follows_a_link(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "file"
    safeio.write_private(str(target), b"data")
    assert target.read_bytes() == b"data"
    assert os.stat(target).st_mode & 0o777 == 0o600 and os.stat(target.parent).st_mode & 0o777 == 0o700
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    (tmp_path / "new" / "deeper" / "other").symlink_to(victim)
    safeio.write_private(str(tmp_path / "new" / "deeper" / "other"), b"replaced")
    assert victim.read_bytes() == b"keep"  # the link itself was replaced, not its target
    assert sorted(p.name for p in target.parent.iterdir()) == ["file", "other"]  # no temporary file left
