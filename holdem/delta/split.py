"""Offset-addressed deltas, worker side: a flush's delta buffer split into shards.

:class:`DeltaSplitter` turns a batch's delta buffer into a :class:`SplitDelta`: rows the shared
store already holds travel as value offsets with their values -- one :class:`Group` for regret
updates, one for strategy updates, each partitioned into shards -- and rows new to it as keys.
:class:`HeldStrategy` holds a batch's strategy updates of stored rows back, and :class:`ColdRows`
a flush's cold rows. The main process checks and adds the groups shard by shard on its merge
threads (:mod:`holdem.delta.merge`). See :mod:`holdem.delta.shard_kernels`.
"""

from collections import namedtuple

import numpy as np

from holdem.delta import shard_kernels as dk
from holdem.store.store import RegretStore

Group = namedtuple("Group", ["offsets", "values", "cuts"])
"""Rows of the shared store with updates: ``offsets`` uint32 (value offsets, shard after shard),
``values`` float32 (each row's, in the same order), ``cuts`` int64[2, SHARDS + 1] (the first row
and the first value of each shard, then the totals)."""

SplitDelta = namedtuple("SplitDelta", [
    "regret", "strategy",                                  # Groups: rows the store holds
    "keys", "num_actions", "new_regrets", "new_strategy",  # rows new to it
])

_NO_HINT = np.zeros(0, np.int64)


class DeltaSplitter:
    """Reusable scratch for :func:`holdem.delta.shard_kernels.split_delta` (grows as needed,
    so a worker allocates only when its batches grow)."""

    def __init__(self):
        self._scratch = {}
        self._cursor = np.empty((2, 2, dk.SHARDS * dk.NA_CLASSES), np.int64)
        self._cuts = np.empty((2, 2, dk.SHARDS + 1), np.int64)
        self._held_cuts = np.empty((2, dk.SHARDS + 1), np.int64)

    def _array(self, name, n, dtype, groups=None):
        arr = self._scratch.get(name)
        if arr is None or arr.shape[-1] < n:
            size = max(16, n)
            arr = np.empty(size if groups is None else (groups, size), dtype)
            self._scratch[name] = arr
        return arr

    def split(self, read, delta, read_entry=None, held=None, release=True, release_bytes=None):
        """Split ``delta`` (StoreArrays) against the shared store ``read`` (StoreArrays).
        Increments travel as float32 (the store keeps float64 strategy sums). The returned
        arrays are views of this object's scratch, valid until the next call. ``read_entry``:
        the traversal's shared entry of each delta row by value offset (the worker's
        ``Workspace.read_entry``), valid only when every row of ``delta`` was visited against
        ``read`` since the buffer was cleared; None: each row is looked up.

        ``held``: a :class:`HeldStrategy` that takes the strategy updates of stored rows
        instead of the strategy group; with ``release`` the group is then everything it holds
        (this delta's updates included), and it holds nothing after -- or with
        ``release_bytes`` what of it takes at most that many bytes
        (:meth:`HeldStrategy.release`)."""
        rows, entries = int(delta.meta[0]), int(delta.meta[1])
        offsets = self._array("offsets", rows, np.uint32, groups=2)
        regrets = self._array("regrets", entries, np.float32)
        strategy = self._array("strategy", entries, np.float32)
        keys = self._array("keys", rows, np.int64)
        num_actions = self._array("num_actions", rows, np.int8)
        new_regrets = self._array("new_regrets", entries, np.float32)
        new_strategy = self._array("new_strategy", entries, np.float32)
        cuts = self._cuts
        hold = held is not None
        if hold:
            held.fit(read)
        h = held if hold else _NOTHING_HELD
        n_new, m_new = dk.split_delta(
            read, delta, self._array("row_offset", rows, np.int64), self._cursor, offsets,
            regrets, strategy, cuts, keys, num_actions, new_regrets, new_strategy,
            _NO_HINT if read_entry is None else read_entry, read_entry is not None,
            hold, h.values, h.num_actions, h.touched, h.counts)
        groups = [Group(offsets[g, :cuts[g, 0, -1]], values[:cuts[g, 1, -1]], cuts[g])
                  for g, values in enumerate((regrets, strategy))]
        if hold and release:
            groups[1] = held.release(self, release_bytes)
        return SplitDelta(groups[0], groups[1], keys[:n_new], num_actions[:n_new],
                          new_regrets[:m_new], new_strategy[:m_new])


class HeldStrategy:
    """A worker's strategy updates held back within a batch (:meth:`DeltaSplitter.split`).

    Traversals read regrets, never strategy sums, so the strategy updates of the rows the
    shared store holds need not go out every flush, as regret updates must (other workers
    read them): a worker adds them up here, by the row's value offset in the store (offsets
    never move), and sends them once, with the batch's last flush -- or earlier, once they
    take ``max_bytes``, so that a record stays within its ring. When the main store has a DCFR
    discount sweep meanwhile, the worker discounts what it holds as the sweep did the store's
    sums (:meth:`scale`) and holds on; the record says how many sweeps the store had at the
    last of them, so that the main process discounts the updates by the sweeps they missed
    after that (the worker decides: :meth:`holdem.runtime.worker.BatchRunner.take_delta`). A row
    touched by many flushes then costs the main process one add instead of one per flush: at 15
    workers' flush of ``hunl_default`` (50 iterations, batches of about 4,100) the rows a merged
    iteration costs fell from 128 to 54 (docs/parallel.md). Held rows go out sorted by number of
    actions and offset within each shard, the order in which the main process adds them. What
    a worker holds is lost with it, as its unsent iterations are."""

    def __init__(self, max_bytes=None):
        self.max_bytes = max_bytes
        self.values = np.zeros(0, np.float32)       # by value offset in the shared store
        self.num_actions = np.zeros(0, np.int8)     # 0: the row at this offset is not held
        self.touched = np.zeros(0, np.int64)        # offsets of the held rows
        self.counts = np.zeros(2, np.int64)         # held rows, held values
        self.next_shard = 0                         # where a partial release starts

    def fit(self, read):
        """Room for every row of the shared store ``read`` (it may have grown: what is held
        stays, at the same offsets)."""
        entries = read.regrets.shape[0]
        if self.values.shape[0] < entries:
            grow = entries - self.values.shape[0]
            self.values = np.concatenate((self.values, np.zeros(grow, np.float32)))
            self.num_actions = np.concatenate((self.num_actions, np.zeros(grow, np.int8)))
        rows = min(entries, int(read.meta[0]) + 1)
        if self.touched.shape[0] < rows:
            touched = np.zeros(max(1024, 2 * rows), np.int64)
            touched[:self.touched.shape[0]] = self.touched
            self.touched = touched

    @property
    def rows(self):
        return int(self.counts[0])

    @property
    def nbytes(self):
        """What the held rows take in a record: an offset a row, a float32 a value."""
        return 4 * int(self.counts[0] + self.counts[1])

    def full(self):
        """Whether the held rows take ``max_bytes`` or more."""
        return self.max_bytes is not None and self.nbytes >= self.max_bytes

    def scale(self, factor):
        """Multiply everything held by ``factor`` (a DCFR sweep's discount of strategy sums:
        :meth:`holdem.runtime.worker.BatchRunner.take_delta`)."""
        dk.scale_held(self.values, self.num_actions, self.touched, self.counts[0],
                      float(factor))

    def release(self, splitter, max_bytes=None):
        """What is held, as a strategy :class:`Group` (views of ``splitter``'s scratch), in
        the order sent (shard, number of actions, offset): everything, or with ``max_bytes``
        as many rows as take at most that many bytes in a record (one at least), shard after
        shard from :attr:`next_shard` round the shards (so that a row is not passed over
        however often the rows before it come back); the rest stays held."""
        rows, values = int(self.counts[0]), int(self.counts[1])
        partial = max_bytes is not None and self.nbytes > max_bytes
        order = self.touched[:rows]
        shards = (order >> dk.BLOCK_SHIFT) % dk.SHARDS
        if partial:
            shards = (shards - self.next_shard) % dk.SHARDS
        order |= (shards << _SHARD_SHIFT
                  | np.minimum(self.num_actions[order], dk.NA_CLASSES).astype(np.int64)
                  << _LENGTH_SHIFT)
        order.sort()
        order &= (1 << _LENGTH_SHIFT) - 1
        take, taken = rows, values
        if partial:
            lengths = self.num_actions[order].astype(np.int64)
            take = max(1, int(np.searchsorted(np.cumsum(4 + 4 * lengths), max_bytes,
                                              side="right")))
            taken = int(lengths[:take].sum())
            if take < rows:                     # the next starts at the first row left
                self.next_shard = int((order[take] >> dk.BLOCK_SHIFT) % dk.SHARDS)
            sent = order[:take]                 # in the order sent: by shard from 0 again
            sent |= (((sent >> dk.BLOCK_SHIFT) % dk.SHARDS) << _SHARD_SHIFT
                     | np.minimum(self.num_actions[sent], dk.NA_CLASSES).astype(np.int64)
                     << _LENGTH_SHIFT)
            sent.sort()
            sent &= (1 << _LENGTH_SHIFT) - 1
        offsets = splitter._array("held_offsets", take, np.uint32)
        out = splitter._array("held_values", taken, np.float32)
        cuts = splitter._held_cuts
        dk.release_held(self.values, self.num_actions, order[:take], offsets, out, cuts)
        self.touched[:rows - take] = order[take:]       # still held (overlapping: numpy copies)
        self.counts[0], self.counts[1] = rows - take, values - taken
        return Group(offsets[:take], out[:taken], cuts)


# HeldStrategy.release sorts by shard, then by number of actions (as split_delta groups rows:
# shard_kernels.NA_CLASSES), then by offset (offsets take 32 bits).
_SHARD_SHIFT = 40
_LENGTH_SHIFT = 32


_NOTHING_HELD = HeldStrategy()


class ColdRows:
    """A worker's cold rows within one batch: updates its flushes hold back for a while.

    A worker sends a delta every flush (a few dozen iterations at 15 workers) so that the rows
    every iteration touches -- preflop in NLHE -- reach the other workers soon. But most rows a
    flush touches are touched a few times in a whole batch, and sending every flush's rows made
    the main process add each such row once per touch. So at the end of each flush
    (:meth:`route`) a row goes out now when the previous flush also touched it (*hot*) or when
    this is its HOLD_TOUCHES-th touch since it last went out; otherwise it is *cold* and moves
    from the delta buffer into this holding store, to go out with its next touch or with the
    batch's last flush, which sends everything still held. So no row ever has more than
    HOLD_TOUCHES - 1 flushes' updates held, and hot rows go out every flush as before. At 15
    workers' flush this leaves 0.60 of the rows of hunl_default and 0.79 of hunl_blueprint to
    merge (docs/parallel.md). The worker does not see its own held updates in regret
    matching (nor its sent ones until they are merged), and a worker that dies loses what it
    held. Off by default (``train.hold_cold_rows``): each held row costs two hash-table moves,
    which slowed a worker more than it spared the main process
    (:func:`holdem.runtime.worker.holds_cold_rows`).
    """

    def __init__(self, game):
        self.store = RegretStore(row_capacity=game.initial_rows)
        entries = self.store.arrays.regrets.shape[0]
        self.last = np.full(entries, dk.NEVER, np.int64)
        self.touches = np.zeros(entries, np.int64)
        self.flush = 0                  # flushes of the current batch routed so far
        self._rows = np.empty(0, np.int64)

    def route(self, delta_store, last):
        """Hold the cold rows of this flush's ``delta_store`` (a :class:`RegretStore`) and add
        the held part of its hot rows into it; with ``last`` (the batch's last flush) put
        everything held back into it instead and start a new batch."""
        delta = delta_store.arrays
        held = self.store
        if not last:
            n = dk.hold_route(delta, held.arrays, self.last, self.touches, self.flush,
                              self._scratch(int(delta.meta[0])))
            if n:
                cold = self._rows[:n]
                held.merge(*self._gather(delta, cold), check_existing=False)
                self._fit()
                dk.hold_settle(delta, held.arrays, self.last, self.touches, cold, self.flush)
            self.flush += 1
            return
        carry = None
        if self.flush > 0:              # a batch of flushes (not one delta per batch)
            rows = int(delta.meta[0])
            carry = delta.row_key[:rows].copy(), delta.row_num_actions[:rows].copy()
        n = dk.held_rows(held.arrays, self._scratch(held.num_infosets))
        if n:
            delta_store.merge(*self._gather(held.arrays, self._rows[:n]), check_existing=False)
        if held.num_infosets:
            self.last[:held.num_entries] = dk.NEVER
            self.touches[:held.num_entries] = 0
            held.clear()
        self.flush = 0
        if carry is not None and carry[0].size:
            # The next batch goes on where this one ends: what this flush touched counts as
            # touched by the flush before the next batch's first, so hot rows stay hot.
            values = int(carry[1].sum(dtype=np.int64))
            held.merge(*carry, np.zeros(values, np.float32), np.zeros(values, np.float64),
                       check_existing=False)
            self._fit()
            self.last[held.arrays.row_offset[:held.num_infosets]] = -1

    def _fit(self):
        """Grow ``last`` and ``touches`` to the holding store's capacity."""
        capacity = self.store.arrays.regrets.shape[0]
        if capacity > self.last.shape[0]:
            grow = capacity - self.last.shape[0]
            self.last = np.concatenate((self.last, np.full(grow, dk.NEVER, np.int64)))
            self.touches = np.concatenate((self.touches, np.zeros(grow, np.int64)))

    def _scratch(self, rows):
        if self._rows.shape[0] < rows:
            self._rows = np.empty(max(1024, 2 * rows), np.int64)
        return self._rows

    @staticmethod
    def _gather(arrays, rows):
        """(keys, num_actions, regrets, strategy) of ``arrays``' rows ``rows``."""
        values = int(arrays.row_num_actions[rows].sum(dtype=np.int64))
        out = (np.empty(rows.shape[0], np.int64), np.empty(rows.shape[0], np.int8),
               np.empty(values, np.float32), np.empty(values, np.float64))
        dk.hold_gather(arrays, rows, *out)
        return out
