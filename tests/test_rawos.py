"""rawos does by hand what `os` and `posixpath` do, for the warm path: it must give the same answers."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from continuity import rawos

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the hand-made path functions are POSIX only")
parts = st.text(alphabet="ab/.", max_size=8)


@given(parts, st.lists(parts, max_size=4))
def test_join_is_posixpath_join(base: str, more: list[str]) -> None:
    assert rawos.join(base, *more) == posixpath.join(base, *more)


@given(parts)
def test_dirname_and_isabs_are_posixpath_s(path: str) -> None:
    assert rawos.dirname(path) == posixpath.dirname(path)
    assert rawos.isabs(path) == posixpath.isabs(path)


def test_realpath_is_os_realpath_with_links_and_dots(tmp_path: Path) -> None:
    real = tmp_path / "real" / "deep"
    real.mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    for path in (real, tmp_path / "link" / "deep", tmp_path / "real" / ".." / "real" / "deep", tmp_path / "nowhere"):
        assert rawos.realpath(str(path)) == os.path.realpath(path)
    assert rawos.plain_real(str(real)) == str(real)
    assert rawos.plain_real(str(tmp_path / "link" / "deep")) is None  # a link: ask os
    assert rawos.plain_real("relative/path") is None
    assert rawos.lexists(str(tmp_path / "link")) and not rawos.lexists(str(tmp_path / "nowhere"))


def test_getenv_sees_what_os_environ_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTINUITY_RAWOS_PROBE", "é-value")
    assert rawos.getenv("CONTINUITY_RAWOS_PROBE") == "é-value"
    monkeypatch.delenv("CONTINUITY_RAWOS_PROBE")
    assert rawos.getenv("CONTINUITY_RAWOS_PROBE") is None


def test_overwrite_only_replaces_a_regular_file_of_the_same_size(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    assert not rawos.overwrite(str(target), b"12345")  # nothing there: the caller creates it
    rawos.write_private(str(target), b"12345")
    assert os.stat(target).st_mode & 0o777 == 0o600
    assert rawos.overwrite(str(target), b"abcde") and target.read_bytes() == b"abcde"
    assert not rawos.overwrite(str(target), b"abc") and target.read_bytes() == b"abcde"
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert not rawos.overwrite(str(link), b"zzzzz") and target.read_bytes() == b"abcde"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert not rawos.overwrite(str(fifo), b"zzzzz")  # never blocks on a FIFO


def test_write_private_makes_its_folder_and_never_follows_a_link(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "file"
    rawos.write_private(str(target), b"data")
    assert target.read_bytes() == b"data" and os.stat(target.parent).st_mode & 0o777 == 0o700
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    (tmp_path / "new" / "deeper" / "other").symlink_to(victim)
    rawos.write_private(str(tmp_path / "new" / "deeper" / "other"), b"replaced")
    assert victim.read_bytes() == b"keep"  # the link itself was replaced, not its target
