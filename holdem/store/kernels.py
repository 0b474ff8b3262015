"""Regret-store kernels: an int64 open-addressing hash index over flat per-action arrays.

Layout (see :mod:`holdem.store.store` for the Python owner of these arrays):

- ``table`` int64[C, 2] (C a power of two): per slot the infoset key (``EMPTY`` = -1 when free)
  and its *entry* ``offset << 8 | num_actions``. Key and entry share a cache line, and the entry
  leads straight to the values, so a lookup costs one cache miss, an update three.
- ``regrets`` float32[E] and ``strategy_sum`` float64[E]: an infoset's actions occupy
  ``[offset, offset + num_actions)``. float64 strategy sums: float32 stops absorbing small
  increments after ~1e7 updates.
- ``row_key`` int64[R], ``row_offset`` int64[R], ``row_num_actions`` int8[R]: one row per infoset
  in order of first visit (for listing, checkpoints and deltas; not used on the hot path).
- ``meta`` int64[2]: ``[num_rows, num_entries]``.
- ``row_start`` uint64[E / 64 + 2]: a bitmap with bit ``o`` set when a row's values start at
  entry ``o``. It lets the merge accept a row by its value offset alone: an offset is a row of
  the store exactly when its bit is set, and the row's num_actions is the distance to the next
  set bit (or to ``num_entries``). Offsets never move (rows are only appended, growth copies them
  in place), so a worker may name a row by its offset in any generation of the store.

Linear probing with a multiplicative (Fibonacci) hash. Keys are non-negative. The kernels never
grow the arrays: the Python side guarantees capacity (traversals stop at an iteration boundary
when head-room runs short, see :func:`has_headroom`).
"""

from collections import namedtuple

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

from holdem._jit import njit_exact as njit
from holdem._jit import njit_inline

EMPTY = -1
NOT_FOUND = -1
MERGE_SLOT_AHEAD = 16            # merge_delta's prefetch distances, in rows
MERGE_VALUES_AHEAD = 8
MERGE_RING = 16                 # > MERGE_VALUES_AHEAD, a power of two

StoreArrays = namedtuple(
    "StoreArrays",
    ["table", "row_key", "row_offset", "row_num_actions", "regrets", "strategy_sum", "meta",
     "row_start"],
)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit_inline
def _slot_of(key, mask):
    h = np.uint64(key) * _GOLDEN
    return np.int64(h >> np.uint64(32)) & mask


@njit_inline
def entry_offset(entry):
    return entry >> 8


@njit_inline
def entry_num_actions(entry):
    return entry & 255


@intrinsic
def prefetch_line(typingctx, arr, i):
    """Start loading the cache line of ``arr[i]`` (1-D) or ``arr[i, 0]`` (2-D): LLVM's prefetch
    (read, keep in all cache levels). It never faults and has no other effect."""
    if not isinstance(arr, types.Array) or arr.ndim not in (1, 2):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        index = [args[1]] + [context.get_constant(types.intp, 0)] * (aryty.ndim - 1)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, index)
        i32 = ir.IntType(32)
        byte_ptr = builder.bitcast(ptr, ir.IntType(8).as_pointer())
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr.type, i32, i32, i32]),
            "llvm.prefetch.p0")
        builder.call(fn, [byte_ptr, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(arr, types.intp), codegen


@njit_inline
def prefetch_slot(store, key):
    """Start loading the hash slot where a lookup of ``key`` begins, so that a lookup soon after
    finds it in cache. Lets a traversal overlap the cache misses of several upcoming lookups
    instead of paying them one after another."""
    prefetch_line(store.table, _slot_of(key, store.table.shape[0] - 1))


@njit_inline
def prefetch_lookups(read, write, key, is_delta):
    """:func:`prefetch_slot` of ``key`` in the store a traversal reads and, in a worker, in the
    delta it writes."""
    prefetch_slot(read, key)
    if is_delta:
        prefetch_slot(write, key)


@njit_inline
def _probe(table, key):
    """``(slot, k)``: the first slot on ``key``'s probe path that holds ``key`` or is free, and
    the key ``k`` read there (``key`` or EMPTY), read once for concurrent readers."""
    mask = table.shape[0] - 1
    slot = _slot_of(key, mask)
    while True:
        k = table[slot, 0]
        if k == key or k == EMPTY:
            return slot, k
        slot = (slot + 1) & mask


@njit_inline
def find_entry(store, key):
    """The entry (``offset << 8 | num_actions``) of ``key``, or NOT_FOUND. Read-only."""
    table = store.table
    slot, k = _probe(table, key)
    if k == key:
        return table[slot, 1]
    return NOT_FOUND


@njit_inline
def find_or_insert(store, key, num_actions):
    """The entry of ``key``, inserting zeroed values for ``num_actions`` actions when new.

    Inlined into the traversal, call it where every visit reaches it (as
    :func:`holdem.solver.kernels.strategy_at` does): numba 0.68's IR inlining of it inside a
    branch there lost the insertion's writes -- rows counted in ``meta`` but never in the table,
    and a training run that grew without bound -- with no error (found on 2026-11-28; session
    notes of issue 38)."""
    table = store.table
    slot, k = _probe(table, key)
    if k == key:
        return table[slot, 1]
    meta = store.meta
    row = meta[0]
    offset = meta[1]
    for a in range(num_actions):
        store.regrets[offset + a] = 0.0
        store.strategy_sum[offset + a] = 0.0
    store.row_key[row] = key
    store.row_offset[row] = offset
    store.row_num_actions[row] = num_actions
    mark_row_start(store.row_start, offset)
    entry = (offset << 8) | num_actions
    # The entry is written before the key: a worker reading concurrently either misses the
    # key or finds a complete entry.
    table[slot, 1] = entry
    table[slot, 0] = key
    meta[0] = row + 1
    meta[1] = offset + num_actions
    return entry


@njit_inline
def mark_row_start(bits, offset):
    bits[offset >> 6] |= np.uint64(1) << np.uint64(offset & 63)


@njit_inline
def is_row_start(bits, offset):
    return (bits[offset >> 6] >> np.uint64(offset & 63)) & np.uint64(1) != 0


@njit_inline
def row_length(bits, offset, num_entries):
    """Entries of the row starting at ``offset``: the distance to the next set bit of the
    row-start bitmap, or to ``num_entries`` (at most 127 are scanned: num_actions <= 127)."""
    end = min(offset + 128, num_entries)
    o = offset + 1
    while o < end:
        word = bits[o >> 6] >> np.uint64(o & 63)
        if word != 0:
            return min(o + np.int64(trailing_zeros(word)), end) - offset
        o = (o | 63) + 1
    return end - offset


@njit_inline
def has_headroom(store, max_new_rows, max_new_entries):
    """True when ``max_new_rows`` rows with ``max_new_entries`` entries in all still fit
    (table load kept at most 1/2)."""
    rows = store.meta[0] + max_new_rows
    return (rows <= store.row_key.shape[0]
            and 2 * rows <= store.table.shape[0]
            and store.meta[1] + max_new_entries <= store.regrets.shape[0])


@njit
def rebuild_index(store):
    """Insert every row into an empty ``table`` (after the table was resized)."""
    table = store.table
    mask = table.shape[0] - 1
    for row in range(store.meta[0]):
        key = store.row_key[row]
        slot = _slot_of(key, mask)
        while table[slot, 0] != EMPTY:
            slot = (slot + 1) & mask
        table[slot, 1] = (store.row_offset[row] << 8) | np.int64(store.row_num_actions[row])
        table[slot, 0] = key


@njit
def find_mismatch(store, keys, num_actions):
    """Index of the first key already stored with another num_actions, or -1. Read-only."""
    for i in range(keys.shape[0]):
        entry = find_entry(store, keys[i])
        if entry != NOT_FOUND and entry_num_actions(entry) != num_actions[i]:
            return i
    return -1


@njit_inline
def _look_ahead(store, key):
    """find_entry of a row merged soon, starting the load of its values when it is found."""
    entry = find_entry(store, key)
    if entry != NOT_FOUND:
        prefetch_line(store.regrets, entry_offset(entry))
        prefetch_line(store.strategy_sum, entry_offset(entry))
    return entry


@njit
def merge_delta(store, keys, num_actions, regret_delta, strategy_delta, regret_floor, start, pos,
                ring):
    """Add a sparse delta into the store in one pass; returns (rows merged, values merged).

    ``keys`` int64[n] and ``num_actions`` int8[n] describe n infosets; their per-action values lie
    back to back in ``regret_delta`` float32[m] and ``strategy_delta`` float64[m] with
    m = sum(num_actions). Merging starts at row ``start``, whose values begin at ``pos``. New
    infosets are inserted; the pass stops early, returning where it stopped, at a new infoset
    that does not fit (:func:`has_headroom`), so the caller grows the store only for rows that
    are really new and calls again from there. Regrets are clamped at ``regret_floor`` (pass
    -inf for none). ``ring`` is int64 scratch of MERGE_RING entries. The caller has validated
    the payload (see :func:`holdem.store.store.validate_delta` and :func:`find_mismatch`).
    """
    n = keys.shape[0]
    mask = MERGE_RING - 1
    # Two-stage software pipeline over the rows: the slot of row i + 16 is prefetched, then
    # (that slot by now in cache) row i + 8 is looked up and its values prefetched, so row i
    # finds both in cache. The lookup is kept in ``ring`` for row i: one probe per row.
    # Looking up ahead is safe because inserting other keys moves no entry; a key found
    # missing ahead but inserted since (a repeated key) is found by find_or_insert.
    for j in range(start, min(start + MERGE_VALUES_AHEAD, n)):
        ring[j & mask] = _look_ahead(store, keys[j])
    for i in range(start, n):
        if i + MERGE_SLOT_AHEAD < n:
            prefetch_slot(store, keys[i + MERGE_SLOT_AHEAD])
        if i + MERGE_VALUES_AHEAD < n:
            ring[(i + MERGE_VALUES_AHEAD) & mask] = _look_ahead(
                store, keys[i + MERGE_VALUES_AHEAD])
        na = np.int64(num_actions[i])
        entry = ring[i & mask]
        if entry == NOT_FOUND:
            if not has_headroom(store, 1, na):
                return i, pos
            entry = find_or_insert(store, keys[i], na)
        off = entry_offset(entry)
        for a in range(na):
            r = store.regrets[off + a] + regret_delta[pos + a]
            if r < regret_floor:
                r = regret_floor
            store.regrets[off + a] = r
            store.strategy_sum[off + a] += strategy_delta[pos + a]
        pos += na
    return n, pos


def merge_ring():
    """Scratch for :func:`merge_delta`."""
    return np.empty(MERGE_RING, np.int64)


@njit
def row_length_py(bits, offset, num_entries):
    """:func:`row_length` callable from Python (tests)."""
    return row_length(bits, offset, num_entries)


@njit
def is_row_start_py(bits, offset):
    """:func:`is_row_start` callable from Python (tests)."""
    return is_row_start(bits, offset)


@njit
def find_entry_py(store, key):
    """:func:`find_entry` callable from Python (inline-only functions are not)."""
    return find_entry(store, key)
