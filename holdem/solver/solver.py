"""The in-process solver: owns a game, a regret store, the RNG state and the schedules.

:meth:`Solver.run` runs iterations in batches through :func:`holdem.solver.kernels.run_iterations`;
between calls it grows the store, applies DCFR discount sweeps at interval boundaries and sums
player 0's sampled utility over the call. The parallel runtime uses the same kernels with
a read store and a per-worker delta buffer.
"""

import functools
import math

import numpy as np

from holdem import checkpoint as ckpt
from holdem import rng
from holdem.solver import kernels
from holdem.store.store import RegretStore

NEVER = np.iinfo(np.int64).max


def make_params(solver_cfg, num_streets, is_delta=False, elapsed=0.0, own_weight=1.0,
                iterations=0):
    """Kernel parameters from a :class:`holdem.config.SolverConfig`.

    With ``schedule_clock: seconds`` the weight and the pruning switch are fixed for a batch from
    the run's cumulative training time ``elapsed``. ``iterations``: the run's iterations before
    the batch (``solver.opponent_exploration`` ends at ``opponent_exploration_stop``).
    """
    by_time = solver_cfg.schedule_clock == "seconds"
    stop = solver_cfg.discount_stop
    mode, interval, stop_i, fixed = kernels.WEIGHT_CONSTANT, 1, NEVER, 1.0
    if solver_cfg.weighting == "linear":
        if by_time:
            t = elapsed if stop is None else min(elapsed, stop)
            fixed = float(math.floor(t / solver_cfg.discount_interval) + 1)
        else:
            mode = kernels.WEIGHT_STEPPED
            interval = max(1, int(solver_cfg.discount_interval))
            stop_i = NEVER if stop is None else int(stop)
    prune_start = NEVER
    if solver_cfg.prune:
        if by_time:
            prune_start = 0 if elapsed >= solver_cfg.prune_after else NEVER
        else:
            prune_start = int(solver_cfg.prune_after)
    floor = kernels.NO_FLOOR if solver_cfg.regret_floor is None else float(solver_cfg.regret_floor)
    avg_max = num_streets - 1 if solver_cfg.average_max_street is None else int(
        solver_cfg.average_max_street)
    in_kernel_dcfr = solver_cfg.weighting == "dcfr" and not by_time
    return kernels.Params(
        sampling=kernels.SAMPLING_EXTERNAL if solver_cfg.sampling == "external"
        else kernels.SAMPLING_OUTCOME,
        exploration=float(solver_cfg.exploration),
        opp_exploration=float(solver_cfg.opponent_exploration)
        if solver_cfg.opponent_exploration_stop is None
        or iterations < solver_cfg.opponent_exploration_stop else 0.0,
        weight_mode=mode, weight_interval=np.int64(interval), weight_stop=np.int64(stop_i),
        fixed_weight=fixed, regret_floor=floor, prune_start=np.int64(prune_start),
        prune_prob=float(solver_cfg.prune_prob), prune_threshold=float(solver_cfg.prune_threshold),
        avg_max_street=np.int64(avg_max),
        strategy_interval=np.int64(solver_cfg.strategy_interval), is_delta=bool(is_delta),
        own_weight=float(own_weight),
        dcfr_interval=np.int64(max(1, int(solver_cfg.dcfr_interval)) if in_kernel_dcfr else 0),
        dcfr_stop=np.int64(NEVER if stop is None else int(stop)),
        dcfr_alpha=float(solver_cfg.dcfr_alpha), dcfr_beta=float(solver_cfg.dcfr_beta),
        dcfr_gamma=float(solver_cfg.dcfr_gamma),
    )


def regret_floor_at(solver_cfg, num_streets, iterations, elapsed):
    """The regret floor in force at iteration ``iterations`` (cumulative over the run) and
    ``elapsed`` training seconds, in the units of the store's regrets: ``solver.regret_floor``
    times the iteration's weight, as the traversal kernels scale :func:`make_params`'s floor
    in-process; None without a floor. Worker deltas are clamped at it when merged."""
    if solver_cfg.regret_floor is None:
        return None
    if solver_cfg.schedule_clock == "seconds":
        params = make_params(solver_cfg, num_streets, elapsed=elapsed)
    else:       # the same Params at every pass (making them cost a pass ~15 us)
        params = _params_of(solver_cfg, num_streets)
    return params.regret_floor * iteration_weight(params, iterations)


@functools.lru_cache(maxsize=8)
def _params_of(solver_cfg, num_streets):
    """:func:`make_params` of an iteration-clocked schedule, which ``elapsed`` does not move."""
    return make_params(solver_cfg, num_streets)


def iteration_weight(params, t):
    """:func:`holdem.solver.kernels.iteration_weight` in Python (the main process asks once a
    merge pass; calling the kernel from Python cost a dispatch of the whole ``Params``)."""
    if params.weight_mode == kernels.WEIGHT_STEPPED:
        s = min(int(t), int(params.weight_stop))
        return float(s // int(params.weight_interval) + 1)
    return float(params.fixed_weight)


def sweep_boundary(solver_cfg, t):
    """The first iteration after ``t`` before which the run applies a DCFR discount sweep
    (:class:`DcfrSchedule`: sweep k before iteration k * dcfr_interval), or None where none
    comes at an iteration (other weightings, the seconds clock, past ``discount_stop``). A
    worker sends the strategy updates it holds before the run crosses one, so that a sweep
    discounts them as it would have in-process (:class:`holdem.delta.split.HeldStrategy`)."""
    if solver_cfg.weighting != "dcfr" or solver_cfg.schedule_clock != "iterations":
        return None
    interval = max(1, int(solver_cfg.dcfr_interval))
    boundary = (int(t) // interval + 1) * interval
    stop = solver_cfg.discount_stop
    return None if stop is not None and boundary > stop else boundary


def strategy_discount(gamma, before, after):
    """What DCFR sweeps ``before + 1`` .. ``after`` together multiply strategy sums by: sweep k
    multiplies them by (k / (k + 1)) ** gamma, so these by ((before + 1) / (after + 1)) **
    gamma (numpy arrays or numbers)."""
    return ((before + 1.0) / (after + 1.0)) ** gamma


class DcfrSchedule:
    """The one owner of DCFR discount sweeps (Brown and Sandholm 2019): it decides when a sweep
    is due and applies it wherever a store trains -- an in-process :class:`Solver` before each
    kernel call, a run loop that merges worker deltas (workers never discount), and a store
    replica replaying the main store's sweeps (:meth:`replay`).

    With the iteration clock an in-process solver's kernel sweeps by itself
    (:func:`holdem.solver.kernels.run_iterations`, before iteration k * dcfr_interval, the rule
    :meth:`due` follows) without counting in ``steps``: a schedule made with
    ``kernel_handles_iterations`` then owes nothing, and one that continues such a run counts
    the kernel's sweeps (:meth:`resume`)."""

    def __init__(self, solver_cfg, kernel_handles_iterations=False, steps=0):
        self.cfg = solver_cfg
        self.kernel_handles_iterations = bool(kernel_handles_iterations)
        self.enabled = solver_cfg.weighting == "dcfr" and not (
            kernel_handles_iterations and solver_cfg.schedule_clock == "iterations")
        self.steps = int(steps)             # discount sweeps applied so far

    def due(self, iterations, elapsed):
        """Number of sweeps owed before running iteration ``iterations`` (0-based)."""
        if not self.enabled:
            return 0
        clock = elapsed if self.cfg.schedule_clock == "seconds" else iterations
        if self.cfg.discount_stop is not None:
            clock = min(clock, self.cfg.discount_stop)
        return max(0, int(clock // self.cfg.dcfr_interval) - self.steps)

    def catch_up(self, store, iterations, elapsed):
        """Apply the sweeps owed before iteration ``iterations`` (0-based) at ``elapsed``
        training seconds; returns how many."""
        owed = self.due(iterations, elapsed)
        if owed:
            self.apply(store, owed)
        return owed

    def resume(self, steps, iterations):
        """Continue a run that stopped at ``iterations`` with ``steps`` sweeps counted. A
        schedule the kernel does not serve (a run loop fed by workers) also counts the sweeps a
        kernel applied, which an in-process checkpoint's ``steps`` leaves out; a run loop's own
        checkpoint at an exact multiple k * dcfr_interval already holds sweep k (the loop
        sweeps on reaching it, the kernel just before running it), so the larger count wins
        and no sweep is applied twice.

        Not handled: an in-process run resuming a run loop's checkpoint taken at an exact
        multiple applies that sweep again (the kernel sweeps before iteration k * interval
        whatever the count)."""
        self.steps = int(steps)
        if not self.kernel_handles_iterations:
            self.sync_to(iterations)
            self.steps = max(self.steps, int(steps))

    def replay(self, store, step):
        """Apply sweep number ``step`` (from 1), as the store it copies had it."""
        self.steps = int(step) - 1
        self.apply(store, 1)

    def sync_to(self, iterations):
        """With the iteration clock: mark the sweeps the kernel applied before ``iterations``
        (sweep k runs before iteration k * dcfr_interval, so one at exactly ``iterations`` is
        still owed)."""
        if self.cfg.weighting == "dcfr" and self.cfg.schedule_clock == "iterations":
            last = iterations - 1
            if self.cfg.discount_stop is not None:
                last = min(last, int(self.cfg.discount_stop))
            self.steps = max(0, last) // int(max(1, self.cfg.dcfr_interval))

    def strategy_scales(self, sweeps):
        """What the sweeps this schedule applied after ``sweeps`` (int64[records]: the sweeps
        applied when each worker record's strategy updates were made; -1: not known) would
        have multiplied those updates by, had they been in the store then: float64[records].
        Sweeps s + 1 .. S together multiply strategy sums by
        :func:`strategy_discount` (s, S). A worker holds strategy updates back for a
        while (:class:`holdem.delta.split.HeldStrategy`); scaled so, they count as they would
        have in-process."""
        sweeps = np.asarray(sweeps, np.int64)
        out = np.ones(sweeps.shape[0])
        if self.cfg.weighting != "dcfr" or not sweeps.size or sweeps.min() >= self.steps:
            return out              # nothing made before a sweep (a merge pass's usual case)
        late = (sweeps >= 0) & (sweeps < self.steps)
        if late.any():
            out[late] = strategy_discount(self.cfg.dcfr_gamma, sweeps[late], self.steps)
        return out

    def apply(self, store, count):
        cfg = self.cfg
        for _ in range(count):
            self.steps += 1
            kernels.discount_step(store.arrays, np.int64(self.steps), cfg.dcfr_alpha,
                                  cfg.dcfr_beta, cfg.dcfr_gamma)


def make_workspace(game):
    """Scratch arrays of the traversal kernels for ``game``."""
    return kernels.make_workspace(**game.workspace_shape())


def run_kernel(game, read, write, params, workspace, state, t0, n, utility_out):
    """Run up to ``n`` iterations of ``game`` from global iteration ``t0``; returns how many ran
    (fewer when ``write`` needs to grow)."""
    return int(kernels.run_iterations(
        game.kernel, game.deal, read, write, params, workspace, state, np.int64(t0),
        np.int64(n), np.int64(game.max_new_rows), np.int64(game.max_new_entries), utility_out))


class Solver:
    """Single-process MCCFR over one game and one store."""

    def __init__(self, game, config, store=None, rng_state=None, iterations=0, elapsed=0.0,
                 dcfr_steps=0, dcfr=None):
        self.game = game
        self.config = config
        self.store = store if store is not None else RegretStore(
            row_capacity=game.initial_rows)
        self.rng_state = (rng.make_states(config.train.seed, 1)[0] if rng_state is None
                          else np.array(rng_state, dtype=np.uint64))
        self.iterations = int(iterations)
        self.elapsed = float(elapsed)
        if dcfr is None:            # ``dcfr``: a run loop's schedule, shared with it
            dcfr = DcfrSchedule(config.solver, kernel_handles_iterations=True, steps=dcfr_steps)
        self.dcfr = dcfr
        self.workspace = make_workspace(game)
        self._utility_out = np.zeros(1, dtype=np.float64)
        self.last_utility_sum = 0.0      # player 0's sampled values summed over the last run()

    def params(self):
        return make_params(self.config.solver, self.game.num_streets, elapsed=self.elapsed,
                           iterations=self.iterations)

    def run(self, n):
        """Run ``n`` iterations; return how many ran (always ``n``). When the store cannot grow
        (:class:`holdem.store.store.StoreFull`) the iterations run before it are in the store
        and counted (``iterations``, ``last_utility_sum``), and the error is raised."""
        n = int(n)
        done = 0
        game = self.game
        store = self.store
        if self._utility_out.shape[0] < n:
            self._utility_out = np.zeros(n, dtype=np.float64)
        try:
            while done < n:
                self.dcfr.catch_up(store, self.iterations, self.elapsed)
                todo = n - done
                store.reserve(game.max_new_rows, game.max_new_entries)
                ran = run_kernel(game, store.arrays, store.arrays, self.params(),
                                 self.workspace, self.rng_state, self.iterations, todo,
                                 self._utility_out[done:])
                self.iterations += int(ran)
                done += int(ran)
        finally:
            self.last_utility_sum = float(self._utility_out[:done].sum())
        return done


def solver_header(solver, extra=None):
    """The checkpoint header of an in-process solver's state."""
    return ckpt.run_header(solver.game, solver.config, solver.store, solver.iterations,
                           solver.elapsed, {"dcfr_steps": int(solver.dcfr.steps)},
                           [solver.rng_state], extra)


def save_solver(solver, path):
    """Write ``solver``'s store and state as a checkpoint file."""
    return ckpt.save(path, solver_header(solver), ckpt.store_snapshot(solver.store))
