"""Where a worker's iteration costs more than an in-process one, on one core (issue 38).

Warms a store in-process (``--warm`` iterations; kept in ``--cache`` so later runs skip it),
then alternates, ``--rounds`` times, timed segments of ``--iters`` iterations from the same
store state and the same global iteration:

- ``inproc``: an in-process :class:`Solver` on a fresh private copy of the warm store;
- ``worker F`` (for each F of ``--flushes``): a :class:`BatchRunner` against a read-only view of
  the warm store (a copy in ``/dev/shm``, as workers map it, or in private memory with
  ``--read-mem private``), in flushes of F iterations, each followed by ``take_delta``;
- ``self F`` (``--self-delta``): the worker's traversal kernel (``is_delta``: regret matching
  over the store plus its own delta, no floor) on a fresh private copy of the warm store that
  it both reads and writes, in calls of F iterations: a worker's code without the second
  store (its delta's table and values) beside the shared one.

Times are CPU time of this thread (``time.thread_time``), so other processes matter less. For a
worker, ``run`` is the traversals (plus :meth:`BatchRunner.run`'s per-flush Python: reserve,
params), ``take`` the split, encoding and clearing of each flush. Prints each round and the
medians in us per iteration; ``--inproc-mem shm`` / ``nothp`` puts the in-process store in
``/dev/shm`` / private memory without numpy's transparent-huge-page advice, to measure what
huge pages give it.

    python tools/bench_worker_gap.py --config configs/hunl_default.yaml --warm 2500000 \\
        --iters 50000 --rounds 5
    python tools/bench_worker_gap.py --inproc-mem private,nothp,shm --flushes 5000
    python tools/bench_worker_gap.py --flushes 5000 --keep-rows
    python tools/bench_worker_gap.py --flushes 5000,50 --self-delta

Figures (2026-11-27, 2-core machine, loaded; medians of the rounds' ratios): a worker at 0.76
of the in-process rate at flush 5,000 and 0.68-0.77 at 50; reusing the shared entry a worker
found earlier in the flush (one lookup per visit) 0.996x and 0.984x the worker's rate, within
noise (the slot is prefetched); regret matching without the own-delta row 0.988x and 1.006x;
keeping rows between flushes 0.93x (a larger table); the in-process store without numpy's
huge-page advice 0.926x and in /dev/shm 0.971x its rate (this machine gives shared memory no
transparent huge pages); take_delta 1.0 us per iteration at flush 5,000, 5 us at 50 (about
250 us per flush of ~6,300 rows: split 3.7, encode 1.05, clearing 0.45 us per iteration). The
remaining 7-9 us per iteration is in the traversal itself. It is not more work: both sides
print their decision-node visits per iteration, and on 2026-11-28 (quiet, ``--warm 2500000
--iters 50000 --rounds 3 --flushes 5000``) both made 146, in-process at 22.3 us per iteration
(153 ns a visit), a worker 28.3 us in its traversals (194 ns a visit) while it filled a delta
of 116,000 rows per flush, 56% of the store's infosets. Nor is it the worker's code: with
``--self-delta`` (same day, ``--flushes 5000,50``) that kernel on one store kept 0.998 and
0.951 of the in-process rate where the worker ran at 0.775 and 0.838 -- it is the second
store's memory. A one-iteration flush (``--flushes 1``) shows a flush's fixed cost: 117-120 us
with its iteration (about 90 us beyond it). Issue 38; docs/parallel.md#parallel-training-1
(where it still falls short).
"""

import argparse
import statistics
import time
from pathlib import Path

import benchlib  # noqa: F401  (first: puts this checkout's holdem on sys.path)

import numpy as np

from holdem.cli.common import iteration_count


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--config", default="configs/hunl_default.yaml")
    parser.add_argument("--warm", type=iteration_count, default=1_000_000,
                        help="in-process iterations before measuring (default: %(default)s)")
    parser.add_argument("--iters", type=iteration_count, default=200_000,
                        help="iterations per timed segment (default: %(default)s)")
    parser.add_argument("--flushes", default="5000,50",
                        help="worker flush sizes, comma-separated (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--read-mem", choices=("shm", "private"), default="shm",
                        help="where the store a worker reads lives (default: %(default)s)")
    parser.add_argument("--inproc-mem", default="private",
                        help="where the in-process store lives: private, shm or nothp, or a "
                             "comma-separated list of them, timed one after another in each "
                             "round (default: %(default)s)")
    parser.add_argument("--keep-rows", action="store_true",
                        help="also time workers that keep the delta's rows between flushes "
                             "(values zeroed instead of the buffer cleared: no re-inserts)")
    parser.add_argument("--self-delta", action="store_true",
                        help="also time a worker's traversal (its delta and regret matching) "
                             "on one private store that it both reads and writes: the worker's "
                             "code without a second store's memory")
    parser.add_argument("--no-inproc", action="store_true", help="time workers only")
    parser.add_argument("--cache", default="/tmp/bench_worker_gap",
                        help="directory of warm stores (default: %(default)s)")
    return parser.parse_args(argv)


def warm_store(config, game, args):
    """(StoreArrays, iterations, rng state) of the in-process run after ``--warm`` iterations."""
    from holdem.solver.solver import Solver
    from holdem.store.kernels import StoreArrays
    name = Path(args.config).stem
    path = Path(args.cache) / f"{name}-{args.warm}-seed{config.train.seed}.npz"
    if path.exists():
        data = np.load(path)
        arrays = StoreArrays(*(data[f] for f in StoreArrays._fields))
        return arrays, int(data["iterations"]), data["rng_state"]
    solver = Solver(game, config)
    solver.run(args.warm)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, iterations=solver.iterations, rng_state=solver.rng_state,
             **solver.store.arrays._asdict())
    return solver.store.arrays, solver.iterations, solver.rng_state


def anon_huge_kb():
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        if line.startswith("AnonHugePages:"):
            return int(line.split()[1])
    return -1


def main(argv=None):
    args = parse_args(argv)
    from holdem import config as config_mod
    from holdem.games import make_game
    from holdem.runtime.shm import SharedAllocator
    from holdem.runtime.worker import BatchRunner
    from holdem.solver.solver import Solver, make_params, make_workspace, run_kernel
    from holdem.delta import records
    from holdem.store.store import RegretStore, read_only_view

    config = config_mod.load(args.config)
    game = make_game(config)
    flushes = [int(f) for f in args.flushes.split(",") if f]
    base, t_base, rng_state = warm_store(config, game, args)
    allocators = []

    def allocator(kind):
        if kind == "shm":
            alloc = SharedAllocator()
            allocators.append(alloc)
            return alloc
        return None

    def private_copy(kind):
        if kind == "nothp":
            np._core.multiarray._set_madvise_hugepage(False)
        try:
            return RegretStore.copy_of(base, allocator=allocator(kind))
        finally:
            np._core.multiarray._set_madvise_hugepage(True)

    try:
        shared = RegretStore.copy_of(base, allocator=allocator(args.read_mem))
        read = read_only_view(shared.arrays)
        # One runner per flush and variant: a delta buffer keeps its largest capacity.
        variants = ["normal"] + (["keep"] if args.keep_rows else [])
        runners = {}
        for flush in flushes:
            for variant in variants:
                runners[flush, variant] = BatchRunner(game, config)
                runners[flush, variant].warm_up()
        Solver(game, config, store=private_copy("private")).run(10)      # compile
        print(f"store: {int(base.meta[0]):,} infosets, warm {t_base:,} iterations; "
              f"segments of {args.iters:,} iterations from iteration {t_base:,}; "
              f"worker reads {args.read_mem} memory, in-process store in {args.inproc_mem}")
        results = {}
        for r in range(args.rounds):
            line = []
            for kind in ([] if args.no_inproc else args.inproc_mem.split(",")):
                name = "inproc" if kind == args.inproc_mem.split(",")[0] else f"inproc {kind}"
                store = private_copy(kind)
                solver = Solver(game, config, store=store, iterations=t_base,
                                rng_state=np.array(rng_state) + np.uint64(r))
                huge = anon_huge_kb()
                visits_before = int(solver.workspace.visits[0])
                start = time.thread_time()
                solver.run(args.iters)
                us = (time.thread_time() - start) / args.iters * 1e6
                visits = (int(solver.workspace.visits[0]) - visits_before) / args.iters
                results.setdefault(name, []).append((us, 0.0, 0.0))
                line.append(f"{name} {us:.2f} ({visits:.0f} visits/it) "
                            f"[AnonHugePages {huge // 1024} MB]")
                del solver, store
            for flush in ([] if not args.self_delta else flushes):
                store = private_copy("private")
                workspace = make_workspace(game)
                utility = np.zeros(flush)
                run_s = 0.0
                flushes_run = max(1, args.iters // flush)
                for b in range(flushes_run):
                    t0 = t_base + b * flush
                    state = np.random.SeedSequence([1000 + r, t0]).generate_state(4, np.uint64)
                    params = make_params(config.solver, game.num_streets, is_delta=True,
                                         iterations=t0)
                    start = time.thread_time()
                    ran = run_kernel(game, store.arrays, store.arrays, params, workspace, state,
                                     t0, flush, utility)
                    run_s += time.thread_time() - start
                    assert ran == flush, "the store has no head-room for a flush"
                us = run_s / (flushes_run * flush) * 1e6
                results.setdefault(f"self {flush}", []).append((us, us, 0.0))
                line.append(f"self {flush} {us:.2f}")
                del store
            for flush in flushes:
                for variant in variants:
                    keep = variant == "keep"
                    runner = runners[flush, variant]
                    run_s = take_s = 0.0
                    rows = visits_total = 0
                    flushes_run = max(1, args.iters // flush)
                    for b in range(flushes_run):
                        t0 = t_base + b * flush
                        state = np.random.SeedSequence([1000 + r, t0]).generate_state(
                            4, np.uint64)
                        start = time.thread_time()
                        utility_sum, visits = runner.run(read, t0, flush, 0.0, state)
                        mid = time.thread_time()
                        rows += runner.delta.num_infosets
                        visits_total += visits
                        if keep:
                            split = runner.splitter.split(read, runner.delta.arrays,
                                                          runner.workspace.read_entry)
                            records.encode_delta(b, 0, 0, t0, flush, True, utility_sum, visits,
                                                 0.0, split)
                            e = runner.delta.num_entries
                            runner.delta.arrays.regrets[:e] = 0.0
                            runner.delta.arrays.strategy_sum[:e] = 0.0
                        else:
                            runner.take_delta(read, b, 0, 0, t0, flush, True, utility_sum,
                                              visits, 0.0)
                        take_s += time.thread_time() - mid
                        run_s += mid - start
                    n = flushes_run * flush
                    total = (run_s + take_s) / n * 1e6
                    name = f"worker {flush}" + (" keep" if keep else "")
                    results.setdefault(name, []).append(
                        (total, run_s / n * 1e6, take_s / n * 1e6))
                    line.append(f"{name} {total:.2f} (run {run_s / n * 1e6:.2f} + take "
                                f"{take_s / n * 1e6:.2f}; {rows / flushes_run:,.0f} rows/flush, "
                                f"{visits_total / n:.0f} visits/it)")
            print(f"round {r + 1}: " + "; ".join(line), flush=True)
        print(f"medians over {args.rounds} rounds, CPU us/iteration:")
        solo = statistics.median(t for t, _, _ in results["inproc"]) if "inproc" in results \
            else None
        for name, vals in results.items():
            total = statistics.median(t for t, _, _ in vals)
            extra = ""
            if name.startswith("inproc ") and solo:
                ratios = [i / v for (i, _, _), (v, _, _) in zip(results["inproc"], vals)]
                extra = f"; its rate / inproc's: median of the rounds' ratios " \
                        f"{statistics.median(ratios):.3f}"
            if not name.startswith("inproc"):
                extra = (f" (run {statistics.median(v for _, v, _ in vals):.2f} + take "
                         f"{statistics.median(v for _, _, v in vals):.2f})")
                if solo and "inproc" in results:
                    ratios = [i / w for (i, _, _), (w, _, _) in zip(results["inproc"], vals)]
                    extra += (f"; worker rate / in-process rate {solo / total:.3f} (median of "
                              f"the rounds' ratios {statistics.median(ratios):.3f})")
                base_name = name.removesuffix(" keep")
                if base_name != name and base_name in results:
                    ratios = [b / v for (b, _, _), (v, _, _) in zip(results[base_name], vals)]
                    extra += (f"; rate / {base_name}'s: median of the rounds' ratios "
                              f"{statistics.median(ratios):.3f}")
            print(f"  {name}: {total:.2f}{extra}")
    finally:
        for alloc in allocators:
            alloc.close()


if __name__ == "__main__":
    main()
