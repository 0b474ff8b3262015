"""Executors: where a run's batches of iterations are executed.

The run loop (:mod:`holdem.training`) owns everything that does not depend on *where* iterations
run -- stop conditions, the iteration counter, schedules, checkpoints, monitoring, resume -- and
hands :class:`Batch` es to an executor. An executor sees the run only through a
:class:`RunView` (``view`` below): the store, the game, the config, the DCFR schedule, the
checkpointed RNG state, and callables for the run's counters, clocks and status lines. It has
this small interface:

``prepare(view) -> seconds``
    compile (or load from numba's cache) its kernels.
``start(view, stop)``
    start whatever runs batches (worker processes); return early when ``stop.signal`` is set.
``capacity() -> int``, ``next_batch_size() -> int``, ``submit(batch)``
    how many batches it takes now, how many iterations it would like in the next one, and
    taking one.
``results(timeout) -> [BatchResult]``
    block up to ``timeout`` seconds for finished batches, whose updates are then in the store;
    raises :class:`holdem.store.store.StoreFull` when the store cannot grow, its ``results``
    (if set) the iterations in the store that no result counted yet.
``in_flight() -> int``
    batches submitted and not yet returned (re-issued ones included).
``scalars()`` / ``reset_window()``, ``summary(view)``, ``checkpoint_state(view)``, ``close()``
    its TensorBoard scalars since the last window, its end-of-run log lines, what it adds to a
    checkpoint header, and shutting down.

Attributes: ``num_workers``; ``allocator`` (for the store's arrays, or None for private memory);
``discounts_in_kernel`` (its solver applies the run's DCFR schedule, ``view.dcfr``, itself:
inside the traversal kernel with the iteration clock, before each batch otherwise; else the run
loop applies it at the merged iteration count); ``in_background`` (batches run while the loop
waits, so training time is wall time; otherwise it is the time spent running batches).

:class:`InProcessExecutor` runs batches in this process (``num_workers: 1``);
:class:`holdem.runtime.process.ProcessExecutor` on persistent worker processes; which one a
config asks for is :func:`holdem.runtime.backends.make_executor`'s choice.
"""

import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from holdem.solver.solver import DcfrSchedule, Solver
from holdem.store.store import RegretStore, StoreFull

IN_PROCESS_BATCH_SECONDS = 0.2


@dataclass(frozen=True)
class RunView:
    """What an executor sees of a run. The run loop makes one when the run is set up and passes
    it to ``prepare``, ``start``, ``summary`` and ``checkpoint_state``; the callables read the
    loop's state when called."""

    store: RegretStore              # the run's store (grows in place; the object stays)
    game: Any                       # the game (holdem.games)
    config: Any                     # the resolved holdem.config.Config
    dcfr: DcfrSchedule              # the run's DCFR schedule (its sweeps so far: ``steps``)
    rng_state: Optional[np.ndarray]     # the checkpointed RNG state to go on from (None: seed)
    iterations: Callable[[], int]       # iterations merged so far, cumulative over the run
    next_batch_id: Callable[[], int]    # the id the next batch will get
    train_seconds: Callable[[], float]  # training seconds in this invocation
    elapsed: Callable[[], float]        # training seconds over the whole run (resumes included)
    info: Callable[[str], None]         # a status line on stderr, unless the run is quiet


@dataclass(frozen=True)
class Batch:
    """Iterations ``t0 .. t0 + n - 1`` (global, cumulative over the run); ``elapsed`` is the
    run's training seconds when it was handed out (for wall-clock schedules)."""

    id: int
    t0: int
    n: int
    elapsed: float


@dataclass(frozen=True)
class BatchResult:
    iters: int
    utility_sum: float          # player 0's sampled values, summed over the batch
    visits: int                 # decision-node visits
    seconds: float              # time spent running it


class InProcessExecutor:
    """Runs each batch at once, in this process, on the run's store (bit-for-bit reproducible
    for a seed, also across a stop and resume). Batches are sized to take about 0.2 s."""

    num_workers = 1
    allocator = None
    discounts_in_kernel = True
    in_background = False

    def __init__(self, game, config):
        self.game = game
        self.config = config
        self.solver = None
        self._pending = None
        self._chunk = 1000

    def prepare(self, view):
        start = time.perf_counter()
        Solver(self.game, self.config).run(1)           # a throw-away solver: compiles
        seconds = time.perf_counter() - start
        self.solver = Solver(self.game, self.config, store=view.store, rng_state=view.rng_state,
                             iterations=view.iterations(), elapsed=view.elapsed(),
                             dcfr=view.dcfr)
        return seconds

    def start(self, view, stop):
        pass

    def capacity(self):
        return 0 if self._pending is not None else 1

    def next_batch_size(self):
        return self._chunk

    def submit(self, batch):
        if batch.t0 != self.solver.iterations:
            raise ValueError(f"in-process batches run in order: got t0={batch.t0}, the solver "
                             f"is at {self.solver.iterations}")
        self._pending = batch

    def results(self, timeout):
        batch, self._pending = self._pending, None
        if batch is None:
            return []
        solver = self.solver
        solver.elapsed = batch.elapsed
        visits = int(solver.workspace.visits[0])
        start = time.perf_counter()
        try:
            solver.run(batch.n)
        except StoreFull as exc:
            # The iterations the solver ran before the store had to grow are in the store:
            # the run counts them (its final checkpoint holds them and the solver's RNG state).
            ran = solver.iterations - batch.t0
            exc.results = [BatchResult(
                iters=ran, utility_sum=solver.last_utility_sum,
                visits=int(solver.workspace.visits[0]) - visits,
                seconds=time.perf_counter() - start)] if ran else []
            raise
        seconds = time.perf_counter() - start
        if seconds < IN_PROCESS_BATCH_SECONDS / 2:
            self._chunk = min(self._chunk * 2, 1 << 30)
        elif seconds > IN_PROCESS_BATCH_SECONDS * 2 and self._chunk > 1:
            self._chunk //= 2
        return [BatchResult(iters=batch.n, utility_sum=solver.last_utility_sum,
                            visits=int(solver.workspace.visits[0]) - visits, seconds=seconds)]

    def in_flight(self):
        return 0 if self._pending is None else 1

    def scalars(self):
        return {}

    def reset_window(self):
        pass

    def summary(self, view):
        return []

    def checkpoint_state(self, view):
        """(RNG states, schedule fields, other header fields) for a checkpoint."""
        return [self.solver.rng_state], {}, {}

    def close(self):
        pass
