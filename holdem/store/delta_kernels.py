"""Kernels of the offset-addressed delta: a worker's batch delta split for a parallel merge.

A worker's delta (a :class:`holdem.store.kernels.StoreArrays` buffer keyed by infoset) is split
by :func:`split_delta` into

- rows the shared store already holds, named by their *value offset* in it (offsets never move;
  see ``row_start`` in :mod:`holdem.store.kernels`), with their values in the same order: one
  group for regret updates, one for strategy updates (in external sampling 95% of rows have only
  one kind, so the merge touches one value array per row); and
- rows new to the shared store, with their keys and num_actions.

The main process checks each group with :func:`check_rows` (every offset is a row start of its
store, which gives the row's num_actions) and adds it with :func:`add_group`, split over threads by *block* (``offset >> BLOCK_SHIFT``): part k of P adds
the rows whose block is k modulo P. Every row is in exactly one part whatever order the rows
come in, so P threads add one group at once with one writer per row.
"""

import numpy as np

from holdem._jit import njit_exact as njit
from holdem._jit import njit_inline
from holdem.store.kernels import (NOT_FOUND, entry_num_actions, entry_offset, find_entry,
                                  is_row_start, prefetch_line, prefetch_slot, row_length)

BLOCK_SHIFT = 12                 # a merge block: 4,096 entries (48 kB of values)
LOOKUP_AHEAD = 16                # rows whose hash slot split_delta prefetches ahead
ADD_AHEAD = 8                    # rows whose values the adds prefetch ahead

BAD_RANGE = -1                   # check_rows: an offset outside [0, num_entries)
BAD_ROW = -2                     # an offset that is not the start of a row


@njit_inline
def _has_nonzero(values, start, count):
    for a in range(count):
        if values[start + a] != 0.0:
            return True
    return False


@njit_inline
def _copy(source, start, count, out, pos):
    for a in range(count):
        out[pos + a] = source[start + a]


@njit
def split_delta(read, delta, out_offsets, out_regrets, out_strategy, new_keys,
                new_num_actions, new_regrets, new_strategy):
    """Split ``delta``'s rows against the shared store ``read`` (see the module docstring), in
    the delta's row order. Rows with no update at all are left out.

    ``out_offsets`` is int64[2, rows] (regret group, strategy group); the value arrays hold at
    least the delta's entries. Returns (regret rows, regret values, strategy rows, strategy
    values, new rows, new values); the outputs' prefixes of those lengths hold the split.
    """
    rows = delta.meta[0]
    num_r = num_rv = num_s = num_sv = num_new = num_nv = 0
    for i in range(rows):
        if i + LOOKUP_AHEAD < rows:
            prefetch_slot(read, delta.row_key[i + LOOKUP_AHEAD])
        na = np.int64(delta.row_num_actions[i])
        src = delta.row_offset[i]
        entry = find_entry(read, delta.row_key[i])
        if entry != NOT_FOUND and entry_num_actions(entry) == na:
            off = entry_offset(entry)
            if _has_nonzero(delta.regrets, src, na):
                out_offsets[0, num_r] = off
                _copy(delta.regrets, src, na, out_regrets, num_rv)
                num_r += 1
                num_rv += na
            if _has_nonzero(delta.strategy_sum, src, na):
                out_offsets[1, num_s] = off
                _copy(delta.strategy_sum, src, na, out_strategy, num_sv)
                num_s += 1
                num_sv += na
        else:
            # New to the shared store (or, never in a sound run, stored with another number
            # of actions: then the main process's check against the game rejects it).
            new_keys[num_new] = delta.row_key[i]
            new_num_actions[num_new] = na
            _copy(delta.regrets, src, na, new_regrets, num_nv)
            _copy(delta.strategy_sum, src, na, new_strategy, num_nv)
            num_new += 1
            num_nv += na
    return num_r, num_rv, num_s, num_sv, num_new, num_nv


@njit
def check_rows(store, offsets, lo, hi, num_actions):
    """Check ``offsets[lo:hi]`` against ``store`` and write each row's num_actions into
    ``num_actions[lo:hi]``. Returns the number of values the rows own, or BAD_RANGE or BAD_ROW
    for the first offset that fails. Reads the store only."""
    entries = store.meta[1]
    total = 0
    for i in range(lo, hi):
        off = offsets[i]
        if off < 0 or off >= entries:
            return BAD_RANGE
        if not is_row_start(store.row_start, off):
            return BAD_ROW
        na = row_length(store.row_start, off, entries)
        num_actions[i] = na
        total += na
    return total


@njit
def add_group(target, offsets, num_actions, part, parts, delta, floor):
    """Add the increments of the rows of part ``part`` of ``parts`` (see the module docstring;
    offsets checked by :func:`check_rows`) into ``target`` (the store's ``regrets`` or
    ``strategy_sum``), clamping the sums at ``floor`` (the regret floor, or -inf). Calls for
    different parts write disjoint rows, so they may run at once on several threads."""
    n = offsets.shape[0]
    pos = 0
    for i in range(n):
        j = i + ADD_AHEAD
        if j < n and (offsets[j] >> BLOCK_SHIFT) % parts == part:
            prefetch_line(target, offsets[j])
        na = np.int64(num_actions[i])
        off = offsets[i]
        if (off >> BLOCK_SHIFT) % parts == part:
            for a in range(na):
                v = target[off + a] + delta[pos + a]
                if v < floor:
                    v = floor
                target[off + a] = v
        pos += na
