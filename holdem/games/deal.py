"""Deal kernels: sample the cards of one iteration and turn them into buckets and strengths.

A deal kernel fills ``buckets[player, street]`` (the card part of the player's infoset key on each
street) and ``strength[player]`` (higher wins at showdown, equal splits). The traversal kernels
never look at cards, only at these two arrays, so every game (Kuhn, Leduc, No-Limit Hold'em with a
card abstraction) plugs into the same traversal. ``DealArrays.kind`` selects the deal kernel.
"""

from collections import namedtuple

import numpy as np

from holdem._jit import njit_exact as njit
from holdem.solver import rng

DEAL_SMALL = 0

DealArrays = namedtuple("DealArrays", ["kind", "deck_ranks", "num_ranks", "num_streets"])


def small_deal(rules):
    """The deal of a one-private-card game (:class:`holdem.games.small.LimitRules`)."""
    return DealArrays(kind=DEAL_SMALL, deck_ranks=np.asarray(rules.deck_ranks, dtype=np.int64),
                      num_ranks=int(rules.num_ranks), num_streets=int(rules.num_streets))


@njit
def _deal_small(deal, state, deck, buckets, strength):
    """One private card each, then one board card if the game has a second round.

    Round 0 bucket: private rank. Round 1 bucket: private * num_ranks + board rank. Strength: a
    pair with the board beats any high card; otherwise the higher private rank wins.
    """
    n = deal.deck_ranks.shape[0]
    num_players = buckets.shape[0]
    for i in range(n):
        deck[i] = i
    drawn = num_players + (1 if deal.num_streets > 1 else 0)
    for i in range(drawn):                 # partial Fisher-Yates
        j = i + rng.below(state, n - i)
        tmp = deck[i]
        deck[i] = deck[j]
        deck[j] = tmp
    r = deal.num_ranks
    for p in range(num_players):
        private = deal.deck_ranks[deck[p]]
        buckets[p, 0] = private
        strength[p] = private
        if deal.num_streets > 1:
            board = deal.deck_ranks[deck[num_players]]
            buckets[p, 1] = private * r + board
            if private == board:
                strength[p] = r + private


@njit
def deal(deal, state, deck, buckets, strength):
    """Sample one deal into ``buckets`` and ``strength`` (see the module docstring)."""
    if deal.kind == DEAL_SMALL:
        _deal_small(deal, state, deck, buckets, strength)
