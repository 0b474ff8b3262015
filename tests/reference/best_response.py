"""A plain best response and expected value for the small games (any number of players), by
recursion over the tree.

The oracle for :mod:`holdem.analysis.exact`. It shares only the betting tree's structure with the
code under test (``kind``, ``player``, ``street``, ``child_start``, ``num_actions``, ``history``,
``contrib``, ``parent``, ``action``); everything else is redone here the slow way:

- deals are enumerated as ordered draws of physical cards (suits included), each with probability
  1 / (number of draws), instead of ``enumerate_deals``;
- who has folded is read off the actions on the path from the root (not ``tree.folded``); the
  pot (every contribution) goes to the players left in the hand with the best ``(pairs the
  board, private rank)`` tuple (pair beats high card), split evenly;
- an information set of player i is the set of (node, deal) pairs with the same node and the same
  cards *seen by i*; the profile's key (``history * bucket_stride + bucket``, see
  :mod:`holdem.games.tree`) is computed only to read probabilities out of the profile;
- a best response picks, at each of its infosets, the action with the largest counterfactual value
  sum over the infoset's histories (chance x opponent reach x value below), recursively and
  memoized; ``brute_force_best_response_value`` instead tries every pure strategy (Kuhn only).
"""

import itertools
from functools import lru_cache

import numpy as np

DECISION, FOLD, SHOWDOWN = 0, 1, 2
FOLD_ACTION = 0             # ActionCode.FOLD


class Deal:
    """One ordered draw: ``private[p]`` is player p's rank, ``board`` the board rank or None."""

    __slots__ = ("private", "board", "prob")

    def __init__(self, private, board, prob):
        self.private, self.board, self.prob = private, board, prob


def deals(game):
    """Every deal of the game's deck, with its probability."""
    ranks = game.rules.deck_ranks
    n = game.num_players
    has_board = game.num_streets > 1
    drawn = n + (1 if has_board else 0)
    draws = list(itertools.permutations(range(len(ranks)), drawn))
    out = []
    for cards in draws:
        private = tuple(ranks[c] for c in cards[:n])
        board = ranks[cards[n]] if has_board else None
        out.append(Deal(private, board, 1.0 / len(draws)))
    return out


def _hand(deal, player):
    private = deal.private[player]
    return (deal.board is not None and private == deal.board, private)


def folded_players(game, node):
    """The players who folded on the way from the root to ``node``."""
    tree = game.tree
    out = set()
    while node > 0:
        parent = int(tree.parent[node])
        if tree.action[node] == FOLD_ACTION:
            out.add(int(tree.player[parent]))
        node = parent
    return out


def payoff(game, node, deal, player):
    """Chips ``player`` wins at terminal ``node`` (zero-sum)."""
    contrib = game.tree.contrib[node]
    folded = folded_players(game, node)
    left = [q for q in range(game.num_players) if q not in folded]
    best = max(_hand(deal, q) for q in left)
    winners = [q for q in left if _hand(deal, q) == best]
    share = sum(contrib) / len(winners) if player in winners else 0.0
    return share - contrib[player]


def seen(game, node, deal):
    """The cards the player to act at ``node`` sees: (private rank,) or (private, board)."""
    p = int(game.tree.player[node])
    if game.tree.street[node] == 0:
        return (deal.private[p],)
    return (deal.private[p], deal.board)


def profile_key(game, node, deal):
    cards = seen(game, node, deal)
    bucket = cards[0] if len(cards) == 1 else cards[0] * game.rules.num_ranks + cards[1]
    return int(game.tree.history[node]) * game.bucket_stride + bucket


def _children(game, node):
    start = int(game.tree.child_start[node])
    return [start + a for a in range(int(game.tree.num_actions[node]))]


def _probs(game, profile, node, deal):
    return profile[profile_key(game, node, deal)]


def expected_value(game, profile, player):
    """Value of the profile for ``player``, chips per game."""
    tree = game.tree

    def value(node, deal):
        if tree.kind[node] != DECISION:
            return payoff(game, node, deal, player)
        probs = _probs(game, profile, node, deal)
        return sum(probs[a] * value(child, deal)
                   for a, child in enumerate(_children(game, node)))

    return sum(d.prob * value(0, d) for d in deals(game))


def best_response_value(game, profile, player):
    """Value for ``player`` of a best response to the other players' part of ``profile``."""
    tree = game.tree
    all_deals = deals(game)
    infosets = {}                   # (node, seen cards) -> [(deal index, chance x opp reach)]

    def collect(node, d, weight):
        if tree.kind[node] != DECISION:
            return
        children = _children(game, node)
        if tree.player[node] == player:
            infosets.setdefault((node, seen(game, node, all_deals[d])), []).append((d, weight))
            for child in children:
                collect(child, d, weight)
        else:
            probs = _probs(game, profile, node, all_deals[d])
            for a, child in enumerate(children):
                collect(child, d, weight * probs[a])

    for d, deal in enumerate(all_deals):
        collect(0, d, deal.prob)

    @lru_cache(maxsize=None)
    def value(node, d):
        deal = all_deals[d]
        if tree.kind[node] != DECISION:
            return payoff(game, node, deal, player)
        children = _children(game, node)
        if tree.player[node] == player:
            return value(children[best_action(node, seen(game, node, deal))], d)
        probs = _probs(game, profile, node, deal)
        return sum(probs[a] * value(child, d) for a, child in enumerate(children))

    @lru_cache(maxsize=None)
    def best_action(node, cards):
        members = infosets[(node, cards)]
        totals = [sum(w * value(child, d) for d, w in members) for child in _children(game, node)]
        return int(np.argmax(totals))

    return sum(deal.prob * value(0, d) for d, deal in enumerate(all_deals))


def player_infosets(game, player):
    """Every (node, profile key) at which ``player`` acts, over all deals."""
    tree = game.tree
    out = set()
    for deal in deals(game):
        for node in range(tree.kind.shape[0]):
            if tree.kind[node] == DECISION and tree.player[node] == player:
                out.add((node, profile_key(game, node, deal)))
    return sorted(out)


def brute_force_best_response_value(game, profile, player, max_pure=4096):
    """Best response by trying every pure strategy of ``player`` (small games only)."""
    infosets = player_infosets(game, player)
    choices = [range(int(game.tree.num_actions[node])) for node, _ in infosets]
    if np.prod([len(c) for c in choices]) > max_pure:
        raise ValueError("too many pure strategies for brute force")
    best = -np.inf
    for pure in itertools.product(*choices):
        trial = profile.copy()
        for (node, key), a in zip(infosets, pure):
            trial[key] = 0.0
            trial[key, a] = 1.0
        best = max(best, expected_value(game, trial, player))
    return best
