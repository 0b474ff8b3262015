"""Exact evaluation of small games: expected values, best responses and exploitability.

Every deal of the (tiny) deck is enumerated with its probability, deals that look the same to
the game (the same buckets and showdown strengths: suits only tell cards apart) merged into one,
and :mod:`holdem.analysis.exact_kernels` walks the betting tree once per player with vectors
over deals. A best response for player i picks, at each of i's infosets (decision node, bucket),
the action maximizing sum over deals in the infoset of chance x the other players' reach x
value, which is exact for perfect-recall games.

NashConv = sum over players of (best response value - the profile's value) = sum of the best
response values, in chips per game (the games are zero-sum: the profile's values sum to 0).
Exploitability = NashConv / number of players, as OpenSpiel's ``exploitability``.
"""

import itertools

import numpy as np

from holdem.analysis.exact_kernels import make_value_work, tree_value
from holdem.games import EXACT


def enumerate_deals(game):
    """All deals as (buckets int64[D, P, S], strength int64[D, P], prob float64[D]), deals with
    the same buckets and strengths merged (their probabilities added)."""
    deal = game.deal
    ranks = deal.deck_ranks
    n = ranks.shape[0]
    p = game.num_players
    drawn = p + (1 if deal.num_streets > 1 else 0)
    cards = np.array(list(itertools.permutations(range(n), drawn)), dtype=np.int64)
    private = ranks[cards[:, :p]]                                     # [D, P]
    buckets = np.zeros((cards.shape[0], p, deal.num_streets), np.int64)
    buckets[:, :, 0] = private
    strength = private.copy()
    if deal.num_streets > 1:
        board = ranks[cards[:, p]][:, None]
        buckets[:, :, 1] = private * deal.num_ranks + board
        strength = np.where(private == board, deal.num_ranks + private, private)
    rows = np.concatenate([buckets.reshape(cards.shape[0], -1), strength], axis=1)
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    prob = np.bincount(inverse.ravel(), minlength=unique.shape[0]) / cards.shape[0]
    width = p * deal.num_streets
    return (np.ascontiguousarray(unique[:, :width].reshape(-1, p, deal.num_streets)),
            np.ascontiguousarray(unique[:, width:]), prob)


class ExactEvaluator:
    """Values of strategy profiles on a small game. A *profile* is float64[num_keys, max_actions]
    indexed by infoset key (see :func:`holdem.analysis.strategy.average_profile`)."""

    def __init__(self, game):
        game.require(EXACT, "exact evaluation")
        self.game = game
        self.tree = game.tree
        self.buckets, self.strength, self.prob = enumerate_deals(game)
        self._work = make_value_work(game.max_depth, game.max_actions, game.bucket_stride,
                                     self.prob.shape[0])

    def _value(self, profile, player, best_respond):
        profile = np.ascontiguousarray(profile, dtype=np.float64)
        return float(tree_value(self.tree, np.int64(self.game.bucket_stride), self.buckets,
                                self.strength, self.prob, profile, np.int64(player),
                                best_respond, self._work))

    def expected_values(self, profile):
        """Each player's value of the profile (a tuple, player 0 first), chips per game."""
        return tuple(self._value(profile, p, False) for p in range(self.game.num_players))

    def best_response_value(self, profile, player):
        """Value for ``player`` of a best response to the other players' part of ``profile``."""
        return self._value(profile, player, True)

    def nash_conv(self, profile):
        return sum(self.best_response_value(profile, p) for p in range(self.game.num_players))

    def exploitability(self, profile):
        """NashConv / number of players, in chips per game."""
        return self.nash_conv(profile) / self.game.num_players
