"""Kernels of the offset-addressed delta: a worker's batch delta split for a parallel merge.

A worker's delta (a :class:`holdem.store.kernels.StoreArrays` buffer keyed by infoset) is split
by :func:`split_delta` into

- rows the shared store already holds, named by their *value offset* in it (offsets never move;
  see ``row_start`` in :mod:`holdem.store.kernels`), sorted by merge *block* (``offset >>
  BLOCK_SHIFT``), with their values in the same order; and
- rows new to the shared store, with their keys and num_actions.

The main process checks the first part with :func:`check_rows` (every offset is a row start of
its store, blocks never decrease) and adds it with :func:`add_rows`. Because the rows are sorted
by block, a delta cut at block boundaries gives pieces that share no row, so several threads can
add one delta at once (one writer per row), each walking the store's memory in one direction.
"""

import numpy as np

from holdem._jit import njit_exact as njit
from holdem.store.kernels import (NOT_FOUND, entry_num_actions, entry_offset, find_entry,
                                  is_row_start, prefetch_line, prefetch_slot, row_length)

BLOCK_SHIFT = 12                 # a merge block: 4,096 entries (48 kB of values)
LOOKUP_AHEAD = 16                # rows whose hash slot split_delta prefetches ahead
ADD_AHEAD = 8                    # rows whose values add_rows prefetches ahead

BAD_RANGE = -1                   # check_rows: an offset outside [0, num_entries)
BAD_ROW = -2                     # an offset that is not the start of a row
BAD_ORDER = -3                   # blocks decrease


def num_blocks(entry_capacity):
    return (int(entry_capacity) >> BLOCK_SHIFT) + 1


@njit
def split_delta(read, delta, ref, row_counts, value_counts, out_offsets, out_regrets,
                out_strategy, new_keys, new_num_actions, new_regrets, new_strategy):
    """Split ``delta``'s rows against the shared store ``read`` (see the module docstring).

    ``ref`` is int64 scratch of at least the delta's rows, ``row_counts`` and ``value_counts``
    int64 scratch of ``num_blocks(read's entry capacity)`` entries; the out arrays are at least
    the delta's rows and entries long. Returns (existing rows, their values, new rows, their
    values); the outputs' prefixes of those lengths hold the split.
    """
    rows = delta.meta[0]
    row_counts[:] = 0
    value_counts[:] = 0
    num_new = 0
    new_values = 0
    for i in range(rows):
        if i + LOOKUP_AHEAD < rows:
            prefetch_slot(read, delta.row_key[i + LOOKUP_AHEAD])
        na = np.int64(delta.row_num_actions[i])
        entry = find_entry(read, delta.row_key[i])
        if entry != NOT_FOUND and entry_num_actions(entry) == na:
            off = entry_offset(entry)
            ref[i] = off
            b = off >> BLOCK_SHIFT
            row_counts[b] += 1
            value_counts[b] += na
        else:
            # New to the shared store (or, never in a sound run, stored with another number
            # of actions: then the main process's check against the game rejects it).
            ref[i] = -1
            src = delta.row_offset[i]
            new_keys[num_new] = delta.row_key[i]
            new_num_actions[num_new] = na
            for a in range(na):
                new_regrets[new_values + a] = delta.regrets[src + a]
                new_strategy[new_values + a] = delta.strategy_sum[src + a]
            num_new += 1
            new_values += na
    # Counting sort by block: counts become each block's first output position.
    row_pos = 0
    value_pos = 0
    for b in range(row_counts.shape[0]):
        r, v = row_counts[b], value_counts[b]
        row_counts[b] = row_pos
        value_counts[b] = value_pos
        row_pos += r
        value_pos += v
    for i in range(rows):
        off = ref[i]
        if off < 0:
            continue
        b = off >> BLOCK_SHIFT
        r = row_counts[b]
        v = value_counts[b]
        na = np.int64(delta.row_num_actions[i])
        row_counts[b] = r + 1
        value_counts[b] = v + na
        out_offsets[r] = off
        src = delta.row_offset[i]
        for a in range(na):
            out_regrets[v + a] = delta.regrets[src + a]
            out_strategy[v + a] = delta.strategy_sum[src + a]
    return row_pos, value_pos, num_new, new_values


@njit
def check_rows(store, offsets, lo, hi, num_actions):
    """Check ``offsets[lo:hi]`` against ``store`` and write each row's num_actions into
    ``num_actions[lo:hi]``. Returns the number of values the rows own, or BAD_RANGE, BAD_ROW or
    BAD_ORDER for the first offset that fails. Reads the store only."""
    entries = store.meta[1]
    total = 0
    last_block = -1
    for i in range(lo, hi):
        off = offsets[i]
        if off < 0 or off >= entries:
            return BAD_RANGE
        if not is_row_start(store.row_start, off):
            return BAD_ROW
        b = off >> BLOCK_SHIFT
        if b < last_block:
            return BAD_ORDER
        last_block = b
        na = row_length(store.row_start, off, entries)
        num_actions[i] = na
        total += na
    return total


@njit
def add_rows(store, offsets, num_actions, lo, hi, regret_delta, strategy_delta, pos,
             regret_floor):
    """Add the values of rows ``offsets[lo:hi]`` (checked by :func:`check_rows`), which start at
    ``pos`` in the delta's value arrays; regrets are clamped at ``regret_floor``. Returns the
    position after them. Only rows ``lo:hi`` are written, so calls on disjoint block ranges may
    run at once on several threads."""
    regrets = store.regrets
    strategy_sum = store.strategy_sum
    for i in range(lo, hi):
        if i + ADD_AHEAD < hi:
            ahead = offsets[i + ADD_AHEAD]
            prefetch_line(regrets, ahead)
            prefetch_line(strategy_sum, ahead)
        off = offsets[i]
        for a in range(np.int64(num_actions[i])):
            r = regrets[off + a] + regret_delta[pos + a]
            if r < regret_floor:
                r = regret_floor
            regrets[off + a] = r
            strategy_sum[off + a] += strategy_delta[pos + a]
        pos += num_actions[i]
    return pos
