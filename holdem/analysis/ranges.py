"""Both players' ranges at any node of a heads-up blueprint: what each hand does and how often
each player gets there with it.

:func:`node_range` (``Blueprint.range``) takes a line of abstract labels and the board dealt so far
and returns a :class:`NodeRange` over every live combo (the hole-card pairs that use no board
card: 1,326 preflop, 1,176 on the flop, 1,128 on the turn, 1,081 on the river):

- ``reach[p, i]``: player p's own reach with combo i -- the product of the probabilities of p's
  actions along the line at that combo's buckets (1 where p has not acted yet). This is the
  weight a range string gives a hand.
- ``weight[p, i]``: the probability that, with this board, player p holds combo i and both
  players play the line: ``reach[p, i]`` times the other player's reach summed over the combos
  that share no card with i, over the number of such deals (card removal between the hands).
  ``weight[0].sum() == weight[1].sum() == line_probability``.
- ``mix[i, a]``: the action mix of the player to act with combo i; ``buckets[i]`` its bucket on
  the node's street.

Per hand class (the 13 x 13 grid of :mod:`holdem.analysis.charts`) :meth:`NodeRange.by_class`
sums weights, averages own reach over the class's live combos and weights the mix by the combos'
weights. The numbers come from :mod:`holdem.analysis.range_kernels` over the blueprint's arrays.
"""

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from holdem.analysis import range_kernels as rk
from holdem.cards import NUM_SUITS, format_card
from holdem.games import LINES

STREET_BOARD = (0, 3, 4, 5)


@dataclass(frozen=True)
class NodeRange:
    line: tuple                 # abstract labels from the root
    board: tuple                # card ints dealt so far
    street: int
    player: int                 # to act: 0 = small blind (button), 1 = big blind
    actions: tuple              # labels at the node
    names: tuple                # what each action does, in words
    combos: np.ndarray          # int64[n, 2]: the live hole-card pairs (lower card first)
    buckets: np.ndarray         # int64[n]: bucket on the node's street
    reach: np.ndarray           # float64[2, n]
    weight: np.ndarray          # float64[2, n]
    mix: np.ndarray             # float64[n, num_actions]: the player to act's

    @property
    def line_probability(self):
        """P(the line is played | this board), deals uniform over the unseen cards."""
        return float(self.weight[0].sum())

    def combo_names(self):
        """Each combo as text, higher card first (``"AsKh"``)."""
        return [format_card(b) + format_card(a) for a, b in self.combos.tolist()]

    def class_cells(self):
        """int64[n, 2]: the (row, column) of each combo's class in the 13 x 13 grid (rows and
        columns A..2; suited above the diagonal, offsuit below)."""
        ranks = 12 - self.combos // NUM_SUITS           # grid index: 0 = ace
        suited = (self.combos[:, 0] % NUM_SUITS) == (self.combos[:, 1] % NUM_SUITS)
        high, low = ranks.min(axis=1), ranks.max(axis=1)
        return np.stack([np.where(suited, high, low), np.where(suited, low, high)], axis=1)

    def by_class(self, player=None):
        """Per class (float64[13, 13] each, and [13, 13, num_actions] for the mix): ``weight``
        (sum over the class's combos), ``reach`` (mean own reach over its live combos; NaN
        where every combo is blocked by the board) and, for the player to act, ``mix`` weighted
        by the combos' weights (NaN where the class is out of the range)."""
        player = self.player if player is None else player
        cells = self.class_cells()
        flat = cells[:, 0] * 13 + cells[:, 1]
        count = np.bincount(flat, minlength=169).astype(float)
        weight = np.bincount(flat, self.weight[player], minlength=169)
        reach = np.bincount(flat, self.reach[player], minlength=169)
        mix = np.stack([np.bincount(flat, self.weight[self.player] * self.mix[:, a],
                                    minlength=169) for a in range(len(self.actions))], axis=1)
        acting = np.bincount(flat, self.weight[self.player], minlength=169)
        with np.errstate(invalid="ignore", divide="ignore"):
            reach = np.where(count > 0, reach / count, np.nan)
            mix = np.where(acting[:, None] > 0, mix / acting[:, None], np.nan)
        return {"weight": weight.reshape(13, 13), "reach": reach.reshape(13, 13),
                "mix": mix.reshape(13, 13, -1)}

    def range_weights(self, player, combos=False):
        """Own reach as range-string weights: {class name: mean over live combos} or, with
        ``combos``, {(card, card): reach} (higher card first)."""
        from holdem.analysis.charts import GRID

        if combos:
            return {(int(b), int(a)): float(r)
                    for (a, b), r in zip(self.combos.tolist(), self.reach[player])}
        reach = self.by_class(player)["reach"]
        return {GRID[r][c]: float(reach[r, c]) for r in range(13) for c in range(13)
                if not np.isnan(reach[r, c])}


def walk_line(game, labels):
    """The decisions of a line of abstract labels in a tree game (int64[S, 5]: history, player,
    street, action, num_actions) and the node it reaches; ValueError naming a label that is not
    an action there, or one after the hand is over."""
    tree, names = game.tree, game.lines.labels
    node, steps = 0, []
    for label in labels:
        if tree.kind[node] != 0:
            raise ValueError(f"line {labels!r}: the hand is over before {label!r}")
        c0, na = int(tree.child_start[node]), int(tree.num_actions[node])
        legal = [names[c0 + a] for a in range(na)]
        if label not in legal:
            raise ValueError(f"line {labels!r}: {label!r} is not an action here "
                             f"(legal: {', '.join(legal)})")
        a = legal.index(label)
        steps.append((int(tree.history[node]), int(tree.player[node]), int(tree.street[node]),
                      a, na))
        node = c0 + a
    return np.array(steps, dtype=np.int64).reshape(-1, 5), node


def live_combos(board):
    """int64[n, 2]: every pair of cards (lower first) that uses no card of ``board``."""
    dead = set(board)
    live = [c for c in range(52) if c not in dead]
    return np.array(list(combinations(live, 2)), dtype=np.int64).reshape(-1, 2)


def node_range(bp, line=(), board=(), average=True):
    """The :class:`NodeRange` after ``line`` (labels, a string or an export history:
    ``Blueprint.line_labels``) with ``board`` (text such as ``"Ah Kd 7c"`` or card ints: as many
    cards as the node's street has dealt). Heads-up No-Limit Hold'em."""
    from holdem.abstraction.bucket_tables import make_work
    from holdem.cards import card_tuple, describe_cards, repeated_card

    game = bp.game
    game.require(LINES, "a range view")
    labels = list(bp.line_labels(line))
    board = card_tuple(() if board is None else board, "board")
    steps, node = walk_line(game, labels)
    tree = game.tree
    if tree.kind[node] != 0:
        raise ValueError(f"line {' '.join(labels) or '(root)'!r} ends the hand")
    street = int(tree.street[node])
    if len(board) != STREET_BOARD[street]:
        raise ValueError(f"line {' '.join(labels) or '(root)'!r} reaches a "
                         f"{('preflop', 'flop', 'turn', 'river')[street]} decision: the board "
                         f"needs {STREET_BOARD[street]} cards, got {len(board)}"
                         + (f" ({describe_cards(board)})" if board else ""))
    twice = repeated_card(board)
    if twice:
        raise ValueError(f"{twice} is on the board twice")
    combos = live_combos(board)
    full = np.zeros(5, dtype=np.int64)
    full[:len(board)] = board
    buckets = np.zeros((combos.shape[0], 4), dtype=np.int64)
    rk.combo_buckets(game.deal.tables, combos, full, np.int64(street), buckets, make_work())
    na = int(tree.num_actions[node])
    reach = np.zeros((2, combos.shape[0]))
    mix = np.zeros((combos.shape[0], na))
    rk.line_reach(bp._sorted_keys, bp._order, bp._offsets, bp._strategy_sum, bp._regrets,
                  bool(average), np.int64(game.bucket_stride), steps, buckets,
                  np.int64(tree.history[node]), np.int64(street), np.int64(na), reach, mix,
                  np.zeros(max(2, game.max_actions)))
    n = combos.shape[0]
    disjoint = (52 - len(board) - 2) * (52 - len(board) - 3) // 2
    weight = np.zeros((2, n))
    rk.joint_weights(combos, reach, float(n * disjoint), weight, np.zeros((2, 52)),
                     np.zeros(2))
    return NodeRange(line=tuple(labels), board=tuple(board), street=street,
                     player=int(tree.player[node]),
                     actions=tuple(game.lines.labels[int(tree.child_start[node]) + a]
                                   for a in range(na)),
                     names=tuple(bp.action_meanings(labels).values()), combos=combos,
                     buckets=buckets[:, street].copy(), reach=reach, weight=weight, mix=mix)
