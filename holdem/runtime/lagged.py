"""A deterministic stand-in for W workers, in this process: what parallelism does to convergence.

On W cores each worker runs its batch against the shared store in flushes
(:func:`holdem.runtime.flush.flush_iterations` iterations, a delta record after each); it sees
its own updates at once (its delta buffer), the other workers' flushes once the main process has
merged them, and their unflushed iterations not at all. :class:`LaggedExecutor` reproduces that
order on one core: W simulated workers, each the same :class:`holdem.runtime.worker.BatchRunner`
reading a store into its own delta buffer, run ``CHUNKS`` slices of each flush, always the worker
whose clock is earliest next, and a flush's record is merged by the same pass as the process
executor's (:func:`holdem.runtime.process.merge_pass`).

When a record is merged comes from a model of the runtime (:mod:`holdem.runtime.lag_model`):
each worker's clock advances by its slices' decision-node visits and its flushes' bytes at
nominal costs, and a simulated main process wakes for arrivals, merges everything that arrived
in one pass whose length follows from the records, and pauses for DCFR sweeps; a worker whose
ring is full, or whose unmerged iterations would pass the process executor's cap
(:func:`holdem.runtime.flush.unmerged_cap`), waits for merges. So the flush-to-merge delay
grows with the worker count and the record sizes as the real one does, and nothing depends on
this machine's timers: a seed gives the same figures on a quiet and on a loaded machine. With
``delay`` set, a record is instead merged once the simulated workers together have run
``delay`` more iterations (the simulator before the model; ``tools/bench_convergence.py
--merge-delay``).

Like the process executor, each worker holds up to ``PIPELINE`` batches; after the store grows
(new arrays) it reads the new ones from its next flush on, as a worker process maps the new
generation its ring names (with one delta per batch, as Ray's workers: from its next batch).
Worker k starts k / W of worker 0's first
flush late, so flushes finish evenly spread. Flush size, batch sizing (from the nominal rate),
own-delta weight and held cold rows (:class:`holdem.delta.split.ColdRows`) are the process
executor's; ``one_delta_per_batch`` flushes once per batch, as Ray's workers do.

It is no faster than one core. It makes the convergence cost of W workers measurable on any
machine and repeatable for a seed: the test that parallel iterations are worth as much as serial
ones, and ``tools/bench_convergence.py``.
"""

import collections
import time

from holdem import config as config_mod
from holdem.delta import records
from holdem.delta.merge import MergeScratch, RowMerger, merge_threads, reason
from holdem.runtime.executor import BatchResult
from holdem.runtime.flush import FlushPolicy
from holdem.runtime.lag_model import MainProcess, core_share, costs_for
from holdem.runtime.process import PIPELINE, batch_size_for, merge_pass
from holdem.runtime.ring import RECORDS_PER_RING, ring_bytes_for
from holdem.runtime.worker import BatchRunner, batch_rng_state, ring_record_bytes
from holdem.store.store import read_only_view

CHUNKS = 8


class _SimWorker:
    def __init__(self, runner, phase):
        self.runner = runner
        self.phase = phase              # slices of worker 0 before its first (its stagger)
        self.queue = collections.deque()    # [batch, read view, flush]; the first runs
        self.outstanding = 0            # batches handed to it whose last flush is not merged
        self.time = 0.0                 # nominal seconds: when its next slice starts
        self.done = 0                   # iterations of the running batch flushed so far
        self.flush_done = 0             # iterations of the current flush run so far
        self.state = None               # the current flush's RNG state
        self.utility_sum = 0.0
        self.visits = 0
        self.seconds = 0.0
        self.ring = 0                   # bytes of its records not merged yet
        self.blocked = False            # its ring is full: it waits for merges
        self.unmerged = 0               # iterations of its records not merged yet
        self.waiting = False            # its next flush would pass the cap: it waits


class LaggedExecutor:
    """``workers`` simulated workers; batches of ``batch_size`` iterations (None: the config's
    ``train.batch_size``, else sized as the process executor sizes them, from the nominal
    rate); a delta every ``flush`` iterations (None: as the process executor flushes for
    ``workers`` workers); merged when the modelled main process merges it, or ``delay``
    iterations later when that is given. ``costs``: the model's
    :class:`holdem.runtime.lag_model.Costs` (None: the game's); ``cores``: the simulated
    machine's (None: a core per process; fewer makes the main process share them); ``pace``:
    pace flushes as the process executor does (:class:`holdem.runtime.flush.FlushPacer`);
    ``cap``: hold each worker's unmerged iterations to the process executor's cap
    (:func:`holdem.runtime.flush.unmerged_cap`; not with ``delay``, whose main process keeps
    up, nor with one delta per batch, as Ray's workers are not capped)."""

    allocator = None
    discounts_in_kernel = False
    in_background = False

    def __init__(self, game, config, workers, batch_size=None, flush=None, delay=None,
                 costs=None, cores=None, one_delta_per_batch=False, pace=True, cap=True):
        self.game = game
        self.num_workers = int(workers)
        # As the process executor configures its workers: the resolved worker count.
        self.config = config_mod.with_overrides(config, train={"num_workers": self.num_workers})
        self.batch_size = batch_size or config.train.batch_size or None
        self.one_delta_per_batch = bool(one_delta_per_batch)
        self.delay = None if delay is None else int(delay)
        self.costs = costs or costs_for(game)
        self.cores = self.num_workers + 1 if cores is None else int(cores)
        self.share = core_share(self.num_workers, self.cores)
        modelled = self.delay is None and not self.one_delta_per_batch
        # The process executor's flush policy for W workers, paced on the model's clock (not
        # with ``delay``: that main process has no load).
        self.flushes = FlushPolicy(self.config, self.num_workers, flush=flush,
                                   pace=pace and delay is None, capped=cap and modelled)
        self.pacer = self.flushes.pacer
        self.cap = self.flushes.cap
        # The rings as the process pool sizes them, from a probe on a runner of its own (the
        # simulated workers' state stays as it was).
        self.ring_bytes = ring_bytes_for(ring_record_bytes(
            game, self.config, self.flushes.largest, self.cap) if modelled else None)
        self.main = MainProcess(self.costs, merge_threads(self.config, self.num_workers),
                                self.share, self.ring_bytes)
        self.view = None
        self.workers = []
        self.merger = RowMerger(1)
        self.scratch = MergeScratch()
        self.arena = records.RecordArena()
        self.queue = collections.deque()        # with ``delay``: (due iteration, worker, record)
        self.ran = 0                            # iterations run by all simulated workers
        self.slices0 = 0                        # slices worker 0 has run
        self.stats = {"merged": 0, "iters": 0, "passes": 0, "delay": 0.0, "work": 0.0,
                      "waits": 0, "waited": 0.0, "most_unmerged": 0, "store_follows": 0}
        self._steps = 0                         # DCFR sweeps seen
        self._ran_iters, self._ran_seconds = 0, 0.0     # all flushes so far: nominal rate

    def prepare(self, view):
        self.view = view
        start = time.perf_counter()          # compile time, for the run's report only
        runners = [BatchRunner(self.game, self.config, self.num_workers)
                   for _ in range(self.num_workers)]
        runners[0].warm_up()
        self.workers = [_SimWorker(runner, k * CHUNKS // self.num_workers)
                        for k, runner in enumerate(runners)]
        return time.perf_counter() - start

    def start(self, view, stop):
        self._steps = view.dcfr.steps
        for w in self.workers:          # as a worker process reads them off its ring
            w.runner.sweeps = lambda: view.dcfr.steps
            w.runner.record_room = self.ring_bytes // RECORDS_PER_RING     # as worker_main
            if not self.one_delta_per_batch:
                # Strategy held across batches as worker_main holds it, on the nominal clock,
                # while another batch is queued behind the running one.
                w.runner.hold_seconds = float(self.config.train.hold_strategy_seconds or 0.0)
                w.runner.clock = lambda w=w: w.time
                w.runner.queued = lambda w=w: len(w.queue) > 1

    # -- batches ---------------------------------------------------------------------------
    def capacity(self):
        # As the process executor: a batch holds its worker's pipeline slot until its last
        # flush is merged, so a main process that is behind holds the workers back.
        return sum(PIPELINE - w.outstanding for w in self.workers)

    def next_batch_size(self):
        rate = self._ran_iters / self._ran_seconds if self._ran_seconds > 0 else None
        return self.batch_size or batch_size_for(rate, self.view.store)

    def submit(self, batch):
        w = min(self.workers, key=lambda w: w.outstanding)
        w.outstanding += 1
        if not w.queue:
            w.time = max(w.time, self.main.clock)       # an idle worker starts when told
        if self.one_delta_per_batch:
            flush = batch.n
        else:
            flush = self.flushes.batch(batch.n, self.view.store.num_infosets)
        w.queue.append([batch, self._read(), flush])

    def _read(self):
        """(the store's arrays, a read-only view of them): what a worker reads."""
        arrays = self.view.store.arrays
        return arrays, read_only_view(arrays)

    def in_flight(self):
        return sum(w.outstanding for w in self.workers)

    # -- the simulation --------------------------------------------------------------------
    def results(self, timeout):
        """Up to W slices of the simulated workers, earliest clock first, and the merge passes
        that end before each; merged flushes' results."""
        steps = self.view.dcfr.steps
        if steps > self._steps and self.delay is None:
            self.main.pause((steps - self._steps) * self.view.store.num_entries
                            * self.costs.sweep_entry)
        self._steps = steps
        out = []
        for _ in range(max(1, self.num_workers)):
            w = self._next_worker()
            if self.delay is None:
                until = w.time if w is not None else self.main.next_event()
                if until == float("inf"):
                    break
                out += self._merge(self.main.advance(until))
            if w is None:
                if self.delay is not None:
                    out += self._merge_due(everything=True)     # nothing runs: nothing waits
                    break
                continue
            out += self._slice(w)
        return out

    def _next_worker(self):
        """The busy, unblocked, started worker with the earliest clock (None: none)."""
        w0 = self.workers[0]
        best = None
        for w in self.workers:
            if (not w.queue or w.blocked or w.waiting
                    or (w.phase > self.slices0 and w0.queue)):
                continue
            if best is None or w.time < best.time:
                best = w
        return best

    def _slice(self, w):
        index = self.workers.index(w)
        flush_n = self._flush_n(w)
        if w.flush_done == 0 and self.cap is not None and w.unmerged + flush_n > self.cap:
            w.waiting = True                # until merges bring it under the cap
            self.stats["waits"] += 1
            return []
        if (w.flush_done == 0 and not self.one_delta_per_batch
                and w.queue[0][1][0] is not self.view.store.arrays):
            # The store grew: a worker process maps the new generation at its next flush.
            w.queue[0][1] = self._read()
            self.stats["store_follows"] += 1
        batch, (_, read), flush = w.queue[0]
        if w.flush_done == 0:
            w.state = batch_rng_state(self.config.train.seed, batch.t0 + w.done)
            w.utility_sum, w.visits, w.seconds = 0.0, 0, 0.0
        n = min(flush_n - w.flush_done, max(1, -(-flush_n // CHUNKS)))
        utility_sum, visits = w.runner.run(read, batch.t0 + w.done + w.flush_done, n,
                                           batch.elapsed, state=w.state)
        seconds = self.share * visits * self.costs.visit
        w.time += seconds
        w.seconds += seconds
        w.flush_done += n
        w.utility_sum += utility_sum
        w.visits += visits
        self.ran += n
        if index == 0:
            self.slices0 += 1
            for other in self.workers:
                if other.phase == self.slices0:
                    other.time = max(other.time, w.time)
        if w.flush_done < flush_n:
            return []
        last = w.done + flush_n == batch.n
        record = bytes(w.runner.take_delta(read, batch.id, index, 0, batch.t0 + w.done, flush_n,
                                           last, w.utility_sum, w.visits, w.seconds))
        seconds = self.share * (self.costs.flush + len(record) * self.costs.encode_byte)
        w.time += seconds
        self._ran_seconds += w.seconds + seconds
        self._ran_iters += flush_n
        w.done += flush_n
        w.flush_done = 0
        if last:
            w.queue.popleft()
            w.done = 0
        if self.delay is not None:
            self.queue.append((self.ran + self.delay, index, record))
            return self._merge_due()
        w.ring += self._ring_share(record)
        w.unmerged += flush_n
        self.stats["most_unmerged"] = max(self.stats["most_unmerged"], w.unmerged)
        w.blocked = w.ring > self.ring_bytes
        self.main.arrive(w.time, index, record)
        return []

    def _ring_share(self, record):
        """The bytes ``record`` takes in its worker's ring: none when it is larger than a
        ring's room and goes through the pipe (as RingWriter.put sends it: a worker's last
        batch sends everything it still holds in one record)."""
        return len(record) if len(record) <= self.ring_bytes // RECORDS_PER_RING else 0

    def _flush_n(self, w):
        """The iterations of worker ``w``'s current (or next) flush: its batch's flush, cut to
        what is left of the batch and to the cap."""
        batch, _, flush = w.queue[0]
        n = min(flush, batch.n - w.done)
        return n if self.cap is None else max(1, min(n, self.cap))

    def _merge_records(self, recs, end=None):
        """Merge ``recs`` [(arrival, worker, record)] in one pass (merged at ``end``)."""
        arena = self.arena
        arena.clear()
        for _, index, record in recs:
            arena.add(record, source=index)
        codes, _ = merge_pass(self.view, self.merger, arena, self.scratch)
        bad = [c for c in codes if c != records.OK]
        if bad:
            raise RuntimeError(f"a simulated worker's delta was rejected: {reason(bad[0])}")
        out = []
        s = self.stats
        s["passes"] += 1
        for r, (arrival, index, record) in enumerate(recs):
            flush = arena.flush(r)
            if flush.last:
                self.workers[index].outstanding -= 1
            s["merged"] += 1
            s["iters"] += flush.iters
            s["work"] += flush.seconds
            if end is not None:
                s["delay"] += end - arrival
                w = self.workers[index]
                w.ring -= self._ring_share(record)
                w.unmerged -= flush.iters
                if w.blocked and w.ring <= self.ring_bytes:
                    w.blocked = False
                    w.time = max(w.time, end)
                if w.waiting and w.unmerged + self._flush_n(w) <= self.cap:
                    w.waiting = False
                    s["waited"] += max(0.0, end - w.time)
                    w.time = max(w.time, end)
            out.append(BatchResult(iters=flush.iters, utility_sum=flush.utility_sum,
                                   visits=flush.visits, seconds=flush.seconds))
        return out

    def _merge(self, passes):
        out = []
        s = self.stats
        for end, recs in passes:
            out += self._merge_records(recs, end)
            self.flushes.observe(end, self.main.merging, s["merged"], s["iters"], s["work"])
        return out

    def _merge_due(self, everything=False):
        due = float("inf") if everything else self.ran
        recs = []
        while self.queue and self.queue[0][0] <= due:
            _, index, record = self.queue.popleft()
            recs.append((0.0, index, record))
        return self._merge_records(recs) if recs else []

    # -- reporting -------------------------------------------------------------------------
    def rate(self):
        """Iterations merged per nominal second (nan before the first pass)."""
        clock = self.main.clock
        return self.stats["iters"] / clock if clock > 0 else float("nan")

    def delay_seconds(self):
        """The mean flush-to-merge delay of the merged records, in nominal seconds."""
        s = self.stats
        return s["delay"] / s["merged"] if s["merged"] else float("nan")

    def delay_iterations(self):
        """The mean flush-to-merge delay, in the iterations merged meanwhile (the process
        executor's ``train/flush_to_merge_iters``); with ``delay`` set, that."""
        if self.delay is not None:
            return float(self.delay)
        return self.delay_seconds() * self.rate()

    def scalars(self):
        return {}

    def reset_window(self):
        pass

    def summary(self, view):
        head = (f"lagged executor: {self.num_workers} simulated workers, "
                f"{'one delta per batch' if self.one_delta_per_batch else self.flushes.text()}")
        if self.delay is not None:
            return [f"{head}, merged {self.delay:,} iterations later"]
        s, main = self.stats, self.main
        per_pass = s["merged"] / s["passes"] if s["passes"] else float("nan")
        busy = main.busy / main.clock if main.clock > 0 else float("nan")
        return [f"{head}; modelled: flush to merge {1e3 * self.delay_seconds():.2f} ms "
                f"({self.delay_iterations():,.0f} iterations), {per_pass:.1f} records per pass, "
                f"main process busy {busy:.0%}, {self.rate():,.0f} iterations/s "
                f"({self.cores} cores){self._paced()}{self._capped()}"]

    def _capped(self):
        s = self.stats
        if self.cap is None:
            return ""
        share = s["waited"] / (self.main.clock * self.num_workers) if self.main.clock else 0.0
        return (f"; unmerged iterations capped at {self.cap:,} a worker: {s['waits']:,} waits "
                f"({share:.1%} of the workers' time)")

    def _paced(self):
        s, pacer = self.stats, self.pacer
        if not pacer.highest or not s["merged"]:
            return ""
        return (f"; paced flushes: {s['iters'] / s['merged']:,.0f} iterations per record, "
                f"floor up to {pacer.highest:,}")

    def checkpoint_state(self, view):
        return [batch_rng_state(self.config.train.seed, view.iterations())], {}, {}

    def close(self):
        self.merger.close()
