"""Training runs: the loop around the solver that owns time budgets, checkpoints and logging.

:func:`train` is the Python API behind ``python -m holdem.cli.train_blueprint``. One run:

1. compile (or load from numba's cache) the kernels, timing it;
2. run iterations -- in this process (``num_workers: 1``) in chunks of about 0.2 s, or in
   persistent worker processes (:mod:`holdem.runtime.trainer`) -- until ``iters`` (the run's
   total) or ``time_budget`` (seconds of training in this invocation, start-up excluded) is
   reached, or SIGINT/SIGTERM arrives;
3. checkpoint every ``snapshot_interval`` seconds and once at the end, keeping the newest K;
4. report progress on stderr and, with ``tensorboard``, scalars under the logdir;
5. return a :class:`RunResult` (the CLI prints it as the ``done:`` line).

In-process with a fixed seed a run is bit-for-bit reproducible, also across a stop and resume,
provided the schedules count iterations (the default).
"""

import math
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from holdem import checkpoint as ckpt
from holdem import config as config_mod
from holdem.games import make_game
from holdem.metrics import Progress, TensorBoardWriter, WindowMean, format_bytes, log
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


# -- checkpoints ------------------------------------------------------------------------------
def run_header(game, config, store, iterations, elapsed, schedule, rng_states, extra=None):
    header = {
        "game": game.name,
        "abstraction": {"buckets_sha256": game.buckets_sha256,
                        "buckets_path": game.buckets_path},
        "config": config_mod.to_dict(config),
        "iterations": int(iterations),
        "elapsed": float(elapsed),
        "schedule": dict(schedule),
        "rng": [[int(x) for x in state] for state in rng_states],
        "stats": {"infosets": store.num_infosets, "entries": store.num_entries,
                  "store_bytes": store.nbytes},
    }
    header.update(extra or {})
    return header


def store_snapshot(store):
    """Copies of the used part of a store (taken quickly; written to disk afterwards)."""
    keys, num_actions, _, regrets, strategy_sum = store.used()
    return {"keys": keys.copy(), "num_actions": num_actions.copy(), "regrets": regrets.copy(),
            "strategy_sum": strategy_sum.copy()}


def save_solver(solver, path):
    return ckpt.save(path, _solver_header(solver), store_snapshot(solver.store))


def store_from_checkpoint(checkpoint, game=None, allocator=None):
    """Rebuild a :class:`RegretStore` from a checkpoint, checking it against ``game``."""
    arrays = checkpoint.arrays
    for name in ("keys", "num_actions", "regrets", "strategy_sum"):
        if name not in arrays:
            raise ckpt.CheckpointError(f"checkpoint {checkpoint.path}: arrays: missing {name!r}")
    keys, num_actions = arrays["keys"], arrays["num_actions"]
    if game is not None:
        if not game.keys_match(keys, num_actions):
            raise ckpt.CheckpointError(
                f"checkpoint {checkpoint.path}: keys: infosets do not belong to game "
                f"{game.name!r}")
    try:
        return RegretStore.from_arrays(keys, num_actions, arrays["regrets"],
                                       arrays["strategy_sum"], allocator=allocator)
    except ValueError as exc:
        raise ckpt.CheckpointError(f"checkpoint {checkpoint.path}: arrays: {exc}") from None


def check_resume_config(checkpoint, config, game=None):
    """The stored config, after checking that ``config`` (and its built ``game``) trains the
    same game with the same abstraction as the checkpoint."""
    where = f"checkpoint {checkpoint.path}"
    stored = config_mod.from_dict(checkpoint.header["config"], source=where)
    if config is None:
        return stored
    if config.game.name != stored.game.name:
        raise ckpt.CheckpointError(f"{where}: game: checkpoint is {stored.game.name!r}, the "
                                   f"run is configured for {config.game.name!r}")
    if stored.game.name == "nlhe":
        for section in ("game", "actions"):
            old, new = config_mod.to_dict(stored)[section], config_mod.to_dict(config)[section]
            for key in old:
                if key != "buckets" and old[key] != new[key]:
                    raise ckpt.CheckpointError(
                        f"{where}: {section}.{key}: checkpoint has {old[key]!r}, the run "
                        f"{new[key]!r}; a resumed run must keep its game and abstraction")
        stored_sha = checkpoint.header.get("abstraction", {}).get("buckets_sha256", "")
        if game is not None and stored_sha != game.buckets_sha256:
            raise ckpt.CheckpointError(
                f"{where}: abstraction.buckets_sha256: the checkpoint was trained with bucket "
                f"file {stored_sha[:12]}..., the run loads {game.buckets_path} "
                f"({game.buckets_sha256[:12]}...)")
    return stored


def solver_from_checkpoint(checkpoint, config=None):
    """A :class:`Solver` restored from a checkpoint (``config`` overrides the stored one; its
    game must match)."""
    header = checkpoint.header
    stored = check_resume_config(checkpoint, config)
    config = config or stored
    game = make_game(config)
    check_resume_config(checkpoint, config, game)
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


class CheckpointWriter:
    """Writes checkpoints in a background thread so training goes on while the file is written.

    The caller hands over a snapshot (copies), so the store may change meanwhile. At most one
    write is in flight; :meth:`wait` joins it and re-raises its error.
    """

    def __init__(self, directory, keep):
        self.directory = Path(directory)
        self.keep = keep
        self._thread = None
        self._error = None
        self.last_path = None
        self.last_seconds = 0.0

    def _write(self, path, header, arrays):
        start = time.perf_counter()
        try:
            ckpt.save(path, header, arrays)
            ckpt.prune(self.directory, self.keep)
            self.last_path = path
        except BaseException as exc:      # reported by wait()
            self._error = exc
        self.last_seconds = time.perf_counter() - start

    def submit(self, iterations, header, arrays, background=True):
        self.wait()
        path = self.directory / ckpt.checkpoint_name(iterations)
        if background:
            self._thread = threading.Thread(target=self._write, args=(path, header, arrays),
                                            name="holdem-checkpoint", daemon=False)
            self._thread.start()
        else:
            self._write(path, header, arrays)
            self.wait()
        return path

    def wait(self):
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            err, self._error = self._error, None
            raise err


# -- monitoring -------------------------------------------------------------------------------
class RunMonitor:
    """Progress line, TensorBoard scalars and periodic exact evaluation for one run."""

    def __init__(self, config, logdir, game, progress=True):
        tc = config.train
        self.config = config
        self.game = game
        self.progress = Progress(tc.progress_interval, total_iters=tc.iters,
                                 time_budget=tc.time_budget, enabled=progress)
        self.tb = TensorBoardWriter(logdir) if tc.tensorboard else None
        self.utility = WindowMean(tc.utility_window)
        self._last_log = time.monotonic()
        self._last_eval = time.monotonic()
        self._last_baseline = time.monotonic()
        self._last_iters = None
        self._evaluator = None
        self._bot_tables = None
        if self.tb is not None:
            self.tb.text("config", "```\n" + config_mod.dump_yaml(config) + "```")
            self.tb.flush()

    def _exploitability(self, store):
        if self.game.name not in ("kuhn", "leduc"):
            return None
        from holdem.analysis.exact import ExactEvaluator
        from holdem.analysis.strategy import average_profile

        if self._evaluator is None:
            self._evaluator = ExactEvaluator(self.game)
        profile, _ = average_profile(self.game, store.used())
        return self._evaluator.exploitability(profile)

    def _baseline_match(self, store, baseline, iterations):
        """Head-to-head of the current average strategy against a baseline bot (NLHE)."""
        from holdem.analysis.headtohead import bot_tables, play_match

        if self._bot_tables is None and not self.game.is_multiway:
            self._bot_tables = bot_tables(self.game)      # heads-up: per-node bot moves
        start = time.perf_counter()
        result = play_match(self.game, store.arrays, baseline, hands=self.config.train.eval_hands,
                            seed=int(iterations), tables=self._bot_tables)
        log(f"eval vs {baseline}: {result.line()} [{time.perf_counter() - start:.1f} s]")
        return {f"eval/mbb_vs_{baseline}": result.mbb_per_hand,
                f"eval/mbb_vs_{baseline}_ci95": result.ci95}

    def scalars_due(self, force=False):
        """Whether the next :meth:`tick` writes TensorBoard scalars."""
        return self.tb is not None and (
            force or time.monotonic() - self._last_log >= self.config.train.log_interval)

    def tick(self, iterations, train_seconds, store, extra=None, force=False):
        """Report if an interval passed. ``extra``: more scalars (e.g. merge_ms)."""
        self.progress.update(iterations, train_seconds, store.num_infosets, store.nbytes,
                             force=force)
        if not self.scalars_due(force):
            return
        now = time.monotonic()
        if self._last_iters is None:
            rate = iterations / train_seconds if train_seconds > 0 else 0.0
        else:
            rate = (iterations - self._last_iters[0]) / max(1e-9, now - self._last_iters[1])
        self._last_iters = (iterations, now)
        self._last_log = now
        values = {"train/iters_per_sec": rate, "train/iterations": iterations,
                  "train/infosets": store.num_infosets, "train/store_bytes": store.nbytes,
                  "train/utility_mean": self.utility.mean()}
        values.update(extra or {})
        if force or now - self._last_eval >= self.config.train.eval_interval:
            self._last_eval = now
            expl = self._exploitability(store)
            if expl is not None:
                values["eval/exploitability"] = expl
        baseline = self.config.train.eval_baseline
        if (baseline and self.game.name == "nlhe"
                and (force or now - self._last_baseline >= self.config.train.eval_baseline_interval)):
            self._last_baseline = now
            values.update(self._baseline_match(store, baseline, iterations))
        self.tb.scalars(iterations, {k: v for k, v in values.items()
                                     if v is not None and math.isfinite(v)})
        self.tb.flush()

    def close(self):
        self.progress.close()
        if self.tb is not None:
            self.tb.close()


class StopFlag:
    """Turns SIGINT/SIGTERM into a flag the loops check between chunks or batches."""

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


def memory_limit_bytes(config):
    gb = config.train.max_memory_gb
    return None if gb is None else int(gb * (1 << 30))


# -- the runs ---------------------------------------------------------------------------------
def warm_up(game, config):
    """Compile or load the in-process kernels on a throw-away solver; return the seconds."""
    start = time.perf_counter()
    Solver(game, config).run(1)
    return time.perf_counter() - start


def _validate_stop(config):
    tc = config.train
    if tc.iters is None and tc.time_budget is None:
        raise config_mod.ConfigError("set train.iters (--iters) or train.time_budget "
                                     "(--time-budget): the run needs a stopping point")


def resolved_workers(config):
    n = config.train.num_workers
    return os.cpu_count() or 1 if n == 0 else n


def train(config, logdir, resume_from=None, progress=True):
    """Train according to ``config`` (a :class:`holdem.config.Config`); return a RunResult.

    ``config.train.iters`` is the run's total iteration count, ``config.train.time_budget`` the
    seconds of training in this call; at least one must be set. ``num_workers`` 1 trains in this
    process, 0 starts one worker process per core, N starts N.
    """
    _validate_stop(config)
    if resolved_workers(config) > 1:
        from holdem.runtime.trainer import train_parallel

        return train_parallel(config, logdir, resume_from=resume_from, progress=progress)
    return _train_in_process(config, logdir, resume_from, progress)


def _train_in_process(config, logdir, resume_from, progress):
    tc = config.train
    directory = ckpt.checkpoint_dir(logdir)
    directory.mkdir(parents=True, exist_ok=True)
    if resume_from is not None:
        checkpoint = ckpt.load(ckpt.resolve(resume_from))
        solver = solver_from_checkpoint(checkpoint, config)
        log(f"resuming from {checkpoint.path} at iteration {solver.iterations:,}")
    else:
        solver = Solver(make_game(config), config)
    compile_seconds = warm_up(solver.game, config)
    log(f"kernels ready in {compile_seconds:.2f} s (numba compile or cache load)")
    monitor = RunMonitor(config, logdir, solver.game, progress)
    writer = CheckpointWriter(directory, tc.keep_checkpoints)
    limit = memory_limit_bytes(config)
    start_iters, start_elapsed = solver.iterations, solver.elapsed
    chunk, train_seconds = 1000, 0.0
    last_snapshot = time.monotonic()
    reason = "done"
    try:
        with StopFlag() as stop:
            while True:
                if stop.signal is not None:
                    reason = signal.Signals(stop.signal).name
                    break
                if tc.iters is not None and solver.iterations >= tc.iters:
                    break
                if tc.time_budget is not None and train_seconds >= tc.time_budget:
                    break
                if limit is not None and solver.store.nbytes >= limit:
                    log(f"store reached {format_bytes(solver.store.nbytes)} "
                        f"(--max-memory {tc.max_memory_gb} GB): checkpointing and stopping")
                    reason = "max_memory"
                    break
                n = chunk
                if tc.iters is not None:
                    n = min(n, tc.iters - solver.iterations)
                if tc.time_budget is not None and solver.iterations > start_iters:
                    rate = (solver.iterations - start_iters) / max(train_seconds, 1e-9)
                    n = max(1, min(n, int(math.ceil((tc.time_budget - train_seconds) * rate))))
                t0 = time.perf_counter()
                before = solver.utility.count
                solver.run(n)
                dt = time.perf_counter() - t0
                train_seconds += dt
                solver.elapsed = start_elapsed + train_seconds
                monitor.utility.add(solver.last_utility_sum, solver.utility.count - before)
                if dt < _CHUNK_SECONDS / 2:
                    chunk = min(chunk * 2, 1 << 30)
                elif dt > _CHUNK_SECONDS * 2 and chunk > 1:
                    chunk //= 2
                monitor.tick(solver.iterations, train_seconds, solver.store)
                if time.monotonic() - last_snapshot >= tc.snapshot_interval:
                    writer.submit(solver.iterations, _solver_header(solver),
                                  store_snapshot(solver.store))
                    last_snapshot = time.monotonic()
            monitor.tick(solver.iterations, train_seconds, solver.store, force=True)
            path = writer.submit(solver.iterations, _solver_header(solver),
                                 store_snapshot(solver.store), background=False)
    finally:
        monitor.close()
        writer.wait()
    ran = solver.iterations - start_iters
    if train_seconds > 0:
        visits = int(solver.workspace.visits[0])
        log(f"decision-node visits: {visits / train_seconds:,.0f}/s ({visits / max(ran, 1):.1f} "
            f"per iteration); store {format_bytes(solver.store.nbytes)} for "
            f"{solver.store.num_infosets:,} infosets")
    return RunResult.finish(solver.iterations, ran, train_seconds, solver.store.num_infosets,
                            path, compile_seconds, reason)


def _solver_header(solver):
    return run_header(solver.game, solver.config, solver.store, solver.iterations,
                      solver.elapsed, {"dcfr_steps": int(solver.dcfr.steps)}, [solver.rng_state])
