"""One interface for every way of measuring a strategy: exact exploitability, the preflop
strategy's movement, matches against baseline bots or another blueprint, local best response.

A metric is a class registered here by name. It is built once for a game (``make(name, game,
**options)``; a game without the capability the metric needs is refused with a message saying
so) and then measures a store: ``metric.measure(store, seed)``, where ``store`` is a
:class:`holdem.store.store.RegretStore` -- a live training store, one rebuilt from a checkpoint,
or a Blueprint's (``blueprint_store``). It returns a :class:`Measurement` (value, 95% CI where the
metric samples, unit, seconds, and the metric's own result as ``detail``), or None when there is
nothing to report yet. The run monitor, ``eval_blueprint`` and the tools all call metrics this
way, so a new metric is one class plus one :func:`register`.
"""

import time
from dataclasses import dataclass

import numpy as np

from holdem.games import CARDS, EXACT, LINES


@dataclass(frozen=True)
class Measurement:
    key: str                  # scalar name under eval/ (TensorBoard) and in result tables
    value: float
    ci95: float = None        # 95% confidence half-width (sampled metrics)
    unit: str = ""
    seconds: float = 0.0
    text: str = ""            # the value as the eval: line shows it
    detail: object = None     # the metric's own result (MatchResult, LbrResult, ...)

    def scalars(self):
        """``eval/<key>`` (and ``eval/<key>_ci95``) for TensorBoard."""
        out = {f"eval/{self.key}": self.value}
        if self.ci95 is not None:
            out[f"eval/{self.key}_ci95"] = self.ci95
        return out


class Metric:
    """Base of the registered metrics: ``name``, the capability it ``needs`` and
    :meth:`measure`."""

    name = ""
    needs = None

    def __init__(self, game):
        if self.needs is not None:
            game.require(self.needs, f"metric {self.name!r}")
        self.game = game

    def measure(self, store, seed=0):
        raise NotImplementedError

    def _timed(self, start, **fields):
        return Measurement(seconds=time.perf_counter() - start, **fields)


_METRICS = {}


def register(cls):
    """Add a Metric class under its ``name`` (usable as a decorator)."""
    _METRICS[cls.name] = cls
    return cls


def applies(name, game):
    """Whether metric ``name`` can measure ``game``."""
    needs = _metric(name).needs
    return needs is None or game.supports(needs)


def make(name, game, **options):
    """Metric ``name`` built for ``game`` (ValueError when the game lacks what it needs)."""
    return _metric(name)(game, **options)


def _metric(name):
    try:
        return _METRICS[name]
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; choose one of {', '.join(_METRICS)}") \
            from None


def first_applicable(candidates, game, **options):
    """The first of ``candidates`` (metric names) that applies to ``game``, built; or None."""
    for name in candidates:
        if applies(name, game):
            return make(name, game, **options)
    return None


@dataclass(frozen=True)
class ExactResult:
    """What :class:`Exploitability` found: NashConv (chips per game, summed over the players)
    and, when asked for, each player's expected value (a tuple, player 0 first)."""

    nash_conv: float
    values: tuple = None


@register
class Exploitability(Metric):
    """Exact exploitability (NashConv / number of players, chips per game) of the average
    strategy; ``detail`` is an :class:`ExactResult` (with ``values``, each player's expected
    value)."""

    name = "exploitability"
    needs = EXACT

    def __init__(self, game, values=False):
        from holdem.analysis.exact import ExactEvaluator

        super().__init__(game)
        self.evaluator = ExactEvaluator(game)
        self.values = values

    def measure(self, store, seed=0):
        from holdem.analysis.strategy import average_profile

        start = time.perf_counter()
        profile, _ = average_profile(self.game, store.used())
        nash_conv = self.evaluator.nash_conv(profile)
        value = nash_conv / self.game.num_players
        values = self.evaluator.expected_values(profile) if self.values else None
        text = f"exploitability={value:.6g}"
        if self.game.num_players > 2:
            text += f" nash_conv={nash_conv:.6g}"
        return self._timed(start, key=self.name, value=value, unit="chips/game", text=text,
                           detail=ExactResult(nash_conv, values))


@register
class PreflopChange(Metric):
    """How much the average preflop strategy moved since the last measurement: the mean, over
    the preflop infosets measured both times, of the total variation distance
    0.5 * sum_a |p_now(a) - p_before(a)| (0: unchanged; 1: disjoint). It falls as the strategy
    settles. The first measurement only records the strategy (None). Costs a pass over the
    store's keys and the preflop rows' values."""

    name = "preflop_change"
    needs = LINES

    def __init__(self, game):
        from holdem.games.tree import NodeKind

        super().__init__(game)
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

    def change(self, store):
        """The change since the previous call, or None on the first call (or when no preflop
        infoset was visited both times)."""
        now, before = self._snapshot(store), self._last
        self._last = now
        if before is None:
            return None
        keys, na, starts, probs = now
        k0, na0, starts0, probs0 = before
        if k0.shape[0] == 0 or keys.shape[0] == 0:
            return None
        pos = np.minimum(np.searchsorted(k0, keys), k0.shape[0] - 1)
        common = (k0[pos] == keys) & (na0[pos] == na)
        if not common.any():
            return None
        rows_na = na[common]
        first = np.cumsum(rows_na) - rows_na
        step = np.arange(int(rows_na.sum())) - np.repeat(first, rows_na)
        a = np.repeat(starts[common], rows_na) + step
        b = np.repeat(starts0[pos[common]], rows_na) + step
        diff = np.abs(probs[a] - probs0[b])
        return float(0.5 * np.add.reduceat(diff, first).mean())

    def measure(self, store, seed=0):
        start = time.perf_counter()
        value = self.change(store)
        if value is None:
            return None
        return self._timed(start, key="preflop_strategy_change", value=value,
                           text=f"preflop_change={value:.4f}")


def _match_measurement(metric, start, opponent, result):
    return metric._timed(start, key=f"mbb_vs_{opponent}", value=result.mbb_per_hand,
                         ci95=result.ci95, unit="mbb/hand", detail=result,
                         text=f"vs_{opponent}={result.mbb_per_hand:+,.1f}±{result.ci95:,.1f} "
                              "mbb/hand")


@register
class VsBaseline(Metric):
    """A match of the average strategy against a baseline bot (``BASELINES``), in mbb/hand with
    a 95% CI (duplicate deals with a control variate; with 3-6 players ``samples`` is
    :func:`holdem.analysis.matches.headtohead.play_match`'s, 0 for the plain mean)."""

    name = "vs_baseline"
    needs = CARDS

    def __init__(self, game, baseline="equity", hands=20_000, samples=None):
        from holdem.analysis.matches.headtohead import BASELINES, MULTIWAY_SAMPLES, bot_tables

        super().__init__(game)
        if baseline not in BASELINES:
            raise ValueError(f"unknown baseline {baseline!r}; choose one of "
                             f"{', '.join(BASELINES)}")
        self.baseline, self.hands = baseline, int(hands)
        self.samples = MULTIWAY_SAMPLES if samples is None else int(samples)
        self._tables = bot_tables(game) if game.supports(LINES) else None

    def measure(self, store, seed=0):
        from holdem.analysis.matches.headtohead import play_match

        start = time.perf_counter()
        result = play_match(self.game, store.arrays, self.baseline, hands=self.hands,
                            seed=int(seed), tables=self._tables, samples=self.samples)
        return _match_measurement(self, start, self.baseline, result)


@register
class VsBlueprint(Metric):
    """A match against another blueprint of the same game and action abstraction (heads-up its
    card abstraction may differ: each side sees its own buckets)."""

    name = "vs_blueprint"
    needs = CARDS

    def __init__(self, game, opponent, config, hands=100_000, label=None):
        from holdem.analysis.matches.headtohead import blueprint_store, same_game

        super().__init__(game)
        self.cards_b = same_game(game, config, opponent)
        self.store_b = blueprint_store(opponent).arrays
        self.hands = int(hands)
        self.label = label or str(opponent.checkpoint.path)

    def measure(self, store, seed=0):
        from holdem.analysis.matches.headtohead import play_match

        start = time.perf_counter()
        result = play_match(self.game, store.arrays, None, self.store_b, self.hands, int(seed),
                            cards_b=self.cards_b)
        return _match_measurement(self, start, "blueprint", result)


@register
class LocalBestResponse(Metric):
    """Local best response (Lisy & Bowling 2017) against the average strategy: a lower bound on
    its exploitability in mbb/hand (see :mod:`holdem.analysis.lbr.sampled` for the options).
    ``setting`` is an :class:`holdem.analysis.lbr.sampled.LbrSetting` or its text (``"fcpa:3-4"``);
    a setting other than the default is named in the scalar's key (``eval/lbr_fcpa_3-4``)."""

    name = "lbr"
    needs = LINES

    def __init__(self, game, hands=None, threads=1, bucket_samples=0, setting=None):
        from holdem.analysis.lbr import sampled as lbr

        super().__init__(game)
        self.hands = lbr.DEFAULT_HANDS if hands is None else int(hands)
        self.threads, self.bucket_samples = int(threads), int(bucket_samples)
        self.setting = lbr.LbrSetting.parse(setting or lbr.LbrSetting())
        default = self.setting == lbr.LbrSetting()
        self.key = "lbr" if default else f"lbr_{self.setting.actions}_{self.setting.rounds}"
        self.label = "lbr" if default else f"lbr {self.setting}"

    def measure(self, store, seed=0):
        from holdem.analysis.lbr.sampled import lbr_match

        start = time.perf_counter()
        result = lbr_match(self.game, store.arrays, self.hands, int(seed), threads=self.threads,
                           bucket_samples=self.bucket_samples, setting=self.setting)
        return self._timed(start, key=self.key, value=result.mbb_per_hand, ci95=result.ci95,
                           unit="mbb/hand", detail=result,
                           text=f"{self.label}={result.mbb_per_hand:,.1f}±{result.ci95:,.1f} "
                                "mbb/hand")
