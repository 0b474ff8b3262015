"""What the process executor reports of its merges: TensorBoard scalars a window and the run's
``merge:`` line.

:class:`MergeReport` holds the counters of one :class:`holdem.runtime.process.ProcessExecutor`
(:attr:`MergeReport.stats`, run-long: merge passes, records merged and their bytes, iterations
and visits, flush-to-merge delays, the main process's wake-ups, worker restarts, waits at the
cap on unmerged iterations, records through the pipe), which the executor adds to as it merges,
and a copy of them at the start of each TensorBoard window: :meth:`~MergeReport.scalars` gives
the window's figures, :meth:`~MergeReport.summary` the run's.
"""

import time

from holdem.metrics import format_bytes


class MergeReport:
    """The counters of a process executor of ``num_workers`` workers and what it reports of
    them."""

    def __init__(self, num_workers):
        self.num_workers = int(num_workers)
        self.stats = {"merge_seconds": 0.0, "merges": 0, "passes": 0, "delta_bytes": 0,
                      "delta_iters": 0, "visits": 0, "restarts": 0, "delay_seconds": 0.0,
                      "work_seconds": 0.0, "wake_seconds": 0.0, "wakes": 0,
                      "unmerged_waits": 0, "unmerged_wait_seconds": 0.0, "piped": 0,
                      "store_follows": 0, "merge_pass_seconds": 0.0}
        # The most iterations of one worker's records one pass merged: all were unmerged at
        # once, so this is a measured lower bound of a worker's unmerged iterations (the cap,
        # unmerged_cap, is the upper one). Run-long and per TensorBoard window.
        self.unmerged_seen = self._window_seen = 0
        self._window = dict(self.stats)
        self.window_start = None        # wall clock, from start()
        self.cpu_start = None           # this process's CPU time, from start()

    def start(self):
        """The workers are ready: the run's clocks start. Returns the wall clock."""
        self.cpu_start = time.process_time()
        self.window_start = time.perf_counter()
        return self.window_start

    def merged_at_once(self, iterations):
        """One pass merged ``iterations`` of one worker's records."""
        self.unmerged_seen = max(self.unmerged_seen, iterations)
        self._window_seen = max(self._window_seen, iterations)

    def scalars(self, pool, cap, workers):
        """The window's TensorBoard scalars: ``pool``'s own first, then the merges'; those of
        the cap on unmerged iterations where ``cap`` is not None; ``workers``: their
        ``busy_seconds`` in the window."""
        s, last = self.stats, self._window
        merges = s["merges"] - last["merges"]
        iters = s["delta_iters"] - last["delta_iters"]
        nan = float("nan")
        return {
            **pool.scalars(iters),
            "train/merge_ms": 1e3 * (s["merge_seconds"] - last["merge_seconds"]) / merges
            if merges else nan,
            "train/merge_passes": s["passes"] - last["passes"],
            # From a flush's encoding in its worker to its merge here: in seconds, and in the
            # iterations the run merged meanwhile (what the lag simulator takes as its delay).
            "train/flush_to_merge_ms": 1e3 * (s["delay_seconds"] - last["delay_seconds"])
            / merges if merges else nan,
            "train/flush_to_merge_iters": self._delay_iterations(),
            "train/delta_bytes_per_iter": (s["delta_bytes"] - last["delta_bytes"]) / iters
            if iters else nan,
            "train/worker_idle_frac": self._idle_fraction(workers),
            # Work per iteration changes as the strategy does (longer lines, more visits):
            # iterations/s x visits/iteration is the throughput to compare over time.
            "train/visits_per_iter": (s["visits"] - last["visits"]) / iters if iters else nan,
            **self._unmerged_scalars(cap),
        }

    def _unmerged_scalars(self, cap):
        """The cap on a worker's unmerged iterations at work in the window: how often workers
        waited, the share of their time they waited, and the most unmerged iterations of one
        worker a pass merged (none where the pool does not cap its workers)."""
        if cap is None:
            return {}
        s, last = self.stats, self._window
        span = time.perf_counter() - (self.window_start or time.perf_counter())
        waited = s["unmerged_wait_seconds"] - last["unmerged_wait_seconds"]
        return {"train/unmerged_waits": s["unmerged_waits"] - last["unmerged_waits"],
                "train/unmerged_wait_frac": waited / (span * self.num_workers)
                if span > 0 else float("nan"),
                "train/unmerged_iters_max": self._window_seen}

    def _delay_iterations(self):
        """The mean flush-to-merge delay of the window, in iterations at its merge rate."""
        s, last = self.stats, self._window
        merges = s["merges"] - last["merges"]
        span = time.perf_counter() - (self.window_start or time.perf_counter())
        if not merges or span <= 0:
            return float("nan")
        rate = (s["delta_iters"] - last["delta_iters"]) / span
        return rate * (s["delay_seconds"] - last["delay_seconds"]) / merges

    def _idle_fraction(self, workers):
        span = time.perf_counter() - (self.window_start or time.perf_counter())
        if span <= 0:
            return float("nan")
        busy = sum(w.busy_seconds for w in workers)
        return max(0.0, 1.0 - busy / (span * self.num_workers))

    def reset_window(self):
        """Start a new window for :meth:`scalars`."""
        self._window = dict(self.stats)
        self._window_seen = 0
        self.window_start = time.perf_counter()

    def summary(self, view, pool, cap, paced):
        """The run's ``merge:`` line (nothing before a record was merged), then ``pool``'s own
        lines; ``cap``: the cap on a worker's unmerged iterations (None: not capped);
        ``paced``: the highest floor the flush pacer set (0: not paced)."""
        s = self.stats
        if not s["merges"]:
            return []
        seconds = max(view.train_seconds(), 1e-9)
        ran = s["delta_iters"]
        main_cpu = time.process_time() - (self.cpu_start or time.process_time())
        delay = s["delay_seconds"] / s["merges"]
        wake = s["wake_seconds"] / s["wakes"] if s["wakes"] else float("nan")
        return [f"merge: {1e3 * s['merge_seconds'] / s['merges']:.3f} ms/delta "
                f"({s['merge_seconds'] / seconds:.1%} of a core, {s['merges'] / s['passes']:.1f} "
                f"deltas/pass); {ran / s['merges']:.0f} iterations/delta"
                f"{f' (flushes paced, floor up to {paced:,})' if paced else ''}; flush to merge "
                f"{1e3 * delay:.2f} ms ({delay * ran / seconds:,.0f} iterations; waking "
                f"{1e3 * wake:.2f} ms); "
                f"delta {s['delta_bytes'] / max(ran, 1):.1f} bytes/iteration; "
                f"store {format_bytes(view.store.used_bytes)} ({format_bytes(view.store.nbytes)} "
                f"allocated); main process busy "
                f"{main_cpu / seconds:.1%} of a core; worker restarts {s['restarts']}"
                f"{self._unmerged_text(seconds, cap)}"] + pool.summary(ran, seconds)

    def _unmerged_text(self, seconds, cap):
        """The merge line's part on the cap on a worker's unmerged iterations."""
        if cap is None:
            return ""
        s = self.stats
        share = s["unmerged_wait_seconds"] / (seconds * self.num_workers)
        piped = f"; {s['piped']:,} records through the pipe" if s["piped"] else ""
        return (f"; unmerged iterations capped at {cap:,} a worker: "
                f"{s['unmerged_waits']:,} waits ({share:.1%} of the workers' time), "
                f"up to {self.unmerged_seen:,} merged in one pass{piped}")
