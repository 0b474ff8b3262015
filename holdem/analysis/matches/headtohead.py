"""Head-to-head evaluation of No-Limit Hold'em blueprints: against another checkpoint or a
baseline bot, with duplicate deals, reported in mbb/hand (thousandths of a big blind) with a 95%
CI. Heads-up every deal is played twice with the seats swapped; with 3-6 players the blueprint
takes one seat, the opponent (bot or second blueprint) every other seat, and every deal is played
once with the blueprint in each seat. The first hands of a match can be had as they were played
(:func:`match_log`, :func:`head_to_head_hands`), for hand histories."""

from dataclasses import asdict, dataclass

import numpy as np

from holdem import rng
from holdem.analysis.matches import play_kernels as pk
from holdem.analysis.intervals import mean_ci
from holdem.games import CARDS, LINES, ROTATIONS
from holdem.games.tree import NodeKind
from holdem.solver.kernels import make_workspace
from holdem.store.store import RegretStore

BASELINES = {"fold": pk.POLICY_FOLD, "call": pk.POLICY_CALL, "pot": pk.POLICY_POT,
             "random": pk.POLICY_RANDOM, "equity": pk.POLICY_EQUITY}
"""Baseline bots: always fold (check when free), always check/call, always raise about pot
(else call), uniform random over the abstract actions, and an equity-threshold bot (raise about
pot with a bucket in the top 20% of its street, call in the middle 40%, fold the bottom 40%)."""


@dataclass
class MatchResult:
    mbb_per_hand: float
    ci95: float
    hands: int              # hands played (one per seat per duplicate deal)
    raw_mbb_per_hand: float = None  # the plain mean, without the control variate
    raw_ci95: float = None
    seats: tuple = None     # 3-6 players: (mbb/hand, ci95) of A in each seat, seat 0 first

    def line(self):
        text = f"mbb/hand: {self.mbb_per_hand:.1f} ± {self.ci95:.1f} (95% CI, {self.hands} hands"
        if self.raw_ci95 is not None:
            text += (f"; without the control variate {self.raw_mbb_per_hand:.1f} ± "
                     f"{self.raw_ci95:.1f}")
        return text + ")"

    def seat_line(self):
        """A's result in each seat (3-6 players), e.g. ``SB -2,310 ± 410, BB ...``."""
        names = SEAT_NAMES[len(self.seats)]
        return ", ".join(f"{name} {mbb:+,.0f} ± {ci:,.0f}"
                         for name, (mbb, ci) in zip(names, self.seats))


SEAT_NAMES = {3: ("SB", "BB", "BTN"), 4: ("SB", "BB", "CO", "BTN"),
              5: ("SB", "BB", "UTG", "CO", "BTN"), 6: ("SB", "BB", "UTG", "HJ", "CO", "BTN")}
"""Position names of seats 0.. at a table of 3-6 (seat 0 posts the small blind)."""

MULTIWAY_SAMPLES = 200
"""Random board completions behind each check-down value before the turn in a multi-way
match's correction (the game's :meth:`holdem.games.interface.Rotations.play`): 1,000 gave the
same interval as 200 on a 6-max blueprint against the equity bot."""


def bot_tables(game):
    """int64[4, num_nodes]: fold, call, pot-raise and all-in child of every decision node."""
    tree, nlhe = game.tree, game.lines
    n = tree.kind.shape[0]
    tables = np.full((4, n), -1, dtype=np.int64)
    for node in np.flatnonzero(tree.kind == NodeKind.DECISION):
        c0, na = int(tree.child_start[node]), int(tree.num_actions[node])
        me = int(tree.player[node])
        labels = {nlhe.labels[c0 + a]: c0 + a for a in range(na)}
        tables[0, node] = labels.get("f", -1)
        tables[1, node] = labels["c"]
        tables[3, node] = labels.get("a", -1)
        current = float(nlhe.raise_to[labels["c"]])
        to_call = tree.contrib[node, 1 - me] - tree.contrib[node, me]
        pot = float(tree.contrib[node].sum() + to_call)
        raises = [(abs((nlhe.raise_to[c] - current) / pot - 1.0), c)
                  for lab, c in labels.items() if lab not in ("f", "c")]
        if raises:
            tables[2, node] = min(raises)[1]
    return tables


def blueprint_store(blueprint):
    """A :class:`RegretStore` holding the rows of a Blueprint's checkpoint (copied out of the
    memory map), for the play kernels, which read a store's arrays."""
    arrays = blueprint.checkpoint.arrays
    return RegretStore.from_arrays(arrays["keys"], arrays["num_actions"], arrays["regrets"],
                                   arrays["strategy_sum"])


def same_game(game, config, opponent):
    """Check that the Blueprint ``opponent`` plays ``game`` (trained with ``config``) with the
    same game and action abstraction; returns the opponent's game when its card abstraction
    differs (heads-up only), else None."""
    same = ({**asdict(opponent.config.game), "buckets": None}
            == {**asdict(config.game), "buckets": None})
    if not same or opponent.config.actions != config.actions:
        raise ValueError("both blueprints must use the same game and action abstraction")
    if opponent.game.buckets_sha256 == game.buckets_sha256:
        return None
    if not game.supports(LINES):
        raise ValueError("blueprints with different card abstractions play each other "
                         "heads-up only")
    return opponent.game


def head_to_head(blueprint, opponent, hands=100_000, seed=0):
    """Blueprint A against ``opponent`` (a Blueprint of the same game or a BASELINES name).

    ``hands`` is rounded up to a multiple of the number of seats (duplicate deals). Heads-up,
    the two blueprints may use different card abstractions (bucket files) on the same game and
    action abstraction: each then sees its own buckets of every deal, which is how two
    abstractions are compared at equal training."""
    store_b, cards_b = _opponent(blueprint, opponent)
    return play_match(blueprint.game, blueprint_store(blueprint).arrays, opponent, store_b,
                      hands, seed, cards_b=cards_b)


def head_to_head_hands(blueprint, opponent, hands=100, seed=0, first_number=1):
    """The first ``hands`` hands of :func:`head_to_head`'s match with the same ``seed`` and
    any number of hands, as :class:`holdem.analysis.matches.hand_history.PlayedHand` records (chips
    of the blueprint's game), numbered from ``first_number``."""
    from holdem.analysis.matches.hand_history import hands_from_log

    store_b, cards_b = _opponent(blueprint, opponent)
    log, _ = match_log(blueprint.game, blueprint_store(blueprint).arrays, opponent, store_b,
                       hands, seed, cards_b=cards_b)
    path = blueprint.checkpoint.path
    name_b = (f"{opponent} bot" if isinstance(opponent, str)
              else f"blueprint {opponent.checkpoint.path}")
    return hands_from_log(log, blueprint.game.cards.table, f"blueprint {path}", name_b,
                          first_number=first_number,
                          event=f"holdem eval_blueprint: {path} vs {name_b}, seed {seed}")


def _opponent(blueprint, opponent):
    """(store_b, cards_b) of :func:`play_match` for a match of ``blueprint`` against
    ``opponent`` (a Blueprint or a BASELINES name)."""
    if isinstance(opponent, str):
        return None, None
    cards_b = same_game(blueprint.game, blueprint.config, opponent)
    return blueprint_store(opponent).arrays, cards_b


def play_match(game, store_a, opponent, store_b=None, hands=100_000, seed=0, tables=None,
               cards_b=None, samples=MULTIWAY_SAMPLES):
    """The store ``store_a`` (StoreArrays, e.g. a live training store) against a BASELINES name,
    or against ``store_b`` when ``opponent`` is not a string; ``cards_b`` (heads-up only): the
    game of B when its card abstraction differs from ``game``'s. The result is the
    control-variate estimate (plain + c x correction, with the c that minimises the variance,
    fitted on the match itself: its bias is of order 1/deals), the plain one beside it. With 3-6
    players the correction's check-down values draw ``samples`` board completions before the
    turn (0: no correction, the plain mean only; faster) and the result has A's mean in each
    seat, each with its own c."""
    found = match_samples(game, store_a, opponent, store_b, hands, seed, tables, cards_b,
                          samples=samples, seats=True)
    plain, correction, seat_plain, seat_correction = found
    scale = 1000.0 / game.cards.table.chips_per_bb
    hands = game.num_players * plain.shape[0]
    seats = None
    if seat_plain is not None:
        seats = tuple(mean_ci(_adjusted(seat_plain[:, s], None if seat_correction is None
                                         else seat_correction[:, s]), scale)
                      for s in range(seat_plain.shape[1]))
    if correction is None:
        return MatchResult(*mean_ci(plain, scale), hands=hands, seats=seats)
    raw_mean, raw_ci = mean_ci(plain, scale)
    return MatchResult(*mean_ci(_adjusted(plain, correction), scale), hands=hands,
                       raw_mbb_per_hand=raw_mean, raw_ci95=raw_ci, seats=seats)


def _adjusted(samples, correction):
    """``samples`` plus the variance-minimising multiple of ``correction`` (None: as is)."""
    if correction is None:
        return samples
    return samples + control_coefficient(samples, correction) * correction


def control_coefficient(samples, correction):
    """The c that minimises the variance of ``samples + c * correction``: -cov / var (0 when
    the correction never varies, as against a bot that never mixes facing a blueprint that
    does not either)."""
    var = float(np.var(correction))
    if correction.shape[0] < 2 or var <= 0.0:
        return 0.0
    return -float(np.mean((samples - samples.mean()) * (correction - correction.mean()))) / var


def match_samples(game, store_a, opponent, store_b=None, hands=100_000, seed=0, tables=None,
                  cards_b=None, log=None, samples=MULTIWAY_SAMPLES, seats=False):
    """A's chips per deal in :func:`play_match`'s match and the control-variate correction of
    each deal (mean zero), float64[deals] each; with 3-6 players and ``samples`` = 0 the
    correction is None. ``seats``: also return A's chips and corrections per deal and seat,
    float64[deals, seats] each (None heads-up). ``log``: a
    :data:`holdem.games.match_kernels.HandLog` filled with the first hands (it changes
    nothing else; neither does ``samples``: the correction draws from a stream of its own)."""
    game.require(CARDS, "head-to-head play")
    num_seats = game.num_players
    deals = max(1, (int(hands) + num_seats - 1) // num_seats)
    if isinstance(opponent, str):
        if opponent not in BASELINES:
            raise ValueError(f"unknown baseline {opponent!r}; choose one of "
                             f"{', '.join(BASELINES)}")
        kind, store_b = BASELINES[opponent], store_a
    else:
        kind = pk.POLICY_BLUEPRINT
    state = rng.make_states(seed, 1)[0]
    plain = np.zeros(deals, dtype=np.float64)
    k = np.asarray(game.deal.tables.num_buckets, dtype=np.int64)
    ws = make_workspace(**game.workspace_shape())
    if log is None:
        log = pk.make_hand_log(0, num_seats, 1)
    if not game.supports(LINES):       # no per-node bot tables: rotate the seats instead
        game.require(ROTATIONS, "head-to-head play without a betting tree")
        seat_plain = np.zeros((deals, num_seats), np.float64)
        seat_correction = np.zeros((deals, num_seats), np.float64)
        value_state = rng.make_states(seed, 2)[1]
        game.rotations.play(store_a, store_b, kind, k, ws, state, deals, plain, log, seat_plain,
                            seat_correction, samples, value_state)
        correction = seat_correction.mean(axis=1) if samples > 0 else None
        if not seats:
            return plain, correction
        return plain, correction, seat_plain, seat_correction if samples > 0 else None
    own = game if cards_b is None else cards_b
    correction = np.zeros(deals, dtype=np.float64)
    pk.play_duplicate(game.tree, game.deal, np.int64(game.bucket_stride), store_a, store_b,
                      np.int64(kind), bot_tables(game) if tables is None else tables, k, ws,
                      state, np.int64(deals), plain, correction, own.deal.tables,
                      np.int64(-1 if cards_b is None else cards_b.bucket_stride),
                      np.zeros((2, 4), np.int64), log)
    return (plain, correction, None, None) if seats else (plain, correction)


def match_log(game, store_a, opponent, store_b=None, hands=100, seed=0, tables=None,
              cards_b=None):
    """The first ``hands`` hands of :func:`play_match`'s match with the same ``seed`` (any
    length: the deals and decisions of a match do not depend on how many follow), as a filled
    :data:`holdem.games.match_kernels.HandLog`, and A's chips per deal of those deals (the
    first values :func:`match_samples` returns)."""
    log = pk.make_hand_log(int(hands), game.num_players, game.max_depth)
    plain, _ = match_samples(game, store_a, opponent, store_b, hands, seed, tables, cards_b,
                             log=log, samples=0)        # the hands only: no correction
    if log.num_actions.max(initial=0) > game.max_depth:
        raise ValueError(f"a hand took more than the game's {game.max_depth} decisions")
    return log, plain
