"""Benchmark in-process MCCFR and the regret store's merge on one core.

Prints, one ``name: value unit`` per line:

- start-up, measured in fresh subprocesses: ``import`` of the solver and the first
  ``Solver.run(1)`` (JIT compile with an empty numba cache, then a cache load from that cache);
- iterations/s and decision-node visits/s (``Workspace.visits``) after warm-up;
- the exploitability of the average strategy after fixed iteration counts (one run, checked at
  each count) and after fixed wall-clock budgets (a second run; evaluation time not counted);
- the merge of a sparse delta of ``--merge-entries`` (infoset, action) entries into a store
  already holding ``--store-entries`` entries (``--actions`` per infoset; every delta key is
  already present, as for a long-running blueprint): the kernel
  ``holdem.store.kernels.merge_delta`` alone and ``RegretStore.merge`` (validation included).

    python tools/bench_mccfr.py --game leduc              # about 2 minutes
    python tools/bench_mccfr.py --quick                   # about 20 seconds
    python tools/bench_mccfr.py --game kuhn --sampling outcome --iters 1e6 --seconds 5
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import benchlib  # noqa: F401  (first: puts this checkout's holdem on sys.path)
from holdem.cli.common import iteration_count, positive_float
from holdem import registry

_STARTUP = """
import json, sys, time
start = time.perf_counter()
from holdem import config
from holdem.games import make_game
from holdem.solver import kernels
from holdem.solver.solver import Solver
imported = time.perf_counter()
game_name, sampling, weighting = sys.argv[1:4]
cfg = config.with_overrides(config.default_for_game(game_name),
                            solver={"sampling": sampling, "weighting": weighting})
Solver(make_game(game_name), cfg).run(1)
done = time.perf_counter()
stats = kernels.run_iterations.stats
print(json.dumps({"import": imported - start, "first_run": done - imported,
                  "cache_hits": sum(stats.cache_hits.values()),
                  "cache_misses": sum(stats.cache_misses.values())}))
"""


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--game", choices=registry.names_with_defaults(), default="leduc",
                        help="game to train (default: %(default)s)")
    parser.add_argument("--sampling", choices=("external", "outcome"), default="external",
                        help="MCCFR variant (default: %(default)s)")
    parser.add_argument("--weighting", choices=("none", "linear", "dcfr"), default=None,
                        help="iteration weighting (default: the game's config)")
    parser.add_argument("--iters", type=iteration_count, nargs="+", default=None,
                        help="iteration counts at which to report exploitability "
                             "(default: 1e5 1e6 1e7; --quick: 1e5 1e6)")
    parser.add_argument("--seconds", type=positive_float, nargs="+", default=None,
                        help="wall-clock budgets at which to report exploitability "
                             "(default: 10 60; --quick: 5)")
    parser.add_argument("--seed", type=int, default=0, help="training seed (default: 0)")
    parser.add_argument("--discount-interval", type=positive_float, default=None,
                        help="iterations per linear weight step, or per DCFR sweep "
                             "(default: the config's discount_interval / dcfr_interval)")
    parser.add_argument("--store-entries", type=iteration_count, default=None,
                        help="(infoset, action) entries in the store before the merge "
                             "(default: 1e7; --quick: 1e6)")
    parser.add_argument("--merge-entries", type=iteration_count, default=None,
                        help="(infoset, action) entries in the merged delta "
                             "(default: 1e6; --quick: 1e5)")
    parser.add_argument("--actions", type=int, default=3,
                        help="actions per infoset in the merge benchmark (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed merges; the best is reported (default: %(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="a ~20 s run: fewer iterations, one 5 s budget, a smaller merge")
    parser.add_argument("--skip", nargs="+", default=(),
                        choices=("startup", "iters", "seconds", "merge"),
                        help="sections to leave out")
    args = parser.parse_args(argv)
    if args.iters is None:
        args.iters = [100_000, 1_000_000] if args.quick else [100_000, 1_000_000, 10_000_000]
    if args.seconds is None:
        args.seconds = [5.0] if args.quick else [10.0, 60.0]
    if args.store_entries is None:
        args.store_entries = 1_000_000 if args.quick else 10_000_000
    if args.merge_entries is None:
        args.merge_entries = 100_000 if args.quick else 1_000_000
    args.iters = sorted(set(args.iters))
    args.seconds = sorted(set(args.seconds))
    return args


def pin_to_one_core():
    """Run on a single CPU (inherited by the start-up subprocesses); returns its number."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu


def report(name, value, unit=""):
    print(f"{name}: {value} {unit}".rstrip(), flush=True)


# -- start-up ------------------------------------------------------------------------------------

def bench_startup(args):
    """Import and first iteration in fresh interpreters: compile (empty cache), then cache load."""
    with tempfile.TemporaryDirectory(prefix="bench_mccfr_numba_") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        weighting = args.weighting or "none"   # the compiled kernels do not depend on it
        for label in ("empty numba cache", "warm numba cache"):
            out = subprocess.run(
                [sys.executable, "-c", _STARTUP, args.game, args.sampling, weighting],
                env=env, check=True, capture_output=True, text=True).stdout
            result = json.loads(out.strip().splitlines()[-1])
            source = "cache load" if result["cache_hits"] else "compile"
            report(f"startup ({label}) import", f"{result['import']:.2f}", "s")
            report(f"startup ({label}) first Solver.run(1) ({source})",
                   f"{result['first_run']:.2f}", "s")
            report(f"startup ({label}) total", f"{result['import'] + result['first_run']:.2f}",
                   "s")


# -- training ------------------------------------------------------------------------------------

def make_solver(args):
    from holdem import config
    from holdem.games import make_game
    from holdem.solver.solver import Solver

    game = make_game(args.game)
    interval_key = "dcfr_interval" if args.weighting == "dcfr" else "discount_interval"
    solver_cfg = {"sampling": args.sampling, "weighting": args.weighting,
                  interval_key: args.discount_interval}
    cfg = config.with_overrides(config.default_for_game(args.game), solver=solver_cfg,
                                train={"seed": args.seed})
    return game, cfg, Solver


def exploitability(metric, game, solver):
    return metric.measure(solver.store).value


def bench_iterations(args, game, cfg, solver_cls, evaluator):
    solver = solver_cls(game, cfg)
    train_seconds = 0.0
    for target in args.iters:
        start = time.perf_counter()
        solver.run(target - solver.iterations)
        train_seconds += time.perf_counter() - start
        report(f"exploitability after {target:,} iterations",
               f"{exploitability(evaluator, game, solver):.5f}",
               f"chips/game ({train_seconds:.2f} s of training)")
    visits = int(solver.workspace.visits[0])
    report("iterations/s", f"{solver.iterations / train_seconds:,.0f}",
           f"it/s ({solver.iterations:,} iterations in {train_seconds:.2f} s)")
    report("decision-node visits/s", f"{visits / train_seconds / 1e6:.2f}",
           f"M/s ({visits / solver.iterations:.1f} visits per iteration)")


def bench_seconds(args, game, cfg, solver_cls, evaluator):
    solver = solver_cls(game, cfg)
    chunk = 10_000
    train_seconds = 0.0
    for budget in args.seconds:
        while train_seconds < budget:
            start = time.perf_counter()
            solver.run(chunk)
            spent = time.perf_counter() - start
            train_seconds += spent
            # Aim for ~0.2 s per chunk, never far past the budget.
            rate = chunk / max(spent, 1e-6)
            chunk = int(max(1_000, min(rate * 0.2, rate * (budget - train_seconds) + 1)))
        report(f"exploitability after {budget:g} s",
               f"{exploitability(evaluator, game, solver):.5f}",
               f"chips/game ({solver.iterations:,} iterations in {train_seconds:.2f} s)")


# -- merge ---------------------------------------------------------------------------------------

def bench_merge(args):
    from holdem.store import kernels
    from holdem.store.store import RegretStore

    rng = np.random.default_rng(args.seed)
    na = args.actions
    num_rows = -(-args.store_entries // na)
    delta_rows = -(-args.merge_entries // na)
    if delta_rows > num_rows:
        raise SystemExit("--merge-entries must not exceed --store-entries")

    # Warm-up on a tiny store (same argument types: compiles or loads the kernels).
    tiny = RegretStore()
    tiny.merge(np.arange(3, dtype=np.int64), np.full(3, na, np.int8),
               np.zeros(3 * na, np.float32), np.zeros(3 * na))

    keys = np.unique(rng.integers(0, 1 << 40, size=num_rows + num_rows // 50 + 16))
    keys = rng.permutation(keys)[:num_rows]
    # Head-room for RegretStore.merge's conservative reserve (one new row per delta key), so
    # neither timing includes a resize.
    store = RegretStore(row_capacity=num_rows + delta_rows,
                        entry_capacity=(num_rows + delta_rows) * na)
    start = time.perf_counter()
    store.merge(keys, np.full(num_rows, na, np.int8),
                rng.standard_normal(num_rows * na).astype(np.float32),
                rng.random(num_rows * na))
    build = time.perf_counter() - start
    report("merge: store", f"{store.num_entries:,}",
           f"entries in {store.num_infosets:,} infosets "
           f"({store.nbytes / 2**20:,.0f} MiB allocated, built in {build:.2f} s)")

    delta_keys = keys[rng.choice(num_rows, size=delta_rows, replace=False)]
    delta_na = np.full(delta_rows, na, np.int8)
    regret_delta = rng.standard_normal(delta_rows * na).astype(np.float32)
    strategy_delta = rng.random(delta_rows * na)
    report("merge: delta", f"{delta_rows * na:,}",
           f"entries in {delta_rows:,} infosets (all present in the store)")

    def best_ms(fn):
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return 1e3 * min(times), 1e3 * float(np.median(times))

    before = store.arrays
    best, median = best_ms(lambda: kernels.merge_delta(
        store.arrays, delta_keys, delta_na, regret_delta, strategy_delta, -np.inf, 0, 0,
        kernels.merge_ring()))
    report("merge: kernels.merge_delta", f"{best:.1f}",
           f"ms (median {median:.1f} ms, best of {args.repeats}; "
           f"{delta_rows * na / best / 1e3:.1f} M entries/s)")
    best, median = best_ms(lambda: store.merge(delta_keys, delta_na, regret_delta,
                                               strategy_delta))
    report("merge: RegretStore.merge (with validation)", f"{best:.1f}",
           f"ms (median {median:.1f} ms, best of {args.repeats})")
    assert store.arrays is before and store.num_entries == num_rows * na   # no resize, no insert


def main(argv=None):
    args = parse_args(argv)
    cpu = pin_to_one_core()
    game, cfg, solver_cls = make_solver(args)
    interval = (cfg.solver.dcfr_interval if cfg.solver.weighting == "dcfr"
                else cfg.solver.discount_interval)
    report("benchmark", f"{args.game}, {cfg.solver.sampling} sampling, weighting "
           f"{cfg.solver.weighting} (discount interval {interval:g}), "
           f"seed {args.seed}" + ("" if cpu is None else f", pinned to CPU {cpu}"))
    if "startup" not in args.skip:
        bench_startup(args)

    if "iters" not in args.skip or "seconds" not in args.skip:
        from holdem.analysis import evaluation

        evaluator = evaluation.make("exploitability", game)
        start = time.perf_counter()
        warm = solver_cls(game, cfg)                   # JIT warm-up (cache load or compile)
        warm.run(1)
        warm.dcfr.apply(warm.store, 1)
        report("warm-up in this process", f"{time.perf_counter() - start:.2f}", "s")
        if "iters" not in args.skip:
            bench_iterations(args, game, cfg, solver_cls, evaluator)
        if "seconds" not in args.skip:
            bench_seconds(args, game, cfg, solver_cls, evaluator)

    if "merge" not in args.skip:
        bench_merge(args)


if __name__ == "__main__":
    main()
