"""Offset-addressed deltas: split in a worker, checked and merged in parallel by the main process.

:class:`DeltaSplitter` (worker side) turns a batch's delta buffer into a :class:`SplitDelta`:
rows the shared store already holds travel as value offsets (sorted by merge block) with their
values, rows new to it as keys. :class:`RowMerger` (main side) checks every offset against the
store (a row start of the store, blocks in order) before anything is written, then adds the
values on ``threads`` threads, each owning a contiguous range of blocks. See
:mod:`holdem.store.delta_kernels` for the kernels.
"""

from collections import namedtuple
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from holdem.store import delta_kernels as dk

SplitDelta = namedtuple("SplitDelta", [
    "offsets", "regrets", "strategy",                      # rows the shared store holds
    "keys", "num_actions", "new_regrets", "new_strategy",  # rows new to it
])

_REASONS = {dk.BAD_RANGE: "an offset outside the store's entries",
            dk.BAD_ROW: "an offset that is not the start of a row",
            dk.BAD_ORDER: "offsets out of block order"}


def _grown(arr, n, dtype):
    return arr if arr is not None and arr.shape[0] >= n else np.empty(max(16, n), dtype)


class DeltaSplitter:
    """Reusable scratch for :func:`holdem.store.delta_kernels.split_delta` (grows as needed,
    so a worker allocates only when its batches or the shared store grow)."""

    def __init__(self):
        self._rows = {}
        self._values = {}
        self._blocks = None

    def _row_array(self, name, n, dtype):
        self._rows[name] = _grown(self._rows.get(name), n, dtype)
        return self._rows[name]

    def _value_array(self, name, n, dtype):
        self._values[name] = _grown(self._values.get(name), n, dtype)
        return self._values[name]

    def split(self, read, delta):
        """Split ``delta`` (StoreArrays) against the shared store ``read`` (StoreArrays).
        Strategy increments travel as float32 (the store keeps float64 sums). The returned
        arrays are views of this object's scratch, valid until the next call."""
        rows, entries = int(delta.meta[0]), int(delta.meta[1])
        blocks = dk.num_blocks(read.regrets.shape[0])
        if self._blocks is None or self._blocks[0].shape[0] != blocks:
            self._blocks = (np.empty(blocks, np.int64), np.empty(blocks, np.int64))
        out = SplitDelta(
            offsets=self._row_array("offsets", rows, np.int64),
            regrets=self._value_array("regrets", entries, np.float32),
            strategy=self._value_array("strategy", entries, np.float32),
            keys=self._row_array("keys", rows, np.int64),
            num_actions=self._row_array("num_actions", rows, np.int8),
            new_regrets=self._value_array("new_regrets", entries, np.float32),
            new_strategy=self._value_array("new_strategy", entries, np.float32))
        ref = self._row_array("ref", rows, np.int64)
        n_old, m_old, n_new, m_new = dk.split_delta(read, delta, ref, *self._blocks, *out)
        return SplitDelta(out.offsets[:n_old], out.regrets[:m_old], out.strategy[:m_old],
                          out.keys[:n_new], out.num_actions[:n_new], out.new_regrets[:m_new],
                          out.new_strategy[:m_new])


def block_pieces(offsets, pieces):
    """Cut points (``pieces + 1`` indices) splitting ``offsets`` (sorted by block) into about
    equal pieces that end at block boundaries, so no block is in two pieces. (On offsets that
    are not sorted the cuts are still increasing; the check then rejects the delta.)"""
    n = offsets.shape[0]
    blocks = offsets >> dk.BLOCK_SHIFT
    cuts = [0]
    for k in range(1, pieces):
        i = n * k // pieces
        if 0 < i < n:               # forward to the first row of the next block
            i = int(np.searchsorted(blocks, blocks[i - 1], side="right"))
        cuts.append(min(n, max(cuts[-1], i)))
    cuts.append(n)
    return cuts


class RowMerger:
    """Checks and adds the existing-row part of offset-addressed deltas into a store, on
    ``threads`` threads (1: in the calling thread). The caller is the store's only writer and
    calls :meth:`merge` for one delta at a time."""

    def __init__(self, threads=1):
        self.threads = max(1, int(threads))
        self._pool = (ThreadPoolExecutor(self.threads, thread_name_prefix="holdem-merge")
                      if self.threads > 1 else None)
        self._num_actions = np.empty(16, np.int8)

    def _map(self, fn, args):
        if self._pool is None or len(args) == 1:
            return [fn(*a) for a in args]
        return list(self._pool.map(lambda a: fn(*a), args))

    def merge(self, arrays, offsets, regret_delta, strategy_delta, regret_floor=None):
        """Check ``offsets`` (int64, sorted by block) against the store ``arrays`` and, when
        every one is a row of it and the values match the rows' sizes and are finite, add the
        values; else raise ``ValueError`` with nothing written."""
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        regret_delta = np.ascontiguousarray(regret_delta, dtype=np.float32)
        strategy_delta = np.ascontiguousarray(strategy_delta)
        if offsets.ndim != 1 or regret_delta.ndim != 1 or strategy_delta.shape != regret_delta.shape:
            raise ValueError("malformed delta: offsets and value arrays must be 1-D, the value "
                             "arrays of equal length")
        if strategy_delta.dtype not in (np.float32, np.float64):
            raise ValueError("malformed delta: strategy values must be float32 or float64")
        n = offsets.shape[0]
        self._num_actions = _grown(self._num_actions, n, np.int8)
        cuts = block_pieces(offsets, self.threads) if n else [0, 0]
        pieces = [(cuts[k], cuts[k + 1]) for k in range(len(cuts) - 1) if cuts[k] < cuts[k + 1]]
        counts = self._map(lambda lo, hi: dk.check_rows(arrays, offsets, lo, hi,
                                                        self._num_actions),
                           pieces)
        for (lo, hi), count in zip(pieces, counts):
            if count < 0:
                raise ValueError(f"malformed delta: {_REASONS[count]} among rows {lo}..{hi - 1}")
        if any(offsets[hi - 1] >> dk.BLOCK_SHIFT >= offsets[lo2] >> dk.BLOCK_SHIFT
               for (_, hi), (lo2, _) in zip(pieces, pieces[1:])):
            raise ValueError(f"malformed delta: {_REASONS[dk.BAD_ORDER]}")
        if sum(counts) != regret_delta.shape[0]:
            raise ValueError(f"malformed delta: the rows own {sum(counts)} values, the delta "
                             f"carries {regret_delta.shape[0]}")
        if not (np.isfinite(regret_delta).all() and np.isfinite(strategy_delta).all()):
            raise ValueError("malformed delta: non-finite values")
        floor = -np.inf if regret_floor is None else float(regret_floor)
        starts = np.concatenate(([0], np.cumsum(counts)))
        self._map(lambda lo, hi, pos: dk.add_rows(arrays, offsets, self._num_actions, lo, hi,
                                                  regret_delta, strategy_delta, pos, floor),
                  [(lo, hi, int(pos)) for (lo, hi), pos in zip(pieces, starts)])

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
