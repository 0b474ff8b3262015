"""Local best response (LBR) on the small limit games (Kuhn, Leduc), valued exactly.

LBR (Lisý & Bowling 2017, Algorithm 1) with the formulas of the No-Limit version
(:mod:`holdem.analysis.lbr.kernels`, module docstring and ``lbr_action``): LBR sees its own card
and the board, keeps the opponent's *range* (a distribution over the opponent's private card,
here the physical cards of the deck) and, at each of its decisions, takes the action with the
highest value u in chips relative to the start of the hand:

- fold:  ``u = -contrib[LBR]``;
- call:  ``u = WP * pot' - contrib'[LBR]`` once called (or checked), ``WP = sum_c range[c] eq[c]``
  with ``eq[c]`` LBR's pot share against card ``c`` (ties half) over every unseen board card;
- raise: ``u = fp * contrib[opp] + (1 - fp) * (WP' * pot'' - contrib''[LBR])`` with
  ``fp = sum_c range[c] sigma(child, c)[fold]``; ``WP'`` uses the range weighted by
  ``sigma(child, c)[call]`` (by ``1 - fold`` where the opponent never calls, ``WP`` where nothing
  is left) and ``pot''`` is the pot once the opponent called.

The first action whose value is within :data:`TIE_TOLERANCE` of the best is taken (tree order:
fold, check/call, raise), so exact ties do not depend on rounding. With ``first_street`` = k,
LBR only checks or calls on streets (betting rounds) before k, like the No-Limit "LBR on the
turn and river" setting; the range is still updated there.

*Exact value.* LBR's choice depends on its card, the board and the public history only, so it
is a pure strategy and its value is an expectation over deals and the opponent's actions. For
each card ``x`` of LBR (probability 1/n) the betting tree is walked once with a vector
``weight[c]`` = P(opponent holds c, board so far | x) x the opponent's reach of the node with
``c``: an opponent decision splits the walk over its actions (``weight *= sigma[:, a]``), a new
street splits it over the board card (``weight[b] = 0``, ``weight /= n - 2``), LBR's decision
follows its one chosen child, and a terminal adds ``sum_c weight[c] x payoff(c)``. By Bayes'
rule the range at a node is exactly ``weight / sum(weight)`` (the prior is uniform over the
cards LBR cannot see), so the walk is the LBR of the NL kernels, played on every deal at once.
When ``sum(weight)`` is 0 the node is never reached and the (uniform) prior stands in.

``sigma`` is the opponent's average strategy as the play kernels read it
(:func:`holdem.analysis.matches.play_kernels.average_strategy`): normalized strategy sums, else
regret matching on the regrets, else uniform. :func:`holdem.analysis.strategy.average_profile` (used
by exact exploitability) differs only on stored rows whose strategy sums are all zero (uniform
there, not regret matching); compare LBR with a best response to :func:`blueprint_profile`.

    from holdem.analysis.lbr.small import small_lbr_value
    result = small_lbr_value(game, solver.store)        # result.value: chips per game
"""

from dataclasses import dataclass

import numpy as np

from holdem.analysis.strategy import uniform_profile
from holdem.games import EXACT
from holdem.games.tree import ActionCode, NodeKind

TIE_TOLERANCE = 1e-9
"""Actions whose values are this close (chips) count as tied; the first in tree order wins."""

_NEVER = 1e-12      # a weight below this is "nobody left" (the NL kernels' threshold)


@dataclass(frozen=True)
class SmallLbrValue:
    """LBR's exact expected winnings against one strategy, chips per game."""

    value: float            # mean over the two seats: a lower bound on the exploitability
    seat_values: tuple      # (LBR as player 0, LBR as player 1)
    first_street: int       # LBR acts from this street on; it checks/calls before

    def line(self):
        return (f"lbr: {self.value:.9g} chips/game (as player 0: {self.seat_values[0]:.9g}, "
                f"as player 1: {self.seat_values[1]:.9g})")


def blueprint_profile(game, store):
    """The average strategy of ``store`` (a :class:`holdem.store.store.RegretStore`) as the play
    kernels read it, as a profile float64[num_keys, max_actions] indexed by infoset key:
    normalized strategy sums, else regret matching (no sums yet), else uniform (never stored)."""
    profile = uniform_profile(game)
    keys, num_actions, offsets, regrets, strategy_sum = store.used()
    for key, na, off in zip(keys.tolist(), num_actions.tolist(), offsets.tolist()):
        sums = np.asarray(strategy_sum[off:off + na], dtype=np.float64)
        if sums.sum() > 0.0:
            profile[key, :na] = sums / sums.sum()
            continue
        positive = np.maximum(np.asarray(regrets[off:off + na], dtype=np.float64), 0.0)
        profile[key, :na] = positive / positive.sum() if positive.sum() > 0.0 else 1.0 / na
    return profile


def small_lbr_value(game, store, first_street=0):
    """LBR's exact value (:class:`SmallLbrValue`) against the average strategy of ``store`` on
    Kuhn or Leduc ``game``; LBR acts on streets >= ``first_street`` and checks/calls before."""
    return profile_lbr_value(game, blueprint_profile(game, store), first_street)


def profile_lbr_value(game, profile, first_street=0):
    """LBR's exact value against ``profile`` (float64[num_keys, max_actions], rows indexed by
    infoset key, e.g. from :func:`blueprint_profile`); both seats play against the same
    profile."""
    lbr = SmallLbr(game, profile, first_street)
    seats = (lbr.seat_value(0), lbr.seat_value(1))
    return SmallLbrValue(value=0.5 * (seats[0] + seats[1]), seat_values=seats,
                         first_street=int(first_street))


class SmallLbr:
    """LBR against one profile on a small game: :meth:`seat_value` walks the tree (module
    docstring), :meth:`action_values` is one decision."""

    def __init__(self, game, profile, first_street=0):
        game.require(EXACT, "exact LBR")
        rules = game.exact
        if rules.num_streets > 2:
            raise ValueError(f"{game.name}: exact LBR deals at most one board card")
        if not 0 <= first_street <= rules.num_streets:
            raise ValueError(f"first_street must be in [0, {rules.num_streets}], "
                             f"got {first_street}")
        profile = np.asarray(profile, dtype=np.float64)
        num_keys = game.num_decision_nodes * game.bucket_stride
        if profile.ndim != 2 or profile.shape[0] != num_keys:
            raise ValueError(f"profile must have {num_keys} rows (one per infoset key), "
                             f"got shape {profile.shape}")
        self.game, self.tree, self.profile = game, game.tree, profile
        self.first_street = int(first_street)
        self.ranks = np.asarray(rules.deck_ranks, dtype=np.int64)
        self.num_cards = self.ranks.shape[0]
        self.num_ranks = rules.num_ranks
        self.no_board = self.num_cards          # board index while no board card is dealt
        self.equity = _equity_table(self.ranks, rules.num_ranks, rules.num_streets > 1)
        tree = self.tree
        self.action_of = {}                     # (node, ActionCode) -> action index
        for node in np.flatnonzero(tree.kind == NodeKind.DECISION).tolist():
            c0 = int(tree.child_start[node])
            for a in range(int(tree.num_actions[node])):
                self.action_of[(node, int(tree.action[c0 + a]))] = a

    # -- the opponent ---------------------------------------------------------------------
    def sigma(self, node, board):
        """The opponent's strategy at ``node`` for each card it may hold: float64[n, na]."""
        tree = self.tree
        if tree.street[node] == 0:
            bucket = self.ranks
        else:
            bucket = self.ranks * self.num_ranks + self.ranks[board]
        keys = int(tree.history[node]) * self.game.bucket_stride + bucket
        return self.profile[keys, :int(tree.num_actions[node])]

    # -- LBR's decision -------------------------------------------------------------------
    def action_values(self, node, seat, card, board, prob):
        """LBR's value u of each action at ``node`` (module docstring), float64[na], given its
        ``card``, the ``board`` (index, or ``self.no_board``) and the opponent's range ``prob``
        float64[n] (sums to 1, 0 on the cards LBR sees)."""
        tree = self.tree
        contrib = tree.contrib
        eq = self.equity[card, :, board]
        wp = float(prob @ eq)
        c0, na = int(tree.child_start[node]), int(tree.num_actions[node])
        values = np.empty(na)
        for a in range(na):
            child = c0 + a
            if tree.kind[child] == NodeKind.FOLD:
                values[a] = -contrib[node, seat]
            elif tree.action[child] == ActionCode.CALL:
                values[a] = wp * contrib[child].sum() - contrib[child, seat]
            else:
                values[a] = self._raise_value(child, seat, board, prob, eq, wp)
        return values

    def _raise_value(self, child, seat, board, prob, eq, wp):
        contrib = self.tree.contrib
        rows = self.sigma(child, board)
        fold_index = self.action_of.get((child, int(ActionCode.FOLD)))
        call_index = self.action_of[(child, int(ActionCode.CALL))]
        fold = rows[:, fold_index] if fold_index is not None else np.zeros(rows.shape[0])
        fp = float(prob @ fold)
        call_weight = prob * rows[:, call_index]
        stay_weight = prob * (1.0 - fold)
        if call_weight.sum() > _NEVER:
            wp_call = float(call_weight @ eq) / call_weight.sum()
        elif stay_weight.sum() > _NEVER:        # the opponent never calls here: it re-raises
            wp_call = float(stay_weight @ eq) / stay_weight.sum()
        else:
            wp_call = wp
        called = int(self.tree.child_start[child]) + call_index
        return (fp * contrib[child, 1 - seat]
                + (1.0 - fp) * (wp_call * contrib[called].sum() - contrib[called, seat]))

    def choose(self, node, seat, card, board, weight):
        """LBR's action index at ``node`` given the walk's ``weight`` (module docstring)."""
        tree = self.tree
        if tree.street[node] < self.first_street:
            return self.action_of[(node, int(ActionCode.CALL))]
        total = weight.sum()
        if total > 0.0:
            prob = weight / total
        else:                                   # an unreachable node: the prior stands in
            prob = np.ones(self.num_cards)
            prob[card] = 0.0
            if board != self.no_board:
                prob[board] = 0.0
            prob /= prob.sum()
        values = self.action_values(node, seat, card, board, prob)
        return int(np.flatnonzero(values >= values.max() - TIE_TOLERANCE)[0])

    # -- the exact value ------------------------------------------------------------------
    def seat_value(self, seat):
        """LBR's exact expected chips per game as player ``seat``."""
        n = self.num_cards
        total = 0.0
        for card in range(n):
            weight = np.full(n, 1.0 / (n - 1))
            weight[card] = 0.0
            total += self._value(0, seat, card, self.no_board, weight) / n
        return float(total)

    def _value(self, node, seat, card, board, weight):
        """sum over the opponent's cards of weight x LBR's expected chips from ``node``."""
        tree = self.tree
        kind = tree.kind[node]
        contrib = tree.contrib[node]
        if kind == NodeKind.FOLD:
            won = -contrib[seat] if tree.player[node] == seat else contrib[1 - seat]
            return won * weight.sum()
        if kind == NodeKind.SHOWDOWN:
            share = self.equity[card, :, board]
            return float(weight @ (share * contrib.sum() - contrib[seat]))
        c0 = int(tree.child_start[node])
        if tree.player[node] == seat:
            a = self.choose(node, seat, card, board, weight)
            return self._enter(node, c0 + a, seat, card, board, weight)
        rows = self.sigma(node, board)
        return sum(self._enter(node, c0 + a, seat, card, board, weight * rows[:, a])
                   for a in range(rows.shape[1]))

    def _enter(self, node, child, seat, card, board, weight):
        """The value of ``child``, dealing the board card first if it starts a new street."""
        if self.tree.street[child] == self.tree.street[node]:
            return self._value(child, seat, card, board, weight)
        n = self.num_cards
        total = 0.0
        for b in range(n):
            if b == card:
                continue
            dealt = weight / (n - 2)
            dealt[b] = 0.0
            total += self._value(child, seat, card, b, dealt)
        return total


def _equity_table(ranks, num_ranks, has_board):
    """``eq[x, c, b]``: the pot share of card ``x`` against card ``c`` with board card ``b``
    (index n: no board card dealt yet, so the mean over the unseen board cards, or the plain
    comparison in a game without a board); 0 where cards collide. float64[n, n, n + 1]."""
    n = ranks.shape[0]
    eq = np.zeros((n, n, n + 1))

    def strength(card, board):
        pair = board < n and ranks[card] == ranks[board]
        return num_ranks + ranks[card] if pair else ranks[card]

    def share(x, c, b):
        sx, sc = strength(x, b), strength(c, b)
        return 1.0 if sx > sc else 0.0 if sx < sc else 0.5

    for x in range(n):
        for c in range(n):
            if c == x:
                continue
            boards = [b for b in range(n) if b not in (x, c)]
            for b in boards:
                eq[x, c, b] = share(x, c, b) if has_board else 0.0
            if has_board:
                eq[x, c, n] = np.mean([eq[x, c, b] for b in boards])
            else:
                eq[x, c, n] = share(x, c, n)
    return eq
