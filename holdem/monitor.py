"""What a training run reports while it runs: the progress line (stderr), TensorBoard scalars
and, on their intervals, exact exploitability (Kuhn, Leduc), a head-to-head match against a
baseline bot (No-Limit Hold'em) and local best response (heads-up No-Limit Hold'em). The run
loop (:mod:`holdem.training`) calls :meth:`tick`; an executor adds its own scalars (e.g. the
parallel merge's) through ``extra``.
"""

import math
import time

from holdem import config as config_mod
from holdem.fileio import describing
from holdem.metrics import Progress, TensorBoardWriter, WindowMean, log

SHORT_INTERVAL = 0.5
"""A rate (``train/iters_per_sec``) or a change (``eval/preflop_strategy_change``) measured over
less than this fraction of its interval (``log_interval``, ``eval_interval``) is not written:
the start of an invocation (workers starting, the first batch) and its short last interval gave
points of 23 k or 139 k iterations/s among 600 k ones, or a change over 25 k iterations among
changes over 1 M, which say nothing about training. A rate left out is measured with the next
one, over both intervals; an invocation shorter than that gets one rate, over all of it."""


class RunMonitor:
    """Progress line, TensorBoard scalars and periodic evaluation for one run.

    Evaluations run whether or not TensorBoard is on, each printed as one ``eval:`` line (unless
    the run is quiet) and, with TensorBoard, written as ``eval/*`` scalars: every
    ``eval_interval`` s the exact exploitability (Kuhn, Leduc) or the preflop strategy change
    (heads-up NLHE); every ``eval_baseline_interval`` s a match against ``eval_baseline`` (NLHE);
    every ``eval_lbr_interval`` s local best response in the ``eval_lbr`` setting (heads-up
    NLHE). LBR is not forced at the end of a run: it costs seconds, and ``eval_blueprint
    --lbr`` measures the final checkpoint with as many hands as wanted.

    ``start_iterations``: where this invocation started (a resumed run's count), so the first
    rates count only the iterations it ran."""

    def __init__(self, config, logdir, game, progress=True, start_iterations=0):
        tc = config.train
        self.config = config
        self.game = game
        self.start_iterations = start_iterations
        self.progress = Progress(tc.progress_interval, total_iters=tc.iters,
                                 time_budget=tc.time_budget, enabled=progress,
                                 start_iters=start_iterations)
        self.tb = None
        if tc.tensorboard:
            with describing("write TensorBoard events in", logdir):
                self.tb = TensorBoardWriter(logdir)
        self.utility = WindowMean(tc.utility_window)
        self._last_log = time.monotonic()
        self._last_eval = time.monotonic()
        self._last_baseline = time.monotonic()
        self._last_lbr = time.monotonic()
        self._rate_from = None          # (iterations, training seconds) the next rate starts at
        self._last_step = None          # the step of the last scalars written
        self.eval_seconds = 0.0         # spent in evaluations (and their failures) so far
        self._warned = {}               # what failed -> when it was last reported
        # Every eval_interval: the exact exploitability where the game allows it, else how far
        # the preflop strategy moved; every eval_baseline_interval: a baseline match. Built on
        # first use (building compiles or loads kernels).
        self._cheap = self._baseline = self._lbr = None
        self._primed = False
        if self.tb is not None:
            with describing("write TensorBoard events in", logdir):
                self.tb.text("config", "```\n" + config_mod.dump_yaml(config) + "```")
                self.tb.flush()

    def _metrics(self):
        from holdem.analysis import evaluation

        if not self._primed:
            self._primed = True
            tc = self.config.train
            self._cheap = evaluation.first_applicable(("exploitability", "preflop_change"),
                                                      self.game)
            if tc.eval_baseline and evaluation.applies("vs_baseline", self.game):
                # samples=0: a multi-way match's correction costs about 10x the play; the
                # run's evaluations keep their cost, eval_blueprint --vs gets the intervals
                self._baseline = evaluation.make("vs_baseline", self.game,
                                                 baseline=tc.eval_baseline, hands=tc.eval_hands,
                                                 samples=0)
            if tc.eval_lbr and evaluation.applies("lbr", self.game):
                self._lbr = evaluation.make("lbr", self.game, hands=tc.eval_lbr_hands,
                                            setting=tc.eval_lbr)
        return self._cheap, self._baseline, self._lbr

    def _evaluations_due(self, force=False):
        """The evaluations the next :meth:`tick` runs: (exact or preflop change, baseline,
        LBR)."""
        tc = self.config.train
        now = time.monotonic()
        cheap_metric, baseline_metric, lbr_metric = self._metrics()
        # At the end (force) a state (exploitability) is measured; a change only over most of
        # its interval (SHORT_INTERVAL).
        cheap = cheap_metric is not None and (
            now - self._last_eval >= tc.eval_interval
            or force and (cheap_metric.name != "preflop_change"
                          or now - self._last_eval >= SHORT_INTERVAL * tc.eval_interval))
        baseline = baseline_metric is not None and (
            force or now - self._last_baseline >= tc.eval_baseline_interval)
        lbr = lbr_metric is not None and now - self._last_lbr >= tc.eval_lbr_interval
        return cheap, baseline, lbr

    def _evaluate(self, iterations, store, force):
        first = not self._primed
        cheap_metric, baseline_metric, lbr_metric = self._metrics()
        if first and cheap_metric is not None and cheap_metric.name == "preflop_change":
            cheap_metric.measure(store)         # the first change is measured from here
        cheap, baseline, lbr = self._evaluations_due(force)
        if not (cheap or baseline or lbr):
            return {}
        start = time.perf_counter()
        found = []
        if cheap:
            self._last_eval = time.monotonic()
            found.append(cheap_metric.measure(store, seed=iterations))
        if baseline:
            self._last_baseline = time.monotonic()
            found.append(baseline_metric.measure(store, seed=iterations))
        if lbr:
            found.append(lbr_metric.measure(store, seed=iterations))
            self._last_lbr = time.monotonic()   # the interval counts from its end
        seconds = time.perf_counter() - start
        found = [m for m in found if m is not None and math.isfinite(m.value)]
        values = {}
        for m in found:
            values.update(m.scalars())
        if found and self.progress.enabled:
            log(eval_line(iterations, found, seconds))
        return values

    def scalars_due(self, force=False):
        """Whether the next :meth:`tick` writes TensorBoard scalars."""
        return self.tb is not None and (
            force or time.monotonic() - self._last_log >= self.config.train.log_interval)

    def tick(self, iterations, train_seconds, store, extra=None, force=False, visits=None,
             training_seconds=None):
        """Report if an interval passed. ``train_seconds``: this invocation's seconds against
        its time budget; ``training_seconds``: the part of them spent training, without this
        monitor's evaluations (default ``train_seconds``: a clock that never counted them), over
        which rates are measured; ``extra``: more scalars (e.g. merge_ms); ``visits``:
        decision-node visits merged in this invocation, for the progress line."""
        if training_seconds is None:
            training_seconds = train_seconds
        self.progress.update(iterations, train_seconds, store.num_infosets, store.used_bytes,
                             force=force, visits=visits, clock=training_seconds)
        start = time.perf_counter()
        try:
            values = self._evaluate(iterations, store, force)
        except OSError as exc:      # e.g. numba caching a kernel compiled now, on a full disk
            self._failed("an evaluation", exc)
            values = {}
        self.eval_seconds += time.perf_counter() - start
        # The run's last tick is forced; it must not write the step just written again (with a
        # rate of 0 iterations over the moment between them).
        repeat = force and self._last_step == iterations
        if self.scalars_due(force) and not repeat:
            # This invocation's rate clock starts at its own start (a resumed run's too); a short
            # invocation's one rate, at its end, is over all of it.
            since, start = self._rate_from or (self.start_iterations, 0.0)
            span = training_seconds - start
            whole = force and self._rate_from is None
            if span > 0 and (whole or span >= SHORT_INTERVAL * self.config.train.log_interval):
                values["train/iters_per_sec"] = (iterations - since) / span
                self._rate_from = (iterations, training_seconds)
            self._last_step = iterations
            self._last_log = time.monotonic()
            values.update({"train/iterations": iterations,
                           "train/infosets": store.num_infosets,
                           "train/store_bytes": store.used_bytes,
                           "train/store_allocated_bytes": store.nbytes,
                           "train/utility_mean": self.utility.mean()})
            values.update(extra or {})
        if self.tb is not None and values:
            try:
                self.tb.scalars(iterations, {k: v for k, v in values.items()
                                             if v is not None and math.isfinite(v)})
                self.tb.flush()
            except OSError as exc:
                self._failed("writing TensorBoard scalars", exc)

    def _failed(self, what, exc, every=60.0):
        """Report a failure the machine caused (an ``OSError``) that training outlives: at most
        once a minute for each ``what``, so a full disk does not flood stderr."""
        now = time.monotonic()
        if now - self._warned.get(what, -math.inf) >= every:
            self._warned[what] = now
            log(f"warning: {what} failed at this tick: {exc}; training goes on")

    def close(self):
        self.progress.close()
        if self.tb is not None:
            self.tb.close()


def eval_line(iterations, measurements, seconds):
    """One ``eval:`` line of the progress output for an evaluation's measurements."""
    parts = [f"eval: iterations={iterations:,}"] + [m.text for m in measurements]
    return " ".join(parts) + f" [{seconds:.2f} s]"
