"""Kernels of the offset-addressed delta: a worker's batch delta split into shards for a
parallel merge.

A worker's delta (a :class:`holdem.store.kernels.StoreArrays` buffer keyed by infoset) is split
by :func:`split_delta` into

- rows the shared store already holds, named by their *value offset* in it (offsets never move;
  see ``row_start`` in :mod:`holdem.store.kernels`), with their values in the same order: one
  group for regret updates, one for strategy updates (in external sampling 95% of rows have only
  one kind, so the merge touches one value array per row); and
- rows new to the shared store, with their keys and num_actions.

Each group is partitioned into SHARDS *shards* by :func:`shard_of` (the row's 4,096-entry block,
modulo SHARDS), shard after shard, with ``cuts`` (int64[2, SHARDS + 1]: the first row and the
first value of each shard, then the totals). The main process gives each merge thread a range of
shards: :func:`check_shards` checks every row of them (an offset of the right shard that starts a
row of the store, which gives the row's num_actions; finite values, as many as the rows own), and
once every thread's check passed, :func:`add_shards` adds them. A row is in exactly one shard, so
threads owning disjoint shard ranges have one writer per row, and each reads only its own rows.
"""

import numpy as np

from holdem._jit import njit_exact as njit
from holdem._jit import njit_inline
from holdem.store.kernels import (NOT_FOUND, entry_num_actions, entry_offset, find_entry,
                                  is_row_start, prefetch_line, prefetch_slot, row_length)

BLOCK_SHIFT = 12                 # a block: 4,096 entries (48 kB of values)
SHARDS = 24                      # shards per group: splits evenly over 1, 2, 3, 4, 6, 8 threads
MAX_OFFSET = (1 << 32) - 1       # offsets travel as uint32; rows past it travel by key
LOOKUP_AHEAD = 16                # rows whose hash slot split_delta prefetches ahead
CHECK_AHEAD = 32                 # rows whose row-start word check_shards prefetches ahead
ADD_AHEAD = 16                   # rows whose values add_shards prefetches ahead
HOLD_AHEAD = 16                  # rows whose held slots split_delta prefetches ahead
# Within a shard, rows go out grouped by their number of actions (1, 2, .., NA_CLASSES - 1, then
# the longer ones together), so that the main process's add loop runs as many times for row
# after row and its branch predictor stops guessing each row's length: on hunl_default's
# recorded records (flush 50, 16 to a pass) merge_arena took 411 us instead of 514.
NA_CLASSES = 16

BAD_RANGE = -1                   # check_shards: an offset outside [0, num_entries)
BAD_ROW = -2                     # an offset that is not the start of a row
BAD_SHARD = -3                   # a row in another shard than its offset's
BAD_COUNT = -4                   # a shard's rows own another number of values than it carries
BAD_VALUE = -5                   # a NaN or infinite value
EXPONENT = np.uint32(0x7F800000)  # float32 exponent bits
HAS_REGRET = 1                   # split_delta: a row's flags (below its offset, in row_offset)
HAS_STRATEGY = 2


@njit_inline
def shard_of(offset):
    return (offset >> BLOCK_SHIFT) % SHARDS


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


@njit_inline
def _cuts_from_counts(cuts):
    """Turn per-shard counts in ``cuts[:, 1:]`` into start positions: cuts[:, s] = the first row
    (value) of shard s, cuts[:, SHARDS] = the totals."""
    for k in range(2):
        cuts[k, 0] = 0
        for s in range(SHARDS):
            cuts[k, s + 1] += cuts[k, s]


@njit_inline
def _count(cuts, s, na):
    """One more row of ``na`` values in shard ``s`` (``cuts``: one group's, still counts)."""
    cuts[0, s + 1] += 1
    cuts[1, s + 1] += na


@njit_inline
def _slot(s, na):
    """A row's place in a group's cursors: its shard, then its class by number of actions."""
    return s * NA_CLASSES + min(na, NA_CLASSES) - 1


@njit_inline
def _tally(cursor, slot, na):
    """One more row of ``na`` values in ``slot`` (``cursor``: one group's, still counts)."""
    cursor[0, slot] += 1
    cursor[1, slot] += na


@njit_inline
def _cuts_and_cursors(cursor, cuts):
    """Turn per-slot counts (``cursor``: one group's, int64[2, SHARDS * NA_CLASSES], rows and
    values of each :func:`_slot`) into each slot's first row and value, and fill the group's
    ``cuts`` (int64[2, SHARDS + 1])."""
    rows = values = np.int64(0)
    for s in range(SHARDS):
        cuts[0, s] = rows
        cuts[1, s] = values
        for c in range(s * NA_CLASSES, (s + 1) * NA_CLASSES):
            n, m = cursor[0, c], cursor[1, c]
            cursor[0, c] = rows
            cursor[1, c] = values
            rows += n
            values += m
    cuts[0, SHARDS] = rows
    cuts[1, SHARDS] = values


@njit_inline
def _place(cursor, s, off, source, src, na, out_offsets, out_values):
    """Write a row (offset ``off``, values ``source[src:src + na]``) at slot ``s``'s cursor
    (one group's) and advance it."""
    out_offsets[cursor[0, s]] = off
    _copy(source, src, na, out_values, cursor[1, s])
    cursor[0, s] += 1
    cursor[1, s] += na


@njit
def split_delta(read, delta, row_offset, cursor, out_offsets, out_regrets, out_strategy, cuts,
                new_keys, new_num_actions, new_regrets, new_strategy, read_entry, use_hint,
                hold, held, held_na, touched, held_counts):
    """Split ``delta``'s rows against the shared store ``read`` (see the module docstring).
    Rows with no update at all are left out; within each shard rows are grouped by their number
    of actions (NA_CLASSES), each group in the delta's row order.

    With ``hold``, the strategy updates of stored rows do not go in the strategy group: they
    are added into ``held`` (float32, by value offset in ``read``) to go out later, all at once
    (:func:`release_held`); ``held_na`` (int8, by offset: 0 for a row not held yet),
    ``touched`` (the offsets of held rows, in the order first held) and ``held_counts``
    (int64[2]: held rows, held values) keep track of them.

    With ``use_hint``, ``read_entry[o]`` is taken as the entry in ``read`` of the delta row at
    value offset ``o`` (what the traversal found: every row was visited since the buffer was
    cleared, against this ``read``); a row beyond it, or whose hint is not found or holds
    another number of actions, is looked up as without it.

    Scratch: ``row_offset`` int64[rows] (each row's offset and flags), ``cursor``
    int64[2, 2, SHARDS * NA_CLASSES] (group, rows/values, :func:`_slot`). Outputs:
    ``out_offsets`` uint32[2, rows] (regret group, strategy group); the value arrays, each of
    at least the delta's entries; ``cuts`` int64[2, 2, SHARDS + 1] (group, rows/values,
    shard). Returns the number of new rows and of their values; the groups' sizes are in
    ``cuts[g, :, SHARDS]``.
    """
    rows = delta.meta[0]
    cursor[:] = 0
    num_new = num_nv = 0
    # Pass 1: find each row in the shared store (its hint, or a lookup with the hash slots
    # prefetched ahead); count the rows and values of each slot of each group; copy the new
    # rows out.
    hints = read_entry.shape[0] if use_hint else 0
    for i in range(rows):
        if hold and i + HOLD_AHEAD < rows:      # the held slot of a row ahead (by its hint)
            ahead = delta.row_offset[i + HOLD_AHEAD]
            if ahead < hints and read_entry[ahead] != NOT_FOUND:
                prefetch_line(held, entry_offset(read_entry[ahead]))
                prefetch_line(held_na, entry_offset(read_entry[ahead]))
        na = np.int64(delta.row_num_actions[i])
        src = delta.row_offset[i]
        entry = read_entry[src] if src < hints else NOT_FOUND
        if entry == NOT_FOUND or entry_num_actions(entry) != na:
            if not use_hint and i + LOOKUP_AHEAD < rows:
                prefetch_slot(read, delta.row_key[i + LOOKUP_AHEAD])
            entry = find_entry(read, delta.row_key[i])
        off = -1
        if entry != NOT_FOUND and entry_num_actions(entry) == na:
            off = entry_offset(entry)
        if 0 <= off <= MAX_OFFSET:
            s = shard_of(off)
            flags = 0
            if _has_nonzero(delta.regrets, src, na):
                _tally(cursor[0], _slot(s, na), na)
                flags |= HAS_REGRET
            if _has_nonzero(delta.strategy_sum, src, na):
                if hold:
                    _hold(delta.strategy_sum, src, na, off, held, held_na, touched,
                          held_counts)
                else:
                    _tally(cursor[1], _slot(s, na), na)
                    flags |= HAS_STRATEGY
            row_offset[i] = off << 2 | flags
        elif _has_nonzero(delta.regrets, src, na) or _has_nonzero(delta.strategy_sum, src, na):
            # New to the shared store (or past the offsets uint32 can name, or, never in a
            # sound run, stored with another number of actions: then the main process's check
            # against the game rejects it): by key.
            row_offset[i] = -1
            new_keys[num_new] = delta.row_key[i]
            new_num_actions[num_new] = na
            _copy(delta.regrets, src, na, new_regrets, num_nv)
            _copy(delta.strategy_sum, src, na, new_strategy, num_nv)
            num_new += 1
            num_nv += na
        else:
            row_offset[i] = -1          # a new row with nothing in it (a held cold row)
    _cuts_and_cursors(cursor[0], cuts[0])
    _cuts_and_cursors(cursor[1], cuts[1])
    # Pass 2: write each stored row into its shard's slot for its length.
    for i in range(rows):
        flags = row_offset[i]
        if flags < 0:
            continue
        off = flags >> 2
        na = np.int64(delta.row_num_actions[i])
        src = delta.row_offset[i]
        s = _slot(shard_of(off), na)
        if flags & HAS_REGRET:
            _place(cursor[0], s, off, delta.regrets, src, na, out_offsets[0], out_regrets)
        if flags & HAS_STRATEGY:
            _place(cursor[1], s, off, delta.strategy_sum, src, na, out_offsets[1], out_strategy)
    return num_new, num_nv


@njit_inline
def _hold(source, src, na, off, held, held_na, touched, held_counts):
    """Add a row's strategy update into the held ones (see :func:`split_delta`)."""
    if held_na[off] == 0:
        held_na[off] = na
        touched[held_counts[0]] = off
        held_counts[0] += 1
        held_counts[1] += na
    for a in range(na):
        held[off + a] += np.float32(source[src + a])


@njit
def release_held(held, held_na, order, out_offsets, out_values, cuts):
    """The held strategy updates (:func:`split_delta` with ``hold``) of the rows at offsets
    ``order`` (every held row, sorted by shard, then by number of actions and offset: the
    order in which the main process adds them) as one group: ``out_offsets`` (uint32),
    ``out_values`` (float32) and ``cuts`` (int64[2, SHARDS + 1]); they are held no more
    after."""
    cuts[:] = 0
    pos = 0
    for k in range(order.shape[0]):
        off = order[k]
        na = np.int64(held_na[off])
        _count(cuts, shard_of(off), na)
        out_offsets[k] = off
        for a in range(na):
            out_values[pos + a] = held[off + a]
            held[off + a] = 0.0
        held_na[off] = 0
        pos += na
    _cuts_from_counts(cuts)


@njit
def scale_held(held, held_na, touched, rows, factor):
    """Multiply the held strategy updates (:func:`split_delta` with ``hold``) of the first
    ``rows`` rows of ``touched`` by ``factor``: what a DCFR sweep the worker saw meanwhile does
    to the store's sums, so that they keep counting from the sweep after it."""
    for k in range(rows):
        off = touched[k]
        for a in range(np.int64(held_na[off])):
            held[off + a] *= np.float32(factor)


@njit
def check_shards(store, offsets, value_bits, cuts, first, last, num_actions):
    """Check the rows of shards ``first`` .. ``last - 1`` of one group (``offsets``, the values
    as their float32 bits ``value_bits`` (uint32), ``cuts``, as :func:`split_delta` writes
    them; cuts checked to be non-decreasing and within the arrays) against ``store``, writing
    each row's num_actions into ``num_actions``. Returns 0, or the first failure's code
    (BAD_*). Reads the store only."""
    bits = store.row_start
    entries = store.meta[1]
    for s in range(first, last):
        lo, hi = cuts[0, s], cuts[0, s + 1]
        total = 0
        for i in range(lo, hi):
            if i + CHECK_AHEAD < hi:
                ahead = np.int64(offsets[i + CHECK_AHEAD])
                if 0 <= ahead < entries:
                    prefetch_line(bits, ahead >> 6)
            off = np.int64(offsets[i])
            if off < 0 or off >= entries:
                return BAD_RANGE
            if shard_of(off) != s:
                return BAD_SHARD
            if not is_row_start(bits, off):
                return BAD_ROW
            na = row_length(bits, off, entries)
            num_actions[i] = na
            total += na
        if total != cuts[1, s + 1] - cuts[1, s]:
            return BAD_COUNT
    # NaN or infinite: all exponent bits set. An OR over the whole range vectorizes.
    non_finite = False
    for v in range(cuts[1, first], cuts[1, last]):
        non_finite |= (value_bits[v] & EXPONENT) == EXPONENT
    if non_finite:
        return BAD_VALUE
    return 0


@njit
def add_shards(target, offsets, num_actions, values, cuts, first, last, floor, scale):
    """Add the increments of shards ``first`` .. ``last - 1`` (checked by
    :func:`check_shards`) times ``scale`` into ``target`` (the store's ``regrets`` or
    ``strategy_sum``), clamping the sums at ``floor`` (the regret floor, or -inf). Calls for
    disjoint shard ranges write disjoint rows, so they may run at once on several threads."""
    lo, hi = cuts[0, first], cuts[0, last]
    pos = cuts[1, first]
    for i in range(lo, hi):
        if i + ADD_AHEAD < hi:       # both ends of the row: it may span two cache lines
            ahead = np.int64(offsets[i + ADD_AHEAD])
            prefetch_line(target, ahead)
            prefetch_line(target, ahead + num_actions[i + ADD_AHEAD] - 1)
        na = np.int64(num_actions[i])
        off = np.int64(offsets[i])
        for a in range(na):
            v = target[off + a] + scale * values[pos + a]
            if v < floor:
                v = floor
            target[off + a] = v
        pos += na


# -- holding cold rows (a worker's flushes within one batch) ---------------------------------
NEVER = -(1 << 62)               # hold_route: a held row's "last flush touched" before any
HOLD_TOUCHES = 2                 # a cold row goes out at its HOLD_TOUCHES-th touch at the latest


@njit
def hold_route(delta, held, last, touches, flush, cold):
    """Route the rows of this flush's ``delta`` (flush number ``flush`` of the batch). A row
    goes out now, with what ``held`` holds of it added in (and zeroed there), when the previous
    flush also touched it (a *hot* row) or when ``held`` already holds HOLD_TOUCHES - 1 of its
    touches; any other row is *cold*. ``last`` and ``touches`` (int64, indexed by ``held``'s
    value offsets): the last flush that touched each row of ``held``, and how many touches it
    holds. Returns the number of cold rows, whose delta row indices are the first entries of
    ``cold`` (int64[rows]; :func:`hold_settle` moves them into ``held``)."""
    rows = delta.meta[0]
    n = 0
    for i in range(rows):
        if i + LOOKUP_AHEAD < rows:
            prefetch_slot(held, delta.row_key[i + LOOKUP_AHEAD])
        entry = find_entry(held, delta.row_key[i])
        if entry != NOT_FOUND:
            off = entry_offset(entry)
            if last[off] >= flush - 1 or touches[off] + 1 >= HOLD_TOUCHES:
                src = delta.row_offset[i]
                for a in range(entry_num_actions(entry)):
                    delta.regrets[src + a] += held.regrets[off + a]
                    delta.strategy_sum[src + a] += held.strategy_sum[off + a]
                    held.regrets[off + a] = 0.0
                    held.strategy_sum[off + a] = 0.0
                last[off] = flush
                touches[off] = 0
                continue
        cold[n] = i
        n += 1
    return n


@njit
def hold_gather(delta, rows, keys, num_actions, regrets, strategy):
    """Copy ``delta``'s rows ``rows`` (indices) out, row after row; returns the values'
    count."""
    pos = 0
    for k in range(rows.shape[0]):
        i = rows[k]
        na = np.int64(delta.row_num_actions[i])
        src = delta.row_offset[i]
        keys[k] = delta.row_key[i]
        num_actions[k] = na
        _copy(delta.regrets, src, na, regrets, pos)
        _copy(delta.strategy_sum, src, na, strategy, pos)
        pos += na
    return pos


@njit
def hold_settle(delta, held, last, touches, rows, flush):
    """After ``delta``'s cold rows ``rows`` were added into ``held``: count the touch and mark
    them touched by ``flush`` there, and zero them in ``delta`` (so the flush's record leaves
    them out)."""
    for k in range(rows.shape[0]):
        i = rows[k]
        off = entry_offset(find_entry(held, delta.row_key[i]))
        last[off] = flush
        touches[off] += 1
        src = delta.row_offset[i]
        for a in range(np.int64(delta.row_num_actions[i])):
            delta.regrets[src + a] = 0.0
            delta.strategy_sum[src + a] = 0.0


@njit
def held_rows(held, out):
    """Indices of ``held``'s rows that hold anything (a non-zero value) into ``out``
    (int64[rows]); returns their count."""
    rows = held.meta[0]
    n = 0
    for i in range(rows):
        src = held.row_offset[i]
        na = np.int64(held.row_num_actions[i])
        if _has_nonzero(held.regrets, src, na) or _has_nonzero(held.strategy_sum, src, na):
            out[n] = i
            n += 1
    return n
