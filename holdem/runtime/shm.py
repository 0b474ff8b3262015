"""Shared memory for the regret store: one memory-mapped file per store generation.

The main process creates ``holdem-<pid>-<run>-g<generation>.store`` in a RAM-backed directory
(``/dev/shm`` on Linux, the temp directory elsewhere), lays the store's arrays out in it (64-byte
aligned) and is the only writer. Workers map the same file read-only, so N workers cost one store
plus per-worker constants, with no copy per batch. When the store grows the main process writes a
new generation and deletes the old file once every worker has moved to the new one.

Files are plain memory (no pickles, no code). If the main process is killed, its files stay until
:func:`clean_stale` finds them on the next run (their pid is no longer alive) and removes them.
"""

import mmap
import os
import re
import tempfile
import uuid
from pathlib import Path

import numpy as np

from holdem.store.kernels import StoreArrays

_ALIGN = 64
# A store generation's file (g) or the delta rings' (r: holdem.runtime.ring).
_NAME_RE = re.compile(r"^holdem-(\d+)-[0-9a-f]+-([gr])(\d+)\.store$")


def shm_dir():
    """Directory for shared segments: HOLDEM_SHM_DIR, else /dev/shm, else the temp dir."""
    env = os.environ.get("HOLDEM_SHM_DIR")
    if env:
        return Path(env)
    dev = Path("/dev/shm")
    if dev.is_dir() and os.access(dev, os.W_OK):
        return dev
    return Path(tempfile.gettempdir())


def _layout(specs):
    offsets, pos = [], 0
    for _, dt, shape in specs:
        offsets.append(pos)
        pos += int(np.dtype(dt).itemsize * np.prod(shape))
        pos += (-pos) % _ALIGN
    return offsets, max(pos, _ALIGN)


def layout_descriptor(path, specs):
    """Plain data describing a segment (what workers need to map it)."""
    offsets, size = _layout(specs)
    return {"path": str(path), "size": size,
            "arrays": [[name, np.dtype(dt).str, list(np.atleast_1d(shape).tolist()), off]
                       for (name, dt, shape), off in zip(specs, offsets)]}


def _views(buf, descriptor, readonly):
    arrays = []
    for name, dtype, shape, off in descriptor["arrays"]:
        count = int(np.prod(shape))
        arr = np.frombuffer(buf, dtype=np.dtype(dtype), count=count, offset=off).reshape(shape)
        if readonly:
            arr.flags.writeable = False
        arrays.append(arr)
    return StoreArrays(*arrays) if len(arrays) == len(StoreArrays._fields) else tuple(arrays)


class Segment:
    """One mapped file holding a store's arrays."""

    def __init__(self, descriptor, create=False, writable=False):
        self.descriptor = descriptor
        self.path = Path(descriptor["path"])
        size = descriptor["size"]
        writable = writable or create
        flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
        fd = os.open(self.path, flags if writable else os.O_RDONLY, 0o600)
        try:
            if create:
                os.ftruncate(fd, size)       # zero-filled, pages allocated on first touch
            if writable:
                self._mmap = mmap.mmap(fd, size)
            else:
                self._mmap = mmap.mmap(fd, size, prot=mmap.PROT_READ)
        finally:
            os.close(fd)
        self.arrays = _views(self._mmap, descriptor, readonly=not writable)

    def close(self):
        self.arrays = None
        try:
            self._mmap.close()
        except BufferError:
            # numpy views still alive somewhere; the mapping goes away with them.
            pass

    def unlink(self):
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass


class SharedAllocator:
    """A :class:`holdem.store.store.RegretStore` allocator placing each generation in a new
    :class:`Segment`. Old generations stay mapped until :meth:`release_before` drops them."""

    def __init__(self, directory=None, first_generation=0):
        self.directory = Path(directory) if directory else shm_dir()
        self.run_id = uuid.uuid4().hex[:12]
        self.generation = int(first_generation) - 1
        self.segments = {}          # generation -> Segment

    @property
    def location(self):
        """Where this allocator's files are (what :func:`relocate` takes): plain data."""
        return {"directory": str(self.directory), "pid": os.getpid(), "run_id": self.run_id}

    def __call__(self, specs):
        self.generation += 1
        path = segment_path(self.generation, **self.location)
        segment = Segment(layout_descriptor(path, specs), create=True)
        self.segments[self.generation] = segment
        return segment.arrays

    @property
    def descriptor(self):
        """(generation, descriptor) of the newest segment."""
        return self.generation, self.segments[self.generation].descriptor

    def release_before(self, generation):
        """Unlink and unmap every generation older than ``generation``."""
        for g in [g for g in self.segments if g < generation]:
            seg = self.segments.pop(g)
            seg.unlink()
            seg.close()

    def close(self):
        """Unlink every segment (their memory is freed once nobody maps them)."""
        for seg in self.segments.values():
            seg.unlink()
        for seg in self.segments.values():
            seg.close()
        self.segments.clear()


def segment_path(generation, directory, pid, run_id):
    """The file of store generation ``generation`` of the allocator at this location."""
    return Path(directory) / f"holdem-{int(pid)}-{run_id}-g{int(generation)}.store"


def ring_path(directory, pid, run_id):
    """The file of the delta rings (:mod:`holdem.runtime.ring`) of the run at this location."""
    return Path(directory) / f"holdem-{int(pid)}-{run_id}-r0.store"


def relocate(descriptor, directory, pid, run_id):
    """``descriptor`` (a segment of the main process's store) moved to the allocator at this
    location: a replica of the store that grows at the same points has the same generations and
    layouts, in files of its own."""
    m = _NAME_RE.match(Path(descriptor["path"]).name)
    if m is None or m.group(2) != "g":
        raise ValueError(f"not a holdem segment of a store generation: {descriptor['path']}")
    return {**descriptor, "path": str(segment_path(int(m.group(3)), directory, pid, run_id))}


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale(directory=None):
    """Remove segments left by holdem processes that no longer exist. Returns their paths."""
    directory = Path(directory) if directory else shm_dir()
    removed = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = _NAME_RE.match(entry.name)
        if m and not _pid_alive(int(m.group(1))):
            try:
                entry.unlink()
                removed.append(entry)
            except OSError:
                pass
    return removed


def list_segments(directory=None, pid=None):
    """holdem segment files in ``directory`` (of process ``pid`` if given)."""
    directory = Path(directory) if directory else shm_dir()
    out = []
    for entry in directory.iterdir():
        m = _NAME_RE.match(entry.name)
        if m and (pid is None or int(m.group(1)) == pid):
            out.append(entry)
    return out
