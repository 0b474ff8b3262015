"""Benchmark the subgame solver on the spots postflop-solver was timed on (issue 36).

Full ranges (every combo the board leaves) on Td 9d 6h Qc (turn) and Td 9d 6h Qc 2s (river),
pot 200, stacks 900, bets 50% / 100% / all-in, raises 100% / all-in, no raise cap. Prints, one
``name: value unit`` per line: the tree's size, the memory reported before solving and the
process's peak resident memory after, and per thread count the iterations, seconds and
exploitability (% of the pot) at which the target was met. Compilation (or loading numba's
cache) is timed apart, on a small spot, before anything is measured.

    python tools/bench_subgame.py                        # river to 0.3 %, turn to 0.5 %
    python tools/bench_subgame.py --spot river --threads 1
    python tools/bench_subgame.py --spot turn --threads 1 2 --turn-target 0.49

postflop-solver (Rust, built from source and timed on this 2-core machine, issue 36): river to
0.29 % in 0.086 s on one thread; turn (93 MB) to 0.49 % in 22.3 s on one thread, 11.2 s on two.
"""

import argparse
import resource
import time

import benchlib  # noqa: F401  (first: puts this checkout's holdem on sys.path)

import numpy as np

BOARD = "Td 9d 6h Qc"
RIVER = "2s"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--spot", choices=("river", "turn", "both"), default="both")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                        help="thread counts to time the turn spot with (default: 1 2; the "
                             "river spot always runs on one)")
    parser.add_argument("--river-target", type=float, default=0.29,
                        help="exploitability to reach on the river, %% of the pot "
                             "(default: %(default)s)")
    parser.add_argument("--turn-target", type=float, default=0.49,
                        help="exploitability to reach on the turn, %% of the pot "
                             "(default: %(default)s)")
    parser.add_argument("--check-every", type=int, default=10,
                        help="iterations between exploitability checks (default: "
                             "%(default)s; the checks are timed too)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="river solves to time; the median is printed (default: "
                             "%(default)s)")
    return parser.parse_args(argv)


def spot(board):
    from holdem.subgame import BetMenu, Spot

    full = np.ones(1326)
    menu = BetMenu.uniform(bets=(0.5, 1.0), raises=(1.0,), all_in=True)
    return Spot.make(board, full, full, pot=200, stack=900, menu=menu)


def warm_up():
    """Compile (or load) every kernel on a small turn spot; seconds taken."""
    from holdem.subgame import BetMenu, Spot, SubgameSolver

    start = time.perf_counter()
    small = Spot.make(BOARD, "AA,KK,QQ", "JJ,TT,AKs", pot=100, stack=100,
                      menu=BetMenu.uniform(bets=(1.0,), raises=()))
    solver = SubgameSolver(small, threads=2)
    solver.solve(target=100, max_iterations=2, check_every=1)
    solver.values(0)
    solver.equity(0)
    solver.close()
    return time.perf_counter() - start


def solve(board, threads, target, check_every):
    from holdem.subgame import SubgameSolver

    solver = SubgameSolver(spot(board), threads=threads)
    reported = solver.memory_bytes()
    start = time.perf_counter()
    result = solver.solve(target=target, max_iterations=5000, check_every=check_every)
    seconds = time.perf_counter() - start
    allocated = solver.allocated_bytes()
    tree = solver.tree
    solver.close()
    return dict(seconds=seconds, iterations=result.iterations,
                exploitability=result.exploitability_pct, memory=reported, allocated=allocated,
                nodes=tree.num_nodes, decisions=tree.num_decisions(),
                hands=solver.num_hands.tolist())


def report(name, runs):
    first = runs[0]
    print(f"{name}_nodes: {first['nodes']} ({first['decisions']} decisions, "
          f"{first['hands'][0]} / {first['hands'][1]} combos a side)")
    print(f"{name}_memory_reported: {first['memory'] / 2**20:.1f} MiB before solving, "
          f"{first['allocated'] / 2**20:.1f} MiB allocated (the arrays, counted)")


def main(argv=None):
    args = parse_args(argv)
    print(f"compile_or_cache_load: {warm_up():.2f} s")
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.spot in ("river", "both"):
        runs = [solve(f"{BOARD} {RIVER}", 1, args.river_target, args.check_every)
                for _ in range(args.repeat)]
        report("river", runs)
        run = sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2]
        print(f"river_threads_1: {run['seconds']:.3f} s, {run['iterations']} iterations, "
              f"{run['exploitability']:.3f} % of the pot (median of {len(runs)})")
    if args.spot in ("turn", "both"):
        for threads in args.threads:
            run = solve(BOARD, threads, args.turn_target, args.check_every)
            if threads == args.threads[0]:
                report("turn", [run])
            print(f"turn_threads_{threads}: {run['seconds']:.2f} s, {run['iterations']} "
                  f"iterations, {run['exploitability']:.3f} % of the pot")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak_resident_memory: {peak:.0f} MiB (the whole process; {peak - base:.0f} MiB above "
          f"its peak after compiling, i.e. what the solves added)")


if __name__ == "__main__":
    main()
