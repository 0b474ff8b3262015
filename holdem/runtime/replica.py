"""Store replicas: the main process's store copied to other machines and kept current.

Workers must read the global current strategy. On the main process's machine they map its
shared store (:mod:`holdem.runtime.shm`); on another machine of a Ray cluster they map that
node's *replica*, which one process there keeps current (:mod:`holdem.runtime.ray_pool`).

During a run the main store changes in three ways: merged deltas (a worker's payload, with the
regret floor in force when it was merged), DCFR discount sweeps, and a new generation when a
merge grows it. A replica that starts from an exact copy of the store's arrays
(:meth:`holdem.store.store.RegretStore.copy_of`) and applies the same deltas and sweeps in the
same order grows at the same merges and puts every row at the same offset: it *is* the main
store, bit for bit, a few batches late. So its generations carry the main store's numbers, and a
worker told "map generation g" maps the replica's file of generation g
(:func:`holdem.runtime.shm.relocate`). Within one delta each row is written by one thread, so the
merge threads do not change the result.

:class:`StoreLog` numbers each change of the main store (``seq``) and keeps the ones not yet sent;
a replica starts from a copy taken at some ``seq`` and skips the changes it already holds, so a
replica started in the middle of a merge pass is still exact. Nothing here depends on Ray.
"""

import time

import numpy as np

from holdem.delta.merge import RowMerger, merge_one
from holdem.runtime import shm
from holdem.solver.solver import DcfrSchedule
from holdem.store.kernels import StoreArrays
from holdem.store.store import RegretStore

DELTA, DISCOUNT, RELEASE = "delta", "discount", "release"


class StoreLog:
    """The changes of the main store since replicas were last sent them, numbered from 1.

    ``deltas`` counts the merged deltas (batches) logged so far; a replica's lag in batches is
    that count minus the deltas it has applied."""

    def __init__(self, dcfr_steps=0):
        self.seq = 0
        self.deltas = 0
        self.steps = int(dcfr_steps)        # discount sweeps the main store has had
        self.released = 0
        self.pending = []                   # [(seq, kind, value, floor)]
        self.pending_bytes = 0
        # Whether any replica exists to send changes to: without one they are only counted (a
        # replica started later begins from a copy of the store, at the current seq).
        self.keep = True

    def _add(self, kind, value, floor=None):
        self.seq += 1
        if self.keep:
            self.pending.append((self.seq, kind, value, floor))

    def delta(self, payload, regret_floor):
        """A delta record merged into the main store (``regret_floor`` None: no floor)."""
        self.deltas += 1
        data = None
        if self.keep:
            data = bytes(payload)
            self.pending_bytes += len(data)
        self._add(DELTA, data, regret_floor)

    def discounts(self, steps):
        """The main store has had ``steps`` discount sweeps in all: log the new ones."""
        while self.steps < steps:
            self.steps += 1
            self._add(DISCOUNT, self.steps)

    def release(self, generation):
        """Generations older than ``generation`` are no longer read by any worker."""
        if generation > self.released:
            self.released = generation
            self._add(RELEASE, int(generation))

    def take(self):
        """The pending changes (oldest first), now sent; and their delta bytes."""
        ops, size = self.pending, self.pending_bytes
        self.pending, self.pending_bytes = [], 0
        return ops, size


class Replica:
    """A copy of the main store in this machine's shared memory, kept current by applying the
    main process's :class:`StoreLog` changes. ``arrays``: the main store's arrays (in
    :class:`StoreArrays` order) at change ``seq``, generation ``generation``, after ``deltas``
    merged deltas and ``steps`` discount sweeps; ``solver_config`` gives the discount
    parameters."""

    def __init__(self, solver_config, arrays, generation, seq, deltas, merge_threads=1,
                 directory=None, steps=0):
        self.allocator = shm.SharedAllocator(directory, first_generation=generation)
        try:
            self.store = RegretStore.copy_of(StoreArrays(*arrays), allocator=self.allocator)
        except BaseException:
            self.allocator.close()
            raise
        self.merger = RowMerger(merge_threads)
        self.dcfr = DcfrSchedule(solver_config, steps=steps)    # the sweeps the copy has had
        self.seq = int(seq)
        self.deltas = int(deltas)
        self.seconds = 0.0                  # spent applying changes

    @property
    def location(self):
        """Where its files are, for :func:`holdem.runtime.shm.relocate`."""
        return self.allocator.location

    def apply(self, ops):
        """Apply changes in order (those it already holds are skipped); returns (seq, deltas,
        seconds): changes and deltas applied so far, and the time it took. A gap in the
        numbering raises ``ValueError``: the replica is then no longer a copy of the main
        store."""
        start = time.perf_counter()
        for seq, kind, value, floor in ops:
            if seq <= self.seq:
                continue
            if seq != self.seq + 1:
                raise ValueError(f"store replica at change {self.seq} was sent change {seq}")
            if kind == DELTA:
                merge_one(self.store, self.merger, value, floor, dcfr=self.dcfr)
                self.deltas += 1
            elif kind == DISCOUNT:
                self.dcfr.replay(self.store, value)
            elif kind == RELEASE:
                self.allocator.release_before(int(value))
            else:
                raise ValueError(f"unknown store change {kind!r}")
            self.seq = seq
        self.seconds += time.perf_counter() - start
        return self.seq, self.deltas, self.seconds

    def close(self):
        """Stop merging and remove its shared-memory files."""
        self.merger.close()
        self.allocator.close()


def store_copy(store):
    """What a new replica starts from: the store's arrays, as they are (the caller serializes
    them before the store changes again)."""
    return tuple(np.asarray(a) for a in store.arrays)
