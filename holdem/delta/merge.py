"""Merging delta records into a store: the main process's merge pass over every record that
arrived since the last pass, at once, and a store replica's merge of one record, on the merge
threads of a :class:`RowMerger`.

One pass (:func:`merge_arena`) costs a few kernel calls however many records it holds, so
workers can send a delta every few hundred iterations (what keeps parallel iterations worth
serial ones) without the main process paying Python work per delta:

1. index every record (:func:`holdem.delta.record_kernels.index_records`): layout, counts,
   cuts, finite new values;
2. check the new rows of the records that hold any against the game (by key, in Python: after
   the first minutes of a run few records hold new rows);
3. check every stored row of every record against the store, each merge thread over its shard
   range of every record (:func:`~holdem.delta.record_kernels.check_records`);
4. add the records that passed every check (:func:`~holdem.delta.record_kernels.add_records`,
   one writer per row), then insert their new rows by key (which may grow the store).

A pass small enough for one thread (most: :data:`INLINE_ROWS`) does 3 and 4 in one kernel call,
record after record (:func:`~holdem.delta.record_kernels.check_add_records`).

A record that fails a check is not merged at all; the caller learns which from the returned
codes. The regret floor is the one in force for the pass. A store replica merges the same
records in the same order with the same floors, so it stays the main store bit for bit
(:mod:`holdem.runtime.replica`).
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from holdem.delta import record_kernels as rk
from holdem.delta import shard_kernels as dk
from holdem.delta.records import OK, RecordArena, RecordError, status_reason

BAD_KEYS = -21                   # new rows that are not infosets of the game
AFTER_FAILURE = rk.AFTER_FAILURE  # a later record of a source whose record failed
_REASONS = {dk.BAD_RANGE: "an offset outside the store's entries",
            dk.BAD_ROW: "an offset that is not the start of a row",
            dk.BAD_SHARD: "a row in the wrong shard",
            dk.BAD_COUNT: "rows that own another number of values than the shard carries",
            dk.BAD_VALUE: "a NaN or infinite value",
            BAD_KEYS: "infosets that are not in the game",
            AFTER_FAILURE: "sent after a record that was rejected"}
"""Why the row checks (:func:`holdem.delta.shard_kernels.check_shards`) or a merge pass
rejected a record, by code; why a record does not index is
:func:`holdem.delta.records.status_reason`'s."""


def reason(code):
    """Why a record with this (non-zero) code was rejected."""
    return _REASONS.get(int(code)) or status_reason(code)


# Below this many rows a merge pass runs on the calling thread (RowMerger.map): replaying
# hunl_default records of 50 iterations (about 6,600 rows each) on the 2-core machine
# (tools/bench_merge.py --threads 1,2), a pass cost 0.040 ms + 0.111 ms a record on one thread
# and 0.157 ms + 0.066 ms a record on two (the threads meet twice a pass), so one thread is
# the faster up to about 2.6 such records, 17,000 rows.
INLINE_ROWS = 16_384


class RowMerger:
    """The merge threads: ``threads`` threads (1: the calling thread alone; at most SHARDS),
    each owning a range of the shards of every record (:attr:`ranges`), so that a row has one
    writer. The caller is the store's only writer."""

    def __init__(self, threads=1):
        self.threads = max(1, min(dk.SHARDS, int(threads)))
        self._pool = (ThreadPoolExecutor(self.threads - 1, thread_name_prefix="holdem-merge")
                      if self.threads > 1 else None)
        cuts = [dk.SHARDS * k // self.threads for k in range(self.threads + 1)]
        self.ranges = list(zip(cuts, cuts[1:]))        # thread k's shards

    def ranges_for(self, rows=None):
        """The shard ranges :meth:`map` calls for a pass of ``rows`` rows: each thread's, or
        below INLINE_ROWS (or with one thread) all the shards in one range."""
        if self._pool is None or (rows is not None and rows < INLINE_ROWS):
            return [(0, dk.SHARDS)]
        return self.ranges

    def map(self, fn, rows=None):
        """``fn(first, last)`` for each shard range of :meth:`ranges_for` (one writer per row
        across them), the results in that order: the first in this thread, the others on the
        pool (one thread fewer to wake). ``rows``: the rows the calls will touch in all; below
        INLINE_ROWS one call takes every shard in this thread, because handing work to
        another thread and waiting for it costs more than it saves on a small pass (and each
        kernel call walks every record: one call instead of three, one a range, took 56 us
        instead of 63 from a warm ``merge_arena`` of one 50-iteration hunl_default record,
        and 78-81 instead of 88-98 after a 1 ms sleep, on the 2-core machine)."""
        ranges = self.ranges_for(rows)
        if len(ranges) == 1:
            return [fn(*ranges[0])]
        others = [self._pool.submit(fn, *r) for r in ranges[1:]]
        return [fn(*ranges[0])] + [f.result() for f in others]

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


class MergeScratch:
    """Per-pass scratch that grows as needed (a merge pass allocates only when passes grow)."""

    def __init__(self):
        self.num_actions = np.zeros(1 << 16, np.int8)
        self.status = np.zeros((1, 64), np.int64)

    def arrays(self, rows, threads, records):
        if self.num_actions.shape[0] < rows:
            self.num_actions = np.zeros(2 * rows, np.int8)
        if self.status.shape[0] < threads or self.status.shape[1] < records:
            self.status = np.zeros((threads, 2 * records), np.int64)
        return self.num_actions, self.status[:threads, :records]


def merge_arena(store, merger, arena, regret_floor, game=None, scratch=None, by_source=False,
                dcfr=None):
    """Merge every record of ``arena`` (a :class:`holdem.delta.records.RecordArena`) into
    ``store`` with ``merger`` (a :class:`RowMerger`); ``game``: check new rows
    against it (None: the caller already did). ``dcfr``: the store's
    :class:`holdem.solver.solver.DcfrSchedule`, which scales the strategy updates of a record
    made before sweeps the store has had since by what those sweeps would have discounted them
    (:meth:`~holdem.solver.solver.DcfrSchedule.strategy_scales`; None: no scaling). With
    ``by_source``, a record that fails also
    keeps the later records of the same source (``arena.sources``) out, so what is merged of
    each source is a prefix of what it sent. Returns int64[records]: 0 for a merged record,
    :data:`~holdem.delta.records.SKIPPED`, or why it was not merged (:func:`reason`)."""
    if arena.count == 0:
        return np.zeros(0, np.int64)
    table = arena.index()
    codes = table[:, rk.T_STATUS].copy()
    # Records with new rows (by key; rare once the store holds most of the game: None when
    # there are none), checked against the game before anything is merged.
    has_new = checked_new = new_rows = None
    if table[:, rk.F_COUNTS + rk.A_KEYS].any():
        has_new = table[:, rk.F_COUNTS + rk.A_KEYS] > 0
        checked_new = has_new & (codes == OK)
        if game is not None and checked_new.any():
            new_rows = _new_rows(arena, table, checked_new)
            _check_new_keys(game, arena, new_rows, codes, checked_new)
    scratch = scratch or MergeScratch()
    rows = rk.stored_rows(table)
    ranges = merger.ranges_for(rows)
    num_actions, status = scratch.arrays(rows, len(ranges), arena.count)
    _, u32, f32, i64, _ = arena.views()
    arrays = store.arrays
    floor = -np.inf if regret_floor is None else float(regret_floor)
    scales = (np.ones(arena.count) if dcfr is None
              else dcfr.strategy_scales(table[:, rk.F_SWEEPS]))
    if len(ranges) == 1:
        # One thread: check and add record after record in one kernel call.
        sources = _source_ids(arena.sources) if by_source else _NO_SOURCES
        rk.check_add_records(arrays, u32, f32, i64, table, codes, sources, by_source,
                             num_actions, floor, scales)
        merge = codes == OK
    else:
        merge = _check_then_add(arena, table, codes, merger, arrays, u32, f32, i64, rows,
                                ranges, num_actions, status, by_source, floor, scales)
    insert = None if has_new is None else merge & has_new
    if insert is not None and insert.any():
        if new_rows is None or not np.array_equal(insert, checked_new):
            new_rows = _new_rows(arena, table, insert)
        keys, num_actions, regrets, strategy = new_rows
        late = scales[insert]
        if (late != 1.0).any():         # the new rows' strategy too (record after record)
            strategy *= np.repeat(late, table[insert, rk.F_COUNTS + rk.A_NEW_STRATEGY])
        # One store merge for the pass (it may grow the store; a key that two records hold
        # is inserted once and summed).
        store.merge(keys, num_actions, regrets, strategy, regret_floor=regret_floor,
                    check_existing=False)
    return codes


def _check_then_add(arena, table, codes, merger, arrays, u32, f32, i64, rows, ranges,
                    num_actions, status, by_source, floor, scales):
    """The merge threads' pass (several shard ranges): every thread checks its shards of
    every record, then those that passed everywhere are added, each thread its shards; sets
    ``codes`` and returns the records merged (bool)."""
    parsed = not codes.any()                            # every record indexed OK
    checked = table if parsed else arena.kernel_table(codes != OK)  # skipped by check_records
    k_of = {r: k for k, r in enumerate(ranges)}
    merger.map(lambda lo, hi: rk.check_records(arrays, u32, i64, checked, lo, hi, num_actions,
                                               status[k_of[(lo, hi)]]), rows)
    if status.any():
        for k in range(status.shape[0]):
            failed = (codes == OK) & (status[k] != 0)
            codes[failed] = status[k][failed]
    if by_source and (codes < 0).any():
        failed_sources = set()
        for r in range(arena.count):
            source = arena.sources[r]
            if source in failed_sources and codes[r] == OK:
                codes[r] = AFTER_FAILURE
            elif codes[r] < 0:
                failed_sources.add(source)
    merge = codes == OK
    merger.map(lambda lo, hi: rk.add_records(arrays.regrets, arrays.strategy_sum, u32, f32,
                                             i64, checked, merge, lo, hi, num_actions, floor,
                                             scales),
               rows)
    return merge


_NO_SOURCES = np.zeros(0, np.int64)


def _source_ids(sources):
    """The records' sources as int64 for :func:`holdem.delta.record_kernels.check_add_records`:
    themselves where they are integers (worker indices), else a number per distinct one."""
    try:
        return np.asarray(sources, np.int64)
    except (TypeError, ValueError):
        ids = {}
        return np.array([ids.setdefault(s, len(ids)) for s in sources], np.int64)


def _new_rows(arena, table, select):
    """The new rows of the records with ``select`` true, all in one delta:
    (keys, num_actions, regrets, strategy)."""
    rows, values = rk.count_new_rows(table, select)
    out = (np.empty(rows, np.int64), np.empty(rows, np.int8), np.empty(values, np.float32),
           np.empty(values, np.float64))
    _, _, f32, i64, i8 = arena.views()
    rk.gather_new_rows(i64, i8, f32, table, select, *out)
    return out


def _check_new_keys(game, arena, new_rows, codes, select):
    """Mark BAD_KEYS in ``codes`` for each selected record with a new row that is not an
    infoset of ``game`` (``new_rows``: theirs, from :func:`_new_rows`): one check for the
    whole pass, record by record only when it fails."""
    keys, num_actions, _, _ = new_rows
    if game.keys_match(keys, num_actions):
        return
    for r in np.flatnonzero(select):
        a = arena.arrays(r)
        if not game.keys_match(a["keys"], a["num_actions"]):
            codes[r] = BAD_KEYS


def merge_one(store, merger, payload, regret_floor, game=None, dcfr=None):
    """Merge one record (bytes-like); raises :class:`holdem.delta.records.RecordError` with
    nothing merged when it is malformed. For store replicas, tests and tools."""
    arena = RecordArena(len(payload))
    arena.add(payload)
    code = merge_arena(store, merger, arena, regret_floor, game, dcfr=dcfr)[0]
    if code != OK:
        raise RecordError(f"delta rejected: {reason(code)}")


def merge_threads(config, num_workers):
    """Threads that merge deltas: ``train.merge_threads``, or with 0 one per four workers
    (at most 8). The main process and every store replica merge on as many."""
    n = config.train.merge_threads
    return n if n > 0 else max(1, min(8, num_workers // 4))
