"""A 3-6 player match on the real game between two blueprints with different bet menus, each
playing as ``play``'s bot does (:class:`holdem.analysis.bot.BlueprintBot`: every real size read
on the real pot through its own translation, its own raises its abstract pot fractions of the
real pot).

:func:`holdem.analysis.matches.headtohead.head_to_head` plays 3-6 player blueprints on one
abstract tree, so it needs one menu, and :mod:`holdem.analysis.matches.crossmatch` is heads-up
(compiled kernels). This is the slow, plain-Python counterpart for a six-max menu choice (issue
52, point 3): blueprint A takes one seat and B every other, as in ``eval_blueprint --vs`` with
3-6 players, and each deal is played once with A in each seat, the cards staying with the
seats. The result is A's mean winnings in mbb/hand with a 95% interval over deals (no control
variate), and A's result by seat. About 30-60 hands a second on one core.

    from holdem import Blueprint
    from holdem.analysis.matches.table_crossmatch import table_cross_match
    a, b = Blueprint.load("runs/a"), Blueprint.load("runs/b")
    print(table_cross_match(a, b, hands=12_000).line())
"""

import numpy as np

from holdem.analysis.bot import BlueprintBot, real_stack, real_table
from holdem.analysis.intervals import mean_ci
from holdem.analysis.matches.crossmatch import check_same_game
from holdem.analysis.matches.headtohead import MatchResult
from holdem.games import CARDS

BIG_BLIND = 100                 # real chips per big blind


def table_cross_match(a, b, hands=12_000, seed=0):
    """Blueprint ``a`` in one seat against blueprint ``b`` in every other (the same game, 2-6
    players, any two bet menus and card abstractions) on the real game: a :class:`MatchResult`
    of A's mbb/hand, with ``seats`` (A's result in each seat). ``hands`` is rounded up to a
    multiple of the number of seats (each deal is played once with A in each seat);
    reproducible for a given seed."""
    check_same_game(a, b, CARDS, "No-Limit Hold'em", "the same table")
    HandState = a.game.cards.engine.HandState
    n = a.game.num_players
    deals = max(1, -(-int(hands) // n))
    deal_seed, a_seed, b_seed = np.random.SeedSequence(seed).spawn(3)
    deal_rng = np.random.default_rng(deal_seed)
    bot_a = BlueprintBot(a, BIG_BLIND, np.random.default_rng(a_seed))
    bot_b = BlueprintBot(b, BIG_BLIND, np.random.default_rng(b_seed))
    config = real_table(a, real_stack(a, BIG_BLIND), BIG_BLIND)
    out = np.zeros((deals, n), dtype=np.float64)
    for i in range(deals):
        dealt = HandState(config, rng=deal_rng)
        for seat in range(n):
            state = HandState(config, hole_cards=dealt.hole_cards, board=dealt.full_board)
            while not state.is_terminal:
                bot = bot_a if state.to_act == seat else bot_b
                state.apply(bot.decide(state).action)
            out[i, seat] = state.payoffs()[seat]
    scale = 1000.0 / BIG_BLIND
    mean, ci = mean_ci(out.mean(axis=1), scale)
    return MatchResult(mean, ci, hands=n * deals,
                       seats=tuple(mean_ci(out[:, s], scale) for s in range(n)))
