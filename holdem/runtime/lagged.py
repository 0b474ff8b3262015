"""A deterministic stand-in for W workers, in this process: what parallelism does to convergence.

On W cores with a main process that keeps up, each worker runs its batch against the live shared
store: while it works, the other W - 1 workers' finished batches are merged and it sees them; it
sees its own updates at once (its delta) and the other workers' unfinished batches not at all.
:class:`LaggedExecutor` reproduces that order on one core: W simulated workers take turns running
``CHUNKS`` slices of their batches (the same :class:`holdem.runtime.worker.BatchRunner` reading
the live store into its own delta), and a batch's msgpack delta is merged (the same
:func:`holdem.runtime.process.merge_payload`) as soon as its last slice has run. The first W
batches are of staggered sizes, so batches finish evenly spread, as they do on real cores.

It is no faster than one core. It makes the convergence cost of W workers measurable on any
machine and repeatable for a seed: the test that parallel iterations are worth as much as serial
ones, and ``tools/bench_convergence.py``.
"""

import time

from holdem.runtime.executor import BatchResult
from holdem.runtime.process import batch_size_for, merge_payload
from holdem.runtime.worker import BatchRunner, batch_rng_state
from holdem.store.delta import RowMerger
from holdem.store.store import read_only_view


CHUNKS = 8


class _SimWorker:
    def __init__(self, runner):
        self.runner = runner
        self.batch = None
        self.done = 0               # iterations of the batch run so far
        self.utility_sum = 0.0
        self.visits = 0
        self.seconds = 0.0


class LaggedExecutor:
    """``workers`` simulated workers; batches of ``batch_size`` iterations (None: the config's
    ``train.batch_size``, else sized as the process executor sizes them, from this process's
    rate)."""

    allocator = None
    discounts_in_kernel = False
    in_background = False

    def __init__(self, game, config, workers, batch_size=None):
        self.game = game
        self.config = config
        self.num_workers = int(workers)
        self.batch_size = batch_size or config.train.batch_size or None
        self.run = None
        self.workers = []
        self.merger = RowMerger(1)
        self._rate = None
        self._handed_out = 0

    def prepare(self, run):
        self.run = run
        start = time.perf_counter()
        runners = [BatchRunner(self.game, self.config, self.num_workers)
                   for _ in range(self.num_workers)]
        runners[0].warm_up()
        self.workers = [_SimWorker(runner) for runner in runners]
        return time.perf_counter() - start

    def start(self, run, stop):
        pass

    def capacity(self):
        return sum(w.batch is None for w in self.workers)

    def next_batch_size(self):
        size = self.batch_size or batch_size_for(self._rate, self.run.store)
        if self._handed_out < self.num_workers:        # stagger the first batches
            size = max(1, size * (self._handed_out + 1) // self.num_workers)
        return size

    def submit(self, batch):
        w = next(w for w in self.workers if w.batch is None)
        w.batch, w.done, w.utility_sum, w.visits, w.seconds = batch, 0, 0.0, 0, 0.0
        self._handed_out += 1

    def results(self, timeout):
        """One turn: every busy worker runs its next slice; finished batches are merged."""
        out = []
        for w in self.workers:
            if w.batch is None:
                continue
            batch = w.batch
            n = min(batch.n - w.done, max(1, -(-batch.n // CHUNKS)))
            read = read_only_view(self.run.store.arrays)
            start = time.perf_counter()
            utility_sum, visits = w.runner.run(read, batch.t0 + w.done, n, batch.elapsed)
            w.seconds += time.perf_counter() - start
            w.done += n
            w.utility_sum += utility_sum
            w.visits += visits
            if w.done < batch.n:
                continue
            self._rate = batch.n / max(w.seconds, 1e-9)
            payload = w.runner.take_delta(read, batch.id, 0, 0, batch.n, w.utility_sum,
                                          w.visits, w.seconds)
            w.batch = None
            msg = merge_payload(self.run, self.merger, payload)
            out.append(BatchResult(iters=msg["iters"], utility_sum=msg["utility_sum"],
                                   visits=msg["visits"], seconds=w.seconds))
        return out

    def in_flight(self):
        return sum(w.batch is not None for w in self.workers)

    def scalars(self):
        return {}

    def reset_window(self):
        pass

    def summary(self, run):
        return [f"lagged executor: {self.num_workers} simulated workers"]

    def checkpoint_state(self, run):
        return [batch_rng_state(self.config.train.seed, run.iterations)], {}, {}

    def close(self):
        self.merger.close()
