"""Benchmark the 7-card hand evaluator on one core.

Prints the import time of ``holdem.evaluator``, the first-call time of the batch kernel (a numba
cache load when the on-disk cache is warm, a compile otherwise) and the best of several timed runs
of ``rank7_batch_kernel`` over uniformly random 7-card hands, in evaluations per second.

    python tools/bench_evaluator.py --hands 10000000
"""

import argparse
import time

import benchlib  # noqa: F401  (first: puts this checkout's holdem on sys.path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=10_000_000,
                        help="random 7-card hands per timed run (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed runs; the best is reported (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="RNG seed (default: %(default)s)")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    import numpy as np

    from holdem.cards import random_hands
    from holdem.evaluator import RANK_DTYPE, kernels
    import_seconds = time.perf_counter() - start

    hands = random_hands(np.random.default_rng(args.seed), args.hands, 7)
    out = np.empty(args.hands, dtype=RANK_DTYPE)

    start = time.perf_counter()
    kernels.rank7_batch_kernel(hands[:1], out[:1])
    first_call_seconds = time.perf_counter() - start
    stats = kernels.rank7_batch_kernel.stats
    source = "cache load" if stats.cache_hits else "compile"

    best = float("inf")
    for _ in range(args.repeats):
        start = time.perf_counter()
        kernels.rank7_batch_kernel(hands, out)
        best = min(best, time.perf_counter() - start)

    print(f"import holdem.evaluator: {import_seconds:.3f} s")
    print(f"first call ({source}): {first_call_seconds:.3f} s")
    print(f"rank7_batch_kernel: {args.hands:,} random hands, best of {args.repeats}: "
          f"{best:.3f} s = {args.hands / best / 1e6:.1f} M evaluations/s on one core")


if __name__ == "__main__":
    main()
