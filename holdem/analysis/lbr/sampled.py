"""Local best response (LBR): a lower bound on a heads-up No-Limit Hold'em blueprint's
exploitability.

LBR (Lisý & Bowling 2017) plays the real game against the blueprint's average strategy, which
plays its abstract tree through the same action translation as :mod:`holdem.cli.play`'s bot.
It tracks the blueprint's range over the 1,326 hole-card combos by Bayes' rule and at each of
its own decisions takes the action of its *action set* with the highest value under
"check/call to showdown after this action" (the kernels in :mod:`holdem.analysis.lbr.kernels`
hold the formulas). Its mean winnings are a lower bound on how much a best response wins, i.e.
on the exploitability.

The settings are the paper's (:class:`LbrSetting`): the action set -- ``abstract`` (the
blueprint tree's own sizes), ``fc`` (fold, call), ``fcpa`` (fold, call, pot, all-in) or ``56``
(fold, call, all-in and the 55 pot fractions 0.05 x 1.15^k, k = 0..54) -- and the rounds LBR
chooses on, ``1-4`` or ``3-4`` (turn and river; it checks or calls before).

Deals are played twice with the seats swapped (duplicate pairs); the pair's mean is one sample
and the result is reported in mbb/hand (thousandths of a big blind) with a 95% CI.

    from holdem import Blueprint
    from holdem.analysis.lbr.sampled import local_best_response
    result = local_best_response(Blueprint.load("runs/x"), hands=100_000, seed=0,
                                 setting="fcpa:3-4")
    print(result.line())
"""

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from holdem import rng
from holdem.abstraction.deal_kernels import RUNTIME_WORK
from holdem.analysis.lbr import kernels as lk
from holdem.analysis.matches.headtohead import blueprint_store, bot_tables
from holdem.analysis.intervals import mean_ci
from holdem.cards import COMBOS, card_tuple, describe_cards, repeated_card
from holdem.games import LINES
from holdem.games.tree import ActionCode, NodeKind
from holdem.store.store import RegretStore

DEFAULT_HANDS = 100_000
USEFUL_CI95 = 100.0
USEFUL_CI95_SHARE = 0.25
MIN_USEFUL_HANDS = 10_000
"""An LBR interval is useful (see :meth:`LbrResult.advice`) when its half-width is at most 100
mbb/hand or a quarter of the estimate, enough to tell apart blueprints that differ by a few
hundred mbb/hand as training runs of different lengths do
(docs/evaluation.md#strength-heads-up-on-the-fields-yardstick: LBR over training), and it comes
from at least MIN_USEFUL_HANDS hands (below that the sample's spread is itself a poor
estimate)."""
ACTION_SETS = ("abstract", "fc", "fcpa", "56")
"""LBR's action sets: the blueprint tree's sizes; fold and call; fold, call, pot and all-in;
fold, call, all-in and :data:`FIFTY_SIX` (Lisý & Bowling 2017)."""
ROUNDS = {"1-4": 0, "3-4": 2}
"""The streets LBR chooses on, as the first one (0 = preflop); before it, it checks or calls."""
FIFTY_SIX = tuple(0.05 * 1.15 ** k for k in range(55))
"""The pot fractions of the 56-bets set: 0.05 x 1.15^k for k = 0..54 (0.05 to about 95 pots);
with all-in, 56 bet sizes."""
PAPER_SETTINGS = ("fc:1-4", "fcpa:3-4", "56:1-4", "56:3-4")
"""The rows of Lisý & Bowling 2017's table that :data:`PUBLISHED` quotes (``--lbr paper``)."""
PUBLISHED = {
    "Hyperborean 2014": {"fc:1-4": (721, 56), "fcpa:3-4": (3852, 141), "56:1-4": (574, 125),
                         "56:3-4": (4675, 152)},
    "Slumbot 2016": {"fc:1-4": (522, 50), "fcpa:3-4": (4020, 115), "56:1-4": (763, 84),
                     "56:3-4": (3763, 104)},
    "Act1 2016": {"fc:1-4": (407, 47), "fcpa:3-4": (2597, 140), "56:1-4": (2429, 134),
                  "56:3-4": (3302, 122)},
    "Full Cards (100 BB)": {"fc:1-4": (-424, 37), "fcpa:3-4": (-536, 87),
                            "56:1-4": (1607, 76), "56:3-4": (2403, 87)},
}
"""LBR's winnings (mbb/game, 95% CI) against the bots Lisý & Bowling 2017 measured, as their
table reports them (read from copies of the table: the paper itself could not be fetched where
this was written). The ACPC bots played 200 big blinds; Full Cards, a 100 BB strategy without
card abstraction on a fold/call/pot/all-in tree."""
DEFAULT_PREFLOP_SAMPLES = 200
DEFAULT_ALLIN_SAMPLES = 1000
STAT_NAMES = ("decisions", "range_updates", "boards", "strategy_rows", "equity_preflop",
              "equity_flop", "equity_turn", "equity_river", "lbr_folds", "lbr_calls",
              "lbr_raises", "folds_to_raises", "raises_preflop", "raises_flop", "raises_turn",
              "raises_river", "passive_calls", "translated", "off_tree", "max_branches",
              "belief_checks", "bad_branches", "true_node_missing", "empty_beliefs",
              "dropped_readings")
"""Kernel counters in :attr:`LbrResult.stats`: LBR decisions, Bayes updates, boards scored,
per-bucket strategy rows read, equity vectors computed per street, LBR's decisions by kind
(fold, check/call, bet/raise), the blueprint's folds right after an LBR raise, LBR's raises per
street, its checks and calls on the streets before its rounds, its actions the bot read as one
of two abstract sizes, the hands in which the bot left its tree, the most abstract nodes
LBR's belief held at once (its maximum, not a sum), and the checks of LBR's model of the bot
(:func:`kernels.audit_belief`): LBR decisions checked, belief branches at a node the bot
cannot be at, decisions whose belief missed the bot's node and cards, beliefs that lost every
combo (and fell back to a uniform range), readings dropped for want of room. The last four are
0 when LBR's belief is the bot's posterior."""


@dataclass(frozen=True)
class LbrSetting:
    """One LBR setting: an action set (:data:`ACTION_SETS`) and the rounds LBR chooses on
    (:data:`ROUNDS`). ``LbrSetting.parse("fcpa:3-4")``; ``str()`` gives it back."""

    actions: str = "abstract"
    rounds: str = "1-4"

    def __post_init__(self):
        if self.actions not in ACTION_SETS:
            raise ValueError(f"unknown LBR action set {self.actions!r}; choose one of "
                             f"{', '.join(ACTION_SETS)}")
        if self.rounds not in ROUNDS:
            raise ValueError(f"unknown LBR rounds {self.rounds!r}; choose 1-4 (every street) "
                             f"or 3-4 (turn and river, checking or calling before)")

    @classmethod
    def parse(cls, text):
        """``ACTIONS[:ROUNDS]``, e.g. ``fcpa:3-4`` or ``56`` (rounds 1-4)."""
        if isinstance(text, cls):
            return text
        actions, _, rounds = str(text).strip().partition(":")
        return cls(actions, rounds or "1-4")

    def __str__(self):
        return f"{self.actions}:{self.rounds}"

    @property
    def fractions(self):
        """LBR's pot-fraction bets (of the pot after calling), ascending."""
        return {"abstract": (), "fc": (), "fcpa": (1.0,), "56": FIFTY_SIX}[self.actions]

    @property
    def bet_allin(self):
        return self.actions in ("fcpa", "56")


@dataclass(frozen=True)
class FoldCheck:
    """LBR's model of the bot against the bot: over ``bets`` bets and raises of LBR that the
    bot answered, the fold probability LBR's belief gave each (summed: ``predicted``) and the
    bot's actual folds (``folded``). Where the belief is the bot's posterior, each answer is a
    fold with exactly the predicted probability, so ``folded - predicted`` has mean 0.
    ``variance`` estimates its variance from the deals: the sum over deals of the square of
    the deal's own folds minus predictions (the two hands of a duplicate deal share the bot's
    cards, so their answers are not independent and the sum of p (1 - p) would understate it).
    Deals are independent, so ``z`` is then close to a standard normal.

    ``exact`` sums the bot's own fold probability at each answer (its real node and cards
    known): LBR's prediction is its expectation given what LBR sees, so ``exact - predicted``
    has mean 0 too, without the noise of the bot's draws (``exact_variance``, from the deals
    likewise; ``z_exact``): the sharper check."""

    bets: int
    predicted: float
    folded: int
    variance: float
    exact: float = 0.0
    exact_variance: float = 0.0

    @property
    def z_exact(self):
        """(exact - predicted) in standard deviations (0 when nothing varies)."""
        gap = self.exact - self.predicted
        return gap / math.sqrt(self.exact_variance) if self.exact_variance > 0 else 0.0

    @property
    def z(self):
        """(folded - predicted) in standard deviations (0 when nothing varies)."""
        gap = self.folded - self.predicted
        return gap / math.sqrt(self.variance) if self.variance > 0 else 0.0

    def line(self):
        if self.bets == 0:
            return "fold check: LBR made no bet the bot answered"
        return (f"fold check: {self.bets:,} bets, LBR predicted folds "
                f"{self.predicted / self.bets:.4f}, the bot folded {self.folded / self.bets:.4f} "
                f"(z = {self.z:+.2f}) with probability {self.exact / self.bets:.4f} "
                f"(z = {self.z_exact:+.2f})")


@dataclass
class LbrResult:
    mbb_per_hand: float     # LBR's mean winnings: a lower bound on the exploitability
    ci95: float             # half-width of the 95% confidence interval
    hands: int              # hands played (two per duplicate deal)
    seconds: float          # time in the kernel (compilation excluded)
    stats: dict = field(default_factory=dict)   # kernel counters (STAT_NAMES)
    setting: LbrSetting = LbrSetting()
    per_deal: np.ndarray = field(default=None, repr=False)   # mbb per duplicate deal
    folds: "FoldCheck" = None   # the bot's folds to LBR's raises, predicted and actual
    sizes: np.ndarray = field(default=None, repr=False)     # int64[5, SIZE_LABELS]: raises
    size_chips: np.ndarray = field(default=None, repr=False)    # chips of their hands, summed

    @property
    def hands_per_second(self):
        return self.hands / self.seconds if self.seconds > 0 else float("inf")

    def line(self):
        """``lbr: X ± Y mbb/hand (95% CI, N hands)``; other settings than the abstract one on
        all rounds name theirs: ``lbr fcpa:3-4: ...``."""
        name = "" if self.setting == LbrSetting() else f" {self.setting}"
        return (f"lbr{name}: {self.mbb_per_hand:.1f} ± {self.ci95:.1f} mbb/hand "
                f"(95% CI, {self.hands} hands)")

    def size_lines(self, chips_per_bb):
        """LBR's bets and raises by street and size (:data:`SIZE_LABELS`), one line per
        street that has any (preflop split into opens and re-raises): ``sizes flop (pot
        fraction added; 5,426 raises): 1/2 40.1% (+1.23 bb), ...`` -- each bin's share of the
        line's raises and LBR's mean chips (big blinds) in the hands where it chose that size
        (counted once per such raise)."""
        lines = []
        if self.sizes is None:
            return lines
        sizes = np.vstack([self.sizes[0] - self.sizes[4], self.sizes[4], self.sizes[1:4]])
        chips = np.vstack([self.size_chips[0] - self.size_chips[4], self.size_chips[4],
                           self.size_chips[1:4]])
        names = ("preflop opens", "preflop re-raises", "flop", "turn", "river")
        for row, name in enumerate(names):
            total = int(sizes[row].sum())
            if total == 0:
                continue
            unit = "bb raised to" if row < 2 else "pot fraction added"
            cells = []
            for label, n, won in zip(SIZE_LABELS[row >= 2], sizes[row], chips[row]):
                if n:
                    cells.append(f"{label} {100 * n / total:.1f}% "
                                 f"({won / n / chips_per_bb:+.2f} bb)")
            lines.append(f"sizes {name} ({unit}; {total:,} raises): " + ", ".join(cells))
        return lines

    @property
    def useful_ci95(self):
        """The widest interval that still says something: ± USEFUL_CI95 mbb/hand, or
        USEFUL_CI95_SHARE of the estimate where that is more."""
        return max(USEFUL_CI95, USEFUL_CI95_SHARE * abs(self.mbb_per_hand))

    def hands_needed(self):
        """Hands for an interval no wider than :attr:`useful_ci95` (the half-width shrinks as
        1/sqrt(hands)), at least MIN_USEFUL_HANDS, rounded up to two significant digits;
        ``hands`` when this interval is already useful (or exact: no variance), DEFAULT_HANDS
        when it has no width (a single deal)."""
        if self.ci95 == 0 or (self.ci95 <= self.useful_ci95
                              and self.hands >= MIN_USEFUL_HANDS):
            return self.hands
        if not math.isfinite(self.ci95):
            return DEFAULT_HANDS
        need = max(MIN_USEFUL_HANDS, self.hands * (self.ci95 / self.useful_ci95) ** 2)
        step = 10 ** (int(math.log10(need)) - 1)
        return math.ceil(need / step) * step

    def advice(self):
        """A note when there were too few hands for a useful interval, else None."""
        need = self.hands_needed()
        if need <= self.hands:
            return None
        return (f"note: {self.hands:,} hands are too few for a useful interval (± "
                f"{self.useful_ci95:.0f} mbb/hand or less, from at least {MIN_USEFUL_HANDS:,} "
                f"hands); try --hands {need} (the interval narrows as 1/sqrt(hands))")


SIZE_LABELS = (("<=2", "2.5", "3", "4", "5", "7", "10", "15", "20", "30", "45", ">60",
                "all-in"),
               ("<=0.1", "1/6", "1/4", "1/3", "1/2", "3/4", "1", "1.5", "2", "3", "5", ">7",
                "all-in"))
"""Names of LBR's size bins (:data:`kernels.PREFLOP_SIZE_EDGES`, ``POSTFLOP_SIZE_EDGES``):
preflop the big blinds raised to, after the flop the pot fraction added; each bin holds the
sizes nearer its name than its neighbours'."""

COMBO_MASK = (np.int64(1) << COMBOS[:, 0]) | (np.int64(1) << COMBOS[:, 1])
"""int64[1326]: each combo's two cards as bits, in :data:`holdem.cards.COMBOS` order."""
COMBO_MASK.setflags(write=False)


def make_spec(game, preflop_samples=DEFAULT_PREFLOP_SAMPLES, allin_samples=DEFAULT_ALLIN_SAMPLES,
              bucket_samples=0, setting=None, first_round=None):
    """The kernels' per-game constants (:data:`kernels.LbrSpec`) for ``setting`` (an
    :class:`LbrSetting` or its text; default the abstract action set on every round);
    ``first_round`` overrides the setting's first street (4: LBR never chooses, a calling
    station); ``game`` None gives a spec for the equity kernels only."""
    if int(bucket_samples) < 0:
        raise ValueError(f"bucket_samples must not be negative, got {bucket_samples}")
    if int(preflop_samples) < 1:
        raise ValueError(f"preflop_samples must be positive, got {preflop_samples}")
    if int(allin_samples) < 0:
        raise ValueError(f"allin_samples must not be negative, got {allin_samples}")
    setting = LbrSetting.parse(setting or LbrSetting())
    if game is None:
        children = np.full((2, 1), -1, dtype=np.int64)
        num_buckets, stride = np.ones(4, dtype=np.int64), 1
        raise_to = is_allin = np.zeros(1, dtype=np.int64)
        fraction = np.zeros(1, dtype=np.float64)
        chips = (1, 1, 0)
    else:
        children = bot_tables(game)[:2]
        num_buckets = np.asarray(game.deal.tables.num_buckets, dtype=np.int64)
        stride = int(game.bucket_stride)
        lines = game.lines
        raise_to = np.asarray(lines.raise_to, dtype=np.int64)
        is_allin = np.array([label == "a" for label in lines.labels], dtype=np.int64)
        fraction = raise_fractions(game)
        table = game.cards.table
        chips = (table.chips(table.stack), table.chips(table.big_blind), table.chips(table.ante))
    return lk.LbrSpec(stride=np.int64(stride), num_buckets=num_buckets,
                      fold_child=np.ascontiguousarray(children[0]),
                      call_child=np.ascontiguousarray(children[1]), combo_card=COMBOS,
                      combo_mask=COMBO_MASK, preflop_samples=np.int64(preflop_samples),
                      allin_samples=np.int64(allin_samples),
                      bucket_samples=np.int64(bucket_samples), raise_to=raise_to,
                      fraction=fraction, is_allin=is_allin, stack=np.int64(chips[0]),
                      big_blind=np.int64(chips[1]), ante=np.int64(chips[2]),
                      fractions=np.array(setting.fractions, dtype=np.float64),
                      bet_allin=np.int64(setting.bet_allin),
                      abstract=np.int64(setting.actions == "abstract"),
                      first_round=np.int64(ROUNDS[setting.rounds] if first_round is None
                                           else first_round))


def raise_fractions(game):
    """float64[num_nodes]: for each node reached by a raise of a heads-up tree, that raise's
    size as a fraction of the pot after calling at its parent (chips beyond the call over the
    pot once called: what :meth:`Blueprint.raise_fractions` gives, bit for bit); 0 elsewhere."""
    tree, lines = game.tree, game.lines
    out = np.zeros(tree.kind.shape[0], dtype=np.float64)
    raise_to = np.asarray(lines.raise_to, dtype=np.int64)
    for node in np.flatnonzero(tree.kind == NodeKind.DECISION):
        c0, na = int(tree.child_start[node]), int(tree.num_actions[node])
        me = int(tree.player[node])
        call = c0 + (1 if lines.labels[c0] == "f" else 0)
        pot = float(int(tree.contrib[node].sum())
                    + int(tree.contrib[node, 1 - me] - tree.contrib[node, me]))
        current = float(raise_to[call])
        for c in range(call + 1, c0 + na):
            out[c] = (int(raise_to[c]) - current) / pot
    return out


def make_work(game=None):
    """Scratch arrays of the kernels (:data:`kernels.LbrWork`); one per thread."""
    buckets = 1 if game is None else int(game.bucket_stride)
    actions = 1 if game is None else int(game.max_actions)
    n = lk.NUM_COMBOS
    branches = lk.MAX_BRANCHES
    candidates = 2 + max(actions, len(FIFTY_SIX) + 1)
    return lk.LbrWork(
        cards=np.zeros(9, np.int64), deck=np.zeros(52, np.int64), ready=np.zeros(8, np.int64),
        live=np.zeros((4, n), np.int64), num_live=np.zeros(4, np.int64),
        bucket=np.zeros((4, n), np.int64), equity=np.zeros((4, n), np.float64),
        new=np.zeros(5, np.int64), total=np.zeros((5, lk.NUM_CODES ** 2), np.int32),
        by_card=np.zeros((5, 52, lk.NUM_CODES ** 2), np.int32),
        used=np.zeros(6 * 52, np.int64), boards=np.zeros(5, np.int64),
        card_boards=np.zeros(52, np.int64), pair_score=np.zeros(n, np.int64),
        pair_boards=np.zeros(n, np.int64),
        preflop_equity=np.zeros((n, n), np.float64), preflop_ready=np.zeros(n, np.int64),
        range=np.zeros((branches, n), np.float64), node=np.zeros(branches, np.int64),
        num_branches=np.ones(1, np.int64), strategy=np.zeros((buckets, actions), np.float64),
        value=np.zeros(candidates, np.float64), sigma=np.zeros(actions, np.float64),
        table=np.zeros(lk.NUM_CODES ** 2, np.int32),
        rep=np.zeros((13, 3), np.int64), bucket_work=np.zeros(RUNTIME_WORK, np.int64),
        strength=np.zeros(2, np.int64), stats=np.zeros(lk.NUM_STATS, np.int64),
        own_bucket=np.zeros(4, np.int64), mates=np.zeros(n, np.int64),
        mate_sum=np.zeros(n, np.float64), mate_count=np.zeros(n, np.int64),
        real=np.zeros(lk.NUM_REAL, np.int64), cand_kind=np.zeros(candidates, np.int64),
        cand_to=np.zeros(candidates, np.int64),
        response=np.zeros((branches, actions, 5), np.float64),
        response_ready=np.zeros((branches, actions), np.int64),
        opt_child=np.zeros(2, np.int64), opt_prob=np.zeros(2, np.float64),
        cand_fold=np.zeros(candidates, np.float64), audit=np.zeros(lk.NUM_AUDIT, np.float64),
        sizes=np.zeros((5, lk.NUM_SIZE_BINS), np.int64),
        size_chips=np.zeros((5, lk.NUM_SIZE_BINS), np.float64),
        hand_sizes=np.zeros((5, lk.NUM_SIZE_BINS), np.int64))


def _check_game(game):
    if not game.supports(LINES):
        raise ValueError(f"local best response is for heads-up No-Limit Hold'em, not "
                         f"{game.name!r}; use --exploitability for Kuhn and Leduc")


def baseline_store(game, policy):
    """A store whose average strategy always folds (``"fold"``; checks where it cannot fold)
    or always checks/calls (``"call"``) at every decision node and bucket: strategy sum 1 on
    that action. Returns :data:`holdem.store.kernels.StoreArrays` (for tests and benchmarks)."""
    _check_game(game)
    if policy not in ("fold", "call"):
        raise ValueError(f"unknown policy {policy!r}; choose fold or call")
    tree = game.tree
    nodes = game.decision_nodes
    na = tree.num_actions[nodes].astype(np.int64)
    first = tree.action[tree.child_start[nodes]]           # children start with f if it exists
    pick = np.where((first == ActionCode.FOLD) & (policy == "fold"), 0,
                    np.where(first == ActionCode.FOLD, 1, 0))
    k = np.asarray(game.deal.tables.num_buckets, dtype=np.int64)[tree.street[nodes]]
    rows = np.repeat(np.arange(nodes.size), k)
    bucket = np.arange(rows.size) - np.repeat(np.cumsum(k) - k, k)
    keys = tree.history[nodes][rows].astype(np.int64) * game.bucket_stride + bucket
    counts = na[rows]
    offsets = np.cumsum(counts) - counts
    strategy_sum = np.zeros(int(counts.sum()), dtype=np.float64)
    strategy_sum[offsets + pick[rows]] = 1.0
    store = RegretStore.from_arrays(keys, counts.astype(np.int8),
                                    np.zeros(strategy_sum.size, np.float32), strategy_sum)
    return store.arrays


def timed_on_threads(run, threads):
    """Call ``run(t)`` for t in range(threads), on that many threads when more than one (the
    kernels release the GIL); the seconds it took."""
    start = time.perf_counter()
    if threads == 1:
        run(0)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(run, range(threads)))
    return time.perf_counter() - start


def lbr_match(game, store, hands=DEFAULT_HANDS, seed=0,
              preflop_samples=DEFAULT_PREFLOP_SAMPLES, allin_samples=DEFAULT_ALLIN_SAMPLES,
              threads=1, bucket_samples=0, setting=None, first_round=None, paired=False):
    """LBR against the average strategy in ``store`` (StoreArrays) of the heads-up game
    ``game`` (``bucket_samples``, ``setting``: see :func:`local_best_response`;
    ``first_round``: see :func:`make_spec`). ``hands`` is
    rounded up to an even number (duplicate pairs). ``threads`` > 1 splits the deals over that
    many threads (the kernels release the GIL), each with its own random stream: reproducible
    for a given seed and thread count. ``paired``: the cards come from streams of their own,
    so two calls with the same seed, hands and threads play the same deals whatever they
    decide (``LbrResult.per_deal`` can then be differenced deal by deal); without it the
    figures are those of earlier versions."""
    _check_game(game)
    setting = LbrSetting.parse(setting or LbrSetting())
    deals = max(1, (int(hands) + 1) // 2)
    threads = max(1, min(int(threads), deals))
    spec = make_spec(game, preflop_samples, allin_samples, bucket_samples, setting,
                     first_round)
    works = [make_work(game) for _ in range(threads)]
    states = rng.make_states(seed, 2 * threads)       # the first `threads` as before
    deal_states = states[threads:] if paired else states[:threads]
    states = states[:threads]
    out = np.zeros(deals, dtype=np.float64)
    bounds = np.linspace(0, deals, threads + 1).astype(np.int64)

    def run(t):
        lk.lbr_play(game.tree, game.deal.tables, store, spec, works[t], states[t],
                    deal_states[t], np.int64(bounds[t + 1] - bounds[t]),
                    out[bounds[t]:bounds[t + 1]])

    lk.lbr_play(game.tree, game.deal.tables, store, spec, works[0], states[0], deal_states[0],
                np.int64(0), out)                       # compile or load from the cache
    seconds = timed_on_threads(run, threads)
    scale = 1000.0 / game.cards.table.chips_per_bb
    mean, ci = mean_ci(out, scale)
    stats = np.sum([w.stats for w in works], axis=0)
    stats[lk.STAT_MAX_BRANCHES] = max(int(w.stats[lk.STAT_MAX_BRANCHES]) for w in works)
    audit = np.sum([w.audit for w in works], axis=0)
    folds = FoldCheck(bets=int(audit[lk.AUD_BETS]), predicted=float(audit[lk.AUD_PREDICTED]),
                      folded=int(audit[lk.AUD_FOLDED]), variance=float(audit[lk.AUD_VARIANCE]),
                      exact=float(audit[lk.AUD_EXACT]),
                      exact_variance=float(audit[lk.AUD_EXACT_VARIANCE]))
    return LbrResult(mbb_per_hand=mean, ci95=ci, hands=2 * deals, seconds=seconds,
                     stats=dict(zip(STAT_NAMES, stats.tolist())), setting=setting,
                     per_deal=out * scale, folds=folds,
                     sizes=np.sum([w.sizes for w in works], axis=0),
                     size_chips=np.sum([w.size_chips for w in works], axis=0))


def local_best_response(blueprint, hands=DEFAULT_HANDS, seed=0,
                        preflop_samples=DEFAULT_PREFLOP_SAMPLES,
                        allin_samples=DEFAULT_ALLIN_SAMPLES, threads=1, bucket_samples=0,
                        setting=None):
    """LBR against a heads-up No-Limit Hold'em :class:`holdem.analysis.blueprint.Blueprint`:
    an :class:`LbrResult` (mbb_per_hand, ci95, hands, seconds).

    ``setting``: an :class:`LbrSetting` or its text (``"fcpa:3-4"``); default the blueprint
    tree's own sizes on every round.

    ``preflop_samples`` random boards estimate LBR's preflop equity. A hand that reaches
    showdown before the river (all-in) scores its expectation over the unseen board instead of
    the dealt one: exact on the flop and turn, ``allin_samples`` random boards preflop (0:
    score the dealt board). Same mean, smaller variance. ``threads``: see :func:`lbr_match`.

    ``bucket_samples`` > 0 gives the *bucket-only* LBR: after the flop it decides with the
    mean equity of that many hands drawn from its own bucket on the board (see
    :func:`kernels.decision_equity`), so it knows no more about its cards than the
    blueprint's abstraction does. Next to the exact LBR over the checkpoints of one run it
    tells an abstraction's over-fitting (the exact figure rises while this one falls) from a
    strategy that gets worse in its own abstraction. About ``bucket_samples`` times slower
    after the flop."""
    _check_game(blueprint.game)
    store = blueprint_store(blueprint).arrays
    return lbr_match(blueprint.game, store, hands, seed, preflop_samples, allin_samples, threads,
                     bucket_samples, setting)


def combo_equity(hole, board, preflop_samples=DEFAULT_PREFLOP_SAMPLES, seed=0):
    """LBR's pot share (float64[1326], ties half; NaN for combos holding a known card) with
    ``hole`` (2 cards) against every combo over the unseen board; ``board`` 0, 3, 4 or 5
    cards (exact enumeration; Monte Carlo with ``preflop_samples`` boards preflop). Cards as
    text (``"As Kd"``) or ints 0..51."""
    hole, board = list(card_tuple(hole, "hole")), list(card_tuple(board, "board"))
    street = {0: 0, 3: 1, 4: 2, 5: 3}.get(len(board))
    if street is None or len(hole) != 2 or repeated_card(hole + board):
        raise ValueError(f"need 2 hole cards and 0, 3, 4 or 5 board cards, all distinct; got "
                         f"hole {describe_cards(hole)}, board {describe_cards(board)}")
    spec, work = make_spec(None, preflop_samples), make_work(None)
    work.cards[:2] = hole
    work.cards[4:4 + len(board)] = board
    live_combos(work, street)
    lk.street_equity(spec, work, np.int64(street), rng.make_states(seed, 1)[0])
    out = np.full(lk.NUM_COMBOS, np.nan)
    live = work.live[street, :work.num_live[street]]
    out[live] = work.equity[street, live]
    return out


def allin_share(hole, other, board):
    """LBR's share of the pot (ties half) with ``hole`` against the hand ``other`` over every
    completion of ``board`` (3 or 4 cards, exact): how LBR scores a hand both players are all-in
    in before the river. Cards as ints 0..51."""
    street = {3: 1, 4: 2}.get(len(board))
    if street is None:
        raise ValueError(f"an all-in share needs a flop or a turn, not {len(board)} board cards")
    work = make_work(None)
    work.cards[:2], work.cards[2:4] = hole, other
    work.cards[4:4 + len(board)] = board
    return float(lk.allin_equity(work, np.int64(street), np.int64(0),
                                 rng.make_states(0, 1)[0]))


def live_combos(work, street):
    """The combos disjoint from LBR's cards and the board of ``street`` (``work.cards``) into
    ``work.live`` and ``work.num_live``, without buckets: for callers of
    :func:`kernels.street_equity` alone."""
    dead = np.zeros(52, dtype=bool)
    shown = 0 if street == 0 else street + 2
    dead[work.cards[:2]] = True
    dead[work.cards[4:4 + shown]] = True
    live = np.flatnonzero(~dead[COMBOS].any(axis=1))
    work.live[street, :live.size] = live
    work.num_live[street] = live.size
    work.ready[street] = 1
