"""What W workers' iterations are worth: training at equal iterations, in-process against W
simulated workers.

The simulated workers are :class:`holdem.runtime.lagged.LaggedExecutor`: the exact order of
reads and merges of W workers, run on one core on a modelled clock
(:mod:`holdem.runtime.lag_model`) and deterministic for a seed, so the figure does not depend on
this machine's core count or load. For each W in
``--workers`` (0 = in-process) it trains ``--iters`` iterations and prints, for Kuhn and Leduc,
the exact exploitability and its ratio to the in-process one; for No-Limit Hold'em, the W-worker
blueprint's head-to-head result against the in-process one (``--hands`` duplicate hands, mbb/hand
with a 95% interval; 0 or above is what parallel training should give).

Flush size (paced as the process executor paces it), batch sizing and own-delta weight are the
process executor's defaults unless given. When a flush is merged comes from the model -- a main
process that wakes for records and merges them in passes whose length follows from their size,
on a machine with a core per process unless ``--cores`` says fewer -- and each run's line gives
the modelled flush-to-merge delay; ``--merge-delay`` instead merges every flush that many
iterations later (a main process that always keeps up at that delay). Each worker's unmerged
iterations are capped as the process executor caps them (``train.max_unmerged_iters``) unless
``--no-cap``.

    python tools/bench_convergence.py --game leduc --iters 3000000 --workers 2,4,8,15
    python tools/bench_convergence.py --game leduc --workers 15 --merge-delay 1000
    python tools/bench_convergence.py --game leduc --own-delta-weight 0      # weight W
    python tools/bench_convergence.py --config configs/hunl_default.yaml --iters 2000000 \\
        --workers 4,8,15,32 --hands 1000000
"""

import tempfile
import time
from pathlib import Path

import benchlib  # first: puts this checkout's holdem on sys.path
from benchlib import log

from holdem import config as config_mod
from holdem.analysis import evaluation
from holdem.analysis.blueprint import Blueprint, load_checkpoint_store
from holdem.cli.common import iteration_count, non_negative_int, positive_float
from holdem.games import make_game
from holdem.runtime.flush import flush_iterations, flush_text
from holdem.runtime.lag_model import SIXTEEN_CORE_MAIN_FACTOR, costs_for
from holdem.runtime.lagged import LaggedExecutor
from holdem.training import train


def build_parser():
    p = benchlib.parser(__doc__, "small game with the defaults of configs/GAME.yaml "
                                 "(default leduc)")
    p.add_argument("--iters", type=iteration_count, default=3_000_000,
                   help="iterations of every run (default 3,000,000)")
    p.add_argument("--workers", default="2,4,8,15",
                   help="simulated worker counts, comma-separated (default 2,4,8,15)")
    p.add_argument("--batch-size", type=iteration_count, metavar="N",
                   help="iterations per batch (default: as the process executor sizes them, "
                        "from this machine's one-core rate)")
    p.add_argument("--own-delta-weight", type=float, metavar="K",
                   help="train.own_delta_weight for the workers (default: the config's, 0 = W)")
    p.add_argument("--flush", type=iteration_count, metavar="N",
                   help="iterations per delta (default: as the process executor flushes for "
                        "each worker count)")
    p.add_argument("--merge-delay", type=non_negative_int, metavar="ITERS",
                   help="merge every flush this many iterations after it (default: when the "
                        "modelled main process merges it)")
    p.add_argument("--cores", type=iteration_count, metavar="N",
                   help="cores of the simulated machine (default: one per process)")
    p.add_argument("--visit-ns", type=positive_float, metavar="NS",
                   help="a simulated worker's nanoseconds per decision-node visit (default: "
                        "the model's for the game, measured on the 2-core machine)")
    p.add_argument("--main-factor", type=positive_float, metavar="F",
                   help="the main process's costs F times this machine's (another machine's "
                        "main process: %.1f for the 16-core machine lent, measured with "
                        "tools/bench_mainloop.py on both; default 1)" % SIXTEEN_CORE_MAIN_FACTOR)
    p.add_argument("--no-pacing", action="store_true",
                   help="keep the flush the worker count gives (the runtime before flushes were "
                        "paced to the main process)")
    p.add_argument("--no-cap", action="store_true",
                   help="let workers run with any number of unmerged iterations (the runtime "
                        "before train.max_unmerged_iters)")
    p.add_argument("--one-delta-per-batch", action="store_true",
                   help="flush once per batch, as Ray's workers do")
    p.add_argument("--hands", type=iteration_count, default=1_000_000,
                   help="NLHE: duplicate hands per head-to-head (default 1,000,000)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="training seed (default 0)")
    p.add_argument("--max-seconds", type=positive_float, default=None,
                   help="stop a run after this many training seconds (default: none)")
    return p


def _store(logdir):
    """The store of a run's newest checkpoint."""
    return load_checkpoint_store(logdir)[1]


def _train(config, game, workers, args, logdir):
    costs = None
    if args.visit_ns is not None or args.main_factor is not None:
        costs = costs_for(game, visit=None if args.visit_ns is None else args.visit_ns * 1e-9)
        if args.main_factor is not None:
            costs = costs.main_scaled(args.main_factor)
    executor = None if workers == 0 else LaggedExecutor(
        game, config, workers, args.batch_size, args.flush, args.merge_delay, costs=costs,
        cores=args.cores, one_delta_per_batch=args.one_delta_per_batch, pace=not args.no_pacing,
        cap=not args.no_cap)
    start = time.perf_counter()
    result = train(config, logdir, progress=False, executor=executor)
    log(f"{workers or 'in-process'}: {result.iterations:,} iterations in "
        f"{time.perf_counter() - start:.0f} s")
    if executor is not None:
        for line in executor.summary(None):
            log(line)
    return result, executor


def _paced(executor):
    """How the pacer changed the flush, for a run's line ('' where it did not)."""
    s = executor.stats
    if not executor.pacer.highest or not s["merged"]:
        return ""
    return f" paced to {s['iters'] / s['merged']:,.0f} on average"


def main(argv=None):
    args = build_parser().parse_args(argv)
    config = (config_mod.load(args.config) if args.config
              else config_mod.default_for_game(args.game))
    config = config_mod.with_overrides(config, train={"iters": args.iters, "seed": args.seed,
                                                      "time_budget": args.max_seconds})
    # Worker settings go to the simulated workers only: the strict config check refuses them
    # for the in-process reference run.
    workers_config = config if args.own_delta_weight is None else config_mod.with_overrides(
        config, train={"own_delta_weight": args.own_delta_weight})
    game = make_game(config)
    counts = [int(w) for w in args.workers.split(",") if w.strip()]
    print(f"config: {args.config or args.game}")
    print(f"iterations: {args.iters}")
    weight = workers_config.train.own_delta_weight
    print("own delta weight: " + ("1 (the default)" if weight is None else
                                  f"{weight:g} (0 = the number of workers)"))
    print("merge delay: " + ("modelled" if args.merge_delay is None
                             else f"{args.merge_delay:,} iterations"))
    with tempfile.TemporaryDirectory(prefix="holdem-conv-") as tmp:
        base = Path(tmp) / "serial"
        serial, _ = _train(config, game, 0, args, base)
        exact = evaluation.applies("exploitability", game)
        if exact:
            metric = evaluation.make("exploitability", game)
            ref = metric.measure(_store(base)).value
            print(f"in-process: exploitability {ref:.6f} ({serial.iterations:,} iterations)")
        else:
            metric = evaluation.make("vs_blueprint", game, opponent=Blueprint.load(base),
                                     config=config, hands=args.hands)
        for w in counts:
            logdir = Path(tmp) / f"w{w}"
            result, executor = _train(workers_config, game, w, args, logdir)
            how = (f"{flush_text(args.flush or flush_iterations(workers_config, w))}"
                   f"{_paced(executor)}, merged {executor.delay_iterations():,.0f} iterations "
                   "later" + (" on average" if args.merge_delay is None else ""))
            if exact:
                x = metric.measure(_store(logdir)).value
                print(f"{w} workers: exploitability {x:.6f} = {x / ref:.2f}x in-process "
                      f"({result.iterations:,} iterations; {how})")
            else:
                match = metric.measure(_store(logdir), seed=1).detail
                print(f"{w} workers vs in-process: {match.mbb_per_hand:+.1f} ± "
                      f"{match.ci95:.1f} mbb/hand ({match.hands:,} hands; "
                      f"{result.iterations:,} iterations each; {how})")


if __name__ == "__main__":
    main()
