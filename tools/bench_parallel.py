"""Benchmark parallel training against in-process training, end to end through the CLI.

Runs ``python -m holdem.cli.train_blueprint`` twice for the same game and stopping point --
in-process (``--num-workers 1``) and with ``--workers`` worker processes -- and prints, one
``name: value`` per line:

- iterations/s of each run (from its ``done:`` line), the speed-up and per-worker throughput;
- from the parallel run's ``merge:`` line: iterations per delta (the flush), merge milliseconds
  per delta and deltas per merge pass, the flush-to-merge delay, the main process's busy share
  of a core and worker restarts;
- the exploitability of both results (``holdem.cli.eval_blueprint``; Kuhn and Leduc);
- memory: the proportional set size (PSS, ``/proc/<pid>/smaps_rollup``) of the main process and
  of every worker, sampled once mid-run, split into the shared store file's part (from
  ``/proc/<pid>/smaps``) and the rest, next to the store's size. The store is mapped once per
  process but its pages are shared, so PSS of main + N workers ~= one store + main's constant +
  N x the per-worker constant printed at the end.

With ``--rounds N`` the pair is run N times, alternating (in-process, workers, workers,
in-process, ...), and the speed-up is also given as the median of the rounds' speed-ups and
from the median rates, with every round's figures: on a machine whose speed drifts, one pair
taken minutes apart can mislead either way.
The detailed report is the last round's.

    python tools/bench_parallel.py --quick                  # about 20-30 seconds
    python tools/bench_parallel.py                          # Leduc, 20 M iterations per run
    python tools/bench_parallel.py --game kuhn --seconds 20 --workers 2
    python tools/bench_parallel.py --config configs/hunl_default.yaml --seconds 60 --rounds 3
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import benchlib
from benchlib import ROOT

from holdem.cli.common import iteration_count, positive_float

from holdem import checkpoint as ckpt
from holdem import registry
from holdem.metrics import format_bytes


def train(args, logdir, workers):
    """One train_blueprint run (:func:`benchlib.train`), its store size and, on Kuhn and Leduc,
    the exploitability of its result."""
    result = benchlib.train(benchlib.config_source(args.config, args.game), logdir, workers,
                            seed=args.seed, seconds=args.seconds,
                            iters=None if args.seconds is not None else args.iters,
                            start_method=args.start_method)
    header, _ = ckpt.read_header(result.checkpoint)
    result.store_bytes = int(header.get("stats", {}).get("store_bytes", 0))
    result.exploitability = None
    if args.config is None:             # a game with --game defaults: Kuhn, Leduc (exact)
        ev = subprocess.run([sys.executable, "-m", "holdem.cli.eval_blueprint", "--checkpoint",
                             str(result.checkpoint), "--exploitability"], capture_output=True,
                            text=True, timeout=600, cwd=ROOT)
        found = re.search(r"^exploitability: (\S+)$", ev.stdout, re.M)
        result.exploitability = float(found[1]) if found else None
    return result


def report(single, multi):
    n = multi.workers
    for r in (single, multi):
        print(f"{r.label}: iterations={r.iterations:,} elapsed={r.elapsed:.2f} s "
              f"it/s={r.rate:,.0f} infosets={r.infosets:,}")
    speedup = multi.rate / single.rate if single.rate else float("nan")
    print(f"speed-up: {speedup:.2f}x with {n} workers")
    print(f"per-worker throughput: {multi.rate / n:,.0f} it/s "
          f"({multi.rate / n / single.rate:.0%} of in-process)")
    if multi.merge:
        m = multi.merge
        print(f"flush: {m['flush']:,} iterations/delta")
        print(f"merge: {m['merge_ms']:.3f} ms/delta ({m['merge_core']:.1f}% of a core, "
              f"{m['per_pass']:.1f} deltas/pass); delta {m['delta_bytes']:.1f} bytes/iteration")
        print(f"flush to merge: {m['delay_ms']:.2f} ms ({m['delay_iters']:,} iterations; "
              f"the main process waking {m['wake_ms']:.2f} ms of it)")
        print(f"main process busy: {m['main_busy']:.1f}% of a core")
        print(f"worker restarts: {m['restarts']}")
    for r in (single, multi):
        if r.exploitability is not None:
            print(f"exploitability {r.label}: {r.exploitability:.6f}")
    print(f"store size: {format_bytes(multi.store_bytes)} ({multi.store_bytes:,} bytes)")
    for r in (single, multi):
        if not r.memory:
            print(f"PSS {r.label}: not sampled (the run ended too soon)")
            continue
        for role, (pid, total, store) in r.memory.items():
            print(f"PSS {r.label} {role} (pid {pid}): {format_bytes(total)} "
                  f"(store file {format_bytes(store)}, rest {format_bytes(total - store)})")
    if multi.memory and single.memory:
        fb = format_bytes
        total = sum(t for _, t, _ in multi.memory.values())
        store = sum(s for _, _, s in multi.memory.values())
        workers = [t - s for role, (_, t, s) in multi.memory.items() if role != "main"]
        _, main_total, main_store = multi.memory["main"]
        per_worker = sum(workers) / len(workers)
        print(f"PSS total {multi.label}: {fb(total)} = store pages {fb(store)} + main rest "
              f"{fb(main_total - main_store)} + {len(workers)} x {fb(per_worker)}")
        single_total = sum(t for _, t, _ in single.memory.values())
        print(f"per-worker constant: {fb(per_worker)} (a worker's PSS outside the store file; "
              f"in-process main: {fb(single_total)})")

def build_parser():
    p = argparse.ArgumentParser(
        description="Train the same game in-process and with worker processes "
                    "(python -m holdem.cli.train_blueprint) and compare speed, memory (PSS) "
                    "and exploitability.")
    p.add_argument("--game", default="leduc", choices=registry.names_with_defaults(),
                   help="game (configs/GAME.yaml; default leduc)")
    p.add_argument("--config", metavar="FILE",
                   help="train this config instead (e.g. configs/hunl_default.yaml)")
    p.add_argument("--iters", type=iteration_count, default=20_000_000,
                   help="iterations per run (default 20M)")
    p.add_argument("--seconds", type=positive_float,
                   help="train each run for this many seconds instead of --iters")
    p.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--start-method", default="spawn", choices=("spawn", "fork", "forkserver"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true",
                   help="8 seconds of training per run (about 20-30 s in all)")
    p.add_argument("--rounds", type=int, default=1,
                   help="run the pair this many times, alternating the order, and report "
                        "the median speed-up too (default 1)")
    p.add_argument("--logdir", metavar="DIR",
                   help="keep both runs under DIR (default: a temporary directory)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.quick:
        args.seconds = 8.0
    if args.workers < 2:
        raise SystemExit("--workers must be at least 2")
    if args.rounds < 1:
        raise SystemExit("--rounds must be at least 1")
    what = f"{args.seconds:g} s" if args.seconds is not None else f"{args.iters:,} iterations"
    if args.config:
        args.game = Path(args.config).stem
    print(f"game: {args.game}; each run: {what}; workers: {args.workers} "
          f"({args.start_method}); cpus: {os.cpu_count()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-parallel-") as tmp:
        base = Path(args.logdir) if args.logdir else Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        rounds = []
        for k in range(args.rounds):
            suffix = "" if args.rounds == 1 else f"-round{k + 1}"
            order = (1, args.workers) if k % 2 == 0 else (args.workers, 1)
            runs = {n: train(args, base / (("in-process" if n == 1 else f"workers-{n}")
                                           + suffix), n) for n in order}
            rounds.append((runs[1], runs[args.workers]))
            if args.rounds > 1:
                print(f"round {k + 1}: in-process {runs[1].rate:,.0f} it/s, {args.workers} "
                      f"workers {runs[args.workers].rate:,.0f} it/s "
                      f"({runs[args.workers].rate / runs[1].rate:.2f}x)", flush=True)
        report(*rounds[-1])
        if args.rounds > 1:
            report_rounds(rounds)
    return 0


def report_rounds(rounds):
    """Every round's speed-up, their median, and the speed-up of the median rates."""
    speedups = [m.rate / s.rate for s, m in rounds]
    single = statistics.median(s.rate for s, _ in rounds)
    multi = statistics.median(m.rate for _, m in rounds)
    print(f"rounds: {len(rounds)} (speed-ups {', '.join(f'{x:.2f}x' for x in speedups)})")
    print(f"median in-process: {single:,.0f} it/s")
    print(f"median {rounds[0][1].label}: {multi:,.0f} it/s")
    print(f"speed-up of the medians: {multi / single:.2f}x")
    # A round's two runs are minutes apart; the medians above may come from different rounds,
    # which misleads when the machine's speed shifts during the benchmark.
    print(f"median of the rounds' speed-ups: {statistics.median(speedups):.2f}x")

if __name__ == "__main__":
    sys.exit(main())
