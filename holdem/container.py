"""The file container of checkpoints and bucket files: magic, version, a msgpack header, raw arrays.

Never pickles: the header holds strings, numbers, lists and maps only, and an array is raw
little-endian bytes of a dtype its format allows. A :class:`Format` names what differs between
the files that use the container (magic, version, the exception and wording of errors, allowed
dtypes, sizes) and its :class:`Layout`. Both layouts start alike::

    offset 0   8 bytes   magic
    offset 8   uint32    format version (little-endian)
    offset 12  uint32    header length H
    offset 16  H bytes   header: msgpack map; its ``arrays`` lists, per array, ``name``,
                         ``dtype``, ``shape``, ``offset`` and ``nbytes`` (and ``crc32``)

``Layout.CRC32`` (checkpoints: large, read one array at a time or memory-mapped)::

    16 + H     uint32    CRC-32 of the header bytes
    ...        zero padding up to the first array
    offset     each array at the 64-byte aligned absolute ``offset`` in its description, with
               its CRC-32 in ``crc32``; the header is written with room to spare, so that the
               offsets it holds can be fixed before its length is known

``Layout.SHA256`` (bucket files: read whole; the same content gives the same bytes)::

    ...        zero padding to a 64-byte boundary D (the data section)
    D + off    each array at the 64-byte aligned ``offset`` (relative to D) in its description
    end - 32   32 bytes  sha256 of every byte before it

A reader checks the magic and the version before anything else, then the header's length and
checksum, then each array's description, bounds and checksum. Every problem raises the format's
exception as ``"<what> <path>: <field>: <message>"``. Writes are atomic
(:func:`holdem.fileio.atomic_open`). The order of keys in the header and in each array's
description is part of the bytes: it is kept as files were always written.
"""

import enum
import hashlib
import io
import struct
import zlib
from collections import namedtuple
from dataclasses import dataclass
from pathlib import Path

import msgpack
import numpy as np

from holdem.fileio import atomic_open

ALIGN = 64
PREFIX = struct.Struct("<8sII")         # magic, version, header length
_CRC = struct.Struct("<I")
_DIGEST = 32                            # sha256


class Layout(enum.Enum):
    """Where the arrays sit and how the file is checked (see the module docstring)."""

    CRC32 = "crc32"         # header and per-array CRC-32s, absolute offsets
    SHA256 = "sha256"       # one sha256 at the end, offsets from the data section


@dataclass(frozen=True)
class Format:
    """One file format in the container: what its files are called in errors and what the reader
    accepts. Message templates are filled with ``str.format``."""

    what: str                   # the file in errors: "checkpoint", "bucket file"
    magic: bytes                # 8 bytes
    version: int
    error: type                 # the exception raised, a ValueError subclass
    layout: Layout
    dtypes: frozenset           # dtypes an array may have (``np.dtype(...).str``)
    max_header: int             # header bytes at most
    max_file: int = 0           # Layout.SHA256: the whole file is read, so at most this
    wrong_magic: str = "not a holdem {what}"            # also {found!r} and {magic!r}
    past_end: str = "data runs past the end of the file"    # also {size}
    name_foreign: bool = False  # say so when a pickle or a zip archive is given instead

    def fail(self, path, field, message):
        raise self.error(f"{self.what} {path}: {field}: {message}")

    def unreadable(self, path, exc):
        """The exception for an OSError ``exc`` met reading ``path``."""
        return self.error(f"{self.what} {path}: cannot read: {exc.strerror}")


ArraySpec = namedtuple("ArraySpec", ["name", "dtype", "shape", "offset", "nbytes", "crc32"])
"""One array's description from a header: ``shape`` a tuple, ``crc32`` None in Layout.SHA256."""


@dataclass
class Contents:
    """A file whose prefix and header passed the checks; its arrays are read by
    :func:`read_arrays`."""

    path: Path
    header: dict
    size: int                   # bytes in the file
    data_start: int             # where array offsets count from (0: they are absolute)
    data_end: int               # where array data must end (before a trailing digest)
    data: bytearray = None      # the whole file (Layout.SHA256), else None: read from path


def pad(n):
    """Zero bytes that bring ``n`` up to a multiple of :data:`ALIGN`."""
    return (-n) % ALIGN


# -- writing ----------------------------------------------------------------------------------
def _little_endian(arr):
    arr = np.ascontiguousarray(arr)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return arr


def _raw(arr):
    return memoryview(arr).cast("B")


def _prefix(fmt, packed):
    return PREFIX.pack(fmt.magic, fmt.version, len(packed)) + packed


def _crc32_head(fmt, header, blobs):
    """(bytes before the data, data start) of Layout.CRC32; fills in ``header["arrays"]``."""
    specs = [{"name": name, "dtype": arr.dtype.str, "shape": list(arr.shape),
              "nbytes": int(arr.nbytes), "crc32": zlib.crc32(_raw(arr))}
             for name, arr in blobs.items()]
    # Offsets depend on the header length, which depends on the offsets: fix the header size by
    # laying out offsets relative to an aligned data start computed with a generous bound.
    header["arrays"] = specs
    for spec in specs:
        spec["offset"] = 0
    draft = msgpack.packb(header, use_bin_type=True)
    data_start = PREFIX.size + len(draft) + _CRC.size + 16 * len(specs) + 64
    data_start += pad(data_start)
    offset = data_start
    for spec in specs:
        spec["offset"] = offset
        offset += spec["nbytes"] + pad(spec["nbytes"])
    packed = msgpack.packb(header, use_bin_type=True)
    head = _prefix(fmt, packed) + _CRC.pack(zlib.crc32(packed))
    if len(head) > data_start:
        raise AssertionError(f"{fmt.what} header outgrew its reserved space")
    return head, data_start


def _sha256_head(fmt, header, blobs):
    """(bytes before the data, data start) of Layout.SHA256; fills in ``header["arrays"]``."""
    specs, offset = [], 0
    for name, arr in blobs.items():
        specs.append({"name": name, "dtype": arr.dtype.str, "shape": list(arr.shape),
                      "offset": offset, "nbytes": int(arr.nbytes)})
        offset += arr.nbytes + pad(arr.nbytes)
    header["arrays"] = specs
    head = _prefix(fmt, msgpack.packb(header, use_bin_type=True))
    return head, len(head) + pad(len(head))


class _Hashing:
    """A binary file that also feeds what is written to a sha256."""

    def __init__(self, f):
        self.f, self.sha256 = f, hashlib.sha256()

    def write(self, data):
        self.sha256.update(data)
        self.f.write(data)


def write(fmt, f, header, arrays):
    """Write ``header`` (a msgpack-able dict; its ``arrays`` entry is replaced) and ``arrays``
    (name -> ndarray, in that order) to the binary file ``f``."""
    header = dict(header)
    blobs = {name: _little_endian(arr) for name, arr in arrays.items()}
    layout = _crc32_head if fmt.layout is Layout.CRC32 else _sha256_head
    head, data_start = layout(fmt, header, blobs)
    out = _Hashing(f) if fmt.layout is Layout.SHA256 else f
    out.write(head)
    out.write(b"\0" * (data_start - len(head)))
    for arr in blobs.values():
        out.write(_raw(arr))
        out.write(b"\0" * pad(arr.nbytes))
    if fmt.layout is Layout.SHA256:
        f.write(out.sha256.digest())


def encode(fmt, header, arrays):
    """The bytes of a file holding ``header`` and ``arrays`` (as :func:`write`)."""
    buffer = io.BytesIO()
    write(fmt, buffer, header, arrays)
    return buffer.getvalue()


def save(fmt, path, header, arrays, prefix=None):
    """Write a file atomically (:func:`holdem.fileio.atomic_open`; ``prefix`` names its
    temporary file); returns the path."""
    path = Path(path)
    with atomic_open(path, "wb", prefix=prefix) as f:
        write(fmt, f, header, arrays)
    return path


# -- reading ----------------------------------------------------------------------------------
def _check_prefix(fmt, path, head, size):
    """The header length, after checking the first bytes ``head`` of a file of ``size`` bytes."""
    if fmt.name_foreign:
        if size >= 2 and head[0] == 0x80 and head[1] <= 5:
            fmt.fail(path, "magic", "this is a Python pickle, which is never loaded: not a "
                     f"holdem {fmt.what}")
        if head[:4] == b"PK\x03\x04":
            fmt.fail(path, "magic", f"this is a zip/.npz archive: not a holdem {fmt.what}")
    if len(head) < PREFIX.size:
        fmt.fail(path, "file", f"truncated ({size} bytes): not a holdem {fmt.what}")
    magic, version, hlen = PREFIX.unpack_from(head)
    if magic != fmt.magic:
        fmt.fail(path, "magic", fmt.wrong_magic.format(found=magic, magic=fmt.magic,
                                                       what=fmt.what))
    if version != fmt.version:
        fmt.fail(path, "format", f"version {version} is not supported (this holdem reads "
                 f"version {fmt.version})")
    trailer = _CRC.size if fmt.layout is Layout.CRC32 else _DIGEST
    if hlen > fmt.max_header or PREFIX.size + hlen + trailer > size:
        fmt.fail(path, "header", f"length {hlen} runs past the end of the file ({size} bytes): "
                 "the file is truncated or corrupt")
    return hlen


def _read_whole(fmt, path):
    try:
        size = path.stat().st_size
        if size > fmt.max_file:
            fmt.fail(path, "file", f"{size} bytes is too large for a {fmt.what}")
        data = bytearray(size)
        with open(path, "rb") as f:
            got = f.readinto(data)
    except OSError as exc:
        raise fmt.unreadable(path, exc) from None
    if got != size:
        fmt.fail(path, "file", "changed while being read")
    return data


def _read_sha256(fmt, path):
    data = _read_whole(fmt, path)
    hlen = _check_prefix(fmt, path, data, len(data))
    if hashlib.sha256(memoryview(data)[:-_DIGEST]).digest() != bytes(data[-_DIGEST:]):
        fmt.fail(path, "checksum", "sha256 mismatch: the file is truncated or corrupt")
    end = PREFIX.size + hlen
    contents = Contents(path=path, header=None, size=len(data), data_start=end + pad(end),
                        data_end=len(data) - _DIGEST, data=data)
    return contents, bytes(data[PREFIX.size:end])


def _read_crc32(fmt, path):
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            hlen = _check_prefix(fmt, path, f.read(PREFIX.size), size)
            packed = f.read(hlen)
            (crc,) = _CRC.unpack(f.read(_CRC.size))
    except OSError as exc:
        raise fmt.unreadable(path, exc) from None
    if zlib.crc32(packed) != crc:
        fmt.fail(path, "header", "checksum mismatch: the file is corrupt")
    return Contents(path=path, header=None, size=size, data_start=0, data_end=size), packed


def read(fmt, path):
    """Check the prefix and the header of ``path`` (Layout.SHA256: the whole file, which is
    read) -> :class:`Contents` holding the header (a dict, not yet checked further)."""
    path = Path(path)
    reader = _read_crc32 if fmt.layout is Layout.CRC32 else _read_sha256
    contents, packed = reader(fmt, path)
    try:
        contents.header = msgpack.unpackb(packed, raw=False, strict_map_key=True)
    except Exception as exc:  # msgpack raises several types; none of them runs code
        fmt.fail(path, "header", f"not valid msgpack ({exc})")
    if not isinstance(contents.header, dict):
        fmt.fail(path, "header", "not a mapping")
    return contents


def check_array(fmt, path, field, spec, arrays):
    """The usual check of an array's description before its data is read: a dtype the format
    allows and a shape that matches ``nbytes``."""
    if spec.dtype not in fmt.dtypes:
        fmt.fail(path, f"{field}.dtype", f"{spec.dtype!r} is not allowed")
    count = int(np.prod(spec.shape, dtype=np.int64)) if spec.shape else 1
    if count < 0 or count * np.dtype(spec.dtype).itemsize != spec.nbytes:
        fmt.fail(path, f"{field}.shape", f"{spec.shape} does not match nbytes {spec.nbytes}")


def _array_spec(fmt, path, field, raw):
    try:
        return ArraySpec(name=raw["name"], dtype=raw["dtype"], shape=tuple(raw["shape"]),
                         offset=int(raw["offset"]), nbytes=int(raw["nbytes"]),
                         crc32=int(raw["crc32"]) if fmt.layout is Layout.CRC32 else None)
    except (KeyError, TypeError, ValueError):
        fmt.fail(path, field, "malformed array description")


def _read_array(fmt, contents, spec, mmap):
    path, dt = contents.path, np.dtype(spec.dtype)
    start = contents.data_start + spec.offset
    if spec.offset < 0 or start + spec.nbytes > contents.data_end:
        fmt.fail(path, spec.name, fmt.past_end.format(size=contents.size))
    if contents.data is not None:
        arr = np.frombuffer(contents.data, dtype=dt, count=spec.nbytes // dt.itemsize,
                            offset=start).reshape(spec.shape)
    elif mmap and spec.nbytes:
        arr = np.memmap(path, dtype=dt, mode="r", offset=start, shape=spec.shape)
    else:
        with open(path, "rb") as f:
            f.seek(start)
            buf = f.read(spec.nbytes)
        if len(buf) != spec.nbytes:
            fmt.fail(path, spec.name, "truncated")
        arr = np.frombuffer(buf, dtype=dt).reshape(spec.shape)
    if spec.crc32 is not None and zlib.crc32(_raw(np.ascontiguousarray(arr))) != spec.crc32:
        fmt.fail(path, spec.name, "checksum mismatch: the file is corrupt")
    return arr


def read_arrays(fmt, contents, check=check_array, mmap=False):
    """The arrays (name -> ndarray) of a file :func:`read` returned, each description checked by
    ``check(fmt, path, field, spec, arrays read so far)`` (a :class:`ArraySpec`; it raises
    through ``fmt.fail``) before its bounds, data and checksum. Layout.SHA256 gives views of
    the file's bytes; Layout.CRC32 reads each array (with ``mmap``, read-only memory maps,
    whose CRCs are still checked, which reads the file once)."""
    path = contents.path
    if not isinstance(contents.header.get("arrays"), list):
        fmt.fail(path, "arrays", "missing or not a list")
    arrays = {}
    for i, raw in enumerate(contents.header["arrays"]):
        field = f"arrays[{i}]"
        spec = _array_spec(fmt, path, field, raw)
        check(fmt, path, field, spec, arrays)
        arrays[spec.name] = _read_array(fmt, contents, spec, mmap)
    return arrays
