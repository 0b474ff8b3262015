"""Offset-addressed deltas: split into shards in a worker, checked and merged in parallel by the
main process.

:class:`DeltaSplitter` (worker side) turns a batch's delta buffer into a :class:`SplitDelta`:
rows the shared store already holds travel as value offsets with their values -- one
:class:`Group` for regret updates, one for strategy updates, each partitioned into shards -- and
rows new to it as keys. :class:`RowMerger` (main side) checks every row of both groups against
the store on ``threads`` threads, and only when all of them pass adds them, each thread owning a
range of shards (one writer per row). See :mod:`holdem.store.delta_kernels`.
"""

from collections import namedtuple
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from holdem.store import delta_kernels as dk
from holdem.store.store import read_only

Group = namedtuple("Group", ["offsets", "values", "cuts"])
"""Rows of the shared store with updates: ``offsets`` uint32 (value offsets, shard after shard),
``values`` float32 (each row's, in the same order), ``cuts`` int64[2, SHARDS + 1] (the first row
and the first value of each shard, then the totals)."""

SplitDelta = namedtuple("SplitDelta", [
    "regret", "strategy",                                  # Groups: rows the store holds
    "keys", "num_actions", "new_regrets", "new_strategy",  # rows new to it
])

_REASONS = {dk.BAD_RANGE: "an offset outside the store's entries",
            dk.BAD_ROW: "an offset that is not the start of a row",
            dk.BAD_SHARD: "a row in the wrong shard",
            dk.BAD_COUNT: "rows that own another number of values than the shard carries",
            dk.BAD_VALUE: "a NaN or infinite value"}


class DeltaSplitter:
    """Reusable scratch for :func:`holdem.store.delta_kernels.split_delta` (grows as needed,
    so a worker allocates only when its batches grow)."""

    def __init__(self):
        self._scratch = {}
        self._cursor = np.empty((2, 2, dk.SHARDS), np.int64)
        self._cuts = np.empty((2, 2, dk.SHARDS + 1), np.int64)

    def _array(self, name, n, dtype, groups=None):
        arr = self._scratch.get(name)
        if arr is None or arr.shape[-1] < n:
            size = max(16, n)
            arr = np.empty(size if groups is None else (groups, size), dtype)
            self._scratch[name] = arr
        return arr

    def split(self, read, delta):
        """Split ``delta`` (StoreArrays) against the shared store ``read`` (StoreArrays).
        Increments travel as float32 (the store keeps float64 strategy sums). The returned
        arrays are views of this object's scratch, valid until the next call."""
        rows, entries = int(delta.meta[0]), int(delta.meta[1])
        offsets = self._array("offsets", rows, np.uint32, groups=2)
        regrets = self._array("regrets", entries, np.float32)
        strategy = self._array("strategy", entries, np.float32)
        keys = self._array("keys", rows, np.int64)
        num_actions = self._array("num_actions", rows, np.int8)
        new_regrets = self._array("new_regrets", entries, np.float32)
        new_strategy = self._array("new_strategy", entries, np.float32)
        cuts = self._cuts
        n_new, m_new = dk.split_delta(
            read, delta, self._array("row_offset", rows, np.int64), self._cursor, offsets,
            regrets, strategy, cuts, keys, num_actions, new_regrets, new_strategy)
        groups = [Group(offsets[g, :cuts[g, 0, -1]], values[:cuts[g, 1, -1]], cuts[g])
                  for g, values in enumerate((regrets, strategy))]
        return SplitDelta(groups[0], groups[1], keys[:n_new], num_actions[:n_new],
                          new_regrets[:m_new], new_strategy[:m_new])


def group_of(store, offsets, values):
    """The :class:`Group` of rows named by ``offsets`` (value offsets of ``store``'s rows, any
    order) with ``values`` (each row's, in that order): what a worker would send. For tests and
    tools; raises ``ValueError`` for an offset that does not start a row."""
    offsets = np.asarray(offsets, np.int64)
    values = np.asarray(values, np.float32)
    num_actions = np.empty(offsets.shape[0], np.int64)
    dk.row_lengths(store, offsets, num_actions)
    if (num_actions < 0).any():
        raise ValueError("an offset that does not start a row of the store")
    starts = np.concatenate(([0], np.cumsum(num_actions)))
    if starts[-1] != values.shape[0]:
        raise ValueError(f"the rows own {starts[-1]} values, {values.shape[0]} given")
    shard = (offsets >> dk.BLOCK_SHIFT) % dk.SHARDS
    order = np.argsort(shard, kind="stable")
    picks = [np.arange(starts[i], starts[i + 1]) for i in order]
    sorted_values = values[np.concatenate(picks)] if picks else values[:0]
    cuts = np.zeros((2, dk.SHARDS + 1), np.int64)
    np.add.at(cuts[0], shard + 1, 1)
    np.add.at(cuts[1], shard + 1, num_actions)
    np.cumsum(cuts, axis=1, out=cuts)
    return Group(offsets[order].astype(np.uint32), sorted_values, cuts)


def empty_group():
    return Group(np.zeros(0, np.uint32), np.zeros(0, np.float32),
                 np.zeros((2, dk.SHARDS + 1), np.int64))


class RowMerger:
    """Checks and adds the two groups of offset-addressed deltas into a store, on ``threads``
    threads (1: in the calling thread; at most SHARDS). The caller is the store's only writer
    and calls :meth:`merge` for one delta at a time."""

    def __init__(self, threads=1):
        self.threads = max(1, min(dk.SHARDS, int(threads)))
        self._pool = (ThreadPoolExecutor(self.threads - 1, thread_name_prefix="holdem-merge")
                      if self.threads > 1 else None)
        cuts = [dk.SHARDS * k // self.threads for k in range(self.threads + 1)]
        self.ranges = list(zip(cuts, cuts[1:]))        # thread k's shards
        self._num_actions = [np.empty(16, np.int8), np.empty(16, np.int8)]

    def map(self, fn):
        """``fn(first, last)`` for each thread's shard range (one writer per row across
        them): the first in this thread, the others on the pool (one thread fewer to wake)."""
        if self._pool is None:
            return [fn(*r) for r in self.ranges]
        others = [self._pool.submit(fn, *r) for r in self.ranges[1:]]
        return [fn(*self.ranges[0])] + [f.result() for f in others]

    def merge(self, arrays, regret, strategy, regret_floor=None):
        """Check both :class:`Group`s against the store ``arrays`` and, when every row is a
        row of it in its shard and the values match the rows' sizes and are finite, add the
        values (regrets clamped at ``regret_floor``); else raise ``ValueError`` with nothing
        written."""
        groups = [self._normalized(g, what) for g, what in ((regret, "regret"),
                                                            (strategy, "strategy"))]
        num_actions = []
        for k, g in enumerate(groups):
            if self._num_actions[k].shape[0] < g.offsets.shape[0]:
                self._num_actions[k] = np.empty(2 * g.offsets.shape[0], np.int8)
            num_actions.append(self._num_actions[k])
        checks = self.map(lambda lo, hi: [
            dk.check_shards(arrays, g.offsets, g.values.view(np.uint32), g.cuts, lo, hi, na)
            for g, na in zip(groups, num_actions)])
        for (lo, hi), codes in zip(self.ranges, checks):
            for what, code in zip(("regret", "strategy"), codes):
                if code != 0:
                    raise ValueError(f"malformed delta: {what} shards {lo}..{hi - 1}: "
                                     f"{_REASONS[code]}")
        floor = -np.inf if regret_floor is None else float(regret_floor)
        targets = ((arrays.regrets, floor), (arrays.strategy_sum, -np.inf))
        self.map(lambda lo, hi: [dk.add_shards(target, g.offsets, na, g.values, g.cuts, lo,
                                                hi, clamp)
                                  for g, na, (target, clamp) in zip(groups, num_actions,
                                                                    targets)])

    @staticmethod
    def _normalized(group, what):
        """The group as the kernels take it (read-only uint32 offsets, float32 values, int64
        cuts), its shape and cuts checked."""
        offsets, values, cuts = group
        offsets, values, cuts = np.asarray(offsets), np.asarray(values), np.asarray(cuts)
        if offsets.ndim != 1 or values.ndim != 1 or cuts.shape != (2, dk.SHARDS + 1):
            raise ValueError(f"malformed delta: {what} offsets and values must be 1-D and "
                             f"cuts [2, {dk.SHARDS + 1}]")
        if values.dtype != np.float32:
            raise ValueError(f"malformed delta: {what} values must be float32")
        if offsets.dtype != np.uint32:
            if offsets.size and (offsets.min() < 0 or offsets.max() > dk.MAX_OFFSET):
                raise ValueError(f"malformed delta: {what}: an offset outside the store's "
                                 "entries")
            offsets = offsets.astype(np.uint32)
        cuts = cuts.astype(np.int64, copy=False)
        if (cuts[:, 0] != 0).any() or (np.diff(cuts, axis=1) < 0).any() or (
                cuts[0, -1] != offsets.shape[0] or cuts[1, -1] != values.shape[0]):
            raise ValueError(f"malformed delta: {what} cuts do not split its "
                             f"{offsets.shape[0]} rows and {values.shape[0]} values")
        return Group(read_only(np.ascontiguousarray(offsets)),
                     read_only(np.ascontiguousarray(values)), read_only(cuts))

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
