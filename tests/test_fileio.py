"""Atomic writes: new files get the umask's permissions, replaced files keep theirs, and a
failed write leaves the old file and no temporary behind."""

import contextlib
import os
import stat

import pytest

from holdem.fileio import atomic_open


@contextlib.contextmanager
def umask(mask):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077])
def test_new_file_gets_the_umask_permissions(tmp_path, mask):
    path = tmp_path / "out.json"
    with umask(mask), atomic_open(path, "w") as f:
        f.write("{}")
    assert path.read_text() == "{}"
    assert mode(path) == 0o666 & ~mask


def test_replaced_file_keeps_its_permissions(tmp_path):
    path = tmp_path / "out.csv"
    path.write_text("old")
    path.chmod(0o640)
    with umask(0o022), atomic_open(path, "w") as f:
        f.write("new")
    assert path.read_text() == "new" and mode(path) == 0o640


def test_failed_write_keeps_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_open(path) as f:
        f.write(b"half")
        raise RuntimeError("disk full")
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.bin"]
