"""Benchmark what a worker's delta mode costs against in-process training, on one core.

Trains ``--warm`` iterations in-process, then alternates: ``--iters`` iterations in-process
(Solver: one store) and the same number as a worker runs them (BatchRunner: regret matching on
the shared store plus the worker's own delta, updates into the delta, batches of
``--batch-size``, each encoded as a msgpack delta and cleared). Rates use CPU time, so other
processes on the machine do not count. The ratio bounds what N workers can reach: N x ratio x
(share of a core each worker gets).

    python tools/bench_delta.py --config configs/hunl_default.yaml
    taskset -c 1 python tools/bench_delta.py --batch-size 60000 --rounds 2
"""

import argparse
import time

import benchlib  # noqa: F401  (first: puts this checkout's holdem on sys.path)

from holdem.cli.common import iteration_count


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--config", default="configs/hunl_default.yaml",
                        help="game config (default: %(default)s)")
    parser.add_argument("--warm", type=iteration_count, default=1_500_000,
                        help="in-process iterations before measuring (default: %(default)s)")
    parser.add_argument("--iters", type=iteration_count, default=600_000,
                        help="iterations per measurement (default: %(default)s)")
    parser.add_argument("--batch-size", type=iteration_count, default=15_000,
                        help="worker batch size (default: %(default)s)")
    parser.add_argument("--rounds", type=iteration_count, default=3,
                        help="alternating measurements (default: %(default)s)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    from holdem import config as config_mod
    from holdem.games import make_game
    from holdem.runtime.worker import BatchRunner
    from holdem.solver.solver import Solver
    from holdem.store.store import read_only_view

    config = config_mod.load(args.config)
    game = make_game(config)
    solver = Solver(game, config)
    solver.run(args.warm)
    read = read_only_view(solver.store.arrays)
    runner = BatchRunner(game, config)
    runner.warm_up()
    batches = max(1, args.iters // args.batch_size)
    n = batches * args.batch_size
    for _ in range(args.rounds):
        start = time.process_time()
        solver.run(n)
        solo = n / (time.process_time() - start)
        start = time.process_time()
        payload_bytes = 0
        for b in range(batches):
            t0 = 10 ** 12 + b * args.batch_size           # fresh random streams
            utility_sum, visits = runner.run(read, t0, args.batch_size, 0.0)
            payload_bytes += len(runner.take_delta(read, b, 0, 0, t0, args.batch_size, True,
                                                   utility_sum, visits, 0.0))
        delta = n / (time.process_time() - start)
        print(f"in_process: {solo:,.0f} it/s")
        print(f"delta_mode: {delta:,.0f} it/s")
        print(f"ratio: {delta / solo:.3f}")
        print(f"delta_bytes_per_iter: {payload_bytes / n:,.0f}")


if __name__ == "__main__":
    main()
