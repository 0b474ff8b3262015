"""Offset-addressed deltas: split in a worker, checked and merged in parallel by the main process.

:class:`DeltaSplitter` (worker side) turns a batch's delta buffer into a :class:`SplitDelta`:
rows the shared store already holds travel as value offsets with their values -- one group for
regret updates, one for strategy updates -- and rows new to it as keys. :class:`RowMerger` (main
side) checks every offset against the store (a row start of the store) before anything is
written, then adds each group on ``threads`` threads, thread k taking the rows whose 4,096-entry
block is k modulo the thread count (one writer per row). See :mod:`holdem.store.delta_kernels`.
"""

from collections import namedtuple
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from holdem.store import delta_kernels as dk

SplitDelta = namedtuple("SplitDelta", [
    "regret_offsets", "regrets",                           # rows the shared store holds, with
    "strategy_offsets", "strategy",                        #   regret / strategy updates
    "keys", "num_actions", "new_regrets", "new_strategy",  # rows new to it
])

_REASONS = {dk.BAD_RANGE: "an offset outside the store's entries",
            dk.BAD_ROW: "an offset that is not the start of a row"}


class DeltaSplitter:
    """Reusable scratch for :func:`holdem.store.delta_kernels.split_delta` (grows as needed,
    so a worker allocates only when its batches grow)."""

    def __init__(self):
        self._scratch = {}

    def _array(self, name, n, dtype, groups=None):
        arr = self._scratch.get(name)
        if arr is None or arr.shape[-1] < n:
            size = max(16, n)
            arr = np.empty(size if groups is None else (groups, size), dtype)
            self._scratch[name] = arr
        return arr

    def split(self, read, delta):
        """Split ``delta`` (StoreArrays) against the shared store ``read`` (StoreArrays).
        Strategy increments travel as float32 (the store keeps float64 sums). The returned
        arrays are views of this object's scratch, valid until the next call."""
        rows, entries = int(delta.meta[0]), int(delta.meta[1])
        offsets = self._array("offsets", rows, np.int64, groups=2)
        regrets = self._array("regrets", entries, np.float32)
        strategy = self._array("strategy", entries, np.float32)
        keys = self._array("keys", rows, np.int64)
        num_actions = self._array("num_actions", rows, np.int8)
        new_regrets = self._array("new_regrets", entries, np.float32)
        new_strategy = self._array("new_strategy", entries, np.float32)
        n_r, m_r, n_s, m_s, n_new, m_new = dk.split_delta(
            read, delta, offsets, regrets, strategy, keys, num_actions, new_regrets,
            new_strategy)
        return SplitDelta(offsets[0, :n_r], regrets[:m_r], offsets[1, :n_s], strategy[:m_s],
                          keys[:n_new], num_actions[:n_new], new_regrets[:m_new],
                          new_strategy[:m_new])


class RowMerger:
    """Checks and adds the stored-row groups of offset-addressed deltas into a store, on
    ``threads`` threads (1: in the calling thread). The caller is the store's only writer and
    calls :meth:`merge` for one delta at a time."""

    def __init__(self, threads=1):
        self.threads = max(1, int(threads))
        self._pool = (ThreadPoolExecutor(self.threads, thread_name_prefix="holdem-merge")
                      if self.threads > 1 else None)

    def _map(self, fn, args):
        if self._pool is None or len(args) == 1:
            return [fn(*a) for a in args]
        return list(self._pool.map(lambda a: fn(*a), args))

    def merge(self, arrays, regret_offsets, regret_delta, strategy_offsets, strategy_delta,
              regret_floor=None):
        """Check both groups of offsets (int64, any order) against the store ``arrays`` and,
        when every one is a row of it and the values match the rows' sizes and are finite, add
        the values (regrets clamped at ``regret_floor``); else raise ``ValueError`` with
        nothing written."""
        regrets = self._checked(arrays, regret_offsets, regret_delta, np.float32, "regret")
        strategy = self._checked(arrays, strategy_offsets, strategy_delta, None, "strategy")
        floor = -np.inf if regret_floor is None else float(regret_floor)
        for (offsets, values, num_actions), target, clamp in (
                (regrets, arrays.regrets, floor), (strategy, arrays.strategy_sum, -np.inf)):
            self._map(lambda k: dk.add_group(target, offsets, num_actions, k, self.threads,
                                             values, clamp),
                      [(k,) for k in range(self.threads)])

    def _checked(self, arrays, offsets, values, dtype, what):
        """Check one group in full (on the threads, by index range); returns (offsets, values,
        num_actions of each row)."""
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        values = np.ascontiguousarray(values, dtype=dtype)
        if offsets.ndim != 1 or values.ndim != 1:
            raise ValueError(f"malformed delta: {what} offsets and values must be 1-D")
        if values.dtype not in (np.float32, np.float64):
            raise ValueError(f"malformed delta: {what} values must be float32 or float64")
        n = offsets.shape[0]
        num_actions = np.empty(max(n, 1), np.int8)
        cuts = [n * k // self.threads for k in range(self.threads + 1)]
        ranges = [(lo, hi) for lo, hi in zip(cuts, cuts[1:]) if lo < hi]
        counts = self._map(lambda lo, hi: dk.check_rows(arrays, offsets, lo, hi, num_actions),
                           ranges)
        for (lo, hi), count in zip(ranges, counts):
            if count < 0:
                raise ValueError(f"malformed delta: {what} rows {lo}..{hi - 1}: "
                                 f"{_REASONS[count]}")
        if sum(counts) != values.shape[0]:
            raise ValueError(f"malformed delta: the {what} rows own {sum(counts)} values, the "
                             f"delta carries {values.shape[0]}")
        if not np.isfinite(values).all():
            raise ValueError(f"malformed delta: non-finite {what} values")
        return offsets, values, num_actions

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
