"""The worker process: runs batches of iterations against the shared store, returns deltas.

A worker is started once per run. It asks the kernel to kill it when the main process ends
(:func:`die_with_parent`), builds the game, maps the main process's store read-only, compiles
(or loads) the kernels, then loops: block on its pipe for a request (a 1-second timeout lets it
notice a dead parent where the kernel does not), run the batch's iterations in flushes (reading
the shared store and writing a private delta buffer), and after each flush send its delta and
clear the buffer. Between two flushes it maps the store's newest generation if the store grew
(its ring says so), so that the rest of a batch reads what is merged after the growth.
Its per-flush cost is independent of how long training has run: the buffer only ever holds what
the flush touched.
"""

import collections
import ctypes
import os
import signal
import time

import numpy as np

from holdem import config as config_mod
from holdem import rng
from holdem.delta import records
from holdem.delta.split import ColdRows, DeltaSplitter, HeldStrategy
from holdem.games import make_game
from holdem.runtime import frames, protocol, shm
from holdem.runtime.flush import unmerged_cap
from holdem.runtime.ring import RECORDS_PER_RING, RingWriter, encode_wait
from holdem.solver.solver import (make_params, make_workspace, run_kernel, strategy_discount,
                                  sweep_boundary)
from holdem.store.store import RegretStore, array_specs, read_only_view

_PARENT_CHECK_SECONDS = 1.0
_PR_SET_PDEATHSIG = 1                   # prctl option (linux/prctl.h)
# Record sizes are estimated from two flushes against an empty store (every row is new, and
# travels with its key: on hunl_default and hunl_blueprint such a record is as large as or
# larger than one against a warm store, per iteration), extrapolated as a power of the flush.
PROBE_FLUSHES = (64, 512)


def record_bytes_at(game, config, flush, runner=None):
    """About the most bytes a record of ``flush`` iterations takes: two records of
    PROBE_FLUSHES iterations against an empty store, and the power law through them
    (exponent in [0.5, 1]: rows touched grow more slowly than the iterations that touch
    them) at ``flush``."""
    runner = runner or BatchRunner(game, config)
    sizes = []
    for n in PROBE_FLUSHES:
        read = read_only_view(RegretStore(game.initial_rows).arrays)
        sizes.append(len(runner.flush(read, 0, 0, 0, 0, n, True, 0.0)))
    (n1, n2), (b1, b2) = PROBE_FLUSHES, sizes
    power = min(1.0, max(0.5, np.log(b2 / b1) / np.log(n2 / n1)))
    return int(b2 * (max(1, int(flush)) / n2) ** power)


def ring_record_bytes(game, config, largest, cap, runner=None):
    """The record size to size a worker's ring for (:func:`holdem.runtime.ring.ring_bytes_for`
    takes RECORDS_PER_RING of it): the largest record, of ``largest`` iterations
    (:func:`record_bytes_at`: a probe against an empty store, well above what a warm store's
    flushes send). Where ``train.flush_iters`` fixes flushes below the cap on unmerged
    iterations ``cap`` (None: no cap), the probe is close to the real records, so the ring is
    made large enough that the cap's backlog of such records takes at most half of it -- the
    other half is room for the records that carry held strategy rows (up to a quarter of the
    ring, HELD_MARGIN) and for the tail a lap leaves unused. (With ``flush_iters: 50``
    at 15 workers, ``hunl_blueprint``'s rings were sized from a 50-iteration record, 8 MB, and
    the cap let 28 such records, 7 MB, wait in one, so records went through the pipe.) Paced
    flushes and two workers' flushes keep the probe's size: their rings already take the
    backlog of warm records with room to spare (two ``hunl_default`` workers: 17 MiB each)."""
    size = record_bytes_at(game, config, largest, runner)
    if cap is None or config.train.flush_iters <= 0:
        return size
    waiting = -(-int(cap) // max(1, int(largest)))
    return max(size, 2 * waiting * size // RECORDS_PER_RING)


class Stopped(Exception):
    """A worker waiting for its records to be merged was told to stop, or lost its parent."""


class UnmergedGate:
    """A worker process's side of the cap on its unmerged iterations
    (:func:`holdem.runtime.flush.unmerged_cap`).

    Before each flush of ``k`` iterations the worker asks :meth:`admit`: its unmerged
    iterations -- those of the records it sent (:meth:`sent`) less those merged, as the main
    process last published them in the worker's ring (``merged``, a callable; None: only what
    go messages said), plus the ``k`` it is about to run -- may not pass ``cap``. Past it the
    worker sends a wait (:func:`holdem.runtime.ring.encode_wait`: the merged count it needs)
    and blocks on its pipe until the main process answers with a go
    (:func:`holdem.runtime.protocol.encode_go`), which it sends once those records are merged:
    no polling, and no lost wake-up (the answer is a message, not a flag). A flush longer than
    the cap is cut to it (:meth:`size`). Requests that arrive while it waits are kept, in order
    (at most the pipeline's batches and a stop), for :meth:`next_request`."""

    def __init__(self, cap, conn, merged=None, parent_pid=None):
        self.cap = int(cap)
        self.conn = conn
        self.merged = merged
        self.parent_pid = parent_pid
        self.sent_iters = 0             # iterations of the records it sent since it started
        self.known = 0                  # of those, merged as far as it knows
        self.held = collections.deque()
        self.waits = 0

    def size(self, k):
        """A flush of ``k`` iterations, cut to the cap."""
        return max(1, min(int(k), self.cap))

    def admit(self, k):
        """Return once a flush of ``k`` iterations keeps the unmerged ones within the cap."""
        need = self.sent_iters + int(k) - self.cap
        if need <= self.known:
            return
        if self.merged is not None:
            self.known = max(self.known, self.merged())
            if need <= self.known:
                return
        self.waits += 1
        frames.send(self.conn.fileno(), encode_wait(need, time.monotonic_ns()))
        while need > self.known:
            request = self._receive()
            msg = protocol.decode_request(request)
            if msg["op"] == "go":
                self.known = max(self.known, int(msg["merged"]))
            elif msg["op"] == "stop":
                raise Stopped("told to stop while waiting for its records to be merged")
            else:
                self.held.append(request)

    def sent(self, k):
        """A record of ``k`` iterations went to the main process."""
        self.sent_iters += int(k)

    def next_request(self):
        """A request that arrived while waiting, or None."""
        return self.held.popleft() if self.held else None

    def _receive(self):
        while not self.conn.poll(_PARENT_CHECK_SECONDS):
            if self.parent_pid is not None and os.getppid() != self.parent_pid:
                raise Stopped("the main process is gone")
        try:
            return self.conn.recv_bytes()
        except (EOFError, OSError):
            raise Stopped("the main process closed the pipe") from None


# Whether workers hold their strategy updates for a batch (HeldStrategy): it cut the main
# process's CPU per merged iteration about in half at 15 workers (hunl_default, flush 50,
# tools/bench_mainloop.py). Held updates reach the main process up to a batch late, so each
# record says how many DCFR sweeps the store had when its updates began and the main process
# scales them by the sweeps they missed (DcfrSchedule.strategy_scales). Without that scaling
# the lag simulator found 15 workers' blueprint about 20 mbb/hand weaker (docs/parallel.md).
HOLD_STRATEGY = True
# What is held goes out once it and HELD_MARGIN records like the last plain one would outgrow a
# record's room in the ring (BatchRunner.record_room): the releasing record carries the flush's
# own rows and what the flush adds to the held ones besides (at flush 50 of hunl_default 53 kB
# and up to 80 kB; the held ones come to about 1.3 MB a batch). A fixed share, half the room,
# sent about half of hunl_default's batches early at 15 workers: 1,319 strategy rows a record
# against 895 (tools/bench_mainloop.py's recording). Half the room stays the least that is held:
# where plain records are large (two workers' flushes of ~4,300 iterations, 1.5 MB) the margin
# alone left nothing to hold, and 2 workers sent 474 bytes an iteration instead of 362
# (tools/bench_parallel.py), their records that carry held rows going through the pipe as before.
HELD_MARGIN = 3
# A worker process holds its strategy updates across batches too, for up to
# ``train.hold_strategy_seconds`` (BatchRunner.hold_seconds): a row touched in many batches then
# costs the main process one add per hold instead of one per batch. Per 50-iteration record of
# hunl_default at 15 workers (tools/bench_mainloop.py's recording, one worker's batches of
# 4,100 iterations): 895 strategy rows held for a batch, 322 over four, 99 over sixteen;
# hunl_blueprint 5,299, 2,923 and 1,314 (regret rows 1,740 and 4,465 whatever the hold). Once a
# hold is over (or it takes HELD_MAX_BYTES) it goes out a quarter of a record's room at a time,
# with the next flushes, so that records stay within their ring; only the run's last batch
# sends all that is left in one record (through the pipe when it is larger than the room).
HELD_MAX_BYTES = 64 << 20


def holds_cold_rows(config, num_workers):
    """Whether workers hold cold rows (:class:`ColdRows`): ``train.hold_cold_rows`` (null, as
    runs of an earlier version stored it, is false). Off by default: moving cold rows in and
    out of the holding store cost a worker more than it saved the main process -- on
    ``hunl_default`` 10 us per iteration at 2 workers' flush and 25 at 15 workers' (the
    worker's rate 25.5 k instead of 37 k, and 15.4 k instead of 28.4 k iterations/s;
    docs/parallel.md)."""
    return bool(config.train.hold_cold_rows)


def own_delta_weight(config, num_workers):
    """How much a worker's own unmerged updates count in its regret matching:
    ``train.own_delta_weight`` (0: W, the number of workers; null: 1, the plain delta, as a
    serial run counts them). A pool writes its own default into its workers' config
    (:meth:`holdem.runtime.pool.Pool.own_delta_default`: 1 for workers that flush often, where
    more only multiplies one worker's sampling noise by W; W for Ray's, whose workers send one
    delta per batch; docs/parallel.md)."""
    weight = config.train.own_delta_weight
    if weight is None:
        return 1.0
    return float(num_workers) if weight == 0 else float(weight)


def batch_rng_state(seed, t0):
    """The RNG state of the batch starting at global iteration ``t0``: independent of which
    worker runs it, the same when a batch is re-issued, and never reused across resumes (a run
    only ever continues from the iterations it merged). It is
    ``np.random.SeedSequence([seed, t0]).generate_state(4, np.uint64)``, computed by
    :func:`holdem.rng.seed_sequence_state` (a worker asks once per flush)."""
    return rng.seed_sequence((seed, t0))


class BatchRunner:
    """Runs batches against a read-only store into a delta buffer (also used in tests)."""

    def __init__(self, game, config, num_workers=1):
        self.game = game
        self.config = config
        self.own_weight = own_delta_weight(config, num_workers)
        self.delta = RegretStore(row_capacity=game.initial_rows)
        self.workspace = make_workspace(game)
        self.utility = np.zeros(1024, dtype=np.float64)
        self.splitter = DeltaSplitter()
        self.cold = ColdRows(game) if holds_cold_rows(config, num_workers) else None
        # Strategy updates held for a batch (HOLD_STRATEGY); a worker process bounds them by
        # its ring (worker_main). None: every flush sends its own.
        self.held = HeldStrategy() if HOLD_STRATEGY else None
        # The largest record that goes through the ring (a quarter of it; None: no ring): what
        # is held goes out before the record that carries it would outgrow that.
        self.record_room = None
        self._plain_bytes = 0           # the last record that carried nothing held
        self._held_until = None         # the DCFR sweep before which what is held goes out
        self._held_sweeps = -1          # the main store's sweeps when the held updates began
        # Holding across batches (a worker process: worker_main): until a batch ends
        # ``hold_seconds`` of ``clock`` after the hold began, then a quarter of a record's room
        # a flush; a batch that ends with no request waiting (``queued()`` false: the run's
        # last before it stops) sends everything. 0: what is held goes out with each batch.
        self.hold_seconds = 0.0
        self.clock = time.monotonic
        self.queued = None
        self._held_since = 0.0          # when the held updates began (clock)
        self._draining = False          # the hold is over: it goes out, a little a flush
        self._drain_left = 0            # bytes held when it ended, less those sent since
        self.holds_sent = 0             # holds across batches that ended and went out
        # () -> the DCFR sweeps the main store has had, as the main process publishes them
        # (a worker process's ring: RingWriter.sweeps); None: not known.
        self.sweeps = None

    def warm_up(self):
        """Compile (or load) the kernels on throw-away stores."""
        scratch = RegretStore(row_capacity=16)            # an empty read-only store
        read = read_only_view(scratch.arrays)
        self.run(read, 0, 1, 0.0)
        self.take_delta(read, 0, 0, 0, 0, 1, True, 0.0, 0, 0.0)
        if self.held is not None:
            self.held.scale(1.0)                # (what a DCFR sweep makes it do)

    def run(self, read_arrays, t0, n, elapsed, state=None):
        """Run ``n`` iterations from global iteration ``t0``; returns (utility_sum, visits).
        ``state``: the RNG state to continue (advanced in place); None: the stream of ``t0``."""
        game = self.game
        params = make_params(self.config.solver, game.num_streets, is_delta=True,
                             elapsed=elapsed, own_weight=self.own_weight, iterations=t0)
        if state is None:
            state = batch_rng_state(self.config.train.seed, t0)
        if self.utility.shape[0] < n:
            self.utility = np.zeros(n, dtype=np.float64)
        self.workspace.visits[0] = 0
        done = 0
        while done < n:
            self.delta.reserve(game.max_new_rows, game.max_new_entries)
            self._fit_read_entry()
            ran = run_kernel(game, read_arrays, self.delta.arrays, params, self.workspace,
                             state, t0 + done, n - done, self.utility[done:])
            if ran == 0:     # reserve() leaves room for an iteration; never spin if it did not
                raise RuntimeError("the delta buffer has no room for an iteration")
            done += ran
        return float(self.utility[:n].sum()), int(self.workspace.visits[0])

    def _fit_read_entry(self):
        """Grow the workspace's ``read_entry`` (each delta row's shared entry, by value offset)
        to the delta buffer's capacity, keeping what this flush's traversals wrote."""
        have = self.workspace.read_entry
        need = self.delta.arrays.regrets.shape[0]
        if have.shape[0] < need:
            grown = np.full(need, -1, np.int64)
            grown[:have.shape[0]] = have
            self.workspace = self.workspace._replace(read_entry=grown)

    def flush(self, read_arrays, batch_id, worker, generation, t0, n, last, elapsed):
        """Run ``n`` iterations from global iteration ``t0`` (:meth:`run`) and return their
        delta record (:meth:`take_delta`), timed: one flush of a batch, as a worker sends it."""
        start = time.perf_counter()
        utility_sum, visits = self.run(read_arrays, t0, n, elapsed)
        seconds = time.perf_counter() - start
        return self.take_delta(read_arrays, batch_id, worker, generation, t0, n, last,
                               utility_sum, visits, seconds)

    def take_delta(self, read_arrays, batch_id, worker, generation, t0, n, last, utility_sum,
                   visits, seconds):
        """The delta record of the ``n`` iterations from ``t0`` just run (split against the
        shared store it read; ``last``: the batch's last flush), leaving the delta buffer empty
        for the next flush. The strategy updates of stored rows are held until the batch's last
        flush, or until the record that carries them would outgrow its room in the ring
        (:attr:`record_room`, HELD_MARGIN); a worker process holds them across batches instead
        (:attr:`hold_seconds`: until a batch ends with the hold that old, or they take
        HELD_MAX_BYTES; then they go out a quarter of a record's room a flush; a batch that
        ends with no request waiting sends them all); when the main store has a DCFR discount sweep
        meanwhile (:attr:`sweeps`), what is held is discounted as the sweep discounted the
        store's sums (so a batch's strategy rows go out once, however many sweeps it spans: at
        15 workers of ``hunl_default`` a batch meets 0.6 sweeps); the record says how many
        sweeps the store had at the last of them, and the main process scales the updates by
        what later sweeps would have discounted them
        (:meth:`holdem.solver.solver.DcfrSchedule.strategy_scales`), so that they count as
        they would in-process (:class:`HeldStrategy`). Where the sweeps are not known, the
        updates go out at the flush that reaches the run's next sweep by iteration number
        (:func:`holdem.solver.solver.sweep_boundary`). Where cold
        rows are held (:func:`holds_cold_rows`), the record leaves out the rows that neither the
        flush before nor an earlier held touch reached; a later flush that touches them again,
        or the batch's last, carries them (:class:`ColdRows`)."""
        # Rows put back from the cold rows' store were not visited by this flush's
        # traversals, so their shared entries are looked up again.
        entries = None
        if self.cold is not None:
            self.cold.route(self.delta, last)
        else:
            entries = self.workspace.read_entry
        sweeps = -1 if self.sweeps is None else int(self.sweeps())
        held, release, budget = self.held, True, None
        if held is not None:
            if held.rows == 0:
                self._draining = False
                self._held_since = self.clock()
                self._held_sweeps = sweeps
                self._held_until = (sweep_boundary(self.config.solver, t0) if sweeps < 0
                                    else None)
            elif sweeps > self._held_sweeps >= 0:
                # The main store swept meanwhile: discount what is held as the sweeps did the
                # store's sums, and hold on (it then counts from the last of them).
                held.scale(strategy_discount(self.config.solver.dcfr_gamma,
                                             self._held_sweeps, sweeps))
                self._held_sweeps = sweeps
            # The most held bytes a record may carry and stay within its ring's room.
            room = None if self.record_room is None else max(
                self.record_room // 2, self.record_room - HELD_MARGIN * self._plain_bytes)
            if self.hold_seconds > 0 and self.queued is not None:     # across batches
                held.max_bytes = HELD_MAX_BYTES
                if not self._draining and (held.full() or (
                        last and self.clock() - self._held_since >= self.hold_seconds)):
                    self._draining, self._drain_left = True, held.nbytes
                # Everything at the run's last batch (nothing waits) or a sweep rule; else,
                # once the hold is over, a quarter of a record's room a flush (records that
                # leave room in the ring for the plain ones while the main process is behind)
                # until as much went out as was held.
                release = (last and not self.queued()) or sweeps != self._held_sweeps or (
                    self._held_until is not None and t0 + n >= self._held_until)
                if not release and self._draining:
                    release = True
                    budget = None if self.record_room is None else self.record_room // 4
            else:
                if room is not None:
                    held.max_bytes = room
                release = last or held.full() or sweeps != self._held_sweeps or (
                    self._held_until is not None and t0 + n >= self._held_until)
            sweeps = self._held_sweeps
        split = self.splitter.split(read_arrays, self.delta.arrays, entries, held, release,
                                    budget)
        if budget is not None:
            # Once as much as was held when the hold ended went out, what the flushes added
            # meanwhile starts a new hold (where every flush adds more than a record's room,
            # the hold ends again at the next batch's end).
            self._drain_left -= 4 * (split.strategy.offsets.size + split.strategy.values.size)
            if self._drain_left <= 0:
                self._draining, self._held_since = False, self.clock()
                self.holds_sent += 1
        payload = records.encode_delta(batch_id, worker, generation, t0, n, last, utility_sum,
                                       visits, seconds, split, sweeps)
        if not release:
            self._plain_bytes = len(payload)
        self.delta.clear()
        return payload


class BatchServer:
    """A worker between batches: its :class:`BatchRunner` and the store generation it maps.
    Worker processes (:func:`worker_main`) and Ray actors (:mod:`holdem.runtime.ray_pool`)
    both serve requests with it.

    ``relocate(descriptor) -> descriptor`` maps the main process's segment to the one this
    worker reads: a Ray worker on another machine maps its node's replica of the store, whose
    generations follow the main store's. (A Ray batch starts only once the replica has applied
    the changes sent before it, growth included; should a generation's file still be missing,
    the worker keeps reading the one it has and maps the new one at its next batch.)
    """

    def __init__(self, config, worker_index, relocate=None):
        self.worker_index = worker_index
        self.game = make_game(config)
        self.runner = BatchRunner(self.game, config, config.train.num_workers)
        self.runner.warm_up()
        self.relocate = relocate
        self.gate = None                # a worker process's UnmergedGate (Ray actors: none)
        self.segment = None
        self.generation = -1
        self._wanted = None             # a newer generation's message, not mapped yet
        # () -> (generation, capacities) of the store's newest generation, or None (a worker
        # process's ring publishes it; Ray actors: none): mapped between two flushes, so that
        # a batch handed out before the store grew does not run on arrays merges no longer
        # reach (worker_main).
        self.newest = None

    def serve(self, request, emit=None):
        """Run one request (bytes): its batch in flushes of ``flush`` iterations, each flush's
        delta record passed to ``emit`` as soon as it is made (None: collected and returned as
        a list). Returns None for a stop request. Each flush waits at :attr:`gate` (an
        :class:`UnmergedGate`, whose cap also cuts it), where there is one."""
        msg = protocol.decode_request(request)
        if msg["op"] == "stop":
            return None
        if msg["op"] == "go":           # a go answers a wait (UnmergedGate): nothing to run
            return []
        store = msg.get("store")
        if store is not None and store["generation"] > self.generation:
            self._wanted = store
        if self._wanted is not None:
            self._map()
        records = []
        emit = emit or records.append
        n, flush, done = msg["n"], max(1, msg["flush"]), 0
        gate = self.gate
        while done < n:
            k = min(flush, n - done)
            if gate is not None:
                k = gate.size(k)
                gate.admit(k)
            if self.newest is not None:
                self._follow()
            emit(self.runner.flush(self.segment.arrays, msg["id"], self.worker_index,
                                   self.generation, msg["t0"] + done, k, done + k == n,
                                   msg["elapsed"]))
            if gate is not None:
                gate.sent(k)
            done += k
        return records

    def _follow(self):
        """Map the store's newest generation, if the main process published one newer than
        the one read (a batch's later flushes then read it: regrets merged since the growth)."""
        newest = self.newest()
        if newest is None or newest[0] <= self.generation or self.segment is None:
            return
        generation, capacities = newest
        self._wanted = {"generation": generation, "descriptor": shm.sibling(
            self.segment.descriptor, generation, array_specs(*capacities))}
        self._map()

    def _map(self):
        store = self._wanted
        descriptor = store["descriptor"]
        if self.relocate is not None:
            descriptor = self.relocate(descriptor)
        try:
            segment = shm.Segment(descriptor)
        except FileNotFoundError:
            if self.segment is None:
                raise RuntimeError(f"worker {self.worker_index}: store segment "
                                   f"{descriptor['path']} does not exist") from None
            return                      # a replica not there yet: keep reading the old one
        if self.segment is not None:
            self.segment.close()
        self.segment, self.generation, self._wanted = segment, store["generation"], None

    def close(self):
        if self.segment is not None:
            self.segment.close()
            self.segment = None


def die_with_parent(parent_pid):
    """Have the kernel kill this process with SIGKILL the moment its parent ends (Linux's
    PR_SET_PDEATHSIG; elsewhere a no-op: the worker loop's polls notice within a second or a
    flush). Returns False if the parent ``parent_pid`` is gone already."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    return os.getppid() == parent_pid


def worker_main(conn, worker_index, config_dict, parent_pid, ring=None):
    """Entry point of a worker process (must be importable for the spawn start method);
    ``ring``: the delta rings' segment (its records go to ring ``worker_index``), or None."""
    # Ctrl-C in a terminal reaches the whole process group: the main process decides what
    # happens (final checkpoint, then a stop message), so workers ignore it; likewise the
    # SIGHUP of a closed terminal.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    # A main process that is killed runs no cleanup: without this, a worker would go on
    # starting up (seconds of kernel loading under load) or finish its flush first.
    if not die_with_parent(parent_pid):
        return
    config = config_mod.from_dict(config_dict, source="worker config")
    server = BatchServer(config, worker_index)     # num_workers resolved by the executor
    writer = RingWriter(ring, worker_index) if ring is not None else None
    if writer is not None:
        server.runner.sweeps = writer.sweeps
        server.newest = writer.store
        server.runner.record_room = writer.size // RECORDS_PER_RING
    gate = server.gate = UnmergedGate(unmerged_cap(config, config.train.num_workers), conn,
                                      merged=writer.merged if writer is not None else None,
                                      parent_pid=parent_pid)
    # Strategy updates held across batches while another request waits: the main process
    # keeps PIPELINE batches queued, so a worker's last batch before the run stops finds none
    # and sends what it holds, before the final checkpoint.
    server.runner.hold_seconds = float(config.train.hold_strategy_seconds or 0.0)
    server.runner.queued = lambda: bool(gate.held) or conn.poll(0)

    def emit(record):
        note = writer.put(record) if writer is not None else None
        frames.send(conn.fileno(), record if note is None else note)
    try:
        frames.send(conn.fileno(), protocol.encode_ready(worker_index, os.getpid()))
    except (BrokenPipeError, OSError):
        return
    try:
        while True:
            request = gate.next_request()
            if request is None:
                if not conn.poll(_PARENT_CHECK_SECONDS):
                    if os.getppid() != parent_pid:
                        return                       # the main process is gone
                    continue
                try:
                    request = conn.recv_bytes()
                except (EOFError, OSError):
                    return
            try:
                if server.serve(request, emit) is None:
                    return
            except (BrokenPipeError, OSError, Stopped):
                return
    except KeyboardInterrupt:
        return              # Ctrl-C reaches the whole process group; the main process decides
    finally:
        server.close()
        if writer is not None:
            writer.close()
