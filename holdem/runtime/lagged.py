"""A deterministic stand-in for W workers, in this process: what parallelism does to convergence.

With W workers and a main process that keeps up, a worker's batch reads the shared store as it
is when the batch starts, sees its own updates at once, and its delta is merged after the other
W - 1 workers' current batches: every batch lags W - 1 deltas behind. :class:`LaggedExecutor`
reproduces exactly that order on one core: each batch runs at once as a worker runs it (the
same :class:`holdem.runtime.worker.BatchRunner`, the same msgpack delta) and its delta is merged
(the same :func:`holdem.runtime.process.merge_payload`) once W - 1 later batches have run.

It is no faster than one core. It makes the convergence cost of W workers measurable on any
machine and repeatable for a seed: the test that parallel iterations are worth as much as serial
ones, and ``tools/bench_convergence.py``.
"""

import collections
import time

from holdem.runtime.executor import BatchResult
from holdem.runtime.process import MAX_ITERS_PER_INFOSET, TARGET_BATCH_SECONDS, merge_payload
from holdem.runtime.worker import BatchRunner
from holdem.store.delta import RowMerger
from holdem.store.store import read_only_view


class LaggedExecutor:
    """``workers`` simulated workers; batches of ``batch_size`` iterations (None: sized as the
    process executor sizes them, from this process's rate)."""

    allocator = None
    discounts_in_kernel = False
    in_background = False

    def __init__(self, game, config, workers, batch_size=None):
        self.game = game
        self.config = config
        self.num_workers = int(workers)
        self.batch_size = batch_size or config.train.batch_size or None
        self.run = None
        self.runner = None
        self.merger = RowMerger(1)
        self.pending = collections.deque()       # (batch, payload, seconds) not yet merged
        self._rate = None
        self._fresh = False

    def prepare(self, run):
        self.run = run
        start = time.perf_counter()
        self.runner = BatchRunner(self.game, self.config)
        self.runner.warm_up()
        return time.perf_counter() - start

    def start(self, run, stop):
        pass

    def capacity(self):
        return 1

    def next_batch_size(self):
        if self.batch_size:
            return self.batch_size
        if self._rate is None:
            return 256
        cap = max(1000, MAX_ITERS_PER_INFOSET * self.run.store.num_infosets)
        return max(1, min(cap, int(self._rate * TARGET_BATCH_SECONDS)))

    def submit(self, batch):
        read = read_only_view(self.run.store.arrays)
        start = time.perf_counter()
        utility_sum, visits = self.runner.run(read, batch.t0, batch.n, batch.elapsed)
        seconds = time.perf_counter() - start
        self._rate = batch.n / max(seconds, 1e-9)
        payload = self.runner.take_delta(read, batch.id, 0, 0, batch.n, utility_sum, visits,
                                         seconds)
        self.pending.append((batch, payload, seconds))
        self._fresh = True

    def results(self, timeout):
        # Merge the oldest delta once W batches are out, or when no new batch came (draining).
        if not self.pending or (self._fresh and len(self.pending) < self.num_workers):
            self._fresh = False
            return []
        self._fresh = False
        _, payload, seconds = self.pending.popleft()
        msg = merge_payload(self.run, self.merger, payload)
        return [BatchResult(iters=msg["iters"], utility_sum=msg["utility_sum"],
                            visits=msg["visits"], seconds=seconds)]

    def in_flight(self):
        return len(self.pending)

    def scalars(self):
        return {}

    def reset_window(self):
        pass

    def summary(self, run):
        return [f"lagged executor: {self.num_workers} simulated workers, each delta merged "
                f"{self.num_workers - 1} batches late"]

    def checkpoint_state(self, run):
        from holdem.runtime.worker import batch_rng_state

        return [batch_rng_state(self.config.train.seed, run.iterations)], {}, {}

    def close(self):
        self.merger.close()
