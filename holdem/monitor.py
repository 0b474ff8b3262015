"""What a training run reports while it runs: the progress line (stderr), TensorBoard scalars
and, on their intervals, exact exploitability (Kuhn, Leduc) and a head-to-head match against a
baseline bot (No-Limit Hold'em). The run loop (:mod:`holdem.training`) calls :meth:`tick`; an
executor adds its own scalars (e.g. the parallel merge's) through ``extra``.
"""

import math
import time

import numpy as np

from holdem import config as config_mod
from holdem.metrics import Progress, TensorBoardWriter, WindowMean, first_rate, log


class PreflopChange:
    """How much the average preflop strategy moved since the last call (heads-up No-Limit
    Hold'em): the mean, over the preflop infosets visited both times, of the total variation
    distance 0.5 * sum_a |p_now(a) - p_before(a)| (0: unchanged; 1: disjoint). It falls as the
    strategy settles. Costs a pass over the store's keys and the preflop rows' values."""

    def __init__(self, game):
        from holdem.games.tree import NodeKind

        tree = game.tree
        decision = np.flatnonzero(tree.kind == NodeKind.DECISION)
        self._preflop = np.asarray(tree.street[decision] == 0)     # by history index
        self._stride = int(game.bucket_stride)
        self._last = None

    def _snapshot(self, store):
        keys, num_actions, offsets, _, strategy_sum = store.used()
        hist = keys // self._stride
        inside = hist < self._preflop.shape[0]
        mask = np.zeros(keys.shape[0], bool)
        mask[inside] = self._preflop[hist[inside]]
        keys, na, off = keys[mask], num_actions[mask].astype(np.int64), offsets[mask]
        order = np.argsort(keys, kind="stable")
        keys, na, off = keys[order], na[order], off[order]
        starts = np.cumsum(na) - na
        entry = np.repeat(off - starts, na) + np.arange(int(na.sum()))
        sums = np.asarray(strategy_sum[entry], np.float64)
        totals = np.add.reduceat(sums, starts) if keys.size else np.zeros(0)
        per = np.repeat(totals, na)
        probs = np.where(per > 0, sums / np.where(per > 0, per, 1.0), 1.0 / np.repeat(na, na))
        return keys, na, starts, probs

    def __call__(self, store):
        """The change since the previous call, or None on the first call (or when no preflop
        infoset was visited both times)."""
        now, before = self._snapshot(store), self._last
        self._last = now
        if before is None:
            return None
        keys, na, starts, probs = now
        k0, na0, starts0, probs0 = before
        pos = np.searchsorted(k0, keys)
        pos = np.minimum(pos, max(0, k0.shape[0] - 1))
        common = (k0.shape[0] > 0) & (k0[pos] == keys) & (na0[pos] == na)
        if not common.any():
            return None
        rows_na = na[common]
        first = np.cumsum(rows_na) - rows_na
        step = np.arange(int(rows_na.sum())) - np.repeat(first, rows_na)
        a = np.repeat(starts[common], rows_na) + step
        b = np.repeat(starts0[pos[common]], rows_na) + step
        diff = np.abs(probs[a] - probs0[b])
        return float(0.5 * np.add.reduceat(diff, first).mean())


class RunMonitor:
    """Progress line, TensorBoard scalars and periodic evaluation for one run.

    Evaluations run whether or not TensorBoard is on, each printed as one ``eval:`` line (unless
    the run is quiet) and, with TensorBoard, written as ``eval/*`` scalars: every
    ``eval_interval`` s the exact exploitability (Kuhn, Leduc) or the preflop strategy change
    (heads-up NLHE); every ``eval_baseline_interval`` s a match against ``eval_baseline`` (NLHE).

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
        self._preflop_change = (PreflopChange(game) if game.name == "nlhe" and not game.is_multiway
                                else None)
        self._primed = False
        if self.tb is not None:
            self.tb.text("config", "```\n" + config_mod.dump_yaml(config) + "```")
            self.tb.flush()

    def _exploitability(self, store):
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
        result = play_match(self.game, store.arrays, baseline, hands=self.config.train.eval_hands,
                            seed=int(iterations), tables=self._bot_tables)
        return {f"eval/mbb_vs_{baseline}": result.mbb_per_hand,
                f"eval/mbb_vs_{baseline}_ci95": result.ci95}

    def _evaluations_due(self, force=False):
        """The evaluations the next :meth:`tick` runs: (exact or preflop change, baseline)."""
        tc = self.config.train
        now = time.monotonic()
        cheap = (self.game.name in ("kuhn", "leduc") or self._preflop_change is not None) and (
            force or now - self._last_eval >= tc.eval_interval)
        baseline = bool(tc.eval_baseline) and self.game.name == "nlhe" and (
            force or now - self._last_baseline >= tc.eval_baseline_interval)
        return cheap, baseline

    def _evaluate(self, iterations, store, force):
        if self._preflop_change is not None and not self._primed:
            self._primed = True             # the first change is measured from here
            self._preflop_change(store)
        cheap, baseline = self._evaluations_due(force)
        if not (cheap or baseline):
            return {}
        start = time.perf_counter()
        values = {}
        if cheap:
            self._last_eval = time.monotonic()
            if self._preflop_change is not None:
                values["eval/preflop_strategy_change"] = self._preflop_change(store)
            else:
                values["eval/exploitability"] = self._exploitability(store)
        if baseline:
            self._last_baseline = time.monotonic()
            values.update(self._baseline_match(store, self.config.train.eval_baseline,
                                               iterations))
        seconds = time.perf_counter() - start
        values = {k: v for k, v in values.items() if v is not None and math.isfinite(v)}
        if values and self.progress.enabled:
            log(eval_line(iterations, values, seconds))
        return values

    def scalars_due(self, force=False):
        """Whether the next :meth:`tick` writes TensorBoard scalars."""
        return self.tb is not None and (
            force or time.monotonic() - self._last_log >= self.config.train.log_interval)

    def tick(self, iterations, train_seconds, store, extra=None, force=False):
        """Report if an interval passed. ``extra``: more scalars (e.g. merge_ms)."""
        self.progress.update(iterations, train_seconds, store.num_infosets, store.nbytes,
                             force=force)
        values = self._evaluate(iterations, store, force)
        if self.scalars_due(force):
            now = time.monotonic()
            if self._last_iters is None:
                rate = first_rate(iterations, self.start_iterations, train_seconds)
            else:
                rate = (iterations - self._last_iters[0]) / max(1e-9, now - self._last_iters[1])
            self._last_iters = (iterations, now)
            self._last_log = now
            values.update({"train/iters_per_sec": rate, "train/iterations": iterations,
                           "train/infosets": store.num_infosets,
                           "train/store_bytes": store.nbytes,
                           "train/utility_mean": self.utility.mean()})
            values.update(extra or {})
        if self.tb is not None and values:
            self.tb.scalars(iterations, {k: v for k, v in values.items()
                                         if v is not None and math.isfinite(v)})
            self.tb.flush()

    def close(self):
        self.progress.close()
        if self.tb is not None:
            self.tb.close()


def eval_line(iterations, values, seconds):
    """One ``eval:`` line of the progress output for an evaluation's ``values``."""
    parts = [f"eval: iterations={iterations:,}"]
    if "eval/exploitability" in values:
        parts.append(f"exploitability={values['eval/exploitability']:.6g}")
    if "eval/preflop_strategy_change" in values:
        parts.append(f"preflop_change={values['eval/preflop_strategy_change']:.4f}")
    for key, mbb in values.items():
        if key.startswith("eval/mbb_vs_") and not key.endswith("_ci95"):
            ci = values.get(key + "_ci95", float("nan"))
            parts.append(f"vs_{key[len('eval/mbb_vs_'):]}={mbb:+,.1f}±{ci:,.1f} mbb/hand")
    return " ".join(parts) + f" [{seconds:.2f} s]"
