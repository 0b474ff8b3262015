"""A slow, obviously-correct evaluation of a turn or river subgame: the oracle for
:mod:`holdem.subgame`.

It shares with the code under test only the betting tree's structure (``kind``, ``player``,
``invest``, ``first_child``, ``num_children``), the spot (board, ranges, pot) and the average
strategy as ``SubgameSolver.strategy(node)`` reports it; everything else is redone here the
plain way, by recursion over explicit deals:

- a deal is one hand per player (two combos of weight above 0 sharing no card), weighted by the
  product of the two ranges' weights; on the turn each deal then sees every river card that is
  neither on the board nor in either hand (44 of them), each equally likely;
- a showdown compares the exact 7-card ranks of :func:`holdem.evaluator.rank7`; the winner takes
  the loser's stake, half the root's pot plus what the loser put in after the root (a tie: 0);
  a fold costs the folder its stake;
- the value of a hand under the average strategies is the mean over the deals holding it of the
  recursion's expected payoff; a best response picks, at each of its information sets (a node,
  its own hand and, below a chance node, the river card), the action with the largest sum over
  the opponent's hands of (opponent reach x value below).

Values are in chips: ``values`` in the solver's convention (payoff + half the pot: the hand's
share of the final pot minus what it put in after the root), best responses as the solver's
``best_response_values`` (zero-sum payoff per deal).
"""

from functools import lru_cache
from itertools import combinations

from holdem.evaluator import rank7
from holdem.subgame.tree import CHANCE, DECISION, FOLD, SHOWDOWN

ALL_COMBOS = list(combinations(range(52), 2))
"""The 1,326 hole-card pairs, lower card first, in lexicographic order (the solver's order)."""


@lru_cache(maxsize=None)
def _rank(board, hand):
    return rank7(list(board) + list(hand))


def _disjoint(a, b):
    return not set(a) & set(b)


class Oracle:
    """The oracle for one solver: ``values``, ``best_response_value``, ``equity``."""

    def __init__(self, solver):
        spot, tree = solver.spot, solver.tree
        self.tree = tree
        self.board = tuple(int(c) for c in spot.board)
        self.half_pot = spot.pot / 2
        self.is_turn = len(self.board) == 4
        # hands[p]: [(index in the 1,326, (card, card), weight)] of weight above 0
        self.hands = [[(i, ALL_COMBOS[i], float(w)) for i, w in enumerate(r) if w > 0]
                      for r in spot.ranges]
        # the k-th child of a chance node deals the k-th card not on the board
        self.river_cards = [c for c in range(52) if c not in self.board] if self.is_turn else []
        self.strategy = {n: solver.strategy(n) for n in range(tree.num_nodes)
                         if tree.kind[n] == DECISION}

    def children(self, node):
        first = int(self.tree.first_child[node])
        return range(first, first + int(self.tree.num_children[node]))

    def payoff(self, node, board, hand, opp_hand, player):
        """Chips ``player`` (holding ``hand``) wins at terminal ``node`` against ``opp_hand``."""
        tree = self.tree
        invest = tree.invest[node]
        if tree.kind[node] == FOLD:
            folder = int(tree.player[node])
            stake = self.half_pot + invest[folder]
            return -stake if folder == player else stake
        assert tree.kind[node] == SHOWDOWN and len(board) == 5
        mine, theirs = _rank(board, hand), _rank(board, opp_hand)
        if mine > theirs:
            return self.half_pot + invest[1 - player]
        if mine < theirs:
            return -(self.half_pot + invest[player])
        return 0.0

    # -- both players on the average strategy -------------------------------------------------

    def deal_value(self, node, board, hands):
        """Player 0's expected payoff below ``node`` for the deal ``hands`` = ((index, cards)
        of player 0, of player 1), both on the average strategy."""
        kind = self.tree.kind[node]
        if kind in (FOLD, SHOWDOWN):
            return self.payoff(node, board, hands[0][1], hands[1][1], 0)
        if kind == CHANCE:
            total, count = 0.0, 0
            for k, child in enumerate(self.children(node)):
                card = self.river_cards[k]
                if card in hands[0][1] or card in hands[1][1]:
                    continue
                total += self.deal_value(child, board + (card,), hands)
                count += 1
            assert count == 44
            return total / count
        q = int(self.tree.player[node])
        strategy = self.strategy[node][:, hands[q][0]]
        return sum(float(strategy[a]) * self.deal_value(child, board, hands)
                   for a, child in enumerate(self.children(node)) if strategy[a] > 0)

    def values(self, player):
        """{index: value} per hand of ``player``: the mean over its deals (weighted by the
        opponent's weights) of its payoff, plus half the pot (the solver's ``values``); NaN
        for a hand that every opponent hand shares a card with."""
        out = {}
        for i, cards, _ in self.hands[player]:
            total = mass = 0.0
            for j, opp_cards, w in self.hands[1 - player]:
                if not _disjoint(cards, opp_cards):
                    continue
                deal = ((i, cards), (j, opp_cards))
                v = self.deal_value(0, self.board, deal if player == 0 else deal[::-1])
                total += w * (v if player == 0 else -v)
                mass += w
            out[i] = total / mass + self.half_pot if mass > 0 else float("nan")
        return out

    # -- best response ------------------------------------------------------------------------

    def _response(self, node, board, player, hand, opp_reach):
        """Sum over the opponent's hands j of opp_reach[j] x the payoff below ``node`` when
        ``player`` (holding ``hand`` = (index, cards)) best-responds. ``opp_reach``:
        [(index, cards, reach)] of the opponent's hands disjoint from ``hand`` and the board."""
        kind = self.tree.kind[node]
        if kind in (FOLD, SHOWDOWN):
            return sum(r * self.payoff(node, board, hand[1], cards, player)
                       for _, cards, r in opp_reach)
        if kind == CHANCE:
            total = 0.0
            for k, child in enumerate(self.children(node)):
                card = self.river_cards[k]
                if card in hand[1]:
                    continue
                live = [(j, cards, r) for j, cards, r in opp_reach if card not in cards]
                total += self._response(child, board + (card,), player, hand, live)
            return total / 44      # each deal sees 44 of the cards this loop walks
        values = []
        q = int(self.tree.player[node])
        for a, child in enumerate(self.children(node)):
            if q == player:
                reach = opp_reach
            else:
                strategy = self.strategy[node][a]
                reach = [(j, cards, r * float(strategy[j])) for j, cards, r in opp_reach]
            values.append(self._response(child, board, player, hand, reach))
        return max(values) if q == player else sum(values)

    def best_response_value(self, player):
        """The value per deal of ``player``'s best response to the other's average strategy."""
        total = pairs = 0.0
        for i, cards, w in self.hands[player]:
            opp = [(j, c, r) for j, c, r in self.hands[1 - player] if _disjoint(cards, c)]
            total += w * self._response(0, self.board, player, (i, cards), opp)
            pairs += w * sum(r for _, _, r in opp)
        return total / pairs

    # -- equity ---------------------------------------------------------------------------

    def equity(self, player):
        """{index: showdown equity} per hand of ``player`` against the other's range (ties
        half), over every river card the deal leaves (turn spots)."""
        boards = ([self.board] if not self.is_turn else
                  [self.board + (c,) for c in self.river_cards])
        out = {}
        for i, cards, _ in self.hands[player]:
            won = total = 0.0
            for j, opp_cards, w in self.hands[1 - player]:
                if not _disjoint(cards, opp_cards):
                    continue
                for board in boards:
                    if not _disjoint(board, cards + opp_cards):
                        continue
                    mine, theirs = _rank(board, cards), _rank(board, opp_cards)
                    won += w * (1.0 if mine > theirs else 0.5 if mine == theirs else 0.0)
                    total += w
            out[i] = won / total if total > 0 else float("nan")
        return out
