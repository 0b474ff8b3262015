"""Regret-store kernels: an int64 open-addressing hash index over flat per-action arrays.

Layout (see :mod:`holdem.store.store` for the Python owner of these arrays):

- ``table_keys`` int64[C] (C a power of two): infoset key per slot, ``EMPTY`` (-1) when free.
- ``table_rows`` int32[C]: row of the infoset stored in that slot.
- ``row_key`` int64[R], ``row_offset`` int64[R], ``row_num_actions`` int8[R]: one row per infoset,
  rows numbered in order of first visit; the row's actions occupy
  ``regrets[row_offset : row_offset + num_actions]`` (float32) and the same range of
  ``strategy_sum`` (float64: float32 sums stop absorbing small increments after ~1e7 updates).
- ``meta`` int64[2]: ``[num_rows, num_entries]`` (rows used, flat entries used).

Linear probing with a Fibonacci (multiplicative) hash keeps lookups to one or two cache lines.
Keys are non-negative; the kernels never grow the arrays: the Python side guarantees capacity
(the traversal stops at an iteration boundary when head-room runs short, see
:func:`has_headroom`).
"""

from collections import namedtuple

import numpy as np

from holdem._jit import njit_exact as njit
from holdem._jit import njit_inline

EMPTY = -1
NOT_FOUND = -1

StoreArrays = namedtuple(
    "StoreArrays",
    ["table_keys", "table_rows", "row_key", "row_offset", "row_num_actions", "regrets",
     "strategy_sum", "meta"],
)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit_inline
def _slot_of(key, mask):
    h = np.uint64(key) * _GOLDEN
    return np.int64(h >> np.uint64(32)) & mask


@njit_inline
def find_row(store, key):
    """Row of ``key`` or NOT_FOUND. Read-only."""
    keys = store.table_keys
    mask = keys.shape[0] - 1
    slot = _slot_of(key, mask)
    while True:
        k = keys[slot]
        if k == key:
            return np.int64(store.table_rows[slot])
        if k == EMPTY:
            return NOT_FOUND
        slot = (slot + 1) & mask


@njit_inline
def find_or_insert_row(store, key, num_actions):
    """Row of ``key``, inserting a zeroed row with ``num_actions`` actions when it is new."""
    keys = store.table_keys
    mask = keys.shape[0] - 1
    slot = _slot_of(key, mask)
    while True:
        k = keys[slot]
        if k == key:
            return np.int64(store.table_rows[slot])
        if k == EMPTY:
            break
        slot = (slot + 1) & mask
    meta = store.meta
    row = meta[0]
    offset = meta[1]
    keys[slot] = key
    store.table_rows[slot] = row
    store.row_key[row] = key
    store.row_offset[row] = offset
    store.row_num_actions[row] = num_actions
    for a in range(num_actions):
        store.regrets[offset + a] = 0.0
        store.strategy_sum[offset + a] = 0.0
    meta[0] = row + 1
    meta[1] = offset + num_actions
    return row


@njit_inline
def has_headroom(store, max_new_rows, max_new_entries):
    """True when ``max_new_rows`` rows with ``max_new_entries`` entries in all still fit
    (table load kept at most 1/2)."""
    rows = store.meta[0] + max_new_rows
    return (rows <= store.row_key.shape[0]
            and 2 * rows <= store.table_keys.shape[0]
            and store.meta[1] + max_new_entries <= store.regrets.shape[0])


@njit
def rebuild_index(store):
    """Re-insert every row into an empty ``table_keys`` (after the table was resized)."""
    keys = store.table_keys
    mask = keys.shape[0] - 1
    for row in range(store.meta[0]):
        key = store.row_key[row]
        slot = _slot_of(key, mask)
        while keys[slot] != EMPTY:
            slot = (slot + 1) & mask
        keys[slot] = key
        store.table_rows[slot] = row


@njit
def merge_delta(store, keys, num_actions, regret_delta, strategy_delta, regret_floor):
    """Add a sparse delta into the store in one pass.

    ``keys`` int64[n] and ``num_actions`` int8[n] describe n infosets; their per-action values lie
    back to back in ``regret_delta`` float32[m] and ``strategy_delta`` float64[m] with
    m = sum(num_actions). New infosets are inserted. Regrets are clamped at ``regret_floor``
    (pass -inf for none). The caller has validated the payload and ensured capacity.
    """
    pos = 0
    for i in range(keys.shape[0]):
        na = num_actions[i]
        row = find_or_insert_row(store, keys[i], na)
        off = store.row_offset[row]
        for a in range(na):
            r = store.regrets[off + a] + regret_delta[pos + a]
            if r < regret_floor:
                r = regret_floor
            store.regrets[off + a] = r
            store.strategy_sum[off + a] += strategy_delta[pos + a]
        pos += na
