"""Delta rings: workers write their delta records into shared memory; the pipe carries a note.

A flush's record is 100-250 kB on No-Limit Hold'em, and workers send one every few milliseconds.
Through a socket the main process would copy every byte out of the kernel before merging it
(about 0.5 ms per MB on the 2-core machine). Instead each worker process owns a ring in one
shared-memory file (``holdem-<pid>-<run>-r0.store``, made by the main process, removed with the
run's other segments): the worker copies its record into its ring and sends a 19-byte *note*
(:func:`encode_note`: where the record starts, how long it is, and the worker's write position
after it) as a frame on its pipe. The
main process reads the notes, merges the records where they lie (the record kernels index them
in the ring) and then moves the ring's read position past them.

One writer per ring (its worker) and one reader (the main process): the worker keeps its write
position to itself; the main process publishes its read position in the ring's control words,
and beside it how many of the worker's iterations it has merged (:meth:`Rings.merged`), which
the worker reads to bound its unmerged iterations (:class:`holdem.runtime.worker.UnmergedGate`;
when it must wait it sends a *wait* note, :func:`encode_wait`, and blocks on its pipe), and
the DCFR discount sweeps the store has had (:meth:`Rings.sweeps`), which the worker writes into
its records so that the main process can scale strategy updates made before later sweeps,
and the store's newest generation (:meth:`Rings.store`), which a worker maps between two
flushes instead of reading a store that merges no longer reach until its next batch. A
record never wraps: one that does not fit before the ring's end starts at the next lap. A
record that does not fit at all -- the ring is full because the main process is behind, or the
record is larger than a quarter of the ring -- goes through the pipe as a frame, as Ray workers'
do, and the pipe's own back-pressure then paces the worker: nobody polls. Rings are sized from
the largest record a worker can make (:func:`ring_bytes_for`), so that this stays rare.
"""

import os
import struct

import numpy as np

from holdem.delta.records import RecordArena
from holdem.runtime import frames, shm

CONTROL = 64                     # bytes before each ring's data: int64 control words,
READ_AT, MERGED_AT = 0, 1        # the read position and the worker's iterations merged,
SWEEPS_AT = 2                    # and the DCFR sweeps the main store has had,
STORE_AT = 3                     # its newest generation + 1 (0: none published) and
CAPACITIES_AT = slice(4, 7)      # that generation's row, entry and table capacities
DEFAULT_BYTES = 8 << 20          # each worker's ring, at least (ring_bytes_for)
MAX_BYTES = 128 << 20            # and at most
RECORDS_PER_RING = 4             # a record larger than this share of its ring takes the pipe
_NOTE = struct.Struct(">BBqBqBq")  # msgpack: fixarray 3 of int 64s: start, length, end
NOTE_SIZE = _NOTE.size
DRAIN_BYTES = 1 << 16            # Inbox.drain reads at most this much in one call


def encode_note(start, length, end):
    """The frame announcing a record at ring position ``start`` (bytes into the ring's data,
    8-byte aligned) of ``length`` bytes, after which the worker's write position (monotonic,
    laps included) is ``end``: a msgpack array of three int 64s (a record is never this
    short)."""
    return _NOTE.pack(0x93, 0xd3, int(start), 0xd3, int(length), 0xd3, int(end))


def decode_note(frame):
    """(start, length, end) of a note, or None when ``frame`` is not a note."""
    if len(frame) != NOTE_SIZE:
        return None
    mark, m1, start, m2, length, m3, end = _NOTE.unpack(frame)
    if (mark, m1, m2, m3) != (0x93, 0xd3, 0xd3, 0xd3):
        return None
    return start, length, end


WAIT = -1                        # a note's start that says: a wait, not a record


def encode_wait(merged, started_ns):
    """The frame of a worker that blocks until ``merged`` of its iterations are merged (it
    began waiting at ``time.monotonic_ns()`` ``started_ns``): a note whose start is WAIT. Sent
    on the pipe after the worker's records, so the main process has read every record the
    worker sent when it reads this."""
    return encode_note(WAIT, merged, started_ns)


def ring_bytes_for(record_bytes):
    """The bytes of a ring whose worker's records are at most ``record_bytes`` long (None:
    unknown): RECORDS_PER_RING of them, in whole MiB, at least DEFAULT_BYTES and at most
    MAX_BYTES. A worker's unmerged records are capped in iterations
    (:func:`holdem.runtime.flush.unmerged_cap`), and its flushes with them, so a ring that
    takes a few of its largest records holds its backlog too: nothing goes through the pipe
    in steady state. (``hunl_blueprint`` at 15 workers: a record of the cap's 1,428 iterations
    is about 10 MB against an empty store, where 8 MB rings sent every record over 2 MB
    through the pipe.)"""
    if not record_bytes:
        return DEFAULT_BYTES
    mib = 1 << 20
    want = -(-int(RECORDS_PER_RING * record_bytes) // mib) * mib
    return max(DEFAULT_BYTES, min(MAX_BYTES, want))


def _specs(num_rings, ring_bytes):
    return [(f"ring{k}", np.uint8, CONTROL + ring_bytes) for k in range(num_rings)]


class Rings:
    """The main process's side: ``num_rings`` rings of ``ring_bytes`` in one segment."""

    def __init__(self, num_rings, ring_bytes=DEFAULT_BYTES, allocator=None):
        self.ring_bytes = int(ring_bytes)
        # The allocator of the run's store owns the file too: it removes it on every way out.
        self.allocator = allocator or shm.SharedAllocator()
        self.segment = self.allocator.create(shm.ring_path(**self.allocator.location),
                                             _specs(num_rings, self.ring_bytes))
        self.descriptor = self.segment.descriptor
        # The whole segment as one buffer (the record kernels index records in it), and each
        # ring's data offset in it.
        self.buffer = np.frombuffer(self.segment._mmap, np.uint8)
        self.data_at = [int(off) + CONTROL for _, _, _, off in self.descriptor["arrays"]]
        self._control = [self.buffer[off - CONTROL:off].view(np.int64) for off in self.data_at]

    def location(self, ring, start, length):
        """Where a record of ``ring`` at ``start`` lies in :attr:`buffer`, checked: None when
        the note points outside the ring."""
        if start < 0 or length <= 0 or start % 8 or start + length > self.ring_bytes:
            return None
        return self.data_at[ring] + start

    def consumed(self, ring, position):
        """The main process is done with ``ring``'s records up to ``position`` (monotonic: the
        worker's write position after them)."""
        self._control[ring][READ_AT] = position

    def merged(self, ring, iterations):
        """``iterations`` of ``ring``'s worker are merged (cumulative, since it started)."""
        self._control[ring][MERGED_AT] = iterations

    def sweeps(self, steps):
        """The main store has had ``steps`` DCFR discount sweeps (every ring)."""
        for control in self._control:
            control[SWEEPS_AT] = steps

    def store(self, generation, capacities):
        """The store grew: its newest generation is ``generation``, of ``capacities`` (rows,
        entries, table rows; :func:`holdem.store.store.array_specs`), in every ring. The
        generation word is cleared while the capacities change and set after them; a worker
        reads it on both sides of them and keeps what it has unless both agree
        (:meth:`RingWriter.store`)."""
        for control in self._control:
            control[STORE_AT] = 0
            control[CAPACITIES_AT] = capacities
            control[STORE_AT] = int(generation) + 1

    def reset(self, ring):
        """Before a ring's worker is replaced: empty, nothing of it merged."""
        control = self._control[ring]
        kept = control[SWEEPS_AT:].copy()
        control[:] = 0
        control[SWEEPS_AT:] = kept

    def close(self):
        self._control = []
        self.buffer = None
        self.allocator.unlink(self.segment.path)
        self.segment.close()


class RingWriter:
    """A worker's side of its ring (``descriptor``: the rings' segment; ``ring``: its index)."""

    def __init__(self, descriptor, ring):
        self.segment = shm.Segment(descriptor, writable=True)
        whole = self.segment.arrays[ring]
        self._control = whole[:CONTROL].view(np.int64)
        self.data = whole[CONTROL:]
        self.size = self.data.shape[0]
        self.position = 0                  # monotonic: bytes written, laps included

    def put(self, record):
        """Copy ``record`` into the ring; returns its note, or None when it does not fit now
        (the caller sends the record itself)."""
        n = len(record)
        padded = -(-n // 8) * 8
        if padded > self.size // RECORDS_PER_RING:
            return None
        at = self.position % self.size
        skip = self.size - at if at + padded > self.size else 0
        if self.position + skip + padded - int(self._control[READ_AT]) > self.size:
            return None
        start = (at + skip) % self.size
        self.data[start:start + n] = np.frombuffer(record, np.uint8)
        self.position += skip + padded
        return encode_note(start, n, self.position)

    def merged(self):
        """The iterations of this worker's records the main process has merged, as it last
        published them (never more than it merged)."""
        return int(self._control[MERGED_AT])

    def sweeps(self):
        """The DCFR discount sweeps the main store has had, as the main process last published
        them."""
        return int(self._control[SWEEPS_AT])

    def store(self):
        """(generation, (rows, entries, table rows)) of the store's newest generation, as the
        main process last published it (:meth:`Rings.store`), or None: none published, or
        it is being rewritten (read again at the next flush)."""
        control = self._control
        generation = int(control[STORE_AT])
        capacities = tuple(int(c) for c in control[CAPACITIES_AT])
        if generation == 0 or int(control[STORE_AT]) != generation:
            return None
        return generation - 1, capacities

    def close(self):
        self._control = self.data = None
        self.segment.close()


class Inbox:
    """What the workers sent in one wait, in the order read: frames copied into :attr:`heap`
    (ready messages, records that did not fit a ring), records named in the rings (notes) and
    the workers' waits. ``rings``: the :class:`Rings`, or None (every record comes as a frame).

    It gives them apart: the records to merge as one arena (:meth:`records`), the control
    messages -- the ready messages of workers not ready yet (:meth:`messages`) and the waits
    (:attr:`waits`: worker -> (iterations merged it waits for, since)) -- and the notes that
    named no record (:attr:`bad_notes`)."""

    def __init__(self, rings=None):
        self.rings = rings
        self.heap = RecordArena()
        self.ringed = RecordArena(buffer=rings.buffer) if rings is not None else None
        self.order = []                     # ("heap" or "ring", index) as read
        self.ends = {}                      # ring -> the worker's position after its last note
        self.bad_notes = {}                 # worker -> what was wrong with a note it sent
        self.waits = {}                     # worker -> (iterations merged it waits for, since)
        self._note = bytearray(NOTE_SIZE)
        self._chunk = memoryview(bytearray(DRAIN_BYTES))
        self.filled = False                 # whether drain's last read filled its chunk
        self._combined = None

    def clear(self):
        self.heap.clear()
        if self.ringed is not None:
            self.ringed.clear()
        self.order, self.ends, self.bad_notes, self.waits = [], {}, {}, {}

    def read(self, source, fd, stall=None):
        """Read worker ``source``'s next frame from ``fd`` into this inbox (a record into an
        arena, a note naming one in its ring); returns the frame. Raises as
        :func:`holdem.runtime.frames.read_length` and :func:`~holdem.runtime.frames.read_body`."""
        view = self.reserve(source, frames.read_length(fd, stall))
        frames.read_body(fd, view, stall)
        self.received(source, view)
        return view

    def drain(self, source, fd, stall=None):
        """Read what worker ``source`` has sent so far (``fd`` must be readable) into this
        inbox, with one system call for every frame the pipe holds: a frame is a note of 33
        bytes and its 8-byte length, and reading each with two calls of its own took the main
        process 13 us a record of 82 at 15 workers (hunl_default, flush 50). A frame cut by
        the end of what was read is finished with blocking reads (``stall``: as
        :meth:`read`). Returns the frames read, and sets :attr:`filled` when the read took as
        much as it could (only then may the pipe hold more). Raises as :meth:`read`."""
        chunk = self._chunk
        got = os.readv(fd, [chunk])
        if not got:
            raise EOFError("the other end closed the stream")
        self.filled = got == len(chunk)     # the pipe may hold more than one read took
        pos = count = 0
        head = frames.HEADER_SIZE
        while pos < got:
            if got - pos < head:            # a length cut in two: finish it
                part = bytearray(head)
                part[:got - pos] = chunk[pos:got]
                frames.read_body(fd, memoryview(part)[got - pos:], stall)
                n, pos, have = frames.frame_length(part), got, 0
            else:
                n = frames.frame_length(chunk[pos:pos + head])
                pos += head
                have = min(n, got - pos)
            view = self.reserve(source, n)
            view[:have] = chunk[pos:pos + have]
            if have < n:                    # a frame cut by the read: read the rest
                frames.read_body(fd, view[have:], stall)
            pos += have
            self.received(source, view)
            count += 1
        return count

    def reserve(self, source, n):
        """Room for a frame of ``n`` bytes from worker ``source``."""
        if n == NOTE_SIZE:
            return memoryview(self._note)
        self.order.append(("heap", self.heap.count))
        return self.heap.reserve(n, source)

    def received(self, source, view):
        """The frame just read into ``view`` (from :meth:`reserve`)."""
        if view.obj is not self._note:
            return
        note = decode_note(bytes(view))
        if note is not None and note[0] == WAIT:
            self.waits[source] = (note[1], note[2])
            return
        if note is None or self.rings is None:  # another frame of a note's size: a ready
            self.order.append(("heap", self.heap.count))    # message (or garbage)
            self.heap.add(view, source)
            return
        where = self.rings.location(source, note[0], note[1])
        if where is None:
            self.bad_notes[source] = f"a note that names no record of its ring ({note})"
            return
        self.order.append(("ring", self.ringed.count))
        self.ringed.register(where, note[1], source)
        self.ends[source] = note[2]

    def messages(self, expects):
        """The control messages among the frames read: the frames of the workers for which
        ``expects(worker)`` holds (asked frame by frame, so the answer may change after each:
        a worker not ready yet sends its ready message first), each taken out of the records
        and yielded as (worker, bytes)."""
        heap = self.heap
        for r, i in enumerate(heap.sources):
            if expects(i):
                heap.drop(r)
                yield i, heap.record(r).tobytes()

    @property
    def piped(self):
        """Frames that are neither notes nor control messages: records that did not fit a
        ring (or whatever else a worker sent)."""
        return self.heap.live

    def records(self):
        """The records to merge, as one arena: the rings' when every live frame was a note,
        else (rare: a ring was full) a copy of everything in the order read."""
        if self.ringed is None:
            return self.heap
        if self.heap.live == 0:
            return self.ringed
        if self._combined is None:
            self._combined = RecordArena()
        combined = self._combined
        combined.clear()
        for kind, r in self.order:
            source = (self.heap if kind == "heap" else self.ringed).sources[r]
            if kind == "heap" and self.heap.is_dropped(r):
                continue
            record = self.heap.record(r) if kind == "heap" else self.ringed.record(r)
            combined.add(record, source)
        return combined

    def release(self):
        """The records read from the rings are merged (or rejected): free their room."""
        for ring, end in self.ends.items():
            self.rings.consumed(ring, end)
