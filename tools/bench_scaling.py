"""Scaling of parallel training with the worker count, against a no-sharing ceiling.

For each count in ``--workers`` runs ``python -m holdem.cli.train_blueprint`` for ``--seconds``
of training (1 = in-process, N > 1 = N worker processes and the main process), one after the
other, and reads its ``done:`` line (iterations/s) and, for parallel runs, its ``merge:`` line
(main process busy share of a core, merge ms per batch, delta bytes per iteration). Memory is
the proportional set size (PSS) of the main process plus its workers, sampled mid-run.

Then ``--independent N`` in-process runs are started at once: their summed iterations/s is the
ceiling N cores reach when nothing is shared (no deltas, no merge, a store each), so
``of ceiling`` shows what the parallel runtime itself costs at that scale, apart from what the
machine's shared caches and memory bandwidth cost any N processes. ``--independent 0`` skips it.

Prints one table (progress on stderr) and last the line
``fraction of ceiling at W workers: F`` for the largest W (``n/a`` without a ceiling).

    python tools/bench_scaling.py --game leduc --workers 1,2 --seconds 10 --independent 2
    python tools/bench_scaling.py --config configs/hunl_default.yaml --workers 1,2,4,8,15 \\
        --seconds 60 --independent 15
"""

import argparse
import concurrent.futures
import os
import sys
import tempfile
from pathlib import Path

import benchlib
from benchlib import log

from holdem.cli.common import non_negative_int, positive_float
from holdem.metrics import format_bytes


def worker_counts(text):
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected counts like 1,2,4, got {text!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"worker counts must be positive, got {text!r}")
    return counts


def ceiling(args, source, base):
    """The summed it/s of ``args.independent`` in-process runs started together (and the runs)."""
    n = args.independent
    with concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool:
        futures = [pool.submit(benchlib.train, source, base / f"independent-{k}", 1,
                               seed=args.seed + k, seconds=args.seconds) for k in range(n)]
        runs = [f.result() for f in futures]
    return sum(r.rate for r in runs), runs


def row(run, single, top):
    """The table's cells for one run; ``single`` is the 1-worker run (or None), ``top`` the
    ceiling in it/s (or None)."""
    m = run.merge
    pss = sum(total for _, total, _ in run.memory.values())
    return [f"{run.workers}", f"{run.rate:,.0f}",
            f"{run.rate / single.rate:.2f}x" if single else "n/a",
            f"{run.rate / top:.2f}" if top else "n/a",
            f"{m['main_busy']:.0f}%" if m else "n/a",
            f"{m['merge_ms']:.3f}" if m else "n/a",
            f"{m['delta_bytes']:,.1f}" if m else "n/a",
            format_bytes(pss) if run.memory else "n/a"]


def print_table(header, rows):
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(cell.rjust(w) for cell, w in zip(r, widths)).rstrip())


def build_parser():
    p = benchlib.parser(__doc__, "game (configs/GAME.yaml; default leduc)")
    p.add_argument("--workers", type=worker_counts, default=[1, 2], metavar="N,N,...",
                   help="worker counts to run, 1 = in-process (default 1,2)")
    p.add_argument("--seconds", type=positive_float, default=30.0,
                   help="seconds of training per run, start-up excluded (default 30)")
    p.add_argument("--independent", type=non_negative_int, metavar="N",
                   help="in-process runs started together for the ceiling (default: the "
                        "largest worker count; 0: no ceiling)")
    p.add_argument("--start-method", default="spawn", choices=("spawn", "fork", "forkserver"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--logdir", metavar="DIR",
                   help="keep every run under DIR (default: a temporary directory)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.independent is None:
        args.independent = max(args.workers)
    source = benchlib.config_source(args.config, args.game)
    log(f"config: {source}; {args.seconds:g} s per run; workers {args.workers}; "
        f"independent {args.independent}; cpus: {os.cpu_count()}")
    with tempfile.TemporaryDirectory(prefix="bench-scaling-") as tmp:
        base = Path(args.logdir) if args.logdir else Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        runs = []
        for w in args.workers:
            runs.append(benchlib.train(source, base / f"workers-{w}", w, seed=args.seed,
                                       seconds=args.seconds, start_method=args.start_method))
            log(f"{runs[-1].label}: {runs[-1].rate:,.0f} it/s")
        top = None
        if args.independent:
            top, independent = ceiling(args, source, base)
            log(f"ceiling: {args.independent} independent in-process runs, "
                f"{top:,.0f} it/s in all ({', '.join(f'{r.rate:,.0f}' for r in independent)})")
    single = next((r for r in runs if r.workers == 1), None)
    if top and single and top < single.rate:
        log(f"warning: the {args.independent} runs together ({top:,.0f} it/s) fell below one "
            f"run alone ({single.rate:,.0f} it/s): other work took the cores, so every "
            "fraction of the ceiling overstates; run again on a quiet machine")
    header = ["workers", "it/s", "speed-up", "of ceiling", "main busy", "merge ms/delta",
              "delta B/it", "PSS"]
    print_table(header, [row(r, single, top) for r in runs])
    if top:
        print(f"ceiling: {top:,.0f} it/s ({args.independent} independent in-process runs)")
    largest = max(runs, key=lambda r: r.workers)
    fraction = f"{largest.rate / top:.2f}" if top else "n/a"
    print(f"fraction of ceiling at {largest.workers} workers: {fraction}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
