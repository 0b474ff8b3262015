"""The process executor: batches on persistent worker processes, deltas merged by this process.

Each call of :meth:`ProcessExecutor.results`:

1. blocks (``pool.wait`` with a timeout) until a worker answers or dies;
2. decodes each msgpack delta (:func:`merge_payload`), checks its new infosets against the game
   and every row offset against the store, adds the rows the store holds on the merge threads
   (:class:`holdem.store.delta.RowMerger`: shard ranges, one writer per row) and inserts the new
   ones, growing the shared store if needed (a new generation);
3. re-issues the batches of workers that died or stayed silent for ``worker_timeout`` seconds to
   their replacements (a batch's random stream depends only on the seed and its first iteration,
   so the redo is the same work), and unlinks store generations no worker can still be told about.

Each worker keeps ``PIPELINE`` batches queued, so it never waits for the main process. Workers
read the live shared store, so they lag the merged truth by the deltas in flight. When the main
process dies, workers see their parent change within a second and exit; the next run removes its
shared-memory files. ``pool`` is the seam to where workers run (:mod:`holdem.runtime.pool`).
"""

import time

import numpy as np

from holdem import config as config_mod
from holdem.metrics import format_bytes, log
from holdem.runtime import protocol, shm
from holdem.runtime.executor import BatchResult
from holdem.runtime.pool import ProcessPool, WorkerDied
from holdem.runtime.replica import StoreLog, apply_delta
from holdem.runtime.worker import BatchRunner, batch_rng_state
from holdem.solver import kernels
from holdem.solver.solver import make_params
from holdem.store.delta import RowMerger, group_of
from holdem.store.store import RegretStore, read_only

PIPELINE = 2
TARGET_BATCH_SECONDS = 0.25
FIRST_BATCH = 256
# Iterations per batch are also capped at this many per infoset in the store. A delta reaches
# the other workers about two batches late; when a batch revisits the same infosets thousands of
# times (Leduc has 288), regret matching overshoots and exploitability suffers (measured on Leduc
# at 20 M iterations with DCFR: batches of 1,000-3,000 stay within 1.3x of in-process, 10,000
# give 1.8x, 100,000 give 9x). On No-Limit Hold'em the cap is far above the time-based size.
MAX_ITERS_PER_INFOSET = 10
READY_TIMEOUT = 600.0


def merge_payload(run, merger, payload):
    """Decode a worker's delta, check it and merge it into ``run.store`` (``run``: the run
    loop's state); returns the decoded message. Raises :class:`protocol.ProtocolError` with
    nothing merged when the payload is malformed."""
    msg = protocol.decode_delta(payload)
    keys, num_actions = msg["keys"], msg["num_actions"]
    if keys.size and not run.game.keys_match(keys, num_actions):
        raise protocol.ProtocolError("delta holds infosets that are not in the game")
    floor = run.config.solver.regret_floor
    if floor is not None:       # in current-weight units, like the in-process floor
        params = make_params(run.config.solver, run.game.num_streets,
                             elapsed=run.current_elapsed())
        floor *= float(kernels.iteration_weight(params, np.int64(run.iterations)))
    try:
        apply_delta(run.store, merger, msg, floor)
    except ValueError as exc:
        raise protocol.ProtocolError(str(exc)) from None
    msg["regret_floor"] = floor
    return msg


def batch_size_for(rate, store):
    """Iterations for a worker that traverses ``rate`` iterations/s (None: not measured yet):
    about TARGET_BATCH_SECONDS of work, at most MAX_ITERS_PER_INFOSET per stored infoset."""
    if rate is None:
        return FIRST_BATCH
    cap = max(1000, MAX_ITERS_PER_INFOSET * store.num_infosets)
    return max(1, min(cap, int(rate * TARGET_BATCH_SECONDS)))


def merge_threads(config, num_workers):
    """Threads that merge deltas: ``train.merge_threads``, or with 0 one per four workers
    (at most 8)."""
    n = config.train.merge_threads
    return n if n > 0 else max(1, min(8, num_workers // 4))


class _Worker:
    def __init__(self):
        self.ready = False
        self.outstanding = {}           # batch id -> Batch
        self.last_heard = time.monotonic()
        self.generation = -1            # store generation it was last told about
        self.acked = -1                 # store generation its last answer was computed on
        self.rate = None                # iterations per second of traversal
        self.busy_seconds = 0.0


class ProcessExecutor:
    """Persistent worker processes returning msgpack deltas (see the module docstring)."""

    discounts_in_kernel = False
    in_background = True

    def __init__(self, game, config, num_workers, pool=None):
        self.game = game
        self.config = config
        self.tc = config.train
        self.num_workers = int(num_workers)
        removed = shm.clean_stale()
        if removed:
            log(f"removed {len(removed)} shared-memory file(s) left by a killed run")
        self.allocator = shm.SharedAllocator()
        self.pool = pool
        self.log = None                 # the store's changes, when the pool keeps replicas
        self.merger = RowMerger(merge_threads(config, self.num_workers))
        self.run = None
        self.workers = [_Worker() for _ in range(self.num_workers)]
        self.queue = []                 # batches to send, re-issued ones first
        self.stats = {"merge_seconds": 0.0, "merges": 0, "delta_bytes": 0, "delta_iters": 0,
                      "visits": 0, "restarts": 0}
        self._window = dict(self.stats)
        self._window_start = None
        self._cpu_start = None

    # -- start -----------------------------------------------------------------------------
    def prepare(self, run):
        self.run = run
        start = time.perf_counter()
        runner = BatchRunner(self.game, self.config)      # compiles into numba's cache
        runner.warm_up()
        # The merge kernels, compiled for what decoded deltas are: read-only views.
        keys, num_actions, values = (read_only(np.ones(1, dt))
                                     for dt in (np.int64, np.int8, np.float32))
        store = RegretStore(16)
        store.merge(keys, num_actions, values, values, regret_floor=-1.0)
        group = group_of(store.arrays, store.used()[2], values)
        RowMerger().merge(store.arrays, group, group, regret_floor=-1.0)
        return time.perf_counter() - start

    def start(self, run, stop):
        self.run = run
        where = "Ray actors" if self.tc.backend == "ray" else self.tc.start_method
        run.info(f"starting {self.num_workers} workers ({where})")
        if self.pool is None:
            self.pool = self._make_pool(run)
        if getattr(self.pool, "replicates_store", False):
            self.log = StoreLog(run.dcfr.steps)
        self.pool.start()
        deadline = time.monotonic() + READY_TIMEOUT
        while not all(w.ready for w in self.workers):
            if stop.signal is not None:
                break               # the loop sees the signal and writes a checkpoint
            if time.monotonic() > deadline:
                raise RuntimeError(f"workers did not start within {READY_TIMEOUT:.0f} s")
            for i, item in self.pool.wait(1.0):
                self.handle(i, item)
        self._cpu_start = time.process_time()
        self._window_start = time.perf_counter()

    def _make_pool(self, run):
        # Workers get the resolved worker count (their own-delta weight depends on it).
        resolved = config_mod.to_dict(config_mod.with_overrides(
            self.config, train={"num_workers": self.num_workers}))
        if self.tc.backend == "ray":
            from holdem.runtime.ray_pool import RayPool

            return RayPool(self.num_workers, resolved, self.tc.ray_address,
                           store=lambda: (run.store, self.allocator.generation, self.log))
        return ProcessPool(self.num_workers, resolved, self.tc.start_method)

    # -- batches ---------------------------------------------------------------------------
    def _free(self):
        return [i for i, w in enumerate(self.workers)
                if w.ready and len(w.outstanding) < PIPELINE]

    def capacity(self):
        free = sum(PIPELINE - len(self.workers[i].outstanding) for i in self._free())
        return max(0, free - len(self.queue))

    def next_batch_size(self):
        if self.tc.batch_size:
            return self.tc.batch_size
        free = self._free()
        return batch_size_for(self.workers[free[0]].rate if free else None, self.run.store)

    def submit(self, batch):
        self.queue.append(batch)
        self._send()

    def _send(self):
        """Hand queued batches to workers with free pipeline slots, emptiest first."""
        while self.queue:
            free = self._free()
            if not free:
                return
            i = min(free, key=lambda j: len(self.workers[j].outstanding))
            batch = self.queue.pop(0)
            w = self.workers[i]
            payload = protocol.encode_request(batch.id, batch.t0, batch.n, batch.elapsed,
                                              self._store_message(w))
            w.outstanding[batch.id] = batch
            try:
                self.pool.submit(i, payload)
            except WorkerDied:
                # Its end of the pipe is closed, so it is exiting: its sentinel fires next and
                # restart() re-issues this batch with the others it holds.
                return

    def _store_message(self, w):
        generation, descriptor = self.allocator.descriptor
        if w.generation == generation:
            return None
        w.generation = generation
        return {"generation": generation, "descriptor": descriptor}

    def in_flight(self):
        return sum(len(w.outstanding) for w in self.workers) + len(self.queue)

    # -- results ---------------------------------------------------------------------------
    def results(self, timeout):
        out = []
        if self.log is not None:            # sweeps the loop applied since the last call
            self.log.discounts(self.run.dcfr.steps)
        for i, item in self.pool.wait(timeout):
            result = self.handle(i, item)
            if result is not None:
                out.append(result)
        self._check_hung()
        self._release_old_generations()
        if self.log is not None:
            self.pool.sync()                # send the store's changes to the replicas
        self._send()
        return out

    def handle(self, i, item):
        """One event of worker ``i`` (a payload or :class:`WorkerDied`); the merged batch's
        result, or None."""
        w = self.workers[i]
        w.last_heard = time.monotonic()
        if isinstance(item, WorkerDied):
            self.restart(i, str(item))
            return None
        try:
            if not w.ready:
                protocol.decode_request_or_ready(item)
                w.ready = True
                return None
            msg = self._merge(item)
            if w.outstanding.pop(msg["id"], None) is None:
                raise protocol.ProtocolError(f"answer to a batch it was not given ({msg['id']})")
        except protocol.ProtocolError as exc:
            log(f"worker {i}: rejected a malformed payload ({exc}); restarting it")
            self.restart(i, "malformed payload")
            return None
        w.acked = max(w.acked, msg["generation"])
        w.busy_seconds += msg["seconds"]
        if msg["seconds"] > 0:
            w.rate = msg["iters"] / msg["seconds"]
        return BatchResult(iters=msg["iters"], utility_sum=msg["utility_sum"],
                           visits=msg["visits"], seconds=msg["seconds"])

    def _merge(self, payload):
        start = time.perf_counter()
        msg = merge_payload(self.run, self.merger, payload)
        if self.log is not None:
            self.log.delta(payload, msg["regret_floor"])
        s = self.stats
        s["merge_seconds"] += time.perf_counter() - start
        s["merges"] += 1
        s["delta_bytes"] += len(payload)
        s["delta_iters"] += msg["iters"]
        s["visits"] += msg["visits"]
        return msg

    def restart(self, i, why):
        """Replace worker ``i`` and queue its outstanding batches for re-issue."""
        w = self.workers[i]
        self.queue[:0] = list(w.outstanding.values())
        log(f"worker {i}: {why}; starting a replacement and re-issuing "
            f"{len(w.outstanding)} batch(es)")
        self.stats["restarts"] += 1
        self.workers[i] = _Worker()
        self.pool.restart(i)

    def _check_hung(self):
        now = time.monotonic()
        for i, w in enumerate(self.workers):
            limit = self.tc.worker_timeout if w.ready else READY_TIMEOUT
            if (w.outstanding or not w.ready) and now - w.last_heard > limit:
                self.restart(i, f"no answer for {now - w.last_heard:.1f} s")

    def _release_old_generations(self):
        # A generation's file may be unlinked once no worker can still be asked to map it:
        # every worker has answered a batch computed on a newer one. (Unlinking a file that
        # is mapped is fine; mapping one that was unlinked is not.)
        oldest = min(w.acked for w in self.workers)
        if oldest > 0:
            self.allocator.release_before(oldest)
            if self.log is not None:
                self.log.release(oldest)

    # -- reporting -------------------------------------------------------------------------
    def scalars(self):
        s, last = self.stats, self._window
        merges = s["merges"] - last["merges"]
        iters = s["delta_iters"] - last["delta_iters"]
        nan = float("nan")
        pool_scalars = getattr(self.pool, "scalars", None)
        return {
            **(pool_scalars(iters) if pool_scalars is not None else {}),
            "train/merge_ms": 1e3 * (s["merge_seconds"] - last["merge_seconds"]) / merges
            if merges else nan,
            "train/delta_bytes_per_iter": (s["delta_bytes"] - last["delta_bytes"]) / iters
            if iters else nan,
            "train/worker_idle_frac": self._idle_fraction(),
            # Work per iteration changes as the strategy does (longer lines, more visits):
            # iterations/s x visits/iteration is the throughput to compare over time.
            "train/visits_per_iter": (s["visits"] - last["visits"]) / iters if iters else nan,
        }

    def _idle_fraction(self):
        span = time.perf_counter() - (self._window_start or time.perf_counter())
        if span <= 0:
            return float("nan")
        busy = sum(w.busy_seconds for w in self.workers)
        return max(0.0, 1.0 - busy / (span * self.num_workers))

    def reset_window(self):
        if hasattr(self.pool, "reset_window"):
            self.pool.reset_window()
        self._window = dict(self.stats)
        for w in self.workers:
            w.busy_seconds = 0.0
        self._window_start = time.perf_counter()

    def summary(self, run):
        s = self.stats
        if not s["merges"]:
            return []
        seconds = max(run.train_seconds(), 1e-9)
        ran = s["delta_iters"]
        main_cpu = time.process_time() - (self._cpu_start or time.process_time())
        return [f"merge: {1e3 * s['merge_seconds'] / s['merges']:.3f} ms/batch "
                f"({s['merge_seconds'] / seconds:.1%} of a core); "
                f"{ran / s['merges']:.0f} iterations/batch; "
                f"delta {s['delta_bytes'] / max(ran, 1):.1f} bytes/iteration; "
                f"store {format_bytes(run.store.nbytes)}; main process busy "
                f"{main_cpu / seconds:.1%} of a core; worker restarts {s['restarts']}"
                ] + (self.pool.summary(ran, seconds) if hasattr(self.pool, "summary") else [])

    def checkpoint_state(self, run):
        # An in-process resume continues with the next batch's stream.
        return ([batch_rng_state(self.tc.seed, run.iterations)],
                {"next_batch": int(run.next_batch_id)}, {"num_workers": self.num_workers})

    def close(self):
        try:
            if self.pool is not None:
                self.pool.close()
        finally:
            self.merger.close()
            self.allocator.close()
