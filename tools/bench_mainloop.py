"""The main loop under load: N virtual workers replay recorded records through the main process.

``tools/bench_merge.py`` times the merge pass alone. This drives everything the main process
does per record: the real training loop (:func:`holdem.training.train`) resumed from a warm
checkpoint, the real process executor, its delta rings, notes, merge passes, flush checks,
batch hand-out and DCFR sweeps. Only the workers are virtual: one *producer* process plays N of
them. Each virtual worker takes the batches the executor hands it (two in its pipeline, as a
real one) and, at ``--worker-rate`` iterations per second, writes a recorded real record --
its header patched to the batch, the flush and the worker -- into its ring and sends the note
(worker i starting i / N of a flush late, so that their records arrive spread out),
waiting at the cap on unmerged iterations as a real worker does
(:class:`holdem.runtime.worker.UnmergedGate`: a wait note, then its pipe until a go). So the
main process works as it would beside N real workers on a machine of that per-worker speed,
while this machine runs one producer and the main process.

1. warm: train in-process for ``--warm-iters`` iterations (or take ``--checkpoint``);
2. record: at least ``--records`` flushes of ``--flush`` iterations against the checkpoint's
   store (as the resumed run lays it out), in whole batches as the executor hands them out,
   and in whole holds of the strategy updates (``train.hold_strategy_seconds``, or
   ``--hold-seconds``, of a worker at ``--worker-rate``: the record that ends a hold carries
   what its worker held), keeping each record in order, and the worker's CPU time per
   iteration (traversal, split and encoding; one thread);
3. run: resume from the checkpoint for ``--seconds`` with N virtual workers (flushes fixed at
   ``--flush``, so not paced), and count the main process's CPU time (merge threads included)
   from the workers' start to the last merge pass.

Printed, one ``name: value`` per line: the records' bytes and rows; the worker's CPU per
iteration; the rate the virtual workers' records were merged at, and the rate they offered
while they had work and were not waiting at the cap (a loaded machine's producer falls short
of ``--worker-rate``: the lag simulator's check takes this one); the main process's CPU per
record, per merged iteration and per row merged;
its busy share (CPU over wall time: above 100% with merge threads) and its CPU over the wall
time it did not wait for the workers (below 100%: it waited for a core, the machine's load);
the same over the merge passes, each counted once per record it merged (the slowdown a record
sees: a pass the machine held up is long and merges many); its wake-up (from a record's sending
to the wait that read it, when it was waiting); records
per merge pass, and the median CPU of the merge passes that merged 1, 2, ... records (the
fixed cost of a pass apart from the records' size: one record, where passes mostly hold one at a
low ``--worker-rate``; the merge pass alone, not the training loop around it), and the line
fitted through them (a pass's fixed CPU and a record's own: what a record costs a main process
that is behind, which the main process's load does not move as it moves the CPU per record);
decision-node
visits per iteration of the records; the
flush-to-merge delay in milliseconds and in iterations merged meanwhile (the mean, then the
median: on a loaded machine the mean is set by the rare times the scheduler holds the main
process for tens of milliseconds); the waits at the cap;
and the main-to-worker cost ratio (main CPU per merged iteration over the worker's CPU per
iteration), which load on the machine moves less than either figure. With ``--parts``, the CPU
of each part of the passes too (the merge kernels, the wait and its pipe reads, the header
columns, ...), a pass's and a record's share.

What two cores cannot show: the producer's records are memory copies, not N traversals, so
neither the memory bandwidth and cache contention of N workers beside the main process nor a
two-socket machine's remote memory show here; a machine's per-record cost is this one's times a
factor measured there (the 16-core machine lent on 2026-11-28: 1.7x per record, with its
workers as much slower per core; docs/parallel.md#the-lag-simulators-clock).

    python tools/bench_mainloop.py --config configs/hunl_default.yaml --workers 15 \\
        --worker-rate 16400 --flush 50 --seconds 30
    python tools/bench_mainloop.py --game leduc --workers 4 --flush 200 --seconds 10

``tests/test_lag_model.py`` runs it against the lag simulator
(docs/parallel.md#the-lag-simulators-clock).
"""

import collections
import json
import select
import statistics
import sys
import tempfile
import time
from pathlib import Path

import benchlib  # first: puts this checkout's holdem on sys.path
from benchlib import log

import msgpack

from holdem import checkpoint as ckpt
from holdem import config as config_mod
from holdem import training
from holdem.cli.common import iteration_count, positive_float
from holdem.delta import record_kernels as rk
from holdem.delta import records
from holdem.delta.merge import merge_threads
from holdem.games import make_game
from holdem.runtime import frames, protocol
from holdem.runtime.flush import largest_flush, unmerged_cap
from holdem.runtime.pool import ProcessPool
from holdem.runtime.process import TARGET_BATCH_SECONDS, ProcessExecutor
from holdem.runtime.ring import (RECORDS_PER_RING, Inbox, RingWriter, Rings, encode_wait,
                                 ring_bytes_for)
from holdem.runtime.worker import BatchRunner, record_bytes_at
from holdem.store.store import read_only_view

OFFERED = "offered.json"        # the producer's figures, beside the records
QUIET = {"snapshot_interval": 1e9, "eval_baseline": None,
         "eval_lbr": None, "tensorboard": False}


# -- records ------------------------------------------------------------------------------------
def patched(record, batch_id, worker, generation, t0, iters, last, sent_ns):
    """``record`` (bytes) with its header saying it is worker ``worker``'s flush of ``iters``
    iterations from ``t0`` of batch ``batch_id`` (``last``: the batch's last), read against
    store generation ``generation``, encoded at ``sent_ns``, its strategy updates not scaled
    (made after the store's last sweep, as nearly all are)."""
    out = bytearray(record)
    for field, value in ((rk.F_ID, batch_id), (rk.F_WORKER, worker),
                         (rk.F_GENERATION, generation), (rk.F_T0, t0), (rk.F_ITERS, iters),
                         (rk.F_LAST, int(last)), (rk.F_SENT_NS, sent_ns), (rk.F_SWEEPS, -1)):
        at = rk.FIELDS_AT + 9 * field + 1
        out[at:at + 8] = int(value).to_bytes(8, "big", signed=True)
    return out


def rows_of(record):
    """Rows a record carries: stored rows with regret updates, with strategy updates, new rows."""
    msg = records.decode_delta(record)
    return len(msg["regret_offsets"]) + len(msg["strategy_offsets"]) + len(msg["keys"])


def record(game, config, store, t0, flush, count, per_batch, ring_bytes=None, hold_flushes=0):
    """Records of ``flush`` iterations from iteration ``t0`` against ``store``, in batches of
    ``per_batch`` flushes as a worker runs them, at least ``count`` of them, in the order made;
    and the worker's CPU seconds per iteration (traversal, split and encoding). The strategy
    updates are held as a worker process holds them (:class:`holdem.delta.split.HeldStrategy`,
    discounted at the main store's DCFR sweeps): until a batch's last flush, or until the
    record would outgrow its room in a ring of ``ring_bytes``; or with ``hold_flushes`` across
    batches (``train.hold_strategy_seconds`` at the virtual workers' rate), until the first
    batch's end that many flushes after the hold began, then a little a flush -- then the
    records span whole holds and end as one goes out, so that replaying them in turn sends
    each row's held updates about as often as a worker would."""
    runner = BatchRunner(game, config, config.train.num_workers)
    runner.warm_up()
    if ring_bytes is not None:
        runner.record_room = ring_bytes // RECORDS_PER_RING      # as worker_main
    # The main store sweeps every dcfr_interval merged iterations, so every dcfr_interval / W
    # of one worker's: it discounts what it holds at its first flush after each (as worker_main's
    # ring tells it).
    solver = config.solver
    every = (max(1, int(solver.dcfr_interval) // max(1, config.train.num_workers))
             if solver.weighting == "dcfr" and solver.schedule_clock == "iterations" else None)
    ran = [0]
    runner.sweeps = None if every is None else (lambda: ran[0] // every)
    batches = max(1, -(-count // per_batch))
    if hold_flushes > 0:
        # A hold is as old as the flushes since the end of its first (the clock counts
        # flushes); it ends at the end of the first batch that takes it to ``hold_flushes``.
        runner.hold_seconds = float(hold_flushes)
        runner.clock = lambda: ran[0] // flush
        runner.queued = lambda: True
    read = read_only_view(store.arrays)
    out, cpu, k = [], 0.0, 0
    while True:
        end = (k + 1) % per_batch == 0
        ran[0] = (k + 1) * flush               # after this flush
        sent = runner.holds_sent
        start = time.thread_time()
        payload = bytes(runner.flush(read, 0, 0, 0, t0 + k * flush, flush, end, 0.0))
        cpu += time.thread_time() - start
        out.append(payload)
        k += 1
        # Once there are enough: at a batch's end, or holding across batches where a hold
        # that was over has gone out (a ring's quarter room a flush), so that the records
        # replayed in turn send every hold (but what the flushes added while it went out,
        # which starts the next hold: a few flushes' strategy rows of a hold's thousands).
        if k >= batches * per_batch and (
                (hold_flushes <= 0 and end) or runner.holds_sent > sent):
            break
    return out, cpu / (k * flush)


def worker_cpu_per_iteration(game, config, store, t0, flush):
    """The worker's CPU seconds per iteration over a few flushes (a batch of 8)."""
    return record(game, config, store, t0, flush, 8, 8)[1]


# -- the virtual workers ------------------------------------------------------------------------
class _Virtual:
    __slots__ = ("queue", "done", "generation", "sent", "known", "blocked", "due", "next",
                 "free_since", "free")

    def __init__(self):
        self.queue = collections.deque()        # [id, t0, n, flush] handed to it, in order
        self.done = 0                           # iterations of the first batch sent
        self.generation = 0
        self.sent = self.known = 0              # iterations sent, and merged as last known
        self.blocked = False                    # waiting for a go
        self.due = 0.0                          # when its next record is made
        self.next = 0                           # the recorded record it sends next
        self.free_since = None                  # since when it has work and is not waiting
        self.free = 0.0                         # seconds it had work and was not waiting

    def pause(self, now):
        """It stops sending: waiting at the cap, or out of batches."""
        if self.free_since is not None:
            self.free += now - self.free_since
            self.free_since = None

    def resume(self, now):
        """It may send again: a go, or a batch."""
        if self.free_since is None and self.queue and not self.blocked:
            self.free_since = now


def producer(conns, ring, records_path, rate, cap, per_batch):
    """The producer process: plays ``len(conns)`` workers (see the module docstring), each
    writing into ring ``i`` of the segment ``ring`` and answering on ``conns[i]``; each replays
    the records in the order recorded, worker i starting i / N of the way in (at a batch's
    start, ``per_batch`` records a batch), so that their held strategy goes out at different
    times, as real workers' does. When the run stops it writes, beside ``records_path``, the
    iterations the virtual workers sent and the seconds they could send (had work and were
    not waiting at the cap): a producer that falls behind (a loaded machine) offers less than
    ``rate``."""
    workers = [_Virtual() for _ in conns]
    try:
        _produce(conns, ring, records_path, rate, cap, per_batch, workers)
    finally:
        now = time.monotonic()
        for w in workers:
            w.pause(now)
        Path(records_path).with_name(OFFERED).write_text(json.dumps(
            {"sent": sum(w.sent for w in workers), "free_seconds": sum(w.free for w in workers)}))


def _produce(conns, ring, records_path, rate, cap, per_batch, workers):
    payloads = msgpack.unpackb(Path(records_path).read_bytes())
    writers = [RingWriter(ring, i) for i in range(len(conns))]
    batches = max(1, len(payloads) // per_batch)
    for i, w in enumerate(workers):
        w.next = i * batches // len(workers) * per_batch
    poller = select.poll()
    fds = {}
    for i, conn in enumerate(conns):
        poller.register(conn.fileno(), select.POLLIN)
        fds[conn.fileno()] = i
        frames.send(conn.fileno(), protocol.encode_ready(i, 0))
    spacing = 1.0 / rate
    while True:
        now = time.monotonic()
        runnable = [w for w in workers if w.queue and not w.blocked]
        wait = None if not runnable else max(0.0, min(w.due for w in runnable) - now)
        for fd, _ in poller.poll(None if wait is None else int(wait * 1000) + 1):
            i, w = fds[fd], workers[fds[fd]]
            try:
                msg = protocol.decode_request(conns[i].recv_bytes())
            except (EOFError, OSError):
                return
            if msg["op"] == "stop":
                return
            now = time.monotonic()
            if msg["op"] == "go":
                w.known = max(w.known, msg["merged"])
                w.blocked = False
                w.due = max(w.due, now)
                w.resume(now)
                continue
            if msg.get("store"):
                w.generation = msg["store"]["generation"]
            if not w.queue:
                w.due = max(w.due, now)
                if not w.sent:
                    # Worker i starts i / N of a flush late, so the N send spread out as real
                    # workers' flushes do (and as the lag simulator staggers them), not all at
                    # once every flush.
                    w.due += i / len(workers) * min(msg["flush"], msg["n"]) * spacing
            w.queue.append([msg["id"], msg["t0"], msg["n"], msg["flush"]])
            w.resume(now)
        now = time.monotonic()
        for i, w in enumerate(workers):
            while w.queue and not w.blocked and w.due <= now:
                _emit(i, w, conns[i], writers[i], payloads, cap, spacing)


def _emit(i, w, conn, writer, payloads, cap, spacing):
    """Virtual worker ``i``'s next record, or its wait at the cap."""
    batch_id, t0, n, flush = w.queue[0]
    k = max(1, min(flush, n - w.done, cap))
    need = w.sent + k - cap
    if need > w.known:
        w.known = max(w.known, writer.merged())
    if need > w.known:
        w.blocked = True
        w.pause(time.monotonic())
        frames.send(conn.fileno(), encode_wait(need, time.monotonic_ns()))
        return
    last = w.done + k == n
    payload = patched(payloads[w.next % len(payloads)], batch_id, i, w.generation,
                      t0 + w.done, k, last, time.monotonic_ns())
    w.next += 1
    note = writer.put(payload)
    frames.send(conn.fileno(), payload if note is None else note)
    w.sent += k
    w.done += k
    if last:
        w.queue.popleft()
        w.done = 0
        if not w.queue:
            w.pause(time.monotonic())
    w.due += k * spacing


class ReplayPool(ProcessPool):
    """N virtual workers in one producer process, behind the real pool's pipes and rings."""

    def __init__(self, num_workers, records_path, rate, cap, ring_bytes, allocator, per_batch):
        super().__init__(num_workers, {}, "spawn",
                         rings=Rings(num_workers, ring_bytes, allocator=allocator))
        self.records_path, self.rate, self.cap = str(records_path), float(rate), int(cap)
        self.per_batch = int(per_batch)

    def start(self):
        pairs = [self.ctx.Pipe(duplex=True) for _ in range(self.num_workers)]
        proc = self.ctx.Process(target=producer, name="holdem-producer", daemon=True,
                                args=([child for _, child in pairs], self.rings.descriptor,
                                      self.records_path, self.rate, self.cap,
                                      self.per_batch))
        proc.start()
        for _, child in pairs:
            child.close()
        self.procs = [proc] * self.num_workers
        self.conns = [parent for parent, _ in pairs]
        self._poller = None

    def restart(self, i):
        raise RuntimeError(f"virtual worker {i} failed; the producer is not restarted")


class MeasuredExecutor(ProcessExecutor):
    """The process executor, noting the main process's CPU, wall clock and time waiting for the
    workers at each merge pass."""

    last = None                 # (CPU, wall clock, waited) after the latest pass that merged
    weighted = (0.0, 0.0)       # the passes' (wall, CPU) not waiting, each times its records

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.delays, self.wakes = [], []    # ns: each record's, each wake-up's
        self.pass_cpu = collections.defaultdict(list)   # records merged -> each pass's CPU

    def _merge(self, arena, trouble):
        sent = arena.columns().sent_ns if arena.count else []
        woke, idle_since = self._woke_ns, self._pass_end_ns
        out = super()._merge(arena, trouble)
        if sent:
            self.delays += [self._pass_end_ns - t for t in sent]
            if min(sent) > idle_since:          # as the executor counts its wake-ups
                self.wakes.append(woke - min(sent))
        return out

    def results(self, timeout):
        wall, cpu, waited, merges = (time.perf_counter(), time.process_time(), self._waited,
                                     self.stats["merges"])
        out = super().results(timeout)
        if self.stats["merges"] > merges and self.last is not None:   # not the first pass
            self.pass_cpu[self.stats["merges"] - merges].append(time.process_time() - cpu)
        if out:
            self.last = (time.process_time(), time.perf_counter(), self._waited)
            n = self.stats["merges"] - merges
            self.weighted = (
                self.weighted[0] + n * (self.last[1] - wall - (self._waited - waited)),
                self.weighted[1] + n * (self.last[0] - cpu))
        return out


class Parts:
    """With ``--parts``: the CPU time (of the thread that made each call) of the parts of a
    merge pass, summed over the run, by wrapping the functions that do them."""

    PARTS = (("merge kernels, one thread: check and add", rk, "check_add_records"),
             ("merge kernels, threads: add", rk, "add_records"),
             ("merge kernels, threads: check", rk, "check_records"),
             ("index kernel", rk, "index_records"),
             ("wait for the workers", ProcessPool, "wait"),
             ("  of it reading pipes", Inbox, "drain"),
             ("    of that taking frames in", Inbox, "received"),
             ("records' header columns", records.RecordArena, "columns"))

    def __init__(self):
        self.seconds = collections.Counter()
        for label, owner, name in self.PARTS:
            setattr(owner, name, self._timed(getattr(owner, name), label))

    def _timed(self, fn, label):
        def timed(*args, **kwargs):
            start = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[label] += time.thread_time() - start
        return timed

    def lines(self, passes, records):
        return [f"  {label}: {1e6 * self.seconds[label] / passes:.1f} us a pass, "
                f"{1e6 * self.seconds[label] / records:.1f} us a record"
                for label, _, _ in self.PARTS]


# -- the command ------------------------------------------------------------------------------
def pass_fit(pass_cpu):
    """(fixed, per record) seconds of a merge pass: the least-squares line through the median
    CPU of the passes that merged 1 .. 8 records (each size seen in 20 passes or more; nan
    with fewer than two sizes). How busy the main process is moves its CPU per record -- less
    to merge, and it sleeps more and wakes for fewer records, paying the fixed part more
    often -- but not these two: the per-record part is what a record costs a main process
    that is behind."""
    points = [(n, statistics.median(c)) for n, c in pass_cpu.items() if n <= 8 and len(c) >= 20]
    if len(points) < 2:
        return float("nan"), float("nan")
    slope, intercept = statistics.linear_regression(*zip(*points))
    return intercept, slope


def warm_checkpoint(source, iters, directory):
    """A checkpoint of ``iters`` in-process iterations of ``source``'s config."""
    config = config_mod.with_overrides(source, train={"num_workers": 1, "iters": iters,
                                                      "time_budget": None, **QUIET})
    result = training.train(config, directory, progress=False)
    return result.checkpoint


def build_parser():
    p = benchlib.parser(__doc__, "small game with the defaults of configs/GAME.yaml "
                                 "(default leduc)")
    p.add_argument("--workers", type=iteration_count, default=15,
                   help="virtual workers (default 15)")
    p.add_argument("--worker-rate", type=positive_float, metavar="R",
                   help="iterations/s of each virtual worker (default: the recorded worker's "
                        "rate on this machine)")
    p.add_argument("--flush", type=iteration_count, default=50,
                   help="iterations per record (default 50, 15 workers' flush)")
    p.add_argument("--batch", type=iteration_count, metavar="N",
                   help="iterations per batch, a multiple of --flush (default: about "
                        "0.25 s of a worker, as the process executor sizes them)")
    p.add_argument("--records", type=iteration_count, default=64,
                   help="distinct records recorded (at least; whole batches) and replayed in "
                        "turn (default 64)")
    p.add_argument("--seconds", type=positive_float, default=20.0,
                   help="seconds of training with the virtual workers (default 20)")
    p.add_argument("--threads", type=int, default=0, metavar="T",
                   help="merge threads (default 0: the run's, one per four workers)")
    p.add_argument("--warm-iters", type=iteration_count, default=1_000_000,
                   help="in-process iterations before recording (default 1,000,000)")
    p.add_argument("--checkpoint", metavar="PATH",
                   help="a warm checkpoint of the same config instead of --warm-iters")
    p.add_argument("--max-unmerged", type=int, default=0, metavar="N",
                   help="train.max_unmerged_iters (default 0: the run's)")
    p.add_argument("--hold-seconds", type=float, metavar="S",
                   help="train.hold_strategy_seconds: how long the virtual workers hold their "
                        "strategy updates across batches (default: the config's; 0: one "
                        "batch)")
    p.add_argument("--parts", action="store_true",
                   help="also print the CPU of each part of a merge pass (the kernels, the "
                        "wait, ...; the timers add about 1 us a call)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    source = (config_mod.load(args.config) if args.config
              else config_mod.default_for_game(args.game))
    with tempfile.TemporaryDirectory(prefix="holdem-mainloop-") as tmp:
        tmp = Path(tmp)
        path = args.checkpoint
        if path is None:
            log(f"warm: {args.warm_iters:,} in-process iterations")
            path = warm_checkpoint(source, args.warm_iters, tmp / "warm")
        checkpoint = ckpt.load(ckpt.resolve(path))
        game = make_game(source)
        store = ckpt.store_from_checkpoint(checkpoint, game)
        start_iters = checkpoint.iterations
        rate = args.worker_rate or 1.0 / worker_cpu_per_iteration(game, source, store,
                                                                   start_iters, args.flush)
        per_batch = (max(1, args.batch // args.flush) if args.batch
                     else max(1, round(rate * TARGET_BATCH_SECONDS / args.flush)))
        batch = per_batch * args.flush
        config = config_mod.with_overrides(source, train={
            "num_workers": args.workers, "flush_iters": args.flush, "batch_size": batch,
            "merge_threads": args.threads, "max_unmerged_iters": args.max_unmerged,
            "iters": None, "time_budget": args.seconds, **QUIET})
        cap = unmerged_cap(config, args.workers)
        # The rings the executor will make (ProcessExecutor.prepare, ProcessPool.make).
        ring_bytes = ring_bytes_for(record_bytes_at(game, config,
                                                    largest_flush(config, args.workers)))
        hold = (source.train.hold_strategy_seconds if args.hold_seconds is None
                else args.hold_seconds)
        config = config_mod.with_overrides(config, train={"hold_strategy_seconds": hold})
        hold_flushes = int(hold * rate / args.flush)
        payloads, worker_cpu = record(game, source, store, start_iters, args.flush,
                                      args.records, per_batch, ring_bytes, hold_flushes)
        (tmp / "records.msgpack").write_bytes(msgpack.packb(payloads))

        def make_pool(config, num_workers, allocator, store_state, record_bytes=None):
            # Rings as the process pool sizes them (ProcessPool.make).
            return ReplayPool(num_workers, tmp / "records.msgpack", rate, cap,
                              ring_bytes_for(record_bytes), allocator, per_batch)

        parts = Parts() if args.parts else None
        executor = MeasuredExecutor(game, config, args.workers, make_pool=make_pool)
        log(f"run: {args.workers} virtual workers at {rate:,.0f} iterations/s each, "
            f"{args.seconds:g} s")
        training.train(config, tmp / "run", resume_from=path, progress=False,
                       executor=executor)
        figures = tmp / OFFERED
        offered = json.loads(figures.read_text()) if figures.exists() else None
    s = executor.stats
    cpu, wall = executor.last[0] - executor.report.cpu_start, executor.last[1] - executor._run_start
    # Wall time not spent waiting for the workers: working, or waiting for a core.
    busy_wall = wall - (executor.last[2] - executor._waited_start)
    merged, iters = s["merges"], s["delta_iters"]
    row_counts = [rows_of(p) for p in payloads]
    rows = merged * statistics.mean(row_counts)
    delay = s["delay_seconds"] / merged
    print(f"config: {args.config or args.game}")
    print(f"store: {store.num_infosets:,} infosets after {start_iters:,} iterations")
    print(f"record: {args.flush:,} iterations, {statistics.mean(map(len, payloads)):,.0f} bytes, "
          f"{statistics.mean(row_counts):,.0f} rows (mean of {len(payloads)})")
    print(f"worker CPU per iteration (us): {1e6 * worker_cpu:.2f}")
    print(f"virtual workers: {args.workers} at {rate:,.0f} iterations/s each asked, "
          f"{iters / wall / args.workers:,.0f} merged")
    print("virtual workers' offered rate (each, while they had work and did not wait at the "
          "cap): " + (f"{offered['sent'] / offered['free_seconds']:,.0f} "
                      "iterations/s" if offered and offered["free_seconds"] > 0 else "n/a"))
    print(f"merge threads: {merge_threads(config, args.workers)}")
    print(f"main CPU per record (us): {1e6 * cpu / merged:.1f}")
    print(f"main CPU per merged iteration (us): {1e6 * cpu / iters:.3f}")
    print(f"main CPU per row (ns): {1e9 * cpu / rows:.1f}")
    print(f"main busy: {cpu / wall:.1%} of a core")
    print(f"main CPU while not waiting for workers: {cpu / busy_wall:.1%} of its wall time")
    print(f"main CPU in the passes that merged a record, by record: "
          f"{executor.weighted[1] / executor.weighted[0]:.1%} of their wall time")
    wake = s["wake_seconds"] / s["wakes"] if s["wakes"] else float("nan")
    print(f"main waking (ms): {1e3 * wake:.3f} ({s['wakes']:,} of {s['passes']:,} passes)")
    median_wake = statistics.median(executor.wakes) * 1e-9 if executor.wakes else float("nan")
    print(f"main waking, median (ms): {1e3 * median_wake:.3f}")
    print(f"records per pass: {merged / s['passes']:.1f}")
    by_size = [f"{n}: {1e6 * statistics.median(c):.1f} ({len(c):,})"
               for n, c in sorted(executor.pass_cpu.items()) if n <= 8 and len(c) >= 20]
    print("main CPU per merge pass by records merged, median (us; passes): "
          + (", ".join(by_size) or "n/a"))
    fixed, per_record = pass_fit(executor.pass_cpu)
    print(f"main CPU per merge pass, fitted (us): {1e6 * fixed:.1f} + {1e6 * per_record:.1f} a "
          f"record; a record's own, per merged iteration: {1e6 * per_record / args.flush:.3f}")
    print(f"visits per iteration: {s['visits'] / iters:.1f}")
    print(f"flush to merge: {1e3 * delay:.2f} ms ({delay * iters / wall:,.0f} iterations)")
    median = statistics.median(executor.delays) * 1e-9
    print(f"flush to merge, median: {1e3 * median:.2f} ms ({median * iters / wall:,.0f} "
          "iterations)")
    print(f"waits at the cap ({cap:,} iterations): {s['unmerged_waits']:,}, "
          f"{s['unmerged_wait_seconds'] / (wall * args.workers):.1%} of the workers' time; "
          f"records through the pipe: {s['piped']:,}")
    print(f"main/worker cost per iteration: {cpu / iters / worker_cpu:.3f}")
    if parts is not None:
        print(f"main CPU by part (the whole run, {s['passes']:,} passes):")
        print("\n".join(parts.lines(s["passes"], merged)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
