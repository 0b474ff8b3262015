"""Merge capacity: how many iterations of worker deltas per second the main process can consume.

In a parallel run every worker's delta records go through the main process: a merge pass reads
every record that arrived since the last one into an arena, indexes them, checks their new
infosets against the game and every row against the store, and adds them
(:func:`holdem.runtime.process.merge_pass`). When N workers together produce more iterations per
second than that path consumes, adding workers adds nothing. This benchmark measures the path on
its own, without workers or pipes:

1. record: train in-process until the store is near its full size (its infoset count grows less
   than 1% in 10 CPU seconds, or ``--warm-seconds`` CPU seconds have passed), then run
   ``--flushes`` flushes as a worker of a ``--workers``-worker run does (``BatchRunner`` on a
   read-only view of that store, ``flush_iterations`` iterations each, or ``--flush``) and keep
   each delta record. The worker's CPU time per iteration (traversal plus encoding) gives this
   machine's per-worker rate;
2. replay: ``--rounds`` times, into a fresh private copy of the store, merge every recorded
   record in passes of 1 record and of ``--per-pass`` records, timed with CPU time (one thread)
   or wall time (more). The two give a pass's fixed cost ``a`` and the cost per record ``b``.

``produce`` (worker side) and ``consume`` (main side) below are the only places that call the
project's delta path. Output, one ``name: value`` per line on stdout (progress on stderr):
``pass ms`` (a pass's fixed cost) and ``record ms`` (each record's), medians over the rounds;
``capacity (it/s)``: iterations per second of main-process time when passes hold ``--per-pass``
records. With ``--worker-rate R`` (the per-worker rate of the machine to predict; default this
machine's), ``workers served`` = capacity / R, and the flush-to-merge delay at ``--workers``
workers: records then arrive at rate L = W x R / flush; a pass that starts when the last one
ends holds k = L x T records and takes T = a + b k, so T = a / (1 - L b) (saturated when
L b >= 1); a record waits T / 2 on average for its pass to start and T for it to finish, so the
delay is 1.5 T, printed in milliseconds and in the iterations the W workers run meanwhile (what
``tools/bench_convergence.py --merge-delay`` takes). ``receive`` is the CPU time of receiving the
records from a socketpair with the frames workers send (:mod:`holdem.runtime.frames`), printed
apart and not part of the capacity.

The replay counts the merge pass alone. ``--live S`` also counts everything else the main
process does per record -- reading the notes, checking each flush against its batch, the
training loop's bookkeeping, the merge threads' CPU: it trains for S seconds with 2 real
workers flushing every ``--flush`` iterations (``train_blueprint --num-workers 2``) and divides
the main process's CPU time by the records it merged. ``live ms/record`` is that, ``live workers
served`` the workers of ``--worker-rate`` whose records at this flush would take a whole core
of it, and ``live paced flush`` the flush at which ``--workers`` workers' records take half of
it, all of its work counted: above where the flush pacer
(:class:`holdem.runtime.flush.FlushPacer`) puts it, which counts only the merge passes' work on
the records (not a pass's fixed cost, which more records a pass share). The last line is
``merge capacity: N iterations/s (T threads)``.

    python tools/bench_merge.py --game leduc --warm-seconds 5        # about 15 s
    python tools/bench_merge.py --config configs/hunl_default.yaml --threads 1,2 \\
        --worker-rate 27200
    python tools/bench_merge.py --config configs/hunl_blueprint.yaml --threads 1,2 \\
        --worker-rate 10240
    python tools/bench_merge.py --config configs/hunl_default.yaml --threads 2 \\
        --worker-rate 27200 --live 30
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path

import benchlib  # first: puts this checkout's holdem on sys.path
from benchlib import log

from holdem import config as config_mod
from holdem.cli.common import iteration_count, positive_float
from holdem.delta import record_kernels as rk
from holdem.delta import records
from holdem.delta.merge import MergeScratch, RowMerger, merge_arena, reason
from holdem.games import make_game
from holdem.metrics import format_bytes
from holdem.runtime.flush import MAIN_BUSY_TARGET, flush_iterations, pair_flush
from holdem.runtime.process import batch_size_for
from holdem.runtime.worker import BatchRunner, holds_cold_rows
from holdem.solver.solver import Solver, regret_floor_at
from holdem.store.kernels import StoreArrays
from holdem.store.store import RegretStore, read_only_view

PLATEAU_SECONDS = 10.0           # warm until the infoset count grows < PLATEAU_GROWTH in this
PLATEAU_GROWTH = 0.01


# -- the seam: worker side and main side of one flush -----------------------------------------
def produce(runner, read_arrays, t0, n, last):
    """One worker flush of ``n`` iterations from global iteration ``t0`` against the read-only
    ``read_arrays`` (``last``: its batch's last); returns its delta record as a worker sends it
    (see BatchServer.serve)."""
    start = time.perf_counter()
    utility_sum, visits = runner.run(read_arrays, t0, n, 0.0)
    seconds = time.perf_counter() - start
    return bytes(runner.take_delta(read_arrays, 0, 0, 0, t0, n, last, utility_sum, visits,
                                   seconds))


def consume(state, payloads, threads):
    """The main process's merge pass over ``payloads`` (as ProcessExecutor.results): into the
    arena, then :func:`merge_arena` with the game check and the regret floor. Returns the
    records' iterations."""
    arena = state.arena
    arena.clear()
    for p in payloads:
        arena.add(p, source=0)
    codes = merge_arena(state.store, state.merger(threads), arena, state.floor(),
                        game=state.game, scratch=state.scratch)
    if (codes != rk.OK).any():
        raise RuntimeError(f"a recorded delta was rejected: {reason(codes[codes != 0][0])}")
    iters = sum(arena.flush(r).iters for r in range(arena.count))
    state.iterations += iters
    return iters


class Replay:
    """Main-side state of one replay: a private copy of the store, the run's iteration count
    (the regret floor scales with it)."""

    def __init__(self, game, config, store, iterations):
        self.game, self.config, self.iterations = game, config, iterations
        self.store = RegretStore(row_capacity=16)
        self.store.arrays = StoreArrays(*(a.copy() for a in store.arrays))   # same capacity
        self.arena = records.RecordArena()
        self.scratch = MergeScratch()
        self._merger = None

    def merger(self, threads):
        """The :class:`RowMerger` with ``threads`` threads (made once; the run's lives as long)."""
        if self._merger is None:
            self._merger = RowMerger(threads)
        return self._merger

    def close(self):
        if self._merger is not None:
            self._merger.close()

    def floor(self):
        """The regret floor now, as the process executor's merge applies it."""
        return regret_floor_at(self.config.solver, self.game.num_streets, self.iterations, 0.0)


# -- recording --------------------------------------------------------------------------------
def warm(solver, cap_seconds):
    """Train in-process until the store's infoset count grows less than PLATEAU_GROWTH in
    PLATEAU_SECONDS of CPU time, or for ``cap_seconds`` of CPU time; returns the in-process
    rate (iterations per CPU second)."""
    solver.run(1)                                      # compile or load the kernels
    start, first = time.process_time(), solver.iterations
    history = [(0.0, solver.store.num_infosets)]       # (CPU seconds, infosets)
    chunk, shown = 1000, 0.0
    while True:
        t = time.process_time()
        solver.run(chunk)
        dt = time.process_time() - t
        chunk = chunk * 2 if dt < 0.25 else max(1000, chunk // 2) if dt > 1.0 else chunk
        now = time.process_time() - start
        solver.elapsed = now
        infosets = solver.store.num_infosets
        history.append((now, infosets))
        if now - shown >= PLATEAU_SECONDS:
            log(f"warm: {solver.iterations:,} iterations, {infosets:,} infosets, {now:.0f} CPU s")
            shown = now
        if now >= cap_seconds:
            why = f"--warm-seconds {cap_seconds:g} reached"
            break
        past = [n for s, n in history if s <= now - PLATEAU_SECONDS]
        if past and infosets < past[-1] * (1 + PLATEAU_GROWTH):
            why = f"grew < {PLATEAU_GROWTH:.0%} in {PLATEAU_SECONDS:g} s"
            break
    log(f"warm: {solver.iterations:,} iterations in {now:.1f} CPU s, "
        f"{solver.store.num_infosets:,} infosets ({why})")
    return (solver.iterations - first) / max(now, 1e-9)


def record(game, config, store, t0, flushes, flush, batch):
    """Delta records of at least ``flushes`` worker flushes of ``flush`` iterations from
    iteration ``t0``, in whole batches of ``batch`` iterations (a batch's last flush carries
    the cold rows its earlier flushes held), and the worker's rate (iterations per CPU second
    of produce)."""
    read = read_only_view(store.arrays)
    runner = BatchRunner(game, config, config.train.num_workers)
    runner.warm_up()
    per_batch = -(-batch // flush)
    flushes = -(-flushes // per_batch) * per_batch
    payloads, cpu = [], 0.0
    for b in range(flushes):
        start = time.thread_time()
        payloads.append(produce(runner, read, t0 + b * flush, flush,
                                (b + 1) % per_batch == 0))
        cpu += time.thread_time() - start
    return payloads, flushes * flush / max(cpu, 1e-9)


def receive(payloads):
    """CPU seconds this thread spends receiving ``payloads`` from a worker with the project's
    frames, sent by a thread over a socketpair as a worker sends them to the main process."""
    import multiprocessing
    import threading

    from holdem.runtime import frames

    ours, theirs = multiprocessing.Pipe(duplex=True)
    sender = threading.Thread(target=lambda: [frames.send(theirs.fileno(), p)
                                              for p in payloads])
    sender.start()
    arena = records.RecordArena()
    seconds = 0.0
    for _ in payloads:
        ours.poll(None)
        start = time.thread_time()
        frames.read_into(ours.fileno(), arena.reserve)
        seconds += time.thread_time() - start
    sender.join()
    ours.close()
    theirs.close()
    return seconds


def replay(game, config, store, iterations, payloads, threads, per_pass):
    """One round: seconds consuming ``payloads`` in passes of ``per_pass`` records into a
    fresh copy of ``store``."""
    # Thread CPU time ignores other processes; a multi-threaded merge is judged by wall time.
    clock = time.thread_time if threads == 1 else time.perf_counter
    state = Replay(game, config, store, iterations)
    try:
        start = clock()
        for k in range(0, len(payloads), per_pass):
            consume(state, payloads[k:k + per_pass], threads)
        return clock() - start
    finally:
        state.close()


def delay(a, b, arrivals):
    """Seconds from a flush to its merge when records arrive at ``arrivals``/s into passes of
    fixed cost ``a`` plus ``b`` per record (inf: saturated); see the module docstring."""
    if arrivals * b >= 1:
        return float("inf")
    return 1.5 * a / (1 - arrivals * b)


def live(args, flush, seconds):
    """The main process's CPU seconds per record, all of its work counted: a real run of 2
    workers flushing every ``flush`` iterations for ``seconds``; also its merge line."""
    source = benchlib.config_source(args.config, args.game)
    with tempfile.TemporaryDirectory(prefix="holdem-merge-") as tmp:
        config = Path(tmp) / "live-source.yaml"
        benchlib.write_config(source, config, flush_iters=flush)
        run = benchlib.train(config, Path(tmp) / "live", 2, seconds=seconds, memory=False)
    merge = run.merge
    records_per_second = run.rate / merge["flush"]
    return merge["main_busy"] / 100 / records_per_second, merge


# -- the command ------------------------------------------------------------------------------
def _thread_counts(text):
    counts = [iteration_count(t) for t in text.split(",") if t.strip()]
    if not counts or min(counts) < 1:
        raise ValueError(f"expected thread counts such as 1 or 1,2,4, got {text!r}")
    return counts


def build_parser():
    p = benchlib.parser(__doc__, "small game with the defaults of configs/GAME.yaml "
                                 "(default leduc)")
    p.add_argument("--threads", type=_thread_counts, default=[1], metavar="T[,T...]",
                   help="merge threads; a list replays the same records with each, and the last "
                        "line gives the last (default 1)")
    p.add_argument("--warm-seconds", type=positive_float, default=150.0, metavar="S",
                   help="at most this many CPU seconds of in-process training before recording; "
                        "less when the store stops growing (default 150: hunl_blueprint then "
                        "holds several million infosets)")
    p.add_argument("--workers", type=iteration_count, default=15,
                   help="the run whose flushes are recorded and whose delay is predicted "
                        "(default 15)")
    p.add_argument("--flush", type=iteration_count, metavar="N",
                   help="iterations per record (default: what a --workers run flushes)")
    p.add_argument("--flushes", type=iteration_count, default=200,
                   help="worker flushes recorded, rounded up to whole batches (default 200)")
    p.add_argument("--batch", type=iteration_count, metavar="N",
                   help="iterations per batch (default: what the process executor gives a "
                        "worker of --worker-rate, or of this machine's in-process rate)")
    p.add_argument("--per-pass", type=iteration_count, default=16,
                   help="records per merge pass for the capacity (default 16)")
    p.add_argument("--worker-rate", type=positive_float, metavar="R",
                   help="iterations/s of one worker on the machine to predict (default: this "
                        "machine's, measured while recording)")
    p.add_argument("--live", type=positive_float, metavar="S",
                   help="also train S seconds with 2 real workers at this flush and count every "
                        "main-process cost per record (default: no)")
    p.add_argument("--rounds", type=iteration_count, default=3,
                   help="replays on fresh copies of the store; medians reported (default 3)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.config:
        config = config_mod.load(args.config)
    else:
        config = config_mod.default_for_game(args.game)
    config = config_mod.with_overrides(config, train={"num_workers": args.workers})
    flush = args.flush or flush_iterations(config, args.workers)
    game = make_game(config)
    solver = Solver(game, config)
    warm_rate = warm(solver, args.warm_seconds)
    store = solver.store
    batch = args.batch or batch_size_for(args.worker_rate or warm_rate, store)
    flush = pair_flush(flush, batch, store.num_infosets)
    payloads, measured_rate = record(game, config, store, solver.iterations, args.flushes, flush,
                                     batch)
    worker_rate = args.worker_rate or measured_rate
    iterations = len(payloads) * flush

    print(f"config: {args.config or args.game}")
    print(f"infosets in the store: {store.num_infosets:,}")
    print(f"store size: {format_bytes(store.nbytes)} ({store.nbytes:,} bytes)")
    print(f"records: {len(payloads)}")
    print(f"iterations per record: {flush:,} (the flush of {args.workers} workers)")
    print(f"iterations per batch: {batch:,}"
          f"{'' if holds_cold_rows(config, args.workers) else ' (cold rows not held)'}")
    print(f"delta bytes per iteration: {sum(map(len, payloads)) / iterations:,.1f}")
    print(f"per-worker rate here (it/s): {measured_rate:,.0f}")
    print(f"per-worker rate predicted for (it/s): {worker_rate:,.0f}")
    received = [receive(payloads) for _ in range(args.rounds)]
    print(f"receive ms/record: {1e3 * statistics.median(received) / len(payloads):.3f}")
    arrivals = args.workers * worker_rate / flush
    for threads in args.threads:
        # Compile or load the merge kernels (records name rows by offset: only a copy of the
        # store they were recorded against takes them).
        replay(game, config, store, solver.iterations, payloads[:2], threads, 2)
        single = statistics.median(
            replay(game, config, store, solver.iterations, payloads, threads, 1)
            for _ in range(args.rounds))
        batched = statistics.median(
            replay(game, config, store, solver.iterations, payloads, threads, args.per_pass)
            for _ in range(args.rounds))
        passes = -(-len(payloads) // args.per_pass)
        b = max(0.0, (batched - single * passes / len(payloads)) / (len(payloads) - passes))
        a = max(0.0, single / len(payloads) - b)
        capacity = iterations / batched
        wait = delay(a, b, arrivals)
        prefix = f"{threads} threads: " if len(args.threads) > 1 else ""
        print(f"{prefix}pass ms: {1e3 * a:.3f}")
        print(f"{prefix}record ms: {1e3 * b:.3f}")
        print(f"{prefix}capacity (it/s): {capacity:,.0f}")
        print(f"{prefix}workers served: {capacity / worker_rate:.1f}")
        if wait == float("inf"):
            print(f"{prefix}flush to merge at {args.workers} workers: saturated")
        else:
            print(f"{prefix}flush to merge at {args.workers} workers: {1e3 * wait:.2f} ms "
                  f"({wait * args.workers * worker_rate:,.0f} iterations)")
    if args.live:
        per_record, merge = live(args, flush, args.live)
        print(f"live ms/record: {1e3 * per_record:.3f} (2 workers; main process busy "
              f"{merge['main_busy']:.1f}% of a core, {merge['per_pass']:.1f} records per pass)")
        print(f"live workers served: {flush / (per_record * worker_rate):.1f}")
        print(f"live paced flush at {args.workers} workers: "
              f"{args.workers * worker_rate * per_record / MAIN_BUSY_TARGET:,.0f} iterations")
    print(f"merge capacity: {capacity:.0f} iterations/s ({threads} threads)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
