"""Merge capacity: how many iterations of worker deltas per second the main process can consume.

In a parallel run every worker's delta goes through the main process: decode and validate the
msgpack payload, check its infosets against the game, merge it into the shared store. When N
workers together produce more iterations per second than that path consumes, adding workers adds
nothing. This benchmark measures the path on its own, without workers or pipes:

1. record: train in-process until the store is near its full size (its infoset count grows less
   than 1% in 10 CPU seconds, or ``--warm-seconds`` CPU seconds have passed), then run
   ``--batches`` batches as a worker does (``BatchRunner`` on a read-only view of that store) and
   keep each encoded delta. The worker's CPU time per iteration (traversal plus encoding) gives
   the per-worker rate;
2. replay: ``--rounds`` times, into a fresh private copy of the store, consume every recorded
   delta as :meth:`holdem.runtime.process.ProcessExecutor._merge` does, timed with CPU time
   (one thread) or wall time (more).

``produce`` (worker side) and ``consume`` (main side) below are the only places that call the
project's delta path.
Output, one ``name: value`` per line on stdout (progress goes to stderr); ``decode`` is
``protocol.decode_delta`` (msgpack and the protocol's field checks), ``validate`` is
``game.keys_match`` of the rows new to the store, ``merge`` is
:func:`holdem.runtime.replica.apply_delta` (every offset checked against the store, then the values
added on ``--threads`` threads; the new rows merged by key) with the regret floor; medians over the
rounds. ``receive`` is the CPU time of receiving the deltas from a socketpair, with the frames
workers send (:mod:`holdem.runtime.frames`) and, for comparison, with ``multiprocessing``'s
``recv_bytes``; it is printed apart and not part of the capacity. ``workers served`` = merge
capacity / per-worker rate: the worker count at which the main process saturates (receiving and
the rest of the main loop not included). The last line is ``merge capacity: N iterations/s (T
threads)``.

    python tools/bench_merge.py --game leduc --warm-seconds 5        # about 15 s
    python tools/bench_merge.py --config configs/hunl_default.yaml
    python tools/bench_merge.py --config configs/hunl_blueprint.yaml --threads 1,2,4
"""

import statistics
import sys
import time

import benchlib  # first: puts this checkout's holdem on sys.path
from benchlib import log

from holdem import config as config_mod
from holdem.cli.common import iteration_count, positive_float
from holdem.games import make_game
from holdem.metrics import format_bytes
from holdem.runtime import protocol
from holdem.runtime.process import TARGET_BATCH_SECONDS, batch_size_for
from holdem.runtime.replica import apply_delta
from holdem.runtime.worker import BatchRunner
from holdem.solver import kernels as solver_kernels
from holdem.solver.solver import Solver, make_params
from holdem.store.delta import RowMerger
from holdem.store.kernels import StoreArrays
from holdem.store.store import RegretStore, read_only_view

PLATEAU_SECONDS = 10.0           # warm until the infoset count grows < PLATEAU_GROWTH in this
PLATEAU_GROWTH = 0.01
PROBE_ITERATIONS = 1000          # the batch that measures the worker rate for --batch-size


# -- the seam: worker side and main side of one batch -----------------------------------------
def produce(runner, read_arrays, t0, n):
    """One worker batch of ``n`` iterations from global iteration ``t0`` against the read-only
    ``read_arrays``; returns the encoded delta as a worker sends it (see worker_main)."""
    start = time.perf_counter()
    utility_sum, visits = runner.run(read_arrays, t0, n, 0.0)
    seconds = time.perf_counter() - start
    return runner.take_delta(read_arrays, 0, 0, 0, n, utility_sum, visits, seconds)


def consume(state, payload, threads):
    """The main process's handling of one delta (as ProcessExecutor._merge): decode, check the
    new rows against the game, merge (offsets checked, then added on ``threads`` threads).
    Returns the delta's iterations."""
    state.lap(None)
    msg = protocol.decode_delta(payload)
    state.lap("decode")
    keys, num_actions = msg["keys"], msg["num_actions"]
    if keys.size and not state.game.keys_match(keys, num_actions):
        raise protocol.ProtocolError("delta holds infosets that are not in the game")
    state.lap("validate")
    apply_delta(state.store, state.merger(threads), msg, state.floor())
    state.iterations += msg["iters"]
    state.lap("merge")
    return msg["iters"]


class Replay:
    """Main-side state of one replay: a private copy of the store, the run's iteration count
    (the regret floor scales with it) and CPU time per stage."""

    def __init__(self, game, config, store, iterations, clock):
        self.game, self.config, self.iterations = game, config, iterations
        self.store = RegretStore(row_capacity=16)
        self.store.arrays = StoreArrays(*(a.copy() for a in store.arrays))   # same capacity
        self.clock = clock
        self.seconds = {"decode": 0.0, "validate": 0.0, "merge": 0.0}
        self._last = clock()
        self._merger = None

    def merger(self, threads):
        """The :class:`RowMerger` with ``threads`` threads (made once; the run's lives as long)."""
        if self._merger is None:
            self._merger = RowMerger(threads)
        return self._merger

    def close(self):
        if self._merger is not None:
            self._merger.close()

    def lap(self, stage):
        """Charge the time since the previous lap to ``stage`` (None: not timed)."""
        now = self.clock()
        if stage is not None:
            self.seconds[stage] = self.seconds.get(stage, 0.0) + now - self._last
        self._last = now

    def floor(self):
        """The regret floor now, as ProcessExecutor._weight_now scales it."""
        floor = self.config.solver.regret_floor
        if floor is None:
            return None
        params = make_params(self.config.solver, self.game.num_streets)
        return floor * float(solver_kernels.iteration_weight(params, self.iterations))


# -- recording --------------------------------------------------------------------------------
def warm(solver, cap_seconds):
    """Train in-process until the store's infoset count grows less than PLATEAU_GROWTH in
    PLATEAU_SECONDS of CPU time, or for ``cap_seconds`` of CPU time."""
    solver.run(1)                                      # compile or load the kernels
    start = time.process_time()
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


def record(game, config, store, t0, batches, batch_size):
    """Encoded deltas of ``batches`` worker batches from iteration ``t0``, the batch size and
    the worker's rate (iterations per CPU second of produce)."""
    read = read_only_view(store.arrays)
    runner = BatchRunner(game, config)
    runner.warm_up()
    if batch_size is None:
        start = time.thread_time()
        produce(runner, read, t0, PROBE_ITERATIONS)
        rate = PROBE_ITERATIONS / max(time.thread_time() - start, 1e-9)
        batch_size = batch_size_for(rate, store)                        # as the run sizes it
        t0 += PROBE_ITERATIONS
    payloads, cpu = [], 0.0
    for b in range(batches):
        start = time.thread_time()
        payloads.append(produce(runner, read, t0 + b * batch_size, batch_size))
        cpu += time.thread_time() - start
    return payloads, batch_size, batches * batch_size / max(cpu, 1e-9)


def receive(payloads):
    """CPU seconds this thread spends receiving ``payloads`` from a worker: (with the project's
    frames, with ``multiprocessing``'s ``recv_bytes``), the payloads sent by a thread over a
    socketpair, as a worker sends them to the main process."""
    import multiprocessing
    import threading

    from holdem.runtime import frames

    out = []
    for use_frames in (True, False):
        ours, theirs = multiprocessing.Pipe(duplex=True)
        send = ((lambda p: frames.send(theirs.fileno(), p)) if use_frames
                else theirs.send_bytes)
        sender = threading.Thread(target=lambda: [send(p) for p in payloads])
        sender.start()
        receiver = frames.Receiver()
        seconds = 0.0
        for _ in payloads:
            ours.poll(None)
            start = time.thread_time()
            if use_frames:
                receiver.read(ours.fileno())
            else:
                ours.recv_bytes()
            seconds += time.thread_time() - start
        sender.join()
        ours.close()
        theirs.close()
        out.append(seconds)
    return out


def replay(game, config, store, iterations, payloads, threads):
    """One round: seconds per stage consuming ``payloads`` into a fresh copy of ``store``."""
    # Thread CPU time ignores other processes; a multi-threaded merge is judged by wall time.
    clock = time.thread_time if threads == 1 else time.perf_counter
    state = Replay(game, config, store, iterations, clock)
    try:
        for payload in payloads:
            consume(state, payload, threads)
    finally:
        state.close()
    return state.seconds


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
                   help="merge threads; a list replays the same deltas with each, and the last "
                        "line gives the last (default 1)")
    p.add_argument("--warm-seconds", type=positive_float, default=150.0, metavar="S",
                   help="at most this many CPU seconds of in-process training before recording; "
                        "less when the store stops growing (default 150: hunl_blueprint then "
                        "holds several million infosets)")
    p.add_argument("--batches", type=iteration_count, default=12,
                   help="worker batches recorded (default 12)")
    p.add_argument("--batch-size", type=iteration_count, metavar="N",
                   help="iterations per batch (default: what a worker does in "
                        f"{TARGET_BATCH_SECONDS:g} s, capped as the parallel run caps it)")
    p.add_argument("--rounds", type=iteration_count, default=3,
                   help="replays on fresh copies of the store; medians reported (default 3)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.config:
        config = config_mod.load(args.config)
    else:
        config = config_mod.default_for_game(args.game)
    thread_counts = args.threads
    game = make_game(config)
    solver = Solver(game, config)
    warm(solver, args.warm_seconds)
    store = solver.store
    payloads, batch_size, worker_rate = record(game, config, store, solver.iterations,
                                               args.batches, args.batch_size)
    iterations = len(payloads) * batch_size

    print(f"config: {args.config or args.game}")
    print(f"infosets in the store: {store.num_infosets:,}")
    print(f"store size: {format_bytes(store.nbytes)} ({store.nbytes:,} bytes)")
    print(f"batches: {len(payloads)}")
    print(f"iterations per batch: {batch_size:,}")
    print(f"delta bytes per iteration: {sum(map(len, payloads)) / iterations:,.1f}")
    print(f"per-worker rate (it/s): {worker_rate:,.0f}")
    received = [receive(payloads) for _ in range(args.rounds)]
    for k, how in enumerate(("frames", "recv_bytes")):
        ms = 1e3 * statistics.median(r[k] for r in received) / len(payloads)
        print(f"receive ms/batch ({how}): {ms:.3f}")
    for threads in thread_counts:
        # Compile or load the merge kernels (deltas name rows by offset: only a copy of the
        # store they were recorded against takes them).
        replay(game, config, store, solver.iterations, payloads[:1], threads)
        rounds = [replay(game, config, store, solver.iterations, payloads, threads)
                  for _ in range(args.rounds)]
        capacity = statistics.median(iterations / sum(r.values()) for r in rounds)
        stage_ms = {k: 1e3 * statistics.median(r[k] for r in rounds) / len(payloads)
                    for k in rounds[0]}
        prefix = f"{threads} threads: " if len(thread_counts) > 1 else ""
        for stage, ms in stage_ms.items():
            print(f"{prefix}{stage} ms/batch: {ms:.3f}")
        print(f"{prefix}workers served: {capacity / worker_rate:.1f}")
        print(f"{prefix}capacity (it/s): {capacity:,.0f}")
    print(f"merge capacity: {capacity:.0f} iterations/s ({threads} threads)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
