"""Every player's range at any node of a No-Limit Hold'em blueprint (heads-up, or 3-6 players):
what each hand does and how often each player gets there with it.

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

With 3-6 players (:func:`multiway_range`) there is a row per seat, ``players`` names the seats
still in the hand, and card removal is taken between each seat and each opponent separately.
Strategies are the average strategy where training kept one and the current strategy on the
streets past ``solver.average_max_street``; ``strategy_name`` says which.

Per hand class (the 13 x 13 grid of :mod:`holdem.analysis.ranges.charts`) :meth:`NodeRange.by_class`
sums weights, averages own reach over the class's live combos and weights the mix by the combos'
weights. The numbers come from :mod:`holdem.analysis.ranges.kernels` over the blueprint's arrays.
"""

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from holdem.analysis.ranges import kernels as rk
from holdem.cards import NUM_SUITS, format_card
from holdem.games import CARDS, LINES

STREET_BOARD = (0, 3, 4, 5)


@dataclass(frozen=True)
class NodeRange:
    line: tuple                 # abstract labels from the root
    board: tuple                # card ints dealt so far
    street: int
    player: int                 # to act: 0 = small blind (button heads-up), 1 = big blind, ...
    actions: tuple              # labels at the node
    names: tuple                # what each action does, in words
    combos: np.ndarray          # int64[n, 2]: the live hole-card pairs (lower card first)
    buckets: np.ndarray         # int64[n]: bucket on the node's street
    reach: np.ndarray           # float64[num_players, n]
    weight: np.ndarray          # float64[num_players, n]
    mix: np.ndarray             # float64[n, num_actions]: the player to act's
    players: tuple = (0, 1)     # the seats still in the hand (3-6 players: who has not folded)
    seats: tuple = ("small blind (button)", "big blind")     # every seat's name
    strategy_name: str = "average strategy"   # which strategy (Blueprint.strategy_name)

    @property
    def line_probability(self):
        """P(the line is played | this board), deals uniform over the unseen cards (3-6
        players: with card removal as :func:`multiway_range` takes it)."""
        return float(self.weight[self.player].sum())

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
        from holdem.analysis.ranges.charts import GRID

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


def walk_multiway_line(game, labels):
    """The decisions of a line of abstract labels in the multi-way game ([(node, action index)],
    each node a ``MultiwayNode``) and the node it reaches; ValueError as :func:`walk_line`."""
    node, steps = game.root_node(), []
    for label in labels:
        if node.is_terminal:
            raise ValueError(f"line {labels!r}: the hand is over before {label!r}")
        names = node.labels()
        if label not in names:
            raise ValueError(f"line {labels!r}: {label!r} is not an action here "
                             f"(legal: {', '.join(names)})")
        steps.append((node, names.index(label)))
        node = node.child(names.index(label))
    return steps, node


def live_combos(board):
    """int64[n, 2]: every pair of cards (lower first) that uses no card of ``board``."""
    dead = set(board)
    live = [c for c in range(52) if c not in dead]
    return np.array(list(combinations(live, 2)), dtype=np.int64).reshape(-1, 2)


def _check_board(labels, street, board):
    from holdem.cards import describe_cards, repeated_card

    if len(board) != STREET_BOARD[street]:
        raise ValueError(f"line {' '.join(labels) or '(root)'!r} reaches a "
                         f"{('preflop', 'flop', 'turn', 'river')[street]} decision: the board "
                         f"needs {STREET_BOARD[street]} cards, got {len(board)}"
                         + (f" ({describe_cards(board)})" if board else ""))
    twice = repeated_card(board)
    if twice:
        raise ValueError(f"{twice} is on the board twice")


def _combo_buckets(game, board, street):
    """(live combos int64[n, 2], their buckets int64[n, 4] on the streets up to ``street``)."""
    from holdem.abstraction.bucket_tables import make_work

    combos = live_combos(board)
    full = np.zeros(5, dtype=np.int64)
    full[:len(board)] = board
    buckets = np.zeros((combos.shape[0], 4), dtype=np.int64)
    rk.combo_buckets(game.deal.tables, combos, full, np.int64(street), buckets, make_work())
    return combos, buckets


def node_range(bp, line=(), board=(), average=True):
    """The :class:`NodeRange` after ``line`` (labels, a string or an export history:
    ``Blueprint.line_labels``) with ``board`` (text such as ``"Ah Kd 7c"`` or card ints: as many
    cards as the node's street has dealt). No-Limit Hold'em, any number of seats (3-6:
    :func:`multiway_range`). Where training kept no average strategy (a street past
    ``solver.average_max_street``) the current strategy is used, and ``strategy_name`` says
    so."""
    from holdem.cards import card_tuple

    game = bp.game
    game.require(CARDS, "a range view")
    labels = list(bp.line_labels(line))
    board = card_tuple(() if board is None else board, "board")
    if not game.supports(LINES):
        return multiway_range(bp, labels, board, average)
    steps, node = walk_line(game, labels)
    tree = game.tree
    if tree.kind[node] != 0:
        raise ValueError(f"line {' '.join(labels) or '(root)'!r} ends the hand")
    street = int(tree.street[node])
    _check_board(labels, street, board)
    combos, buckets = _combo_buckets(game, board, street)
    na = int(tree.num_actions[node])
    n = combos.shape[0]
    # Steps on streets with an average strategy read it; later ones the current strategy.
    kept = np.array([average and bp.keeps_average(int(st)) for st in steps[:, 2]], dtype=bool)
    reach = np.ones((2, n))
    mix = np.zeros((n, na))
    for flag in (True, False):
        part_reach, part_mix = np.zeros((2, n)), np.zeros((n, na))
        rk.line_reach(bp._sorted_keys, bp._order, bp._offsets, bp._strategy_sum, bp._regrets,
                      flag, np.int64(game.bucket_stride),
                      np.ascontiguousarray(steps[kept == flag]), buckets,
                      np.int64(tree.history[node]), np.int64(street), np.int64(na), part_reach,
                      part_mix, np.zeros(max(2, game.max_actions)))
        reach *= part_reach
        if flag == (average and bp.keeps_average(street)):
            mix = part_mix
    disjoint = (52 - len(board) - 2) * (52 - len(board) - 3) // 2
    weight = np.zeros((2, n))
    rk.joint_weights(combos, reach, float(n * disjoint), weight, np.zeros((2, 52)),
                     np.zeros(2))
    return NodeRange(line=tuple(labels), board=tuple(board), street=street,
                     player=int(tree.player[node]),
                     actions=tuple(game.lines.labels[int(tree.child_start[node]) + a]
                                   for a in range(na)),
                     names=tuple(bp.action_meanings(labels).values()), combos=combos,
                     buckets=buckets[:, street].copy(), reach=reach, weight=weight, mix=mix,
                     players=(0, 1), seats=_seat_names(game),
                     strategy_name=bp.strategy_name(street, average, first_street=0))


def _seat_names(game):
    return tuple(game.cards.engine.seat_name(p, game.num_players)
                 for p in range(game.num_players))


def strategy_table(bp, keys, num_actions, average):
    """float64[len(keys), num_actions]: the strategy at each infoset key (the normalized strategy
    sums, or with ``average=False`` regret matching; uniform where a key was never visited or
    its values are all zero), read from the blueprint's arrays with numpy."""
    keys = np.asarray(keys, dtype=np.int64)
    sorted_keys = bp._sorted_keys
    pos = np.minimum(np.searchsorted(sorted_keys, keys), max(sorted_keys.size - 1, 0))
    found = (sorted_keys[pos] == keys) if sorted_keys.size else np.zeros(keys.size, bool)
    out = np.zeros((keys.size, num_actions))
    rows = bp._order[pos[found]]
    index = bp._offsets[rows][:, None] + np.arange(num_actions)[None, :]
    values = np.asarray((bp._strategy_sum if average else bp._regrets)[index], dtype=np.float64)
    out[found] = values if average else np.maximum(values, 0.0)
    total = out.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, out / total, 1.0 / num_actions)


def multiway_range(bp, labels, board, average=True):
    """:func:`node_range` of a 3-6 player blueprint (the multi-way game: no enumerated tree, so
    the line is walked node by node and each decision's strategy read per bucket with numpy).

    ``reach[p, i]`` is seat p's own reach with combo i along the line (every seat; a seat that
    folded keeps the reach of its fold) and ``players`` the seats still in the hand. ``weight``
    is for those seats only (0 for the others): ``reach[p, i]`` times, for each other seat q
    still in, the share of q's reach on combos that share no card with i -- card removal
    between p and each opponent, taken one opponent at a time (not between the opponents, nor
    against the folded seats' cards), which heads-up is exact. ``line_probability`` is then the
    sum of the weights of the seat to act."""
    game = bp.game
    steps, node = walk_multiway_line(game, labels)
    if node.is_terminal:
        raise ValueError(f"line {' '.join(labels) or '(root)'!r} ends the hand")
    street = node.street
    _check_board(labels, street, board)
    combos, buckets = _combo_buckets(game, board, street)
    num_buckets = game.deal.tables.num_buckets

    def table(at, na):
        keys = game.infoset_keys([at.history], int(num_buckets[at.street]))[0]
        return strategy_table(bp, keys, na, average and bp.keeps_average(at.street))

    n, seats = combos.shape[0], game.num_players
    reach = np.ones((seats, n))
    for at, action in steps:
        strategy = table(at, len(at.actions()))
        reach[at.player] *= strategy[buckets[:, at.street], action]
    na = len(node.actions())
    mix = table(node, na)[buckets[:, street]]
    players = tuple(q for q, folded in enumerate(node.folded) if not folded)
    weight = np.zeros((seats, n))
    disjoint = (52 - len(board) - 2) * (52 - len(board) - 3) / 2
    for p in players:
        weight[p] = reach[p] / n
        for q in players:
            if q != p:
                weight[p] *= _disjoint_reach(combos, reach[q]) / disjoint
    return NodeRange(line=tuple(labels), board=tuple(board), street=street, player=node.player,
                     actions=tuple(node.labels()), names=tuple(bp.action_meanings(labels).values()),
                     combos=combos, buckets=buckets[:, street].copy(), reach=reach,
                     weight=weight, mix=mix, players=players, seats=_seat_names(game),
                     strategy_name=bp.strategy_name(street, average, first_street=0))


def _disjoint_reach(combos, reach):
    """float64[n]: the sum of ``reach`` over the combos that share no card with each combo."""
    blockers = np.bincount(combos[:, 0], reach, minlength=52) + np.bincount(
        combos[:, 1], reach, minlength=52)
    return reach.sum() - blockers[combos[:, 0]] - blockers[combos[:, 1]] + reach
