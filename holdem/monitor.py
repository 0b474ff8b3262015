"""What a training run reports while it runs: the progress line (stderr), TensorBoard scalars
and, on their intervals, exact exploitability (Kuhn, Leduc) and a head-to-head match against a
baseline bot (No-Limit Hold'em). The run loop (:mod:`holdem.training`) calls :meth:`tick`; an
executor adds its own scalars (e.g. the parallel merge's) through ``extra``.
"""

import math
import time

from holdem import config as config_mod
from holdem.metrics import Progress, TensorBoardWriter, WindowMean, first_rate, log


class RunMonitor:
    """Progress line, TensorBoard scalars and periodic exact evaluation for one run.

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
        self.tb = TensorBoardWriter(logdir) if tc.tensorboard else None
        self.utility = WindowMean(tc.utility_window)
        self._last_log = time.monotonic()
        self._last_eval = time.monotonic()
        self._last_baseline = time.monotonic()
        self._last_iters = None
        self._evaluator = None
        self._bot_tables = None
        if self.tb is not None:
            self.tb.text("config", "```\n" + config_mod.dump_yaml(config) + "```")
            self.tb.flush()

    def _exploitability(self, store):
        if self.game.name not in ("kuhn", "leduc"):
            return None
        from holdem.analysis.exact import ExactEvaluator
        from holdem.analysis.strategy import average_profile

        if self._evaluator is None:
            self._evaluator = ExactEvaluator(self.game)
        profile, _ = average_profile(self.game, store.used())
        return self._evaluator.exploitability(profile)

    def _baseline_match(self, store, baseline, iterations):
        """Head-to-head of the current average strategy against a baseline bot (NLHE)."""
        from holdem.analysis.headtohead import bot_tables, play_match

        if self._bot_tables is None and not self.game.is_multiway:
            self._bot_tables = bot_tables(self.game)      # heads-up: per-node bot moves
        start = time.perf_counter()
        result = play_match(self.game, store.arrays, baseline, hands=self.config.train.eval_hands,
                            seed=int(iterations), tables=self._bot_tables)
        if self.progress.enabled:
            log(f"eval vs {baseline}: {result.line()} [{time.perf_counter() - start:.1f} s]")
        return {f"eval/mbb_vs_{baseline}": result.mbb_per_hand,
                f"eval/mbb_vs_{baseline}_ci95": result.ci95}

    def scalars_due(self, force=False):
        """Whether the next :meth:`tick` writes TensorBoard scalars."""
        return self.tb is not None and (
            force or time.monotonic() - self._last_log >= self.config.train.log_interval)

    def tick(self, iterations, train_seconds, store, extra=None, force=False):
        """Report if an interval passed. ``extra``: more scalars (e.g. merge_ms)."""
        self.progress.update(iterations, train_seconds, store.num_infosets, store.nbytes,
                             force=force)
        if not self.scalars_due(force):
            return
        now = time.monotonic()
        if self._last_iters is None:
            rate = first_rate(iterations, self.start_iterations, train_seconds)
        else:
            rate = (iterations - self._last_iters[0]) / max(1e-9, now - self._last_iters[1])
        self._last_iters = (iterations, now)
        self._last_log = now
        values = {"train/iters_per_sec": rate, "train/iterations": iterations,
                  "train/infosets": store.num_infosets, "train/store_bytes": store.nbytes,
                  "train/utility_mean": self.utility.mean()}
        values.update(extra or {})
        if force or now - self._last_eval >= self.config.train.eval_interval:
            self._last_eval = now
            expl = self._exploitability(store)
            if expl is not None:
                values["eval/exploitability"] = expl
        baseline = self.config.train.eval_baseline
        if (baseline and self.game.name == "nlhe"
                and (force or now - self._last_baseline >= self.config.train.eval_baseline_interval)):
            self._last_baseline = now
            values.update(self._baseline_match(store, baseline, iterations))
        self.tb.scalars(iterations, {k: v for k, v in values.items()
                                     if v is not None and math.isfinite(v)})
        self.tb.flush()

    def close(self):
        self.progress.close()
        if self.tb is not None:
            self.tb.close()
