"""Exact evaluation of small games: expected values, best responses and exploitability.

Every deal of the (tiny) deck is enumerated with its probability, and values are vectors over
deals, one per tree node. A best response for player i picks, at each of i's infosets
(decision node, bucket), the action maximizing sum over deals in the infoset of
opponent-reach x chance x value, which is exact for perfect-recall games.

Exploitability = NashConv / 2 = (BR_0(sigma_1) + BR_1(sigma_0)) / 2 in chips per game (the game is
zero-sum, so the profile's own values cancel).
"""

import itertools

import numpy as np

from holdem.games import EXACT
from holdem.games.tree import NodeKind


def enumerate_deals(game):
    """All deals as (buckets int64[D, P, S], strength int64[D, P], prob float64[D])."""
    deal = game.deal
    ranks = deal.deck_ranks
    n = ranks.shape[0]
    p = game.num_players
    drawn = p + (1 if deal.num_streets > 1 else 0)
    perms = list(itertools.permutations(range(n), drawn))
    d = len(perms)
    buckets = np.zeros((d, p, deal.num_streets), np.int64)
    strength = np.zeros((d, p), np.int64)
    r = deal.num_ranks
    for i, cards in enumerate(perms):
        for q in range(p):
            private = ranks[cards[q]]
            buckets[i, q, 0] = private
            strength[i, q] = private
            if deal.num_streets > 1:
                board = ranks[cards[p]]
                buckets[i, q, 1] = private * r + board
                if private == board:
                    strength[i, q] = r + private
    return buckets, strength, np.full(d, 1.0 / d)


class ExactEvaluator:
    """Values of strategy profiles on a small game. A *profile* is float64[num_keys, max_actions]
    indexed by infoset key (see :func:`holdem.analysis.strategy.average_profile`)."""

    def __init__(self, game):
        game.require(EXACT, "exact evaluation")
        self.game = game
        self.tree = game.tree
        self.buckets, self.strength, self.prob = enumerate_deals(game)
        self._terminal = {}
        for node in np.flatnonzero(self.tree.kind != NodeKind.DECISION):
            self._terminal[int(node)] = np.stack(
                [self._payoff(int(node), pl) for pl in range(2)])

    def _payoff(self, node, player):
        tree = self.tree
        contrib = tree.contrib[node]
        other = 1 - player
        if tree.kind[node] == NodeKind.FOLD:
            folder = tree.player[node]
            v = -contrib[player] if folder == player else contrib[other]
            return np.full(self.prob.shape[0], v)
        s_me, s_op = self.strength[:, player], self.strength[:, other]
        return np.where(s_me > s_op, contrib[other],
                        np.where(s_me < s_op, -contrib[player],
                                 0.5 * (contrib[other] - contrib[player])))

    def _keys(self, node):
        tree = self.tree
        pl, st = int(tree.player[node]), int(tree.street[node])
        return int(tree.history[node]) * self.game.bucket_stride + self.buckets[:, pl, st]

    def _reach(self, profile):
        """Per node and player: each player's own reach probability, float64[N, 2, D]."""
        tree = self.tree
        n = tree.kind.shape[0]
        reach = np.ones((n, 2, self.prob.shape[0]))
        for node in range(n):
            if tree.kind[node] != NodeKind.DECISION:
                continue
            pl = int(tree.player[node])
            probs = profile[self._keys(node)]             # [D, A]
            c0 = int(tree.child_start[node])
            for a in range(int(tree.num_actions[node])):
                reach[c0 + a] = reach[node]
                reach[c0 + a, pl] = reach[node, pl] * probs[:, a]
        return reach

    def expected_values(self, profile):
        """(value of player 0, value of player 1) of the profile, in chips per game."""
        reach = self._reach(profile)
        total = np.zeros(2)
        for node, pay in self._terminal.items():
            w = reach[node, 0] * reach[node, 1] * self.prob
            total += pay @ w
        return float(total[0]), float(total[1])

    def best_response_value(self, profile, player):
        """Value for ``player`` of a best response to the other player's part of ``profile``."""
        tree = self.tree
        opp = 1 - player
        reach = self._reach(profile)
        values = {}
        for node in range(tree.kind.shape[0] - 1, -1, -1):   # children after parents (BFS)
            if tree.kind[node] != NodeKind.DECISION:
                values[node] = self._terminal[node][player]
                continue
            c0, na = int(tree.child_start[node]), int(tree.num_actions[node])
            child = np.stack([values.pop(c0 + a) for a in range(na)], axis=1)   # [D, A]
            if tree.player[node] == opp:
                values[node] = (profile[self._keys(node)][:, :na] * child).sum(axis=1)
                continue
            bucket = self.buckets[:, player, int(tree.street[node])]
            weight = (reach[node, opp] * self.prob)[:, None] * child
            best = np.zeros(bucket.shape[0], np.int64)
            for b in np.unique(bucket):
                mask = bucket == b
                best[mask] = int(np.argmax(weight[mask].sum(axis=0)))
            values[node] = child[np.arange(child.shape[0]), best]
        return float(values[0] @ self.prob)

    def nash_conv(self, profile):
        return self.best_response_value(profile, 0) + self.best_response_value(profile, 1)

    def exploitability(self, profile):
        """NashConv / 2, in chips per game."""
        return 0.5 * self.nash_conv(profile)
