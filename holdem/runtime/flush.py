"""How workers flush: the policy a pool hands its executor (:class:`FlushPolicy`).

A worker runs each batch in *flushes* and sends a delta record after each. How many iterations
a flush has is a trade: the other workers miss a worker's unsent iterations (about (W - 1) x
flush / 2 of them), and every flush costs its worker a split and an encoding and the main
process a merge. The rules, each with the measurements behind it:

- :func:`flush_iterations` and :func:`pair_flush`: the flush for W workers (``train.flush_iters``,
  or LAG_ITERATIONS / (W - 1); for one or two workers as many iterations as the store has
  infosets, within bounds);
- :class:`FlushPacer`: a floor under the flush when the main process cannot keep up with the
  records;
- :func:`unmerged_cap`: the most unmerged iterations a worker may have before it waits, which
  also cuts its flush (:func:`largest_flush`, the largest record a worker makes, sizes its ring);
- :func:`flush_text`: how a run's start message says it.

:class:`FlushPolicy` puts them together for one run: a pool hands the process executor one
(:meth:`holdem.runtime.pool.Pool.flush_policy`; Ray's workers send one delta per batch,
:class:`OneDeltaPerBatch`), and the lag simulator makes its own with the same rules.
"""


# How far behind the shared store a worker reads: about (W - 1) x flush / 2 iterations of the
# other workers' updates it cannot see yet. A flush of LAG_ITERATIONS / (W - 1) iterations keeps
# that the same at every worker count (measured with tools/bench_convergence.py;
# docs/parallel.md). Two workers flush less often (:func:`pair_flush`): each misses only the
# other's updates, and the per-flush costs (split, send, merge) are what keep them from using
# their two cores (hunl_default, 2 workers over one core, median of five pairs: 1.28x with a
# delta every 700 iterations, 1.35x every 1,400, 1.37x-1.41x every 2,800, 1.51x with one per
# batch of about 11,000). But the lag costs worth: where every row is hot (Leduc, 2 workers,
# 3 M / 20 M iterations: 1.04x / 1.07x the in-process exploitability with a delta every 700
# iterations, 1.31x / 1.24x with one per 2,880-iteration batch), so their flush is at most one
# iteration per stored infoset; and on hunl_default beyond PAIR_MAX_FLUSH (2 workers against
# in-process at 2 M iterations: +0.1 +- 12.8 mbb/hand every 2,800, -1.4 +- 12.8 every 5,000,
# -16.2 +- 12.9 with one delta per batch).
LAG_ITERATIONS = 700
PAIR_MAX_FLUSH = 5000
MIN_FLUSH = 32


def flush_iterations(config, num_workers):
    """Iterations a worker runs between two deltas: ``train.flush_iters``, or with 0
    LAG_ITERATIONS / (W - 1), at least MIN_FLUSH, for three or more workers and None (decided
    per batch by :func:`pair_flush`) for one or two."""
    n = config.train.flush_iters
    if n > 0:
        return n
    if num_workers <= 2:
        return None
    return max(MIN_FLUSH, LAG_ITERATIONS // (num_workers - 1))


def pair_flush(flush, n, num_infosets):
    """The flush of a batch of ``n`` iterations: ``flush`` (:func:`flush_iterations`), or where
    that is None as many iterations as the store has infosets, at least LAG_ITERATIONS and at
    most PAIR_MAX_FLUSH and the batch (so ``hunl_default``'s 2 workers send a delta every
    5,000 iterations, Leduc's every 700)."""
    if flush is not None:
        return flush
    return max(1, min(n, PAIR_MAX_FLUSH, max(LAG_ITERATIONS, int(num_infosets))))


# The share of the main process's time that merging records (the merge passes' work on them,
# not the passes' fixed cost) may take before flushes grow (:class:`FlushPacer`): 15 workers
# flushing every 50 iterations of hunl_default sent 5,000 records a second, the main process
# fell behind, and a flush waited 41,785 iterations for its merge where the lag rule assumes a
# few hundred (docs/parallel.md, 16-core machine).
MAIN_BUSY_TARGET = 0.5
PACE_WINDOW_SECONDS = 0.01
PACE_WINDOW_RECORDS = 8
# A record's main-process cost until one is measured (the 2-core machine: 0.08 ms and 2.4 ns
# per byte merged, plus 0.2 ms per pass; docs/parallel.md): batches queue up before the first
# measurement, so the first flushes are paced on this.
PRIOR_RECORD_SECONDS = 100e-6


class FlushPacer:
    """Raises the workers' flush when the main process cannot keep up with their records.

    :meth:`observe` takes cumulative counts after each merge pass: the seconds the passes spent
    on the records themselves (the merge work, which grows with the records a pass holds; a
    pass's fixed cost -- waking, reading the pipes, the loop around it -- does not), the
    records merged, their iterations and their workers' traversal seconds. Every window of
    PACE_WINDOW_SECONDS and PACE_WINDOW_RECORDS records it sets :attr:`floor`, the flush at
    which merging the workers' records would take MAIN_BUSY_TARGET of the main process: the W
    workers' rate (W times the window's iterations over their traversal seconds -- what they
    run, not what a main process that is behind merges) times the merge seconds per record
    (PRIOR_RECORD_SECONDS before the first window), over the target. A main process whose
    records take half its time keeps up whatever its fixed cost per pass: the busier it is,
    the more records each pass takes, and a pass lasts at most twice its fixed cost. (Pacing
    on the busy seconds, which count the fixed cost, raised the floor as the flushes it set
    cut the records a pass took: in the lag simulator 63 workers were paced to about 197
    iterations, and lost -53.9 mbb/hand against in-process where unpaced flushes of 64 lost
    nothing, the main process 98% busy; docs/parallel.md.) :meth:`flush`
    applies the floor to a flush the rules above chose. The executors' clocks differ (the
    process executor's is the wall clock, the lag simulator's its model's); the rule is the
    same. A flush set in the config (``train.flush_iters``) is not paced, nor are one or two
    workers' (:func:`pair_flush` sizes theirs from the store, and on the 2-core machine the
    main process's share of the wall clock counts the time the workers' cores were taken
    from it, which is not a backlog)."""

    def __init__(self, config, num_workers):
        self.active = config.train.flush_iters == 0 and int(num_workers) > 2
        self.num_workers = int(num_workers)
        self.floor = 0
        self.highest = 0
        self._last = None               # the counts at the window's start

    def observe(self, now, merging, records, iterations, work_seconds):
        if not self.active:
            return
        last = self._last
        if last is None or work_seconds <= last[4]:
            if last is None and work_seconds > 0:
                rate = self.num_workers * iterations / work_seconds
                self.floor = int(rate * PRIOR_RECORD_SECONDS / MAIN_BUSY_TARGET)
                self._last = (now, merging, records, iterations, work_seconds)
            return
        t0, m0, r0, i0, w0 = last
        if now - t0 < PACE_WINDOW_SECONDS or records - r0 < PACE_WINDOW_RECORDS:
            return
        rate = self.num_workers * (iterations - i0) / (work_seconds - w0)
        self.floor = int(rate * (merging - m0) / (records - r0) / MAIN_BUSY_TARGET)
        self.highest = max(self.highest, self.floor)
        self._last = (now, merging, records, iterations, work_seconds)

    def flush(self, flush, n):
        """``flush`` (of a batch of ``n`` iterations; None: one delta per batch), paced."""
        if flush is None or not self.active:
            return flush
        return min(int(n), max(flush, self.floor))


# A worker's unmerged iterations -- those of its records the main process has not merged yet,
# plus those of the flush it runs -- are capped (train.max_unmerged_iters; 0: UNMERGED_BUDGET /
# (W - 1)), so that a worker never reads a store that lacks more than UNMERGED_BUDGET of the
# other workers' iterations, however far the main process falls behind: on the 16-core machine
# 15 unpaced workers ran on a store 41,785 iterations behind (docs/parallel.md), about 2,800 of
# each worker's, and lost -254.6 mbb/hand. The budget leaves the runs that keep up alone: 2
# workers (20,000 a worker) flush every 5,000 iterations at most and have one or two records
# unmerged; 15 workers paced at the 16-core machine's speed (1,428 a worker) are modelled with
# flushes of 442 merged 547 iterations late.
UNMERGED_BUDGET = 20_000


def unmerged_cap(config, num_workers):
    """The most unmerged iterations a worker process may have (see UNMERGED_BUDGET):
    ``train.max_unmerged_iters``, or with 0 UNMERGED_BUDGET / (W - 1), at least MIN_FLUSH."""
    n = config.train.max_unmerged_iters
    if n > 0:
        return int(n)
    return max(MIN_FLUSH, UNMERGED_BUDGET // max(1, int(num_workers) - 1))


def largest_flush(config, num_workers):
    """The most iterations one flush of a worker process can have: its flush is cut to the cap
    (:func:`unmerged_cap`), and is at most ``train.flush_iters`` where that is set (not paced)
    and PAIR_MAX_FLUSH for one or two workers (:func:`pair_flush`)."""
    cap = unmerged_cap(config, num_workers)
    flush = flush_iterations(config, num_workers)
    if config.train.flush_iters > 0:
        return min(cap, flush)
    return min(cap, PAIR_MAX_FLUSH) if flush is None else cap


def flush_text(flush):
    """How a run's workers flush, for its messages: ``flush`` as :func:`flush_iterations`
    returns it."""
    if flush is None:
        return (f"a delta every {LAG_ITERATIONS:,} to {PAIR_MAX_FLUSH:,} iterations (one "
                "iteration per stored infoset)")
    return f"a delta every {flush:,} iterations"


class FlushPolicy:
    """How a run's W workers flush, for the executor that hands them batches: the flush of each
    batch (:meth:`batch`: :func:`flush_iterations`, or per batch :func:`pair_flush`, paced by
    :attr:`pacer`, a :class:`FlushPacer` that :meth:`observe` feeds after each merge pass), the
    cap on a worker's unmerged iterations (:attr:`cap`: :func:`unmerged_cap`; None: not capped),
    the largest flush a worker makes (:attr:`largest`: :func:`largest_flush`) and how the run's
    start message says it (:meth:`text`).

    ``flush``: the iterations between two deltas in place of the config's (the lag simulator's
    ``--flush``); ``pace``: pace flushes where the config lets them be paced; ``capped``: hold
    workers to the cap; ``into``: where the records go, for :meth:`text` (``"rings of 8
    MiB"``)."""

    def __init__(self, config, num_workers, flush=None, pace=True, capped=True, into=None):
        self.flush = flush or flush_iterations(config, num_workers)     # None: per batch
        self.pacer = FlushPacer(config, num_workers)
        self.pacer.active = self.pacer.active and pace
        self.cap = unmerged_cap(config, num_workers) if capped else None
        self.largest = largest_flush(config, num_workers)
        self.into = into

    def batch(self, n, num_infosets):
        """The flush of a batch of ``n`` iterations with ``num_infosets`` in the store, paced
        (None: one delta for the batch)."""
        return self.pacer.flush(pair_flush(self.flush, n, num_infosets), n)

    def observe(self, now, merging, records, iterations, work_seconds):
        """After a merge pass, the main process's load (:meth:`FlushPacer.observe`)."""
        self.pacer.observe(now, merging, records, iterations, work_seconds)

    def text(self):
        """How the workers flush, for the run's start message."""
        text = flush_text(self.flush)
        return text if self.into is None else f"{text}, into {self.into}"


class OneDeltaPerBatch(FlushPolicy):
    """Workers that send one delta per batch (Ray's actors: a batch is one actor call, which
    returns its record): not capped. Their pacer still observes the main process, as the
    executor's did before this policy had its own class, though no flush of theirs is paced."""

    def __init__(self, config, num_workers):
        super().__init__(config, num_workers, capped=False)

    def batch(self, n, num_infosets):
        return None

    def text(self):
        return "a delta every batch"
