"""Training runs: one loop that owns stop conditions, checkpoints, monitoring, schedules and
resume, with an *executor* passed in that runs the iterations.

:func:`train` is the Python API behind ``python -m holdem.cli.train_blueprint``. One run:

1. builds the game and the store (fresh, or from ``resume_from``), and lets the executor compile
   (or load from numba's cache) its kernels, timing it;
2. hands batches of iterations to the executor -- :class:`holdem.runtime.executor.InProcessExecutor`
   (``num_workers: 1``) or :class:`holdem.runtime.process.ProcessExecutor` (persistent worker
   processes), as :func:`holdem.runtime.backends.make_executor` chooses -- until ``iters`` (the
   run's total) or ``time_budget`` (seconds of training in this invocation, start-up excluded)
   is reached, SIGINT/SIGTERM arrives, or a worker fails beyond its restart budget
   (``train.worker_restarts``; :class:`WorkerFailure`, raised after the final checkpoint), or
   the store cannot grow (:class:`holdem.store.store.StoreFull`: a full ``/dev/shm``, a file size
   limit, no memory; raised after a final checkpoint of what was merged, its message saying
   where that is and what to do);
3. applies the DCFR sweeps the executor leaves to it, checkpoints every ``snapshot_interval``
   seconds and once at the end (in the background: :mod:`holdem.checkpoint_writer`), keeping the
   newest K (a logdir holds one run: :class:`holdem.logdir.LogdirLease`);
4. reports progress on stderr and, with ``tensorboard``, scalars under the logdir;
5. returns a :class:`RunResult` (the CLI prints it as the ``done:`` line).

In-process with a fixed seed a run is bit-for-bit reproducible, also across a stop and resume,
provided the schedules count iterations (the default).
"""

import contextlib
import errno
import math
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from holdem import checkpoint as ckpt
from holdem import config as config_mod
from holdem.checkpoint_writer import CheckpointWriter
from holdem.fileio import StorageError
from holdem.games import CARDS, make_game
from holdem.games.checkpointed import game_of_checkpoint
from holdem.logdir import LogdirLease
from holdem.metrics import compile_notice, format_bytes, log
from holdem.monitor import RunMonitor
from holdem.runtime.backends import make_executor
from holdem.runtime.executor import Batch, RunView
from holdem.runtime.pool import WorkerFailure
from holdem.solver.solver import DcfrSchedule
from holdem.store.store import RegretStore, StoreFull


COMPILE_SECONDS = {"nlhe": {False: 12, True: 16}, "small": {False: 16, True: 18}}
"""Seconds a cold start spends compiling, in-process (False) or for worker processes (True), on
the quiet 2-core development machine: No-Limit Hold'em 12.4 s and 16.3 s to 'kernels ready'
with configs/hunl_default.yaml; Kuhn and Leduc, whose tree-game kernels take 1.2-1.3x NLHE's
compile time in-process and 1.1x with workers, measured side by side on the loaded machine
(docs/performance.md)."""

# The loop's monitor tick (progress, evaluations, TensorBoard: all due by their own intervals of
# half a second or more) at most this often: worker runs come round the loop once a merge
# pass, hundreds of times a second, and a tick cost the main process ~16 us each
# (tools/bench_mainloop.py, hunl_default, 15 virtual workers).
TICK_SECONDS = 0.005


def compile_estimate(game, in_background):
    """The seconds :data:`COMPILE_SECONDS` gives a cold start of ``game``'s kernels (No-Limit
    Hold'em: a game dealt with real cards; else the small games)."""
    return COMPILE_SECONDS["nlhe" if game.supports(CARDS) else "small"][bool(in_background)]


@dataclass
class RunResult:
    iterations: int            # cumulative over the run (including resumed iterations)
    elapsed: float             # training seconds in this invocation
    iters_per_sec: float       # for this invocation
    infosets: int
    checkpoint: Path
    compile_seconds: float
    stop_reason: str = "done"

    @classmethod
    def finish(cls, iterations, ran, train_seconds, infosets, checkpoint, compile_seconds,
               reason):
        """The result of an invocation that ran ``ran`` iterations in ``train_seconds``."""
        return cls(iterations=iterations, elapsed=train_seconds,
                   iters_per_sec=ran / train_seconds if train_seconds > 0 else 0.0,
                   infosets=infosets, checkpoint=Path(checkpoint).resolve(),
                   compile_seconds=compile_seconds, stop_reason=reason)

    def done_line(self):
        return (f"done: iterations={self.iterations} elapsed={self.elapsed:.3f} "
                f"it/s={self.iters_per_sec:.1f} infosets={self.infosets} "
                f"checkpoint={Path(self.checkpoint).resolve()}")


class StopFlag:
    """Turns SIGINT, SIGTERM and SIGHUP (a closed terminal) into a flag the run checks, for the
    whole of a run: from before it makes its executor (worker processes, shared-memory files)
    until that is closed, so no signal ends the process before its cleanup has run. While the
    loop runs (``training``) the first signal stops it with a final checkpoint; before, the run
    stops at its next step (:meth:`abort_if_signalled`) as Ctrl-C always did: no checkpoint,
    exit 130. A second signal raises KeyboardInterrupt at once, except during cleanup
    (:meth:`shielded`), which it must not cut short: there it is only noted."""

    def __init__(self):
        self.signal = None
        self.training = False
        self._shielded = False
        self._old = {}

    def __enter__(self):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            try:
                self._old[sig] = signal.signal(sig, self._handle)
            except ValueError:          # not in the main thread: no handlers
                pass
        return self

    def _handle(self, signum, frame):
        if self._shielded:
            self.signal = self.signal or signum
            return
        if self.signal is not None:     # a second Ctrl-C: stop now
            raise KeyboardInterrupt
        self.signal = signum
        name = signal.Signals(signum).name
        if self.training:
            log(f"received {name}: writing a final checkpoint, then stopping")
        else:
            log(f"received {name} before training started: stopping")

    def abort_if_signalled(self):
        """Before training starts: raise KeyboardInterrupt if a signal came."""
        if self.signal is not None:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def shielded(self):
        """Signals only noted meanwhile (the run's cleanup)."""
        old, self._shielded = self._shielded, True
        try:
            yield
        finally:
            self._shielded = old

    def __exit__(self, *exc):
        for sig, old in self._old.items():
            signal.signal(sig, old)


def memory_limit_bytes(config):
    gb = config.train.max_memory_gb
    return None if gb is None else int(gb * (1 << 30))


def resumed_settings(checkpoint, config):
    """A line saying what a resumed run continues with and which settings differ from the
    checkpoint's run, with where each new value came from."""
    tc = config.train
    text = (f"resuming with the run's settings (num_workers {tc.num_workers}, backend "
            f"{tc.backend}, tensorboard {str(tc.tensorboard).lower()}, seed {tc.seed})")
    try:
        stored = config_mod.from_stored(checkpoint.header["config"], source="checkpoint")
    except config_mod.ConfigError:
        return text
    changed = config_mod.changed_settings(stored, config)
    if changed:
        text += "; changed: " + "; ".join(
            f"{key} {old!r} -> {new!r} ({config.origin.get(key, 'default')})"
            for key, old, new in changed)
    return text


class Run:
    """The state of one training run, and its loop (:meth:`train`)."""

    def __init__(self, config, logdir, stop, resume_from=None, progress=True, executor=None,
                 overwrite=False):
        tc = self.tc = config.train
        self.stop = stop                # the StopFlag of the run's whole lifetime
        if tc.iters is None and tc.time_budget is None:
            raise config_mod.ConfigError(f"{config.source}: the run needs a stopping point: set "
                                         "train.iters (--iters) or train.time_budget "
                                         "(--time-budget)")
        config_mod.check_effective(config, workers=executor is None)
        self.config = config
        self.logdir = Path(logdir)
        self.progress = progress
        checkpoint = resume_path = None
        damaged = []
        if resume_from is not None:
            resume_path, checkpoint, damaged = ckpt.load_for_resume(resume_from)
            for path, exc in damaged:
                log(f"warning: passing over a damaged checkpoint: {exc}")
        if checkpoint is None:
            self.game = make_game(config)
        else:
            self.game, _ = game_of_checkpoint(checkpoint, config)
        self.lease = LogdirLease(logdir, resume_path, overwrite,
                                 damaged=[path for path, _ in damaged],
                                 tensorboard=tc.tensorboard)
        self.directory = self.lease.directory
        self.resume_path = resume_path
        self.executor = self.monitor = self.writer = None
        self.iterations = self.start_iterations = 0
        try:
            self.executor = executor if executor is not None else make_executor(self.game,
                                                                                config)
            self.dcfr = DcfrSchedule(config.solver,
                                     kernel_handles_iterations=self.executor.discounts_in_kernel)
            self.iterations, self.elapsed, self.next_batch_id, self.rng_state = 0, 0.0, 0, None
            self._load_store(checkpoint)
        except BaseException:
            self._close(failed=True)
            raise
        self.view = RunView(store=self.store, game=self.game, config=config, dcfr=self.dcfr,
                            rng_state=self.rng_state, iterations=lambda: self.iterations,
                            next_batch_id=lambda: self.next_batch_id,
                            train_seconds=self.train_seconds, elapsed=self.current_elapsed,
                            info=self.info)
        self.start_iterations = self.iterations
        self.assigned = self.iterations     # the first iteration of the next batch
        self.visits = 0
        self._batch_seconds = 0.0           # time spent running batches (in-process clock)
        self._train_start = None

    def _load_store(self, checkpoint):
        allocator = self.executor.allocator
        if checkpoint is None:
            self.store = RegretStore(row_capacity=self.game.initial_rows, allocator=allocator)
            return
        self.store = ckpt.store_from_checkpoint(checkpoint, self.game, allocator=allocator)
        state = ckpt.run_state(checkpoint)
        self.iterations, self.elapsed = state.iterations, state.elapsed
        self.rng_state = state.rng_state
        self.next_batch_id = state.schedule.get("next_batch", 0)
        self.dcfr.resume(state.schedule.get("dcfr_steps", 0), self.iterations)
        self.info(f"resuming from {checkpoint.path} at iteration {self.iterations:,}")
        self.info(resumed_settings(checkpoint, self.config))

    def info(self, message):
        """A status line on stderr, unless the run is quiet (``progress=False``); warnings and
        the reason for an early stop use :func:`log` and always print."""
        if self.progress:
            log(message)

    # -- clocks ----------------------------------------------------------------------------
    def train_seconds(self):
        """Training seconds in this invocation: wall time while executors work in the
        background, else the time spent running batches."""
        if not self.executor.in_background:
            return self._batch_seconds
        return 0.0 if self._train_start is None else time.perf_counter() - self._train_start

    def current_elapsed(self):
        """Training seconds over the whole run (resumed invocations included)."""
        return self.elapsed + self.train_seconds()

    # -- the loop --------------------------------------------------------------------------
    def train(self):
        """Run the loop to its stopping point; the :class:`RunResult`. Raises
        :class:`WorkerFailure` (its ``checkpoint``: the final one) when workers fail beyond
        the restart budget, and :class:`StoreFull` (the same) when the store cannot grow,
        after checkpointing what was merged and shutting down."""
        tc, executor, stop = self.tc, self.executor, self.stop
        if self._target_reached():
            self._close()
            log(f"nothing to train: {self.resume_path} already holds {self.iterations:,} "
                f"iterations and the run's total (--iters, train.iters) is {tc.iters:,}; give a "
                "larger --iters to train on. No checkpoint written.")
            return RunResult.finish(self.iterations, 0, 0.0, self.store.num_infosets,
                                    self.resume_path, 0.0, "done")
        path, reason, failure, refused = None, None, None, None
        failed = True
        try:
            stop.abort_if_signalled()
            with compile_notice(compile_estimate(self.game, executor.in_background),
                                self.progress):
                compile_seconds = executor.prepare(self.view)
            self.info(f"kernels ready in {compile_seconds:.2f} s (numba compile or cache load)")
            stop.abort_if_signalled()
            self.lease.clear_stale()
            self.monitor = RunMonitor(self.config, self.logdir, self.game, self.progress,
                                      start_iterations=self.start_iterations)
            self.writer = CheckpointWriter(self.directory, tc.keep_checkpoints,
                                           previous=self.resume_path)
            stop.training = True
            try:
                executor.start(self.view, stop)
                self._train_start = time.perf_counter()
                reason = self._loop()
            except WorkerFailure as exc:
                failure, reason = exc, "worker_failure"
                log(f"stopping: {exc}")
            except StoreFull as exc:
                # What the store holds stays valid: the iterations merged (and, with workers,
                # part of the merge pass that needed the room, counted by no result) are
                # checkpointed below; its message is the run's one line about it.
                failure, reason = exc, "store_full"
                for result in getattr(exc, "results", ()):
                    self._account(result)
            train_seconds = self.train_seconds()
            self._tick(force=True)
            if failure is None or self.iterations > self.start_iterations:
                try:
                    path = self._checkpoint(background=False)
                except StorageError as exc:
                    if not isinstance(failure, StoreFull):
                        raise
                    refused = exc
            failed = failure is not None
        finally:
            self._close(failed)
        if isinstance(failure, StoreFull):
            failure.checkpoint = path
            failure.note = self._store_full_note(failure, path, refused)
            raise failure.with_traceback(None)
        if failure is not None:
            failure.checkpoint = path
            if path is not None:
                log(f"final checkpoint of the {self.iterations:,} iterations merged: {path}")
            raise failure.with_traceback(None)     # where it was raised is no news
        ran = self.iterations - self.start_iterations
        if train_seconds > 0 and ran:
            self.info(f"decision-node visits: {self.visits / train_seconds:,.0f}/s "
                      f"({self.visits / ran:.1f} per iteration); store "
                      f"{format_bytes(self.store.used_bytes)} for {self.store.num_infosets:,} "
                      f"infosets ({format_bytes(self.store.nbytes)} allocated)")
        for line in executor.summary(self.view):
            self.info(line)
        return RunResult.finish(self.iterations, ran, train_seconds, self.store.num_infosets,
                                path, compile_seconds, reason)

    def _store_full_note(self, full, path, refused):
        """What the run did when its store could not grow, and what to do: the end of
        :class:`StoreFull`'s one line."""
        if path is not None:
            done = (f"; the run stopped with a final checkpoint of its {self.iterations:,} "
                    f"iterations: {path}")
        elif refused is not None:
            done = f"; the run stopped, and its final checkpoint was refused too: {refused}"
        elif self.resume_path is not None:
            done = (f"; the run stopped with nothing merged since {self.resume_path}, which "
                    f"holds its {self.iterations:,} iterations")
        else:
            done = "; the run stopped before any iteration was merged: nothing to checkpoint"
        if full.directory is None:
            todo = "give the run more memory (or stop it sooner: --max-memory)"
        elif full.errno == errno.EFBIG:
            todo = "raise the run's file size limit (ulimit -f)"
        else:
            todo = (f"free space in {full.directory} or set HOLDEM_SHM_DIR to a directory in "
                    "memory (tmpfs) with room")
        source = None
        if path is not None or (self.writer is not None and self.writer.last_path is not None):
            source = self.logdir
        elif self.resume_path is not None:
            source = self.resume_path
        again = "" if source is None else f", then continue with --resume-from {source}"
        return f"{done}. To go on: {todo}{again}"

    def _loop(self):
        """Hand out batches and merge their results until a stopping point and nothing is in
        flight; returns the stop reason."""
        tc, executor = self.tc, self.executor
        limit = memory_limit_bytes(self.config)
        reason = None
        last_snapshot, last_tick = time.monotonic(), -math.inf
        while True:
            if reason is None:
                reason = self._stop_reason(self.stop, limit)
            if reason is None:
                self._submit()
            elif executor.in_flight() == 0:
                return reason
            timeout = 1.0
            if tc.time_budget is not None and reason is None:
                timeout = max(0.01, min(timeout, tc.time_budget - self.train_seconds()))
            for result in executor.results(timeout):
                self._account(result)
            self._discount()
            now = time.monotonic()
            if now - last_tick >= TICK_SECONDS:
                self._tick()
                last_tick = now
            if now - last_snapshot >= tc.snapshot_interval:
                self._checkpoint(background=True)
                last_snapshot = time.monotonic()

    def _close(self, failed=False):
        """Shut the run down, every step whatever the ones before raised: the executor first
        (its workers and shared-memory files), where no signal can cut it short, then the
        background checkpoint write, the monitor and the logdir (``failed``: the run ends
        without a checkpoint of its own, unless the background writer wrote one)."""
        try:
            if self.executor is not None:
                with self.stop.shielded():
                    self.executor.close()
        finally:
            try:
                if self.writer is not None:
                    self.writer.wait()
                if self.monitor is not None:
                    self.monitor.close()
            finally:
                wrote = self.writer is not None and self.writer.last_path is not None
                with self.stop.shielded():
                    self.lease.release(failed=failed and not wrote,
                                       ran=self.iterations > self.start_iterations)

    def _target_reached(self):
        """Whether this run resumes its own newest checkpoint at or past its iteration total
        (resuming into another logdir still writes the checkpoint there)."""
        tc = self.tc
        return (self.resume_path is not None and tc.iters is not None
                and self.iterations >= tc.iters
                and Path(self.resume_path).parent.resolve() == Path(self.directory).resolve())

    def _stop_reason(self, stop, limit):
        tc = self.tc
        if stop.signal is not None:
            return signal.Signals(stop.signal).name
        if tc.iters is not None and self.iterations >= tc.iters:
            return "done"
        if tc.time_budget is not None and self.train_seconds() >= tc.time_budget:
            return "done"
        if limit is not None and self.store.nbytes >= limit:
            log(f"store reached {format_bytes(self.store.nbytes)} (--max-memory "
                f"{tc.max_memory_gb} GiB): checkpointing and stopping")
            return "max_memory"
        return None

    def _submit(self):
        """Hand the executor as many batches as it takes, within the stopping point."""
        tc = self.tc
        for _ in range(self.executor.capacity()):
            n = self.executor.next_batch_size()
            if tc.iters is not None:
                n = min(n, tc.iters - self.assigned)
            seconds = self.train_seconds()
            if tc.time_budget is not None and self.iterations > self.start_iterations:
                rate = (self.iterations - self.start_iterations) / max(seconds, 1e-9)
                n = min(n, int(math.ceil((tc.time_budget - seconds) * rate)))
            if n <= 0:
                return
            self.executor.submit(Batch(self.next_batch_id, self.assigned, n,
                                       self.elapsed + seconds))
            self.next_batch_id += 1
            self.assigned += n

    def _discount(self):
        """DCFR sweeps owed at the merged iteration count, unless the executor's solver applies
        the schedule itself (an in-process one, at the same points of its iteration sequence)."""
        if not self.executor.discounts_in_kernel:
            self.dcfr.catch_up(self.store, self.iterations, self.current_elapsed())

    def _account(self, result):
        self.iterations += result.iters
        self.visits += result.visits
        if not self.executor.in_background:
            self._batch_seconds += result.seconds
        self.monitor.utility.add(result.utility_sum, result.iters)

    def training_seconds(self):
        """Training seconds in this invocation without the run's evaluations: the clock rates
        are measured over. (In-process, :meth:`train_seconds` counts only batches already;
        with workers it is wall time, from which the main process's evaluations are taken.)"""
        seconds = self.train_seconds()
        if self.executor.in_background and self.monitor is not None:
            seconds -= self.monitor.eval_seconds
        return seconds

    def _tick(self, force=False):
        due = self.monitor.scalars_due(force)
        self.monitor.tick(self.iterations, self.train_seconds(), self.store,
                          self.executor.scalars() if due else None, force=force,
                          visits=self.visits, training_seconds=self.training_seconds())
        if due:
            self.executor.reset_window()

    def _checkpoint(self, background):
        # Only the snapshot copy pauses the loop; workers keep their queued batches, and the
        # file is written by a background thread.
        start = time.perf_counter()
        snapshot = ckpt.store_snapshot(self.store)
        pause = time.perf_counter() - start
        rng_states, schedule, extra = self.executor.checkpoint_state(self.view)
        header = ckpt.run_header(self.game, self.config, self.store, self.iterations,
                                 self.current_elapsed(),
                                 {"dcfr_steps": int(self.dcfr.steps), **schedule}, rng_states,
                                 extra=extra)
        path = self.writer.submit(self.iterations, header, snapshot, background=background)
        if background:
            size = sum(a.nbytes for a in snapshot.values())
            self.info(f"checkpoint at iteration {self.iterations:,}: training paused "
                      f"{pause:.2f} s to copy {format_bytes(size)}; writing {path.name} in the "
                      "background")
        return path


def train(config, logdir, resume_from=None, progress=True, executor=None, overwrite=False):
    """Train according to ``config`` (a :class:`holdem.config.Config`); return a RunResult.

    ``config.train.iters`` is the run's total iteration count, ``config.train.time_budget`` the
    seconds of training in this call; at least one must be set. ``num_workers`` 1 trains in this
    process, 0 starts one worker process per core, N starts N; ``executor`` overrides that
    choice (see :mod:`holdem.runtime.executor` for the interface).

    ``logdir`` must hold no other run: a logdir with checkpoints is only continued
    (``resume_from`` its newest checkpoint) or, with ``overwrite``, replaced.
    """
    with StopFlag() as stop:
        return Run(config, logdir, stop, resume_from, progress, executor, overwrite).train()
