"""The process executor: batches on persistent worker processes, deltas merged by this process.

Each call of :meth:`ProcessExecutor.results`:

1. blocks (``pool.wait`` with a timeout) until a worker answers or dies;
2. reads every delta record the workers sent since the last call into one arena and merges them
   all in one pass (:func:`merge_pass`, :mod:`holdem.delta.merge`): a few kernel calls check
   their layout, their new infosets against the game and every row offset against the store,
   add the rows the store holds on the merge threads (shard ranges, one writer per row), and
   insert the new ones, growing the shared store if needed (a new generation);
3. answers the workers that wait for their records to be merged (a worker's unmerged
   iterations are capped: :func:`holdem.runtime.flush.unmerged_cap`), and publishes how many of
   each worker's iterations are merged (``pool.merged``);
4. re-issues the batches of workers that died or stayed silent for ``worker_timeout`` seconds to
   their replacements (a batch's random stream depends only on the seed and its first iteration,
   so the redo is the same work), and unlinks store generations no worker can still be told about.

Each worker keeps ``PIPELINE`` batches queued, so it never waits for the main process, and sends
a delta every few iterations of a batch (:mod:`holdem.runtime.flush`; the batch stays the unit of
scheduling): workers read the live shared store, so they lag the merged truth by the other
workers' unflushed iterations, about (W - 1) x flush / 2, plus the flush-to-merge delay; a
row a flush alone touched waits in its worker until the row's next touch or the batch's end
(:class:`holdem.delta.split.ColdRows`). A worker that dies or sends a malformed delta is
replaced, and what was not merged of its batches is re-issued (what it held of the merged
part is lost: at most one flush's updates per row); a worker that keeps failing spends the
restart budget (:class:`holdem.runtime.pool.RestartBudget`, the same for every pool) and stops
the run with :class:`WorkerFailure`. When the main process dies, the kernel kills its workers
(:func:`holdem.runtime.worker.die_with_parent`); the next run removes its shared-memory files.
``pool`` is the seam to where workers run (:class:`holdem.runtime.pool.Pool`): the executor asks
it how batches flush (a :class:`holdem.runtime.flush.FlushPolicy`), which inbox frames arrive
in, whether to log the store's changes and what follows a merge pass, and decides none of that
itself.
"""

import contextlib
import time

import numpy as np

from holdem.delta import records
from holdem.delta.merge import (MergeScratch, RowMerger, merge_arena, merge_one, merge_threads,
                                reason)
from holdem.metrics import log
from holdem.runtime import protocol, shm
from holdem.runtime.executor import Batch, BatchResult
from holdem.runtime.flush import largest_flush, unmerged_cap
from holdem.runtime.merge_report import MergeReport
from holdem.runtime.pool import RestartBudget, WorkerDied, WorkerFailure
from holdem.runtime.ring import Inbox
from holdem.runtime.worker import BatchRunner, batch_rng_state, ring_record_bytes
from holdem.solver.solver import regret_floor_at
from holdem.store.store import RegretStore, read_only_view

PIPELINE = 2
TARGET_BATCH_SECONDS = 0.25
FIRST_BATCH = 256
# Iterations per batch are also capped at this many per infoset in the store, so that a batch
# spans many flushes only where the game is large (Leduc has 288 infosets).
MAX_ITERS_PER_INFOSET = 10
READY_TIMEOUT = 600.0


def merge_pass(view, merger, arena, scratch=None):
    """Merge the records of ``arena`` into the run's store (``view``: the run's
    :class:`holdem.runtime.executor.RunView`), each source's merged records a prefix of what it
    sent, with the regret floor now; returns (codes, regret floor): see
    :func:`holdem.delta.merge.merge_arena`."""
    floor = regret_floor_at(view.config.solver, view.game.num_streets, view.iterations(),
                            view.elapsed())
    codes = merge_arena(view.store, merger, arena, floor, game=view.game, scratch=scratch,
                        by_source=True, dcfr=view.dcfr)
    return codes, floor


def batch_size_for(rate, store):
    """Iterations for a worker that traverses ``rate`` iterations/s (None: not measured yet):
    about TARGET_BATCH_SECONDS of work, at most MAX_ITERS_PER_INFOSET per stored infoset."""
    if rate is None:
        return FIRST_BATCH
    cap = max(1000, MAX_ITERS_PER_INFOSET * store.num_infosets)
    return max(1, min(cap, int(rate * TARGET_BATCH_SECONDS)))


class Pending:
    """A batch handed to a worker and the iterations of it merged so far (its flushes arrive in
    order, so what is merged is always its first ``merged`` iterations)."""

    __slots__ = ("batch", "merged")

    def __init__(self, batch):
        self.batch = batch
        self.merged = 0

    def remainder(self):
        """The part not merged yet, as a batch of its own (same id)."""
        b = self.batch
        return Batch(b.id, b.t0 + self.merged, b.n - self.merged, b.elapsed)

    def check(self, t0, iters, last, merged=None):
        """None when a flush of ``iters`` from ``t0`` (``last``) is the batch's next one once
        ``merged`` iterations of it are in (None: those merged so far), else what is wrong."""
        b = self.batch
        merged = self.merged if merged is None else merged
        if t0 != b.t0 + merged or iters < 1 or merged + iters > b.n or (
                last != (merged + iters == b.n)):
            return (f"flush of iterations {t0}..{t0 + iters - 1} (last: {last}) does not "
                    f"continue batch {b.id} ({b.t0}..{b.t0 + b.n - 1}, {merged} merged)")
        return None


class _Worker:
    def __init__(self):
        self.ready = False
        self.outstanding = {}           # batch id -> Pending
        self.last_heard = time.monotonic()
        self.generation = -1            # store generation it was last told about
        self.acked = -1                 # store generation its last answer was computed on
        self.rate = None                # iterations per second of traversal
        self.busy_seconds = 0.0
        self.merged = 0                 # iterations of its records merged since it started
        self.waiting = None             # (merged iterations it waits for, since: monotonic ns)


class ProcessExecutor:
    """Persistent worker processes returning msgpack deltas (see the module docstring).
    Where they run is ``pool``, or the pool ``make_pool(config, num_workers, allocator,
    store_state, record_bytes=...)`` makes at :meth:`start`
    (:func:`holdem.runtime.backends.make_pool`: the backend is chosen there; ``record_bytes``:
    the largest record a worker makes, estimated in :meth:`prepare`); ``store_state()`` gives
    (the run's store, its generation, the :class:`holdem.runtime.replica.StoreLog`) to a pool
    that keeps store replicas."""

    discounts_in_kernel = False
    in_background = True

    def __init__(self, game, config, num_workers, pool=None, make_pool=None):
        if pool is None and make_pool is None:
            raise ValueError("a ProcessExecutor needs a pool or make_pool "
                             "(holdem.runtime.backends.make_executor gives it one)")
        self.game = game
        self.config = config
        self.tc = config.train
        self.num_workers = int(num_workers)
        removed = shm.clean_stale()
        if removed:
            log(f"removed {len(removed)} shared-memory file(s) left by a killed run")
        self.allocator = shm.SharedAllocator()
        self.budget = RestartBudget(self.tc.worker_restarts, self.tc.worker_restart_window)
        self.pool = pool
        self.make_pool = make_pool
        self.log = None                 # the store's changes, when the pool keeps replicas
        self.merger = RowMerger(merge_threads(config, self.num_workers))
        self.inbox = Inbox()            # the pool's, from start()
        self.scratch = MergeScratch()
        self.view = None                # the run's RunView, from prepare()
        self.record_bytes = None        # the largest record a worker makes, from prepare()
        self.workers = [_Worker() for _ in range(self.num_workers)]
        self.queue = []                 # batches to send, re-issued ones first
        self.report = MergeReport(self.num_workers)
        self.stats = self.report.stats  # the run's counters (holdem.runtime.merge_report)
        self.cap = None                 # the flush policy's, from start()
        self._flushes = None            # the pool's FlushPolicy (flushes)
        self._woke_ns = 0               # when the last pool.wait returned
        self._pass_end_ns = 0           # when the last merge pass ended
        self._sweeps = None             # the DCFR sweeps last published to the workers
        self._published = None          # the store generation last published to them
        self._waited = 0.0              # seconds blocked in pool.wait since the start
        self._acked_moved = False       # a worker's acked generation rose since the last look

    # -- start -----------------------------------------------------------------------------
    def prepare(self, view):
        self.view = view
        start = time.perf_counter()
        runner = BatchRunner(self.game, self.config)      # compiles into numba's cache
        runner.warm_up()
        # The merge kernels, on a record of one iteration into a throw-away store.
        scratch = RegretStore(16)
        read = read_only_view(scratch.arrays)
        runner.run(read, 0, 1, 0.0)
        record = runner.take_delta(read, 0, 0, 0, 0, 1, True, 0.0, 0, 0.0)
        store, merger = RegretStore(16), RowMerger()
        merge_one(store, merger, record, -1.0, game=self.game)
        merge_one(store, merger, record, -1.0, game=self.game)          # rows it holds now
        # The largest record a worker can make, for its ring (a few tenths of a second; the pool
        # that gives the flush policy is made from it).
        self.record_bytes = ring_record_bytes(self.game, self.config,
                                              largest_flush(self.config, self.num_workers),
                                              unmerged_cap(self.config, self.num_workers), runner)
        return time.perf_counter() - start

    def start(self, view, stop):
        self.view = view
        if self.pool is None:
            self.pool = self.make_pool(self.config, self.num_workers, self.allocator,
                                       lambda: (view.store, self.allocator.generation, self.log),
                                       record_bytes=self.record_bytes)
        view.info(f"starting {self.num_workers} workers ({self.pool.describe()}), "
                  f"{self.flushes.text()}")
        self.inbox = self.pool.inbox()
        self.cap = self.flushes.cap
        self.log = self.pool.store_log(view.dcfr.steps)
        self._sweeps = view.dcfr.steps      # published before a worker makes a record
        self.pool.sweeps(self._sweeps)      # (a resumed run's), then as sweeps come
        self.pool.start()
        deadline = time.monotonic() + READY_TIMEOUT
        while not all(w.ready for w in self.workers):
            if stop.signal is not None:
                break               # the loop sees the signal and writes a checkpoint
            if time.monotonic() > deadline:
                raise RuntimeError(f"workers did not start within {READY_TIMEOUT:.0f} s")
            self.results(1.0)
        self._run_start = self.report.start()
        self._waited_start = self._waited

    # -- batches ---------------------------------------------------------------------------
    def _free(self):
        return [i for i, w in enumerate(self.workers)
                if w.ready and len(w.outstanding) < PIPELINE]

    def capacity(self):
        free = sum(PIPELINE - len(self.workers[i].outstanding) for i in self._free())
        return max(0, free - len(self.queue))

    def next_batch_size(self):
        if self.tc.batch_size:
            return self.tc.batch_size
        free = self._free()
        return batch_size_for(self.workers[free[0]].rate if free else None, self.view.store)

    def submit(self, batch):
        self.queue.append(batch)
        self._send()

    @property
    def flushes(self):
        """How the pool's workers flush (:meth:`holdem.runtime.pool.Pool.flush_policy`, asked
        once)."""
        if self._flushes is None:
            self._flushes = self.pool.flush_policy(self.config, self.num_workers)
        return self._flushes

    def _flush_of(self, batch):
        """The batch's flush (None: one delta for the batch). Before a run is attached (tests
        drive the executor alone) the store counts as empty."""
        infosets = self.view.store.num_infosets if self.view is not None else 0
        return self.flushes.batch(batch.n, infosets)

    def _send(self):
        """Hand queued batches to workers with free pipeline slots, emptiest first."""
        while self.queue:
            free = self._free()
            if not free:
                return
            i = min(free, key=lambda j: len(self.workers[j].outstanding))
            batch = self.queue.pop(0)
            w = self.workers[i]
            payload = protocol.encode_request(batch.id, batch.t0, batch.n, batch.elapsed,
                                              self._store_message(w),
                                              flush=self._flush_of(batch))
            if not w.outstanding:
                # An idle worker owes nothing: its silence counts from now, or one idle past
                # worker_timeout would be restarted as soon as it got work.
                w.last_heard = time.monotonic()
            w.outstanding[batch.id] = Pending(batch)
            try:
                self.pool.submit(i, payload)
            except WorkerDied:
                # Its end of the pipe is closed, so it is exiting: its sentinel fires next and
                # restart() re-issues this batch with the others it holds.
                return

    def _store_message(self, w):
        generation, descriptor = self.allocator.descriptor
        if w.generation == generation:
            return None
        w.generation = generation
        return {"generation": generation, "descriptor": descriptor}

    def in_flight(self):
        return sum(len(w.outstanding) for w in self.workers) + len(self.queue)

    # -- results ---------------------------------------------------------------------------
    def results(self, timeout):
        """One merge pass over everything the workers sent (see the module docstring)."""
        if self.log is not None:            # sweeps the loop applied since the last call
            self.log.discounts(self.view.dcfr.steps)
        if self.view is not None and self.view.dcfr.steps != self._sweeps:
            self._sweeps = self.view.dcfr.steps     # (tests drive an executor without a run)
            self.pool.sweeps(self._sweeps)
        inbox = self.inbox
        inbox.clear()
        trouble = {}                        # worker -> why it is restarted after this pass
        before = time.perf_counter()
        events = self.pool.wait(timeout, inbox, stall=self.tc.worker_timeout)
        self._waited += time.perf_counter() - before
        self._woke_ns = time.monotonic_ns()
        now = time.monotonic()
        for i, item in events:
            self.workers[i].last_heard = now
            if isinstance(item, WorkerDied):
                trouble.setdefault(i, str(item))
        for i, why in inbox.bad_notes.items():
            trouble.setdefault(i, f"rejected a malformed payload ({why})")
        for i, wait in inbox.waits.items():
            self.workers[i].waiting = wait
            self.stats["unmerged_waits"] += 1
        self._ready_messages(trouble)
        if inbox.rings is not None:         # records too large for a ring, or a ring full
            self.stats["piped"] += inbox.piped
        arena = inbox.records()
        out = self._merge(arena, trouble) if arena.count else []
        inbox.release()                     # before restarts: they empty the workers' rings
        self._resume_waiting(trouble)
        for i, why in trouble.items():
            self.restart(i, why)
        self._check_hung()
        self._publish_growth()
        self._release_old_generations()
        self.pool.sync()                    # e.g. send the store's changes to the replicas
        self._pace()
        self._send()
        return out

    def _resume_waiting(self, trouble):
        """Answer the workers that wait for their records to be merged
        (:class:`holdem.runtime.worker.UnmergedGate`) once enough are: a wait comes after the
        worker's records on its pipe, so the pass that read it merged them all, and the go
        follows at once unless a record was refused (the worker is then replaced)."""
        now_ns = time.monotonic_ns()
        for i, w in enumerate(self.workers):
            if w.waiting is None or i in trouble or w.merged < w.waiting[0]:
                continue
            self.stats["unmerged_wait_seconds"] += max(0, now_ns - w.waiting[1]) * 1e-9
            w.waiting = None
            try:
                self.pool.submit(i, protocol.encode_go(w.merged))
            except WorkerDied:
                pass                        # its sentinel fires next: restarted then

    def _pace(self):
        """Let the flush pacer see the main process's load: the time its merge passes spent
        on the records (merge_pass: the part that grows with them)."""
        if self.report.window_start is None:
            return
        s = self.stats
        self.flushes.observe(time.perf_counter(), s["merge_pass_seconds"], s["merges"],
                             s["delta_iters"], s["work_seconds"])

    def _ready_messages(self, trouble):
        """Frames of workers that are not ready yet are their ready messages."""
        def expects(i):
            return not self.workers[i].ready and i not in trouble
        for i, frame in self.inbox.messages(expects):
            try:
                protocol.decode_request_or_ready(frame)
                self.workers[i].ready = True
            except protocol.ProtocolError as exc:
                trouble[i] = f"rejected a malformed ready message ({exc})"

    def _sort_frames(self, arena, head, trouble):
        """Drop the records of workers being restarted, and flushes that do not continue a
        batch the worker holds (its later ones too). ``head``: the records' header columns
        (:meth:`holdem.delta.records.RecordArena.columns`)."""
        expect = {}                         # (worker, batch id) -> iterations merged by then
        statuses = arena.statuses().tolist()
        ids, t0s, iters, lasts = head.id, head.t0, head.iters, head.last
        for r, i in enumerate(arena.sources):
            w = self.workers[i]
            if i in trouble or not w.ready:
                arena.drop(r)
                continue
            if statuses[r] != records.OK:
                continue                    # merge_arena rejects it, and the worker's later ones
            pending = w.outstanding.get(ids[r])
            if pending is None:
                why = f"an answer to a batch it was not given ({ids[r]})"
            else:
                key = (i, ids[r])
                merged = expect.get(key, pending.merged)
                why = pending.check(t0s[r], iters[r], lasts[r], merged)
                expect[key] = merged + iters[r]
            if why is not None:
                trouble[i] = f"rejected a malformed payload ({why})"
                arena.drop(r)

    def _merge(self, arena, trouble):
        """Merge the pass's records; the merged flushes' results, summed into one."""
        start = time.perf_counter()
        head = arena.columns()
        self._sort_frames(arena, head, trouble)
        merging = time.perf_counter()
        codes, floor = merge_pass(self.view, self.merger, arena, self.scratch)
        s = self.stats
        s["merge_pass_seconds"] += time.perf_counter() - merging
        now_ns = time.monotonic_ns()
        if codes.any():                     # some record was skipped or rejected
            ok = codes == records.OK
            for r in np.flatnonzero((codes != records.OK)
                                    & (codes != records.SKIPPED)).tolist():
                trouble.setdefault(arena.sources[r],
                                   f"rejected a malformed payload ({reason(codes[r])})")
            merged = np.flatnonzero(ok).tolist()
        else:
            merged = list(range(arena.count))
        passed = {}                         # worker -> iterations of its records merged now
        ids, counts, lasts, generations = head.id, head.iters, head.last, head.generation
        seconds, sent_ns = head.seconds, head.sent_ns
        sources, lengths = arena.sources, arena.lengths
        # The merged records' totals, from the header columns (a pass holds a few records:
        # Python sums over them cost less than numpy's over the index table).
        iters = visits = delay_ns = nbytes = 0
        first_sent = None
        for r in merged:
            i = sources[r]
            w = self.workers[i]
            n = counts[r]
            pending = w.outstanding[ids[r]]
            pending.merged += n
            if lasts[r]:
                del w.outstanding[ids[r]]
            if self.log is not None:
                self.log.delta(arena.record(r), floor)
            if generations[r] > w.acked:
                w.acked = generations[r]
                self._acked_moved = True
                if generations[r] > w.generation:   # mapped between two flushes (its ring)
                    w.generation = generations[r]
                    s["store_follows"] += 1
            w.busy_seconds += seconds[r]
            if seconds[r] > 0:
                w.rate = n / seconds[r]
            w.merged += n
            passed[i] = passed.get(i, 0) + n
            iters += n
            visits += head.visits[r]
            delay_ns += max(0, now_ns - sent_ns[r])
            if first_sent is None or sent_ns[r] < first_sent:
                first_sent = sent_ns[r]
            nbytes += int(lengths[r])
        utility_sum = sum([head.utility_sum[r] for r in merged])
        work = sum([seconds[r] for r in merged])
        s["merges"] += len(merged)
        s["delta_bytes"] += nbytes
        for i, n in passed.items():
            self.pool.merged(i, self.workers[i].merged)
            self.report.merged_at_once(n)
        s["delta_iters"] += iters
        s["visits"] += visits
        s["work_seconds"] += work
        s["delay_seconds"] += delay_ns * 1e-9
        # The main process's wake-up: from the first record's sending to the return of the wait
        # that read it, counted when that record came after the previous pass (this process
        # was waiting, not merging): what the lag simulator's model takes as ``wake``.
        if first_sent is not None and first_sent > self._pass_end_ns:
            s["wake_seconds"] += max(0, self._woke_ns - first_sent) * 1e-9
            s["wakes"] += 1
        self._pass_end_ns = time.monotonic_ns()
        s["passes"] += 1
        s["merge_seconds"] += time.perf_counter() - start
        if not iters:
            return []
        return [BatchResult(iters=iters, utility_sum=utility_sum, visits=visits,
                            seconds=work)]

    def restart(self, i, why):
        """Replace worker ``i`` and queue what it did not deliver of its batches for re-issue.
        Raises :class:`WorkerFailure` when the restart budget is spent (``why`` is then the
        reason given) or no replacement starts: what is merged stays, the run stops."""
        self.budget.failed(i, why)
        w = self.workers[i]
        redo = [p.remainder() for p in w.outstanding.values()]
        self.queue[:0] = redo
        log(f"worker {i}: {why}; starting a replacement and re-issuing "
            f"{sum(b.n for b in redo):,} iterations of {len(redo)} batch(es)")
        self.stats["restarts"] += 1
        self.workers[i] = _Worker()
        try:
            self.pool.restart(i)
        except Exception as exc:
            raise WorkerFailure(f"worker {i}: no replacement could be started ({exc}); it "
                                f"was replaced because: {why}") from exc

    def _check_hung(self):
        now = time.monotonic()
        for i, w in enumerate(self.workers):
            limit = self.tc.worker_timeout if w.ready else READY_TIMEOUT
            if (w.outstanding or not w.ready) and now - w.last_heard > limit:
                self.restart(i, f"no answer for {now - w.last_heard:.1f} s")

    def _publish_growth(self):
        # A store that grew in this pass: the workers map the new generation at their next
        # flush, not their next batch (two batches a worker: on 63 workers, hundreds of
        # thousands of iterations that would read arrays no merge reaches any longer).
        generation = self.allocator.generation
        if generation != self._published and self.view is not None:
            a = self.view.store.arrays
            self.pool.store_grew(generation, (a.row_key.shape[0], a.regrets.shape[0],
                                              a.table.shape[0]))
            self._published = generation

    def _release_old_generations(self):
        # A generation's file may be unlinked once no worker can still be asked to map it:
        # every worker has answered a batch computed on a newer one. (Unlinking a file that
        # is mapped is fine; mapping one that was unlinked is not.) Looked at when a worker's
        # acked generation rose: a replaced worker's (-1) only holds the oldest back.
        if not self._acked_moved:
            return
        self._acked_moved = False
        oldest = min(w.acked for w in self.workers)
        if oldest > 0:
            self.allocator.release_before(oldest)
            if self.log is not None:
                self.log.release(oldest)

    # -- reporting (holdem.runtime.merge_report) ----------------------------------------------
    @property
    def unmerged_seen(self):
        return self.report.unmerged_seen

    def scalars(self):
        return self.report.scalars(self.pool, self.cap, self.workers)

    def reset_window(self):
        self.pool.reset_window()
        for w in self.workers:
            w.busy_seconds = 0.0
        self.report.reset_window()

    def summary(self, view):
        paced = self._flushes.pacer.highest if self._flushes is not None else 0
        return self.report.summary(view, self.pool, self.cap, paced)

    def checkpoint_state(self, view):
        # An in-process resume continues with the next batch's stream.
        return ([batch_rng_state(self.tc.seed, view.iterations())],
                {"next_batch": int(view.next_batch_id())}, {"num_workers": self.num_workers})

    def close(self):
        """Stop the workers, then remove the run's shared memory: each step runs whatever the
        ones before raised, the allocator's (every file of the run) last."""
        with contextlib.ExitStack() as steps:        # run in the reverse order of these lines
            steps.callback(self.allocator.close)
            steps.callback(self.merger.close)
            if self.pool is not None:
                steps.callback(self.pool.close)
