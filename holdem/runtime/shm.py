"""Shared memory for the regret store: one memory-mapped file per store generation.

The main process creates ``holdem-<pid>-<run>-g<generation>.store`` in a RAM-backed directory
(``/dev/shm`` on Linux, the temp directory elsewhere), lays the store's arrays out in it (64-byte
aligned) and is the only writer. Workers map the same file read-only, so N workers cost one store
plus per-worker constants, with no copy per batch. When the store grows the main process writes a
new generation and deletes the old file once every worker has moved to the new one.

Files are plain memory (no pickles, no code). A :class:`SharedAllocator` knows each of its files
by name *before* it exists and forgets it only once it is unlinked, so :meth:`SharedAllocator.close`
removes every one whatever interrupted what (a signal's exception in the middle of creating a
generation, of releasing one, or of closing), and a finalizer does the same at interpreter exit
if nothing closed it. Only a process that dies without running Python's exit (SIGKILL) leaves
files; :func:`clean_stale` removes them on the next run: their pid no longer runs, is a zombie,
or is now another process (one started after the file was last changed).
"""

import mmap
import os
import re
import tempfile
import uuid
import weakref
from pathlib import Path

import numpy as np

from holdem.fileio import StorageError, os_cause
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
        except BaseException:
            if create:                       # O_EXCL: the file is this call's own
                self.unlink()
            raise
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
        self.unlink_path(self.path)

    @staticmethod
    def unlink_path(path):
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def _unlink_owned(paths, owner):
    """Unlink every file in ``paths`` (a set, emptied as it goes), in process ``owner`` only (a
    forked child that exits through Python must not remove its parent's files)."""
    if os.getpid() != owner:
        return
    for path in sorted(paths):
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            continue                    # kept: a later close or the exit finalizer tries again
        paths.discard(path)


class SharedAllocator:
    """A :class:`holdem.store.store.RegretStore` allocator placing each generation in a new
    :class:`Segment`. Old generations stay mapped until :meth:`release_before` drops them.

    Every file it creates (generations, and what :meth:`create` makes for others: the delta
    rings) is named in :attr:`owned` before it exists and until it is unlinked; :meth:`close`
    and, at interpreter exit, a finalizer unlink what is left. A closed allocator makes no new
    generation (a store growing after shutdown would leave a file nobody removes)."""

    def __init__(self, directory=None, first_generation=0):
        self.directory = Path(directory) if directory else shm_dir()
        self.run_id = uuid.uuid4().hex[:12]
        self.generation = int(first_generation) - 1
        self.segments = {}          # generation -> Segment
        self.owned = set()          # paths of files made and not yet unlinked
        self.closed = False
        self._finalizer = weakref.finalize(self, _unlink_owned, self.owned, os.getpid())

    @property
    def location(self):
        """Where this allocator's files are (what :func:`relocate` takes): plain data."""
        return {"directory": str(self.directory), "pid": os.getpid(), "run_id": self.run_id}

    def create(self, path, specs):
        """A new :class:`Segment` at ``path`` holding arrays ``specs``, owned by this allocator
        (named in :attr:`owned` before the file exists)."""
        if self.closed:
            raise RuntimeError(f"shared memory of run {self.run_id} is closed: not creating "
                               f"{Path(path).name}")
        path = Path(path)
        descriptor = layout_descriptor(path, specs)
        # tmpfs allocates pages on first touch: a file larger than what is free would be made
        # and later kill the process with SIGBUS. Not airtight (other files' untouched pages),
        # but a full /dev/shm is named here instead.
        free = _free_bytes(self.directory)
        if free is not None and descriptor["size"] > free:
            raise StorageError(f"not enough space in {self.directory} for the store's next "
                               f"shared-memory file {path.name}: {descriptor['size']:,} bytes "
                               f"needed, {free:,} free")
        self.owned.add(path)
        try:
            return Segment(descriptor, create=True)
        except OSError as exc:
            raise StorageError(f"could not make the store's shared-memory file {path}: "
                               f"{os_cause(exc)}") from exc

    def __call__(self, specs):
        generation = self.generation + 1
        segment = self.create(segment_path(generation, **self.location), specs)
        self.segments[generation] = segment
        self.generation = generation
        return segment.arrays

    @property
    def descriptor(self):
        """(generation, descriptor) of the newest segment."""
        return self.generation, self.segments[self.generation].descriptor

    def unlink(self, path):
        """Unlink a file this allocator made (it is forgotten only once it is gone)."""
        path = Path(path)
        Segment.unlink_path(path)
        self.owned.discard(path)

    def release_before(self, generation):
        """Unlink and unmap every generation older than ``generation``."""
        for g in sorted(g for g in self.segments if g < generation):
            seg = self.segments[g]
            self.unlink(seg.path)
            del self.segments[g]
            seg.close()

    def close(self):
        """Unlink every file it made (their memory is freed once nobody maps them) and unmap
        its segments. Safe to call again, e.g. after an exception interrupted it."""
        self.closed = True
        _unlink_owned(self.owned, os.getpid())
        while self.segments:
            _, seg = self.segments.popitem()
            seg.close()


def _free_bytes(directory):
    """Bytes an unprivileged process may still write under ``directory`` (None if unknown)."""
    try:
        st = os.statvfs(directory)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def segment_path(generation, directory, pid, run_id):
    """The file of store generation ``generation`` of the allocator at this location."""
    return Path(directory) / f"holdem-{int(pid)}-{run_id}-g{int(generation)}.store"


def ring_path(directory, pid, run_id):
    """The file of the delta rings (:mod:`holdem.runtime.ring`) of the run at this location."""
    return Path(directory) / f"holdem-{int(pid)}-{run_id}-r0.store"


def sibling(descriptor, generation, specs):
    """The descriptor of store generation ``generation`` (arrays ``specs``) of the allocator
    whose segment ``descriptor`` is: how a worker finds a generation it was not sent."""
    path = Path(descriptor["path"])
    m = _NAME_RE.match(path.name)
    if m is None or m.group(2) != "g":
        raise ValueError(f"not a holdem segment of a store generation: {path}")
    name = re.sub(r"-g\d+\.store$", f"-g{int(generation)}.store", path.name)
    return layout_descriptor(path.with_name(name), specs)


def relocate(descriptor, directory, pid, run_id):
    """``descriptor`` (a segment of the main process's store) moved to the allocator at this
    location: a replica of the store that grows at the same points has the same generations and
    layouts, in files of its own."""
    m = _NAME_RE.match(Path(descriptor["path"]).name)
    if m is None or m.group(2) != "g":
        raise ValueError(f"not a holdem segment of a store generation: {descriptor['path']}")
    return {**descriptor, "path": str(segment_path(int(m.group(3)), directory, pid, run_id))}


def _process_start(pid):
    """(state, start time in seconds since the epoch) of process ``pid`` from /proc, or None
    where there is no /proc (or the process just ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    fields = stat[stat.rindex(")") + 2:].split()      # from field 3 (the name may hold spaces)
    return fields[0], boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")


def _owner_alive(pid, changed):
    """Whether the process that made a file last changed at ``changed`` (epoch seconds) still
    runs as ``pid``: a zombie (killed, not yet reaped) does not, nor a process started after the
    change (the pid was reused: /proc's boot time has a resolution of a second)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    found = _process_start(pid)
    if found is None:
        return True
    state, started = found
    return state not in ("Z", "X") and started <= changed + 2.0


def clean_stale(directory=None):
    """Remove segments left by holdem processes that no longer run (see :func:`_owner_alive`).
    Returns their paths."""
    directory = Path(directory) if directory else shm_dir()
    removed = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = _NAME_RE.match(entry.name)
        if not m:
            continue
        try:
            changed = entry.stat().st_ctime
        except OSError:
            continue                    # removed meanwhile
        if not _owner_alive(int(m.group(1)), changed):
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
