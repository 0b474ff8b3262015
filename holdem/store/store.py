"""The regret store: cumulative regrets and strategy sums per (infoset, action).

A :class:`RegretStore` owns the flat arrays described in :mod:`holdem.store.kernels` and grows
them (doubling) between kernel calls; kernels only ever write inside the capacity they were given.
The same class serves as a worker's sparse *delta* buffer: cleared after each batch, its used
prefix is exactly the batch's delta (keys, num_actions, regret and strategy increments).
"""

import numpy as np

from holdem.fileio import StorageError
from holdem.store import kernels
from holdem.store.kernels import StoreArrays

ROW_BYTES = 8 + 8 + 1            # row_key + row_offset + row_num_actions
SLOT_BYTES = 16                  # table: key + entry
ENTRY_BYTES = 4 + 8              # float32 regret + float64 strategy sum (+ 1 bit: row starts)


def _pow2_at_least(n):
    return 1 << max(4, int(n - 1).bit_length())


def array_specs(row_capacity, entry_capacity, table_capacity):
    """(name, dtype, length) of each store array, in :class:`StoreArrays` order."""
    return [
        ("table", np.int64, (table_capacity, 2)),
        ("row_key", np.int64, row_capacity), ("row_offset", np.int64, row_capacity),
        ("row_num_actions", np.int8, row_capacity), ("regrets", np.float32, entry_capacity),
        ("strategy_sum", np.float64, entry_capacity), ("meta", np.int64, 2),
        ("row_start", np.uint64, entry_capacity // 64 + 2),
    ]


class StoreFull(StorageError):
    """The store could not grow: its allocator refused the next generation -- a full
    ``/dev/shm`` (or ``HOLDEM_SHM_DIR``), a file size limit, or, in private memory, a
    ``MemoryError``. The store keeps its arrays as they were, so what it holds can still be
    checkpointed. ``directory``: where the refused file was to be made (None: private memory);
    ``cause``: the allocator's message. A run stops on it with a final checkpoint
    (:mod:`holdem.training`), which adds what it did and what to do to the message (``note``)."""

    def __init__(self, cause, directory=None, errno=None):
        super().__init__(cause)
        self.cause = str(cause)
        self.directory = directory
        self.errno = errno              # of the refusal (ENOSPC, EFBIG), if the system gave one
        self.note = ""
        self.checkpoint = None

    def __str__(self):
        return f"the store could not grow: {self.cause}{self.note}"


def _numpy_allocator(specs):
    return StoreArrays(*(np.zeros(n, dtype=dt) for _, dt, n in specs))


class RegretStore:
    """Growable hash-indexed store. ``arrays`` is the namedtuple the kernels take.

    ``allocator(specs) -> StoreArrays`` returns zeroed arrays for :func:`array_specs`; the default
    uses private numpy memory, the parallel runtime passes one backed by shared memory.
    """

    def __init__(self, row_capacity=1024, entry_capacity=None, allocator=None):
        self._allocator = allocator or _numpy_allocator
        row_capacity = max(16, int(row_capacity))
        if entry_capacity is None:
            entry_capacity = 4 * row_capacity
        self.arrays = self._allocate(row_capacity, int(entry_capacity))

    def _allocate(self, row_capacity, entry_capacity, table_capacity=None):
        if table_capacity is None:
            table_capacity = _pow2_at_least(2 * row_capacity)
        arrays = self._allocator(array_specs(row_capacity, entry_capacity, table_capacity))
        arrays.table[:, 0] = kernels.EMPTY
        return arrays

    # -- size ------------------------------------------------------------------------------
    @property
    def num_infosets(self):
        return int(self.arrays.meta[0])

    @property
    def num_entries(self):
        return int(self.arrays.meta[1])

    @property
    def nbytes(self):
        """Bytes allocated by the store's arrays (capacity, not just what is used)."""
        return int(sum(a.nbytes for a in self.arrays))

    @property
    def used_bytes(self):
        """Bytes the used rows and entries would take in a tightly packed store."""
        return self.num_infosets * (ROW_BYTES + 2 * SLOT_BYTES) + self.num_entries * ENTRY_BYTES

    # -- growth ----------------------------------------------------------------------------
    def reserve(self, new_rows, new_entries):
        """Grow (by doubling) so that ``new_rows`` more rows with ``new_entries`` entries fit.
        Raises :class:`StoreFull`, the store unchanged, when the allocator refuses."""
        a = self.arrays
        need_rows = self.num_infosets + int(new_rows)
        need_entries = self.num_entries + int(new_entries)
        row_cap = a.row_key.shape[0]
        entry_cap = a.regrets.shape[0]
        table_cap = a.table.shape[0]
        if need_rows <= row_cap and need_entries <= entry_cap and 2 * need_rows <= table_cap:
            return False
        while row_cap < need_rows:
            row_cap *= 2
        while entry_cap < need_entries:
            entry_cap *= 2
        # The table is sized from the rows it must hold now, not from the doubled row capacity:
        # a sparser table spreads the same keys over more cache lines (and memory).
        table_cap = max(table_cap, _pow2_at_least(2 * need_rows))
        self._resize(row_cap, entry_cap, table_cap)
        return True

    def _resize(self, row_cap, entry_cap, table_cap):
        old = self.arrays
        try:
            new = self._allocate(row_cap, entry_cap, table_cap)
        except (StorageError, OSError, MemoryError) as exc:
            if isinstance(exc, MemoryError):
                size = sum(int(np.dtype(dt).itemsize * np.prod(n))
                           for _, dt, n in array_specs(row_cap, entry_cap, table_cap))
                cause = f"out of memory for its next arrays ({size:,} bytes)"
            else:
                cause = str(exc)
            system = exc if isinstance(exc, OSError) else exc.__cause__
            raise StoreFull(cause, getattr(self._allocator, "directory", None),
                            getattr(system, "errno", None)) from exc
        rows, entries = self.num_infosets, self.num_entries
        for name in ("row_key", "row_offset", "row_num_actions"):
            getattr(new, name)[:rows] = getattr(old, name)[:rows]
        new.regrets[:entries] = old.regrets[:entries]
        new.strategy_sum[:entries] = old.strategy_sum[:entries]
        new.meta[:] = old.meta
        new.row_start[:old.row_start.shape[0]] = old.row_start
        kernels.rebuild_index(new)
        self.arrays = new

    def clear(self):
        """Forget every row (used for per-batch delta buffers). Capacity is kept."""
        self.arrays.table[:, 0] = kernels.EMPTY
        self.arrays.row_start[:self.num_entries // 64 + 2] = 0
        self.arrays.meta[:] = 0

    # -- access ----------------------------------------------------------------------------
    def row_of(self, key):
        """Row index of ``key`` (order of first visit) or -1."""
        entry = int(kernels.find_entry_py(self.arrays, np.int64(key)))
        if entry < 0:
            return -1
        offsets = self.arrays.row_offset[:self.num_infosets]
        return int(np.searchsorted(offsets, entry >> 8))

    def values_of(self, key):
        """(regrets, strategy_sum) views of ``key``'s actions, or None."""
        entry = int(kernels.find_entry_py(self.arrays, np.int64(key)))
        if entry < 0:
            return None
        off, na = entry >> 8, entry & 255
        return self.arrays.regrets[off:off + na], self.arrays.strategy_sum[off:off + na]

    def used(self):
        """Views of the used prefix: (keys, num_actions, offsets, regrets, strategy_sum)."""
        a = self.arrays
        r, e = self.num_infosets, self.num_entries
        return (a.row_key[:r], a.row_num_actions[:r], a.row_offset[:r], a.regrets[:e],
                a.strategy_sum[:e])

    def merge(self, keys, num_actions, regret_delta, strategy_delta, regret_floor=None,
              check_existing=True):
        """Add a sparse delta (see :func:`holdem.store.kernels.merge_delta`); grows as needed.

        Shapes, dtypes and values are validated here, and (``check_existing``) each key's
        num_actions against the row already stored, so a malformed delta raises ``ValueError``
        before anything is written. Callers that validated against the game skip the last check.
        """
        keys, num_actions, regret_delta, strategy_delta = validate_delta(
            keys, num_actions, regret_delta, strategy_delta)
        if check_existing and self.num_infosets:
            bad = int(kernels.find_mismatch(self.arrays, keys, num_actions))
            if bad >= 0:
                raise ValueError(f"malformed delta: key {int(keys[bad])} has "
                                 f"{int(num_actions[bad])} actions, the store holds another "
                                 "number")
        floor = -np.inf if regret_floor is None else float(regret_floor)
        done, pos, ring = 0, 0, kernels.merge_ring()
        while True:
            done, pos = kernels.merge_delta(self.arrays, keys, num_actions, regret_delta,
                                            strategy_delta, floor, done, pos, ring)
            if done == keys.shape[0]:
                return
            # Grown only for the new row that did not fit: reserving room for every row of the
            # delta, as if all were new, doubled the shared store's table and arrays (hunl_default:
            # 36.4 MB against 24.2 MB in-process) and spread the hot rows over more cache lines.
            self.reserve(1, int(num_actions[done]))

    @classmethod
    def copy_of(cls, arrays, allocator=None):
        """An exact copy of a store's ``arrays`` -- capacities and hash table included -- so
        that the same merges grow both at the same points and put rows at the same offsets
        (a store replica on another machine)."""
        store = cls.__new__(cls)
        store._allocator = allocator or _numpy_allocator
        copy = store._allocator(array_specs(arrays.row_key.shape[0], arrays.regrets.shape[0],
                                            arrays.table.shape[0]))
        for target, source in zip(copy, arrays):
            if target.shape != source.shape or target.dtype != source.dtype:
                raise ValueError("store arrays do not have the layout of array_specs")
            target[...] = source
        store.arrays = copy
        return store

    @classmethod
    def from_arrays(cls, keys, num_actions, regrets, strategy_sum, allocator=None):
        """A store holding exactly these rows (used when loading a checkpoint)."""
        store = cls(row_capacity=max(16, len(keys)), entry_capacity=max(64, len(regrets)),
                    allocator=allocator)
        store.merge(keys, num_actions, regrets, strategy_sum)
        return store


def read_only(arr):
    """A read-only view of the array ``arr`` (nothing is copied)."""
    view = arr.view()
    view.flags.writeable = False
    return view


def read_only_view(arrays):
    """A :class:`StoreArrays` of read-only views of ``arrays`` (nothing is copied): a kernel that
    writes to the store it was meant only to read fails instead of corrupting it."""
    return arrays._replace(**{name: read_only(getattr(arrays, name))
                              for name in arrays._fields})


def validate_delta(keys, num_actions, regret_delta, strategy_delta):
    """Check a delta's shapes, dtypes and consistency; return contiguous arrays or raise."""
    try:
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        wide = np.asarray(num_actions)
        if wide.size and (not np.issubdtype(wide.dtype, np.integer)
                          or wide.min() < 1 or wide.max() > 127):
            raise ValueError("num_actions must be integers in 1..127 (empty action set?)")
        num_actions = np.ascontiguousarray(wide, dtype=np.int8)
        regret_delta = np.ascontiguousarray(regret_delta, dtype=np.float32)
        strategy_delta = np.ascontiguousarray(strategy_delta, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"malformed delta: {exc}") from None
    if keys.ndim != 1 or num_actions.shape != keys.shape:
        raise ValueError("malformed delta: keys and num_actions must be 1-D of equal length")
    if regret_delta.ndim != 1 or strategy_delta.shape != regret_delta.shape:
        raise ValueError("malformed delta: regret and strategy deltas must be 1-D of equal length")
    if keys.size and (keys.min() < 0 or num_actions.min() < 1):
        raise ValueError("malformed delta: negative key or empty action set")
    if int(num_actions.sum(dtype=np.int64)) != regret_delta.shape[0]:
        raise ValueError("malformed delta: sum(num_actions) does not match the value arrays")
    if not (np.isfinite(regret_delta).all() and np.isfinite(strategy_delta).all()):
        raise ValueError("malformed delta: non-finite values")
    return keys, num_actions, regret_delta, strategy_delta
