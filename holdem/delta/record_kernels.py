"""Kernels of the delta record (protocol version 5): index, check and add many records at once.

A worker's delta travels as one *record* (layout in :mod:`holdem.delta.records`): a msgpack
array whose header fields have fixed widths, so a kernel finds every field and array at a fixed
position. The main process reads every record that arrived since its last pass into one arena
(8-byte aligned, one after another) and handles them all together, with no Python work per
record beyond reading its frame:

1. :func:`index_records` parses and checks each record's layout into a row of an int64 table
   (its header fields and where each array starts in the arena);
2. :func:`check_records` checks every stored row of every record against the store (on each
   merge thread's shard range, :func:`holdem.delta.shard_kernels.check_shards`);
3. :func:`add_records` adds the records that passed (one writer per row: a thread owns a range
   of shards in every record, :func:`holdem.delta.shard_kernels.add_shards`).

The arena is passed as views of one buffer: ``u8`` (bytes), ``u32`` (offsets; float32 values
as their bits), ``f32``, ``i64`` (cuts, keys) and ``i8`` (num_actions); positions in the table
are element indices of the view of the array's dtype.
"""

import numpy as np

from holdem._jit import njit_exact as njit
from holdem._jit import njit_inline
from holdem.delta.shard_kernels import EXPONENT, SHARDS, add_shards, check_shards

VERSION = 5
NUM_FIELDS = 22                  # header fields, each 9 bytes (a marker and 8 big-endian bytes)
INT64, FLOAT64 = 0xd3, 0xcb      # msgpack markers of the fields
FIELDS_AT = 4                    # after 0x93 (fixarray 3) and 0xdc NN NN (array 16)
ALIGN = 8
PAD_AT = FIELDS_AT + 9 * NUM_FIELDS          # 0xc4 PAD and PAD zero bytes: a bin 8
PAD = -(PAD_AT + 2 + 5) % ALIGN              # so that the data starts 8-byte aligned
DATA_AT = PAD_AT + 2 + PAD + 5               # after 0xc6 and the data's length (bin 32)
NUM_ARRAYS = 10
CUTS = 2 * (SHARDS + 1)
# Arrays, in this order: (itemsize)
ITEMSIZE = np.array([4, 4, 8, 4, 4, 8, 8, 1, 4, 4], np.int64)
(A_REGRET_OFFSETS, A_REGRETS, A_REGRET_CUTS, A_STRATEGY_OFFSETS, A_STRATEGY, A_STRATEGY_CUTS,
 A_KEYS, A_NUM_ACTIONS, A_NEW_REGRETS, A_NEW_STRATEGY) = range(NUM_ARRAYS)
# Header fields, in this order (FLOAT_FIELDS are float64, the others int64):
(F_VERSION, F_ID, F_WORKER, F_GENERATION, F_T0, F_ITERS, F_LAST, F_VISITS, F_SENT_NS,
 F_UTILITY_SUM, F_SECONDS, F_SWEEPS) = range(12)
F_COUNTS = 12                    # .. F_COUNTS + NUM_ARRAYS - 1: each array's element count
FLOAT_FIELDS = (F_UTILITY_SUM, F_SECONDS)
# The table: one row per record.
T_STATUS = NUM_FIELDS            # columns 0 .. NUM_FIELDS - 1: the header fields (floats' bits)
T_START = NUM_FIELDS + 1         # .. + NUM_ARRAYS - 1: each array's start (element index)
T_DATA = T_START + NUM_ARRAYS    # the record's first byte in the arena
TABLE_COLUMNS = T_DATA + 1

OK = 0
BAD_LAYOUT = -11                 # index_records: markers, lengths or sizes do not fit
BAD_VERSION = -12
BAD_FIELD = -13                  # a negative count or iteration count, a flag not 0/1
BAD_CUTS = -14                   # a group's cuts do not split its rows and values
BAD_NEW_ROWS = -15               # new rows' counts disagree, or a non-finite new value
MAX_COUNT = 1 << 40
AFTER_FAILURE = -22              # check_add_records: a later record of a source whose record failed


@njit_inline
def _big_endian(u8, pos, size):
    """The ``size``-byte big-endian integer at ``pos`` (msgpack's byte order)."""
    v = np.int64(0)
    for k in range(size):
        v = (v << 8) | np.int64(u8[pos + k])
    return v


@njit_inline
def _cuts_ok(i64, start, rows, values):
    """A group's cuts (int64[2, SHARDS + 1] at ``start``) split ``rows`` rows and ``values``
    values: both rows start at 0, never decrease, and end at the totals."""
    for k in range(2):
        base = start + k * (SHARDS + 1)
        if i64[base] != 0:
            return False
        for s in range(SHARDS):
            if i64[base + s + 1] < i64[base + s]:
                return False
    return i64[start + SHARDS] == rows and i64[start + 2 * SHARDS + 1] == values


@njit
def index_records(u8, u32, i64, i8, starts, lengths, table):
    """Parse the records at byte ``starts`` (each 8-byte aligned) of ``lengths`` bytes into
    ``table`` (int64[records, TABLE_COLUMNS]); each row's T_STATUS is OK or a BAD_* code.
    Checks everything a record says about itself; its rows are checked against the store by
    :func:`check_records`."""
    for r in range(starts.shape[0]):
        start, length = starts[r], lengths[r]
        row = table[r]
        row[T_STATUS] = _index_one(u8, u32, i64, i8, start, length, row)


@njit_inline
def _index_one(u8, u32, i64, i8, start, length, row):
    if length < DATA_AT or start % ALIGN != 0:
        return BAD_LAYOUT
    if (u8[start] != 0x93 or u8[start + 1] != 0xdc or u8[start + 2] != 0
            or u8[start + 3] != NUM_FIELDS):
        return BAD_LAYOUT
    for f in range(NUM_FIELDS):
        pos = start + FIELDS_AT + 9 * f
        marker = FLOAT64 if f == F_UTILITY_SUM or f == F_SECONDS else INT64
        if u8[pos] != marker:
            return BAD_LAYOUT
        row[f] = _big_endian(u8, pos + 1, 8)
    pad = start + PAD_AT
    if u8[pad] != 0xc4 or u8[pad + 1] != PAD or u8[pad + 2 + PAD] != 0xc6:
        return BAD_LAYOUT
    if row[F_VERSION] != VERSION:
        return BAD_VERSION
    size = np.int64(0)
    for a in range(NUM_ARRAYS):
        n = row[F_COUNTS + a]
        if n < 0 or n > MAX_COUNT:
            return BAD_FIELD
        row[T_START + a] = (start + DATA_AT + size) // ITEMSIZE[a]
        size += (n * ITEMSIZE[a] + ALIGN - 1) // ALIGN * ALIGN
    if _big_endian(u8, pad + 3 + PAD, 4) != size or length != DATA_AT + size:
        return BAD_LAYOUT
    row[T_DATA] = start
    if row[F_ITERS] < 0 or (row[F_LAST] != 0 and row[F_LAST] != 1):
        return BAD_FIELD
    if row[F_COUNTS + A_REGRET_CUTS] != CUTS or row[F_COUNTS + A_STRATEGY_CUTS] != CUTS:
        return BAD_CUTS
    for g in range(2):
        offsets, values, cuts = 3 * g, 3 * g + 1, 3 * g + 2
        if not _cuts_ok(i64, row[T_START + cuts], row[F_COUNTS + offsets],
                        row[F_COUNTS + values]):
            return BAD_CUTS
    keys = row[F_COUNTS + A_KEYS]
    values = row[F_COUNTS + A_NEW_REGRETS]
    if row[F_COUNTS + A_NUM_ACTIONS] != keys or row[F_COUNTS + A_NEW_STRATEGY] != values:
        return BAD_NEW_ROWS
    total = np.int64(0)
    first = row[T_START + A_NUM_ACTIONS]
    for k in range(keys):
        total += i8[first + k]
    if total != values:
        return BAD_NEW_ROWS
    non_finite = False
    for a in (A_NEW_REGRETS, A_NEW_STRATEGY):
        first = row[T_START + a]
        for v in range(first, first + values):
            non_finite |= (u32[v] & EXPONENT) == EXPONENT
    if non_finite:
        return BAD_NEW_ROWS
    return OK


@njit
def check_records(store, u32, i64, table, first, last, num_actions, status):
    """Check the stored rows of shards ``first`` .. ``last - 1`` of every record whose
    T_STATUS is OK against ``store`` (reads only): ``status[r]`` gets 0 or the first failure's
    code (:mod:`holdem.delta.shard_kernels` BAD_*). ``num_actions`` (int8: one slot per row of
    every group of every record, record after record, regret rows before strategy rows)
    receives each row's num_actions for :func:`add_records`. Threads checking disjoint shard
    ranges each pass their own ``status``."""
    base = np.int64(0)
    for r in range(table.shape[0]):
        row = table[r]
        status[r] = 0
        if row[T_STATUS] == OK:
            status[r] = _check_record(store, u32, i64, row, base, num_actions, first, last)
        base += row[F_COUNTS + A_REGRET_OFFSETS] + row[F_COUNTS + A_STRATEGY_OFFSETS]


@njit_inline
def _group(u32, values, i64, row, g):
    """Group ``g`` (0: regret, 1: strategy updates) of the record of table row ``row``: its
    offsets, its values as ``values`` views them (float32, or their bits as uint32) and its
    cuts (int64[2, SHARDS + 1])."""
    offsets = u32[row[T_START + 3 * g]:row[T_START + 3 * g] + row[F_COUNTS + 3 * g]]
    first = row[T_START + 3 * g + 1]
    c = row[T_START + 3 * g + 2]
    return (offsets, values[first:first + row[F_COUNTS + 3 * g + 1]],
            i64[c:c + CUTS].reshape(2, SHARDS + 1))


@njit_inline
def _check_record(store, u32, i64, row, base, num_actions, first, last):
    """Check shards ``first`` .. ``last - 1`` of the record of table row ``row`` against
    ``store`` (its rows' num_actions go from ``base`` in ``num_actions``): 0 or the first
    failure's code."""
    for g in range(2):
        offsets, bits, cuts = _group(u32, u32, i64, row, g)
        rows = offsets.shape[0]
        status = check_shards(store, offsets, bits, cuts, first, last,
                              num_actions[base:base + rows])
        if status != 0:
            return status
        base += rows
    return 0


@njit_inline
def _add_record(regrets, strategy_sum, u32, f32, i64, row, base, num_actions, first, last,
                floor, scale):
    """Add shards ``first`` .. ``last - 1`` of the record of table row ``row`` (its rows'
    num_actions from ``base`` in ``num_actions``): regrets clamped at ``floor``, strategy
    updates times ``scale``."""
    for g in range(2):
        offsets, values, cuts = _group(u32, f32, i64, row, g)
        rows = offsets.shape[0]
        if g == 0:
            add_shards(regrets, offsets, num_actions[base:base + rows], values, cuts, first,
                       last, floor, 1.0)
        else:
            add_shards(strategy_sum, offsets, num_actions[base:base + rows], values, cuts,
                       first, last, -np.inf, scale)
        base += rows


@njit
def add_records(regrets, strategy_sum, u32, f32, i64, table, merge, first, last, num_actions,
                floor, strategy_scale):
    """Add shards ``first`` .. ``last - 1`` of every record with ``merge[r]`` true (checked by
    :func:`check_records`, whose ``num_actions`` this reads) into the store's ``regrets``
    (sums clamped at ``floor``) and ``strategy_sum`` (each record's strategy updates times
    ``strategy_scale[r]``: the DCFR discounts it missed). Calls for disjoint shard ranges write
    disjoint rows."""
    base = np.int64(0)
    for r in range(table.shape[0]):
        row = table[r]
        if merge[r]:
            _add_record(regrets, strategy_sum, u32, f32, i64, row, base, num_actions, first,
                        last, floor, strategy_scale[r])
        base += row[F_COUNTS + A_REGRET_OFFSETS] + row[F_COUNTS + A_STRATEGY_OFFSETS]


@njit
def check_add_records(store, u32, f32, i64, table, codes, sources, by_source, num_actions,
                      floor, strategy_scale):
    """:func:`check_records` and :func:`add_records` over every shard in one call, record
    after record, on one thread: a pass small enough to merge inline pays one kernel call
    and no Python between the check and the add. ``codes`` (int64[records]; in: OK, or why
    the record is left out -- a layout failure, SKIPPED, BAD_KEYS) gets each record's
    outcome: OK for a record that was checked and added, else the first failure's code. With
    ``by_source``, a record whose source (``sources``, int64) had an earlier record fail (a
    negative code) is not checked and gets AFTER_FAILURE, as
    :func:`holdem.delta.merge.merge_arena` rules for the merge threads' passes too. A record
    is checked in full before anything of it is added, and checks read only the store's row
    layout, which adds do not change, so the store ends as it would after all the checks and
    then all the adds."""
    failed = False
    base = np.int64(0)
    for r in range(table.shape[0]):
        row = table[r]
        rows_r = row[F_COUNTS + A_REGRET_OFFSETS] + row[F_COUNTS + A_STRATEGY_OFFSETS]
        if codes[r] == OK and by_source and failed:
            for q in range(r):
                if sources[q] == sources[r] and codes[q] < 0:
                    codes[r] = AFTER_FAILURE
                    break
        if codes[r] == OK:
            codes[r] = _check_record(store, u32, i64, row, base, num_actions, 0, SHARDS)
        if codes[r] == OK:
            _add_record(store.regrets, store.strategy_sum, u32, f32, i64, row, base,
                        num_actions, 0, SHARDS, floor, strategy_scale[r])
        elif codes[r] < 0:
            failed = True
        base += rows_r


@njit
def stored_rows(table):
    """Rows the records hold of the store (both groups, every record): the merge's scratch."""
    rows = np.int64(0)
    for r in range(table.shape[0]):
        rows += table[r, F_COUNTS + A_REGRET_OFFSETS] + table[r, F_COUNTS + A_STRATEGY_OFFSETS]
    return rows


@njit
def count_new_rows(table, select):
    """(rows, values) of the new rows of the records with ``select[r]`` true."""
    rows = values = np.int64(0)
    for r in range(table.shape[0]):
        if select[r]:
            rows += table[r, F_COUNTS + A_KEYS]
            values += table[r, F_COUNTS + A_NEW_REGRETS]
    return rows, values


@njit
def gather_new_rows(i64, i8, f32, table, select, keys, num_actions, regrets, strategy):
    """Copy the new rows of the records with ``select[r]`` true, record after record, into
    ``keys``, ``num_actions``, ``regrets`` and ``strategy`` (float64), sized by
    :func:`count_new_rows`: one store merge then inserts the new rows of a whole pass."""
    row = value = np.int64(0)
    for r in range(table.shape[0]):
        if not select[r]:
            continue
        t = table[r]
        n, m = t[F_COUNTS + A_KEYS], t[F_COUNTS + A_NEW_REGRETS]
        k0, a0 = t[T_START + A_KEYS], t[T_START + A_NUM_ACTIONS]
        for k in range(n):
            keys[row + k] = i64[k0 + k]
            num_actions[row + k] = i8[a0 + k]
        g0, s0 = t[T_START + A_NEW_REGRETS], t[T_START + A_NEW_STRATEGY]
        for v in range(m):
            regrets[value + v] = f32[g0 + v]
            strategy[value + v] = f32[s0 + v]
        row += n
        value += m
