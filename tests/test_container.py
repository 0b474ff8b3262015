"""The file container: both layouts round trip, and it stays on the ground floor (no numba).

Checkpoints (tests/test_checkpoint.py) and bucket files (tests/test_buckets.py) test their own
formats, errors and bytes; this checks the container as such.
"""

import subprocess
import sys

import numpy as np
import pytest

from holdem import container


class _Error(ValueError):
    pass


def _format(layout):
    return container.Format(what="test file", magic=b"HOLDEMTS", version=3, error=_Error,
                            layout=layout, dtypes=frozenset({"<i8", "<f4", "|u1"}),
                            max_header=1 << 16, max_file=1 << 20)


ARRAYS = {"a": np.arange(5, dtype=np.int64), "b": np.ones((3, 7), np.float32),
          "empty": np.zeros(0, np.uint8), "swapped": np.arange(4, dtype=">i8")}


@pytest.mark.parametrize("layout", list(container.Layout))
@pytest.mark.parametrize("mmap", [False, True])
def test_round_trip(tmp_path, layout, mmap):
    fmt = _format(layout)
    path = container.save(fmt, tmp_path / "x.bin", {"kind": "test", "n": [1, 2]}, ARRAYS)
    assert path.read_bytes() == container.encode(fmt, {"kind": "test", "n": [1, 2]}, ARRAYS)
    contents = container.read(fmt, path)
    assert contents.header["kind"] == "test"
    arrays = container.read_arrays(fmt, contents, mmap=mmap)
    assert list(arrays) == list(ARRAYS)
    for name, arr in ARRAYS.items():
        np.testing.assert_array_equal(arrays[name], arr)
        assert arrays[name].dtype.byteorder in "<=|"
    offsets = [spec["offset"] for spec in contents.header["arrays"]]
    assert all(offset % container.ALIGN == 0 for offset in offsets)


@pytest.mark.parametrize("layout", list(container.Layout))
def test_damage_names_the_file_and_the_field(tmp_path, layout):
    fmt = _format(layout)
    data = bytearray(container.encode(fmt, {}, ARRAYS))
    path = tmp_path / "x.bin"
    data[-40] ^= 0xFF                       # inside the last array (or the sha256 before it)
    path.write_bytes(bytes(data))
    field = "swapped" if layout is container.Layout.CRC32 else "checksum"
    with pytest.raises(_Error, match=f"^test file {path}: {field}: "):
        container.read_arrays(fmt, container.read(fmt, path))
    path.write_bytes(b"HOLDEMXX" + bytes(data[8:]))
    with pytest.raises(_Error, match=f"^test file {path}: magic: not a holdem test file"):
        container.read(fmt, path)


def test_importing_the_container_loads_no_numba():
    code = ("import sys, holdem.container; print(' '.join(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('numba', 'holdem'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert "holdem.container" in out and not [m for m in out if m.split(".")[0] == "numba"]
