"""Delta records: a worker's delta as bytes, and the arena a merge pass indexes them in.

A worker sends the delta of each flush -- only the infosets its iterations touched, split by
:class:`holdem.delta.split.DeltaSplitter` into rows the shared store already holds (by value
offset, in shards) and rows new to it (by key) -- as one *record* (:func:`encode_delta`). Its
size depends on the flush, not on how long training has run.

A record (version 5) is one msgpack array of three items whose header has fixed widths, so that
the main process finds every field with a kernel and merges the records of a whole pass at once
(:mod:`holdem.delta.record_kernels`, :mod:`holdem.delta.merge`; any msgpack reader also decodes
it):

1. an array 16 of 22 fields, each an int 64 (``0xd3``) or a float 64 (``0xcb``): ``v`` (5),
   ``id`` (the batch), ``worker``, ``generation`` (the store generation the flush read), ``t0``
   (the flush's first iteration), ``iters``, ``last`` (1 on a batch's last flush), ``visits``,
   ``sent_ns`` (``time.monotonic_ns()`` when it was encoded: the flush-to-merge delay),
   ``utility_sum`` (float: player 0's sampled values), ``seconds`` (float: traversal time),
   ``sweeps`` (the DCFR discount sweeps the main process had applied when the worker made the
   record's strategy updates, as it published them; -1: not known), then the element count of
   each array below;
2. a bin 8 of 7 zero bytes (so that the data starts 216 bytes into the record, 8-byte aligned);
3. a bin 32 holding the arrays, raw little-endian, each starting 8-byte aligned, in this order:
   ``regret_offsets`` uint32 (value offsets of stored rows with regret updates, shard after
   shard), ``regrets`` float32, ``regret_cuts`` int64[2, SHARDS + 1] (each shard's first row and
   first value), the same three for strategy updates (``strategy_offsets``, ``strategy``,
   ``strategy_cuts``), then the new rows: ``keys`` int64, ``num_actions`` int8, ``new_regrets``
   and ``new_strategy`` float32.

:func:`decode_delta` checks one record and returns its fields and arrays; :class:`RecordArena`
holds the records of one merge pass and indexes them all in one kernel call. Rows are checked
against the store before anything is merged. Version 5 added ``sweeps`` to version 4
(fixed-width header, one record per flush), which replaced version 3 (a msgpack map header,
one delta per batch); both ends of a run always run the same code. The messages around the
records (requests, ready) are :mod:`holdem.runtime.protocol`'s.
"""

import struct
import time
import typing

import numpy as np

from holdem.delta import record_kernels as rk
from holdem.delta.shard_kernels import SHARDS
from holdem.store.store import read_only

VERSION = rk.VERSION
ARRAYS = {"regret_offsets": "<u4", "regrets": "<f4", "regret_cuts": "<i8",
          "strategy_offsets": "<u4", "strategy": "<f4", "strategy_cuts": "<i8",
          "keys": "<i8", "num_actions": "<i1", "new_regrets": "<f4", "new_strategy": "<f4"}
"""The record's arrays, in order, with their dtypes."""
_FIELDS = ("v", "id", "worker", "generation", "t0", "iters", "last", "visits", "sent_ns",
           "utility_sum", "seconds", "sweeps")
_HEAD = struct.Struct(">BBH" + "".join("Bd" if f in rk.FLOAT_FIELDS else "Bq"
                                       for f in range(rk.NUM_FIELDS)) + f"BB{rk.PAD}xBI")
assert _HEAD.size == rk.DATA_AT
_REASONS = {rk.BAD_LAYOUT: "its layout does not follow the protocol (truncated or corrupt)",
            rk.BAD_VERSION: "an unknown protocol version",
            rk.BAD_FIELD: "a negative count or iteration count, or a flag other than 0 or 1",
            rk.BAD_CUTS: "cuts that do not split its rows and values",
            rk.BAD_NEW_ROWS: "new rows whose counts disagree or whose values are not finite"}


OK = rk.OK                       # the status of a record that indexed (and merged) cleanly


class RecordError(ValueError):
    """A delta record that does not follow the format, or that was not merged."""


class Flush(typing.NamedTuple):
    """What one record says of its flush: its header fields (floats decoded), as
    :meth:`RecordArena.flush` reads them off the index table."""

    id: int                      # the batch
    worker: int
    generation: int              # the store generation the flush read
    t0: int                      # the flush's first iteration
    iters: int
    last: bool                   # the batch's last flush
    visits: int
    sent_ns: int                 # time.monotonic_ns() when it was encoded
    utility_sum: float
    seconds: float
    sweeps: int                  # DCFR sweeps applied when its strategy updates were made


def _aligned(n):
    return -(-n // rk.ALIGN) * rk.ALIGN


_ITEMSIZES = tuple(int(n) for n in rk.ITEMSIZE)
_DTYPES = tuple(np.dtype(d) for d in ARRAYS.values())
_FIELD_MARKERS = tuple(rk.FLOAT64 if f in rk.FLOAT_FIELDS else rk.INT64
                       for f in range(rk.NUM_FIELDS))


def encode_delta(batch_id, worker, generation, t0, iters, last, utility_sum, visits, seconds,
                 split, sweeps=-1):
    """A flush's delta record: ``split`` is a :class:`holdem.delta.split.SplitDelta`;
    ``sweeps``: the DCFR sweeps the main process had applied when its strategy updates were
    made (-1: not known; the main process then scales nothing). Returns a
    bytearray (see the module docstring for the layout). Written in few Python steps: a worker
    encodes one every flush (15 workers flush every ~50 iterations), and a record of 50 rows
    took 21 us to encode before, 15 now."""
    arrays = (split.regret.offsets, split.regret.values, split.regret.cuts,
              split.strategy.offsets, split.strategy.values, split.strategy.cuts,
              split.keys, split.num_actions, split.new_regrets, split.new_strategy)
    counts = [a.size for a in arrays]
    nbytes = [n * k for n, k in zip(counts, _ITEMSIZES)]
    sizes = [_aligned(b) for b in nbytes]
    size = sum(sizes)
    out = bytearray(rk.DATA_AT + size)
    fields = (VERSION, batch_id, worker, generation, t0, iters, 1 if last else 0, visits,
              time.monotonic_ns(), float(utility_sum), float(seconds), int(sweeps), *counts)
    values = [0x93, 0xdc, rk.NUM_FIELDS]
    for marker, value in zip(_FIELD_MARKERS, fields):
        values += (marker, value)
    _HEAD.pack_into(out, 0, *values, 0xc4, rk.PAD, 0xc6, size)
    data = np.frombuffer(out, np.uint8)
    pos = rk.DATA_AT
    for arr, dtype, n, padded in zip(arrays, _DTYPES, nbytes, sizes):
        if n:
            data[pos:pos + n] = np.ascontiguousarray(arr, dtype).reshape(-1).view(np.uint8)
        pos += padded
    return out


SKIPPED = 1                      # a record left out of its pass (RecordArena.drop)


class RecordArena:
    """The delta records of one merge pass, one after another in a buffer that is reused (and
    grows as needed), with typed views for the record kernels.

    :meth:`add` copies a record in (or :meth:`reserve` gives room to read one into), then
    :meth:`index` parses all of them in one kernel call into :attr:`table`."""

    def __init__(self, capacity=1 << 20, buffer=None):
        # ``buffer``: records that lie elsewhere (uint8, e.g. the delta rings), named by
        # :meth:`register` instead of copied in.
        self._external = buffer is not None
        self._buffer = buffer if buffer is not None else np.zeros(
            _aligned(max(capacity, rk.DATA_AT)), np.uint8)
        self.starts = np.zeros(64, np.int64)
        self.lengths = np.zeros(64, np.int64)
        self.count = 0
        self.used = 0
        self.table = np.zeros((64, rk.TABLE_COLUMNS), np.int64)
        self.sources = []               # what each record came from (the caller's tag)
        self._dropped = []
        self.indexed = False
        self._columns = None
        self._views = None

    def clear(self):
        self.count = self.used = 0
        self.sources = []
        self._dropped = []
        self.indexed = False
        self._columns = None

    @property
    def live(self):
        """Records not dropped."""
        return self.count - len(set(self._dropped))

    def is_dropped(self, r):
        return r in self._dropped

    def drop(self, r):
        """Leave record ``r`` out of the pass (e.g. a frame that is not a delta): it indexes as
        :data:`SKIPPED`."""
        self._dropped.append(r)
        if self.indexed:
            self.table[r, rk.T_STATUS] = SKIPPED

    def _slot(self, start, length, source):
        if self.count == self.starts.shape[0]:
            self.starts = np.resize(self.starts, 2 * self.count)
            self.lengths = np.resize(self.lengths, 2 * self.count)
        self.starts[self.count] = start
        self.lengths[self.count] = length
        self.count += 1
        self.sources.append(source)
        self.indexed = False
        self._columns = None

    def register(self, start, length, source=None):
        """Name the record at byte ``start`` of the external buffer (8-byte aligned)."""
        self._slot(start, length, source)

    def reserve(self, length, source=None):
        """A writable memoryview of ``length`` bytes for the next record."""
        if self._external:
            raise ValueError("records of an external buffer are registered, not copied in")
        self.indexed = False
        need = self.used + _aligned(length)
        if need > self._buffer.shape[0]:
            bigger = np.zeros(_aligned(max(need, self._buffer.shape[0] * 3 // 2)), np.uint8)
            bigger[:self.used] = self._buffer[:self.used]
            self._buffer = bigger
        self._slot(self.used, length, source)
        view = memoryview(self._buffer)[self.used:self.used + length]
        self.used = need
        return view

    def add(self, payload, source=None):
        payload = memoryview(payload).cast("B")
        self.reserve(len(payload), source)[:] = payload

    def views(self):
        """(u8, u32, f32, i64, i8) views of the buffer, as the record kernels take them (made
        once per buffer: a merge pass asks for them several times)."""
        b = self._buffer
        if self._views is None or self._views[0] is not b:
            self._views = (b, b.view(np.uint32), b.view(np.float32), b.view(np.int64),
                           b.view(np.int8))
        return self._views

    def index(self):
        """Parse every record into :attr:`table` (int64[count, TABLE_COLUMNS]); returns it
        (once per pass: later calls return the same)."""
        if self.indexed:
            return self.table[:self.count]
        if self.table.shape[0] < self.count:
            self.table = np.zeros((2 * self.count, rk.TABLE_COLUMNS), np.int64)
        table = self.table[:self.count]
        u8, u32, _, i64, i8 = self.views()
        rk.index_records(u8, u32, i64, i8, self.starts[:self.count], self.lengths[:self.count],
                         table)
        if self._dropped:
            table[self._dropped, rk.T_STATUS] = SKIPPED
        self.indexed = True
        return table

    def status(self, r):
        """Record ``r``'s status: :data:`OK`, :data:`SKIPPED` or why it does not parse
        (:func:`status_reason`)."""
        return int(self.index()[r, rk.T_STATUS])

    def statuses(self):
        """Every record's status (a new int64[count])."""
        return self.index()[:, rk.T_STATUS].copy()

    def counts(self, name):
        """int64[count]: how many elements each record's array ``name`` (of :data:`ARRAYS`)
        holds (a view of the index table)."""
        return self.index()[:, rk.F_COUNTS + list(ARRAYS).index(name)]

    def flush(self, r):
        """Record ``r``'s header as a :class:`Flush` (it must have indexed OK)."""
        return Flush(*_header_values(self.index()[r])[1:])

    def columns(self):
        """Every record's header as columns: a :class:`Flush` whose fields are lists, one item
        per record (meaningful for the records that indexed OK). A merge pass reads them: a
        list per field costs less than a :class:`Flush` per record. Made once per pass (the
        records' headers do not change; tools that look at a pass read the same)."""
        if self._columns is not None:
            return self._columns
        table = self.index()
        cols = table[:, 1:len(_FIELDS)].T.tolist()
        for f in rk.FLOAT_FIELDS:
            cols[f - 1] = table[:, f].view(np.float64).tolist()
        cols[_LAST - 1] = (table[:, _LAST] != 0).tolist()
        self._columns = Flush(*cols)
        return self._columns

    def kernel_table(self, failed):
        """A copy of the index table for the merge kernels, with the records ``failed`` (bool
        mask) marked as not parsed, so that the kernels pass them over."""
        table = self.index().copy()
        table[failed, rk.T_STATUS] = rk.BAD_LAYOUT
        return table

    def record(self, r):
        """Record ``r``'s bytes (a read-only view, valid until the arena is cleared)."""
        start = int(self.starts[r])
        return read_only(self._buffer[start:start + int(self.lengths[r])])

    def arrays(self, r):
        """Record ``r``'s arrays by name (read-only views; it must have indexed OK)."""
        row = self.table[r]
        u8, u32, f32, i64, i8 = self.views()
        typed = (u32, f32, i64, u32, f32, i64, i64, i8, f32, f32)
        out = {}
        for k, name in enumerate(ARRAYS):
            start, n = int(row[rk.T_START + k]), int(row[rk.F_COUNTS + k])
            out[name] = read_only(typed[k][start:start + n])
        for name in ("regret_cuts", "strategy_cuts"):
            out[name] = out[name].reshape(2, SHARDS + 1)
        return out


_LAST = _FIELDS.index("last")


def _header_values(row):
    """A table row's header fields, in :data:`_FIELDS` order (floats decoded): the one place
    the header columns are read."""
    head = row[:len(_FIELDS)]
    values = head.tolist()                      # (one C call: a merge pass reads every row)
    floats = head.view(np.float64)
    for f in rk.FLOAT_FIELDS:
        values[f] = float(floats[f])
    values[_LAST] = bool(values[_LAST])
    return values


def header(row):
    """A table row's header fields by name (floats decoded)."""
    return dict(zip(_FIELDS, _header_values(row)))


def status_reason(code):
    return _REASONS.get(int(code), f"code {int(code)}")


def decode_delta(payload):
    """Check one record; returns its header fields and arrays by name (read-only views of a
    copy of ``payload``). Raises :class:`RecordError` for a malformed record; its rows are
    checked against the store when merged."""
    arena = RecordArena(len(payload))
    arena.add(payload)
    code = arena.status(0)
    if code != OK:
        raise RecordError(f"delta: {status_reason(code)}")
    return {**header(arena.table[0]), **arena.arrays(0)}
