"""Parallel training: batched iterations on persistent workers, deltas merged by the main process.

Each step of the main loop:

1. block (``ProcessPool.wait`` with a timeout) until a worker answers or dies;
2. decode and validate its msgpack delta, check every infoset against the game, grow the shared
   store if needed (a new generation), merge the delta with one numba call (single writer);
3. hand that worker its next batch (each worker keeps ``PIPELINE`` batches queued, so it never
   waits for the main process);
4. apply DCFR sweeps when due, log, checkpoint in a background thread on the snapshot interval.

Workers read the live shared store, so they lag the merged truth by the deltas in flight (at most
``PIPELINE`` batches each). A worker that dies or stays silent for ``worker_timeout`` seconds is
replaced and its outstanding batches are re-issued (a batch's random stream depends only on the
seed and its first iteration, so the redo is the same work). When the main process dies, workers
see their parent change within a second and exit; the next run removes its shared-memory files.
"""

import signal
import time
from pathlib import Path

import numpy as np

from holdem import checkpoint as ckpt
from holdem import config as config_mod
from holdem.games import make_game
from holdem.metrics import format_bytes, log
from holdem.runtime import protocol, shm
from holdem.runtime.pool import ProcessPool, WorkerDied
from holdem.runtime.worker import BatchRunner, batch_rng_state
from holdem.solver.solver import DcfrSchedule
from holdem.store.store import RegretStore
from holdem.training import (CheckpointWriter, RunMonitor, RunResult, StopFlag,
                             check_resume_config, memory_limit_bytes, resolved_workers,
                             run_header, store_from_checkpoint, store_snapshot)

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


class _Worker:
    def __init__(self):
        self.ready = False
        self.outstanding = {}           # batch id -> (t0, n)
        self.last_heard = time.monotonic()
        self.generation = -1            # store generation it was last told about
        self.acked = -1                 # store generation its last answer was computed on
        self.rate = None                # iterations per second of traversal
        self.busy_seconds = 0.0


class ParallelRun:
    """State of one parallel run (main-process side)."""

    def __init__(self, config, logdir, resume_from, progress):
        self.config = config
        self.tc = config.train
        self.game = make_game(config)
        self.logdir = Path(logdir)
        self.directory = ckpt.checkpoint_dir(logdir)
        self.directory.mkdir(parents=True, exist_ok=True)
        removed = shm.clean_stale()
        if removed:
            log(f"removed {len(removed)} shared-memory file(s) left by a killed run")
        self.allocator = shm.SharedAllocator()
        self.iterations = 0             # merged
        self.elapsed0 = 0.0
        self.next_batch_id = 0
        self.dcfr = DcfrSchedule(config.solver)
        if resume_from is not None:
            checkpoint = ckpt.load(ckpt.resolve(resume_from))
            check_resume_config(checkpoint, config, self.game)
            self.store = store_from_checkpoint(checkpoint, self.game, allocator=self.allocator)
            header = checkpoint.header
            self.iterations = int(header["iterations"])
            self.elapsed0 = float(header.get("elapsed", 0.0))
            self.dcfr.steps = int(header.get("schedule", {}).get("dcfr_steps", 0))
            self.dcfr.sync_to(self.iterations)
            self.next_batch_id = int(header.get("schedule", {}).get("next_batch", 0))
            log(f"resuming from {checkpoint.path} at iteration {self.iterations:,}")
        else:
            self.store = RegretStore(row_capacity=self.game.initial_rows,
                                     allocator=self.allocator)
        self.assigned = self.iterations  # iterations handed out (t0 of the next batch)
        self.monitor = RunMonitor(config, logdir, self.game, progress)
        self.writer = CheckpointWriter(self.directory, self.tc.keep_checkpoints)
        self.limit = memory_limit_bytes(config)
        self.num_workers = resolved_workers(config)
        self.workers = [_Worker() for _ in range(self.num_workers)]
        self.redo = []                  # (batch id, t0, n) to re-issue
        self.stats = {"merge_seconds": 0.0, "merges": 0, "delta_bytes": 0, "delta_iters": 0,
                      "visits": 0, "restarts": 0}
        self._window = dict(self.stats)
        self.train_start = None

    # -- batches ---------------------------------------------------------------------------
    def _batch_size(self, w):
        if self.tc.batch_size:
            return self.tc.batch_size
        if w.rate is None:
            return FIRST_BATCH
        cap = max(1000, MAX_ITERS_PER_INFOSET * self.store.num_infosets)
        return max(1, min(cap, int(w.rate * TARGET_BATCH_SECONDS)))

    def _store_message(self, w):
        generation, descriptor = self.allocator.descriptor
        if w.generation == generation:
            return None
        w.generation = generation
        return {"generation": generation, "descriptor": descriptor}

    def _training_seconds(self):
        return 0.0 if self.train_start is None else time.perf_counter() - self.train_start

    def _may_assign(self, stopping):
        if stopping:
            return False
        if self.tc.iters is not None and self.assigned >= self.tc.iters:
            return False
        return True

    def _feed(self, pool, i, stopping):
        w = self.workers[i]
        while w.ready and len(w.outstanding) < PIPELINE:
            if self.redo:
                batch_id, t0, n = self.redo.pop()
            elif self._may_assign(stopping):
                n = self._batch_size(w)
                if self.tc.iters is not None:
                    n = min(n, self.tc.iters - self.assigned)
                batch_id, t0 = self.next_batch_id, self.assigned
                self.next_batch_id += 1
                self.assigned += n
            else:
                return
            elapsed = self.elapsed0 + self._training_seconds()
            payload = protocol.encode_request(batch_id, t0, n, elapsed, self._store_message(w))
            w.outstanding[batch_id] = (t0, n)
            try:
                pool.submit(i, payload)
            except WorkerDied:
                # Its end of the pipe is closed, so it is exiting: its sentinel fires next and
                # _restart re-issues this batch with the others it holds.
                return

    # -- results ---------------------------------------------------------------------------
    def _merge(self, payload):
        msg = protocol.decode_delta(payload)
        keys, num_actions = msg["keys"], msg["num_actions"]
        if keys.size and not self.game.keys_match(keys, num_actions):
            raise protocol.ProtocolError("delta holds infosets that are not in the game")
        start = time.perf_counter()
        floor = self.config.solver.regret_floor
        if floor is not None:
            floor = floor * self._weight_now()
        self.store.merge(keys, num_actions, msg["regrets"], msg["strategy"], regret_floor=floor,
                         check_existing=False)     # checked against the game above
        self.stats["merge_seconds"] += time.perf_counter() - start
        self.stats["merges"] += 1
        self.stats["delta_bytes"] += len(payload)
        self.stats["delta_iters"] += msg["iters"]
        self.stats["visits"] += msg["visits"]
        self.monitor.utility.add(msg["utility_sum"], msg["iters"])
        self.iterations += msg["iters"]
        return msg

    def _weight_now(self):
        from holdem.solver import kernels
        from holdem.solver.solver import make_params

        params = make_params(self.config.solver, self.game.num_streets,
                             elapsed=self.elapsed0 + self._training_seconds())
        return float(kernels.iteration_weight(params, np.int64(self.iterations)))

    def _release_old_generations(self):
        # A generation's file may be unlinked once no worker can still be asked to map it:
        # every worker has answered a batch computed on a newer one. (Unlinking a file that
        # is mapped is fine; mapping one that was unlinked is not.)
        oldest = min(w.acked for w in self.workers)
        if oldest > 0:
            self.allocator.release_before(oldest)

    def _handle(self, pool, i, item, stopping):
        w = self.workers[i]
        w.last_heard = time.monotonic()
        if isinstance(item, WorkerDied):
            self._restart(pool, i, str(item))
            return
        try:
            if not w.ready:
                msg = protocol.decode_request_or_ready(item)
                w.ready = True
            else:
                msg = self._merge(item)
                t0n = w.outstanding.pop(msg["id"], None)
                if t0n is None:
                    raise protocol.ProtocolError(f"answer to a batch it was not given "
                                                 f"({msg['id']})")
                w.acked = max(w.acked, msg["generation"])
                w.busy_seconds += msg["seconds"]
                if msg["seconds"] > 0:
                    w.rate = msg["iters"] / msg["seconds"]
        except protocol.ProtocolError as exc:
            log(f"worker {i}: rejected a malformed payload ({exc}); restarting it")
            self._restart(pool, i, "malformed payload")
            return
        self._feed(pool, i, stopping)

    def _restart(self, pool, i, why):
        w = self.workers[i]
        self.redo.extend((bid, t0, n) for bid, (t0, n) in w.outstanding.items())
        log(f"worker {i}: {why}; starting a replacement and re-issuing "
            f"{len(w.outstanding)} batch(es)")
        self.stats["restarts"] += 1
        self.workers[i] = _Worker()
        pool.restart(i)

    def _check_hung(self, pool):
        now = time.monotonic()
        for i, w in enumerate(self.workers):
            limit = self.tc.worker_timeout if w.ready else READY_TIMEOUT
            if (w.outstanding or not w.ready) and now - w.last_heard > limit:
                self._restart(pool, i, f"no answer for {now - w.last_heard:.1f} s")

    # -- checkpoints and logging -----------------------------------------------------------
    def _header(self):
        return run_header(self.game, self.config, self.store, self.iterations,
                          self.elapsed0 + self._training_seconds(),
                          {"dcfr_steps": int(self.dcfr.steps),
                           "next_batch": int(self.next_batch_id)},
                          # An in-process resume continues with the next batch's stream.
                          [batch_rng_state(self.tc.seed, self.iterations)],
                          extra={"num_workers": self.num_workers})

    def _checkpoint(self, background):
        # Only the snapshot copy pauses the main loop; workers keep their queued batches, and
        # the file is written by a background thread.
        start = time.perf_counter()
        snapshot = store_snapshot(self.store)
        pause = time.perf_counter() - start
        path = self.writer.submit(self.iterations, self._header(), snapshot,
                                  background=background)
        if background:
            size = sum(a.nbytes for a in snapshot.values())
            log(f"checkpoint at iteration {self.iterations:,}: main loop paused {pause:.2f} s to "
                f"copy {format_bytes(size)}; writing {path.name} in the background")
        return path

    def _log(self, force=False):
        s, last = self.stats, self._window
        merges = s["merges"] - last["merges"]
        iters = s["delta_iters"] - last["delta_iters"]
        extra = {
            "train/merge_ms": 1e3 * (s["merge_seconds"] - last["merge_seconds"]) / merges
            if merges else float("nan"),
            "train/delta_bytes_per_iter": (s["delta_bytes"] - last["delta_bytes"]) / iters
            if iters else float("nan"),
            "train/worker_idle_frac": self._idle_fraction(),
            # Work per iteration changes as the strategy does (longer lines, more visits):
            # iterations/s x visits/iteration is the throughput to compare over time.
            "train/visits_per_iter": (s["visits"] - last["visits"]) / iters
            if iters else float("nan"),
        }
        tb_due = self.monitor.scalars_due(force)
        self.monitor.tick(self.iterations, self._training_seconds(), self.store, extra,
                          force=force)
        if tb_due:
            self._window = dict(s)
            for w in self.workers:
                w.busy_seconds = 0.0
            self._idle_since = time.perf_counter()

    def _idle_fraction(self):
        span = time.perf_counter() - getattr(self, "_idle_since", self.train_start or 0)
        if span <= 0:
            return float("nan")
        busy = sum(w.busy_seconds for w in self.workers)
        return max(0.0, 1.0 - busy / (span * self.num_workers))

    # -- the loop --------------------------------------------------------------------------
    def run(self):
        tc = self.tc
        warm = time.perf_counter()
        runner = BatchRunner(self.game, self.config)      # compiles into numba's cache
        runner.warm_up()
        RegretStore(16).merge(np.zeros(0, np.int64), np.zeros(0, np.int8),
                              np.zeros(0, np.float32), np.zeros(0, np.float64))
        compile_seconds = time.perf_counter() - warm
        log(f"kernels ready in {compile_seconds:.2f} s; starting {self.num_workers} workers "
            f"({tc.start_method})")
        pool = ProcessPool(self.num_workers, config_mod.to_dict(self.config), tc.start_method)
        reason = "done"
        path = None
        try:
            with StopFlag() as stop:
                pool.start()
                self._wait_ready(pool, stop)
                self.train_start = time.perf_counter()
                self._cpu_start = time.process_time()
                self._idle_since = self.train_start
                for i in range(self.num_workers):
                    self._feed(pool, i, stopping=stop.signal is not None)
                last_snapshot = time.monotonic()
                stopping = False
                while True:
                    if not stopping:
                        reason = self._stop_reason(stop)
                        stopping = reason is not None
                    outstanding = sum(len(w.outstanding) for w in self.workers)
                    if stopping and outstanding == 0 and not self.redo:
                        break
                    timeout = 1.0
                    if tc.time_budget is not None and not stopping:
                        timeout = max(0.01, min(timeout, tc.time_budget -
                                                self._training_seconds()))
                    for i, item in pool.wait(timeout):
                        self._handle(pool, i, item, stopping)
                    for i in range(self.num_workers):
                        self._feed(pool, i, stopping)
                    self._check_hung(pool)
                    self._release_old_generations()
                    owed = self.dcfr.due(self.iterations, self.elapsed0 +
                                         self._training_seconds())
                    if owed:
                        self.dcfr.apply(self.store, owed)
                    self._log()
                    if time.monotonic() - last_snapshot >= tc.snapshot_interval:
                        self._checkpoint(background=True)
                        last_snapshot = time.monotonic()
                train_seconds = self._training_seconds()
                self._log(force=True)
                path = self._checkpoint(background=False)
        finally:
            pool.close()
            self.writer.wait()
            self.monitor.close()
            self.allocator.close()
        reason = reason or "done"
        ran = self.stats["delta_iters"]
        main_cpu = time.process_time() - self._cpu_start
        if self.stats["merges"]:
            s = self.stats
            log(f"merge: {1e3 * s['merge_seconds'] / s['merges']:.3f} ms/batch "
                f"({s['merge_seconds'] / max(train_seconds, 1e-9):.1%} of a core); "
                f"{ran / s['merges']:.0f} iterations/batch; "
                f"delta {s['delta_bytes'] / max(ran, 1):.1f} bytes/iteration; "
                f"store {format_bytes(self.store.nbytes)}; main process busy "
                f"{main_cpu / max(train_seconds, 1e-9):.1%} of a core; worker restarts "
                f"{self.stats['restarts']}")
        return RunResult.finish(self.iterations, ran, train_seconds, self.store.num_infosets,
                                path, compile_seconds, reason)

    def _stop_reason(self, stop):
        tc = self.tc
        if stop.signal is not None:
            return signal.Signals(stop.signal).name
        if tc.iters is not None and self.iterations >= tc.iters:
            return "done"
        if tc.time_budget is not None and self._training_seconds() >= tc.time_budget:
            return "done"
        if self.limit is not None and self.store.nbytes >= self.limit:
            log(f"store reached {format_bytes(self.store.nbytes)} (--max-memory "
                f"{tc.max_memory_gb} GB): checkpointing and stopping")
            return "max_memory"
        return None

    def _wait_ready(self, pool, stop):
        deadline = time.monotonic() + READY_TIMEOUT
        while not all(w.ready for w in self.workers):
            if stop.signal is not None:
                return              # the main loop sees the signal and writes a checkpoint
            if time.monotonic() > deadline:
                raise RuntimeError("workers did not start within "
                                   f"{READY_TIMEOUT:.0f} s")
            for i, item in pool.wait(1.0):
                self._handle(pool, i, item, stopping=True)


def train_parallel(config, logdir, resume_from=None, progress=True):
    """Train with ``resolved_workers(config)`` worker processes; see :func:`holdem.training.train`."""
    return ParallelRun(config, logdir, resume_from, progress).run()
