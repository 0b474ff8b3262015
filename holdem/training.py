"""Training runs: the loop around the solver that owns time budgets, checkpoints and progress.

:func:`train` is the Python API behind ``python -m holdem.cli.train_blueprint``. One run:

1. compile (or load from numba's cache) the kernels on a throw-away solver, timing it;
2. run iterations in chunks of about 0.2 s until ``iters`` (the run's total) or ``time_budget``
   (seconds of training in this invocation, start-up excluded) is reached, or SIGINT/SIGTERM;
3. checkpoint every ``snapshot_interval`` seconds and once at the end (keeping the newest K);
4. return a :class:`RunResult` (the CLI prints it as the ``done:`` line).

In-process with a fixed seed a run is bit-for-bit reproducible, also across a stop and resume,
provided the schedules count iterations (the default).
"""

import math
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from holdem import checkpoint as ckpt
from holdem import config as config_mod
from holdem.games import make_game
from holdem.metrics import Progress, log
from holdem.solver.solver import Solver
from holdem.store.store import RegretStore

_CHUNK_SECONDS = 0.2


@dataclass
class RunResult:
    iterations: int            # cumulative over the run (including resumed iterations)
    elapsed: float             # training seconds in this invocation
    iters_per_sec: float       # for this invocation
    infosets: int
    checkpoint: Path
    compile_seconds: float

    def done_line(self):
        return (f"done: iterations={self.iterations} elapsed={self.elapsed:.3f} "
                f"it/s={self.iters_per_sec:.1f} infosets={self.infosets} "
                f"checkpoint={Path(self.checkpoint).resolve()}")


def solver_header(solver):
    return {
        "game": solver.game.name,
        "config": config_mod.to_dict(solver.config),
        "iterations": int(solver.iterations),
        "elapsed": float(solver.elapsed),
        "schedule": {"dcfr_steps": int(solver.dcfr.steps)},
        "rng": [[int(x) for x in solver.rng_state]],
        "stats": {"infosets": solver.store.num_infosets, "entries": solver.store.num_entries,
                  "store_bytes": solver.store.nbytes},
    }


def save_solver(solver, path):
    keys, num_actions, _, regrets, strategy_sum = solver.store.used()
    return ckpt.save(path, solver_header(solver), {
        "keys": keys, "num_actions": num_actions, "regrets": regrets,
        "strategy_sum": strategy_sum})


def store_from_checkpoint(checkpoint, game=None):
    """Rebuild a :class:`RegretStore` from a checkpoint, checking it against ``game``."""
    arrays = checkpoint.arrays
    for name in ("keys", "num_actions", "regrets", "strategy_sum"):
        if name not in arrays:
            raise ckpt.CheckpointError(f"checkpoint {checkpoint.path}: arrays: missing {name!r}")
    keys, num_actions = arrays["keys"], arrays["num_actions"]
    if game is not None:
        expected = game.num_actions_of_keys(keys)
        if keys.shape != num_actions.shape or np.any(expected != num_actions):
            raise ckpt.CheckpointError(
                f"checkpoint {checkpoint.path}: keys: infosets do not belong to game "
                f"{game.name!r}")
    try:
        return RegretStore.from_arrays(keys, num_actions, arrays["regrets"],
                                       arrays["strategy_sum"])
    except ValueError as exc:
        raise ckpt.CheckpointError(f"checkpoint {checkpoint.path}: arrays: {exc}") from None


def solver_from_checkpoint(checkpoint, config=None):
    """A :class:`Solver` restored from a checkpoint (``config`` overrides the stored one; its
    game must match)."""
    header = checkpoint.header
    stored = config_mod.from_dict(header["config"], source=f"checkpoint {checkpoint.path}")
    if config is None:
        config = stored
    if config.game != stored.game:
        raise ckpt.CheckpointError(
            f"checkpoint {checkpoint.path}: game: checkpoint is {stored.game.name!r}, the run "
            f"is configured for {config.game.name!r}")
    game = make_game(config.game.name)
    store = store_from_checkpoint(checkpoint, game)
    try:
        rng_state = np.array(header["rng"][0], dtype=np.uint64)
        steps = int(header.get("schedule", {}).get("dcfr_steps", 0))
    except (KeyError, IndexError, TypeError, ValueError, OverflowError):
        raise ckpt.CheckpointError(f"checkpoint {checkpoint.path}: rng: malformed") from None
    if rng_state.shape != (4,):
        raise ckpt.CheckpointError(f"checkpoint {checkpoint.path}: rng: malformed")
    return Solver(game, config, store=store, rng_state=rng_state,
                  iterations=header["iterations"], elapsed=float(header.get("elapsed", 0.0)),
                  dcfr_steps=steps)


class _StopFlag:
    """Turns SIGINT/SIGTERM into a flag the loop checks between chunks."""

    def __init__(self):
        self.signal = None
        self._old = {}

    def __enter__(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._old[sig] = signal.signal(sig, self._handle)
            except ValueError:          # not in the main thread: no handlers
                pass
        return self

    def _handle(self, signum, frame):
        if self.signal is not None:     # a second Ctrl-C: stop now
            raise KeyboardInterrupt
        self.signal = signum
        log(f"received {signal.Signals(signum).name}: writing a final checkpoint, then stopping")

    def __exit__(self, *exc):
        for sig, old in self._old.items():
            signal.signal(sig, old)


def warm_up(game, config):
    """Compile or load the kernels on a throw-away solver; return the seconds it took."""
    start = time.perf_counter()
    Solver(game, config).run(1)
    return time.perf_counter() - start


def train(config, logdir, resume_from=None, progress=True):
    """Train in-process according to ``config`` (a :class:`holdem.config.Config`).

    Returns a :class:`RunResult`. ``config.train.iters`` is the run's total iteration count,
    ``config.train.time_budget`` the seconds of training in this call; at least one of them must
    be set.
    """
    tc = config.train
    if tc.iters is None and tc.time_budget is None:
        raise config_mod.ConfigError("set train.iters (--iters) or train.time_budget "
                                     "(--time-budget): the run needs a stopping point")
    if tc.num_workers != 1:
        raise config_mod.ConfigError(
            f"train.num_workers={tc.num_workers}: only in-process training (1) is available "
            "in this version")
    logdir = Path(logdir)
    directory = ckpt.checkpoint_dir(logdir)
    directory.mkdir(parents=True, exist_ok=True)
    if resume_from is not None:
        checkpoint = ckpt.load(ckpt.resolve(resume_from))
        solver = solver_from_checkpoint(checkpoint, config)
        log(f"resuming from {checkpoint.path} at iteration {solver.iterations:,}")
    else:
        solver = Solver(make_game(config.game.name), config)
    compile_seconds = warm_up(solver.game, config)
    log(f"kernels ready in {compile_seconds:.2f} s (numba compile or cache load)")

    bar = Progress(tc.progress_interval, total_iters=tc.iters, time_budget=tc.time_budget,
                   enabled=progress)
    start_iters = solver.iterations
    start_elapsed = solver.elapsed
    chunk = 1000
    last_snapshot = time.monotonic()
    path = None
    train_seconds = 0.0
    with _StopFlag() as stop:
        while stop.signal is None:
            if tc.iters is not None and solver.iterations >= tc.iters:
                break
            if tc.time_budget is not None and train_seconds >= tc.time_budget:
                break
            n = chunk
            if tc.iters is not None:
                n = min(n, tc.iters - solver.iterations)
            if tc.time_budget is not None and solver.iterations > start_iters:
                rate = (solver.iterations - start_iters) / max(train_seconds, 1e-9)
                n = max(1, min(n, int(math.ceil((tc.time_budget - train_seconds) * rate))))
            t0 = time.perf_counter()
            solver.run(n)
            dt = time.perf_counter() - t0
            train_seconds += dt
            solver.elapsed = start_elapsed + train_seconds
            if dt < _CHUNK_SECONDS / 2:
                chunk = min(chunk * 2, 1 << 30)
            elif dt > _CHUNK_SECONDS * 2 and chunk > 1:
                chunk //= 2
            bar.update(solver.iterations, train_seconds, solver.store.num_infosets,
                       solver.store.nbytes)
            if time.monotonic() - last_snapshot >= tc.snapshot_interval:
                path = save_solver(solver, directory / ckpt.checkpoint_name(solver.iterations))
                ckpt.prune(directory, tc.keep_checkpoints)
                last_snapshot = time.monotonic()
        bar.update(solver.iterations, train_seconds, solver.store.num_infosets,
                   solver.store.nbytes, force=True)
        bar.close()
        final = directory / ckpt.checkpoint_name(solver.iterations)
        if path is None or Path(path) != final:
            path = save_solver(solver, final)
        ckpt.prune(directory, tc.keep_checkpoints)
    ran = solver.iterations - start_iters
    return RunResult(iterations=solver.iterations, elapsed=train_seconds,
                     iters_per_sec=ran / train_seconds if train_seconds > 0 else 0.0,
                     infosets=solver.store.num_infosets, checkpoint=Path(path).resolve(),
                     compile_seconds=compile_seconds)
