"""A deterministic stand-in for W workers, in this process: what parallelism does to convergence.

On W cores with a main process that keeps up, each worker runs its batch against the live shared
store in flushes (:func:`holdem.runtime.worker.flush_iterations` iterations, a delta after
each): while it works, the other W - 1 workers' flushed deltas are merged and it sees them; it
sees its own updates at once (its delta buffer) and the other workers' unflushed iterations not
at all. :class:`LaggedExecutor` reproduces that order on one core: W simulated workers take
turns running ``CHUNKS`` slices of their current flush (the same
:class:`holdem.runtime.worker.BatchRunner` reading the live store into its own delta buffer);
a flush's delta record is merged by the same pass as the process executor's
(:func:`holdem.runtime.process.merge_pass`) once the simulated workers together have run
``delay`` more iterations: the flush-to-merge delay of a real run, in iterations (measured in the
real executor: TensorBoard ``train/flush_to_merge_iters``; predicted by ``tools/bench_merge.py``;
by default :func:`default_delay`).
Worker k starts k / W of a flush late, so flushes finish evenly spread, as they do on real
cores; flush size, batch sizing, own-delta weight and held cold rows
(:class:`holdem.store.delta.ColdRows`) are the process executor's.

It is no faster than one core. It makes the convergence cost of W workers measurable on any
machine and repeatable for a seed: the test that parallel iterations are worth as much as serial
ones, and ``tools/bench_convergence.py``.
"""

import collections
import time

from holdem import config as config_mod
from holdem.runtime.executor import BatchResult
from holdem.runtime.process import batch_size_for, merge_pass
from holdem.runtime.worker import (BatchRunner, batch_rng_state, flush_iterations, flush_text,
                                   pair_flush)
from holdem.store import records
from holdem.store.delta import RowMerger
from holdem.store.merge import MergeScratch, reason
from holdem.store.store import read_only_view

CHUNKS = 8
# The flush-to-merge delay, in iterations per worker: about one merge pass (a millisecond or
# two) whatever the worker count, during which W workers run W times as many iterations.
# tools/bench_merge.py predicts 394 iterations at 15 workers for hunl_default and 275 for
# hunl_blueprint on 2 merge threads (480 here; README, Performance).
DELAY_PER_WORKER = 32


def default_delay(workers):
    """The flush-to-merge delay the simulator assumes for ``workers`` workers, in iterations."""
    return DELAY_PER_WORKER * int(workers)


class _SimWorker:
    def __init__(self, runner, idle_turns):
        self.runner = runner
        self.idle = idle_turns          # turns to wait before its first slice (its phase)
        self.batch = None
        self.done = 0                   # iterations of the batch flushed so far
        self.flush_done = 0             # iterations of the current flush run so far
        self.flush = 0                  # the batch's flush
        self.state = None               # the current flush's RNG state
        self.utility_sum = 0.0
        self.visits = 0
        self.seconds = 0.0


class LaggedExecutor:
    """``workers`` simulated workers; batches of ``batch_size`` iterations (None: the config's
    ``train.batch_size``, else sized as the process executor sizes them, from this process's
    rate); a delta every ``flush`` iterations (None: as the process executor flushes for
    ``workers`` workers), merged ``delay`` iterations later (None: :func:`default_delay`)."""

    allocator = None
    discounts_in_kernel = False
    in_background = False

    def __init__(self, game, config, workers, batch_size=None, flush=None, delay=None):
        self.game = game
        self.num_workers = int(workers)
        # As the process executor configures its workers: the resolved worker count.
        self.config = config_mod.with_overrides(config, train={"num_workers": self.num_workers})
        self.batch_size = batch_size or config.train.batch_size or None
        self.flush = flush or flush_iterations(self.config, self.num_workers)   # None: per batch
        self.delay = default_delay(workers) if delay is None else int(delay)
        self.view = None
        self.workers = []
        self.merger = RowMerger(1)
        self.scratch = MergeScratch()
        self.arena = records.RecordArena()
        self.queue = collections.deque()        # (due iteration, worker, record, seconds)
        self.ran = 0                            # iterations run by all simulated workers
        self._rate = None

    def prepare(self, view):
        self.view = view
        start = time.perf_counter()
        runners = [BatchRunner(self.game, self.config, self.num_workers)
                   for _ in range(self.num_workers)]
        runners[0].warm_up()
        self.workers = [_SimWorker(runner, k * CHUNKS // self.num_workers)
                        for k, runner in enumerate(runners)]
        return time.perf_counter() - start

    def start(self, view, stop):
        pass

    def capacity(self):
        return sum(w.batch is None for w in self.workers)

    def next_batch_size(self):
        return self.batch_size or batch_size_for(self._rate, self.view.store)

    def submit(self, batch):
        w = next(w for w in self.workers if w.batch is None)
        w.batch, w.done, w.flush_done = batch, 0, 0
        w.flush = pair_flush(self.flush, batch.n, self.view.store.num_infosets)

    def results(self, timeout):
        """One turn: every busy worker runs the next slice of its flush; a finished flush's
        record is queued, and the queue merged up to the iterations run."""
        out = []
        for index, w in enumerate(self.workers):
            if w.batch is None:
                continue
            if w.idle:
                w.idle -= 1
                continue
            out += self._slice(index, w)
        if all(w.batch is None for w in self.workers):
            out += self._merge_due(everything=True)      # nothing runs: nothing to wait for
        return out

    def _slice(self, index, w):
        batch = w.batch
        flush_n = min(w.flush, batch.n - w.done)
        if w.flush_done == 0:
            w.state = batch_rng_state(self.config.train.seed, batch.t0 + w.done)
            w.utility_sum, w.visits, w.seconds = 0.0, 0, 0.0
        n = min(flush_n - w.flush_done, max(1, -(-flush_n // CHUNKS)))
        read = read_only_view(self.view.store.arrays)
        # The CPU time of this thread, not wall time: a simulated worker has a core of its own,
        # so time the machine gave other processes is not its time. Batch sizes follow the rate
        # measured here; timed on the wall clock, a loaded machine shrank them, changed the
        # order of merges and with it the result (Leduc, 8 workers: 1.02x the in-process
        # exploitability quiet, 1.22x at a load average of 8 on 2 cores).
        start = time.thread_time()
        utility_sum, visits = w.runner.run(read, batch.t0 + w.done + w.flush_done, n,
                                           batch.elapsed, state=w.state)
        w.seconds += time.thread_time() - start
        w.flush_done += n
        w.utility_sum += utility_sum
        w.visits += visits
        self.ran += n
        if w.flush_done == flush_n:
            last = w.done + flush_n == batch.n
            record = w.runner.take_delta(read, batch.id, index, 0, batch.t0 + w.done, flush_n,
                                         last, w.utility_sum, w.visits, w.seconds)
            self._rate = flush_n / max(w.seconds, 1e-9)
            self.queue.append((self.ran + self.delay, index, bytes(record)))
            w.done += flush_n
            w.flush_done = 0
            if last:
                w.batch = None
        return self._merge_due()

    def _merge_due(self, everything=False):
        due = float("inf") if everything else self.ran
        if not self.queue or self.queue[0][0] > due:
            return []
        arena = self.arena
        arena.clear()
        while self.queue and self.queue[0][0] <= due:
            _, index, record = self.queue.popleft()
            arena.add(record, source=index)
        codes, _ = merge_pass(self.view, self.merger, arena, self.scratch)
        bad = [c for c in codes if c != records.OK]
        if bad:
            raise RuntimeError(f"a simulated worker's delta was rejected: {reason(bad[0])}")
        out = []
        for r in range(arena.count):
            flush = arena.flush(r)
            out.append(BatchResult(iters=flush.iters, utility_sum=flush.utility_sum,
                                   visits=flush.visits, seconds=flush.seconds))
        return out

    def in_flight(self):
        return sum(w.batch is not None for w in self.workers) + len(self.queue)

    def scalars(self):
        return {}

    def reset_window(self):
        pass

    def summary(self, view):
        return [f"lagged executor: {self.num_workers} simulated workers, "
                f"{flush_text(self.flush)}, merged {self.delay:,} iterations later"]

    def checkpoint_state(self, view):
        return [batch_rng_state(self.config.train.seed, view.iterations())], {}, {}

    def close(self):
        self.merger.close()
