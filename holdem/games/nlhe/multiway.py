"""The multi-way (2-6 player) abstract No-Limit Hold'em game, built implicitly.

:func:`build_multiway` turns the stakes and an :class:`ActionAbstraction` into the plain arrays
of :mod:`holdem.games.nlhe.multiway_kernels` (bet menus per street and raise depth, blinds,
odd-chip order, the root state). Nothing else is allocated up front: nodes are computed during
traversal and the regret store holds only the infosets that were visited.

:class:`MultiwayNode` walks the same game from Python for tests and analysis (labels come from
:func:`holdem.abstraction.actions.raise_options`, the amounts from the kernels).
:class:`MultiwayRotations` is what the game declares for
:class:`holdem.games.interface.Rotations`: its matches, played on the state rows by
:mod:`holdem.games.nlhe.multiway_play_kernels`.
"""

from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from holdem.abstraction.actions import raise_options
from holdem.games.interface import Game, shapes_match
from holdem.games.nlhe import multiway_kernels as mk
from holdem.games.nlhe import multiway_play_kernels as mpk
from holdem.games.nlhe.abstract import HeadsUpTable
from holdem.games.nlhe.engine import RealCards


@dataclass(frozen=True)
class MultiwayTable(HeadsUpTable):
    """Stakes of the abstract multi-way game, in big blinds (every seat has ``stack``)."""

    num_players: int = 6


@dataclass(frozen=True)
class MultiwayRules(RealCards):
    """What a :class:`MultiwayGame` carries besides its kernel arrays (its
    :class:`holdem.games.interface.Cards`)."""

    table: MultiwayTable
    abstraction: object       # ActionAbstraction


@dataclass(frozen=True, eq=False)
class MultiwayRotations:
    """A :class:`MultiwayGame`'s :class:`holdem.games.interface.Rotations`: matches played by
    :func:`holdem.games.nlhe.multiway_play_kernels.play_rotations` on the game's kernel arrays
    and deal."""

    arrays: mk.MultiwayArrays
    deal: object              # DealArrays (holdem.games.deal_kernels)

    def play(self, store_a, store_b, kind_b, num_buckets, ws, state, deals, out, log, seat_out,
             correction, samples, value_state):
        """:meth:`holdem.games.interface.Rotations.play`."""
        scratch = mpk.make_scratch(int(self.arrays.num_players), ws.akind.shape[1])
        mpk.play_rotations(self.arrays, self.deal, store_a, store_b, np.int64(kind_b),
                           num_buckets, ws, state, np.int64(deals), out, log, seat_out,
                           correction, np.int64(samples), value_state, scratch)


def _menus(abstraction):
    """menu_kind / menu_value [4, D, K] from the abstraction (D = deepest raise depth)."""
    depths = max(1, max(abstraction.max_raises))
    entries = []
    for street in range(4):
        for depth in range(depths):
            sizes = [(mk.SIZE_POT, f) for f in abstraction.pot_fractions(street, depth)]
            if street == 0 and depth == 0:
                sizes = [(mk.SIZE_BIG_BLINDS, x) for x in abstraction.preflop_open] + sizes
            entries.append((street, depth, sizes))
    width = max(1, max(len(s) for _, _, s in entries))
    kind = np.zeros((4, depths, width), dtype=np.int64)
    value = np.zeros((4, depths, width), dtype=np.float64)
    for street, depth, sizes in entries:
        for k, (kd, v) in enumerate(sizes):
            kind[street, depth, k] = kd
            value[street, depth, k] = v
    return kind, value


def build_multiway(table, abstraction):
    """The kernels' :data:`MultiwayArrays` for ``table`` and ``abstraction``."""
    n = int(table.num_players)
    if not 2 <= n <= mk.MAX_PLAYERS:
        raise ValueError(f"num_players={n}: need 2 to {mk.MAX_PLAYERS}")
    stack, sb, bb, ante = (table.chips(x) for x in (table.stack, table.small_blind,
                                                     table.big_blind, table.ante))
    if not 0 < sb <= bb < stack - ante:
        raise ValueError("need 0 < small blind <= big blind < stack - ante")
    kind, value = _menus(abstraction)
    button = 0 if n == 2 else n - 1
    g = mk.MultiwayArrays(
        num_players=np.int64(n), stack=np.int64(stack), small_blind=np.int64(sb),
        big_blind=np.int64(bb), ante=np.int64(ante), menu_kind=kind, menu_value=value,
        all_in=np.int64(1 if abstraction.all_in else 0),
        max_raises=np.array([abstraction.max_raises[min(s, len(abstraction.max_raises) - 1)]
                             for s in range(4)], dtype=np.int64),
        odd_order=np.array([(button + 1 + i) % n for i in range(n)], dtype=np.int64),
        root=np.zeros(mk.WIDTH, dtype=np.int64))
    mk.init_root(g, g.root)
    return g


def max_actions(g):
    """Most abstract actions at one node: fold, call, every menu size and all-in."""
    return 3 + int(g.menu_kind.shape[2])


def max_depth(g):
    """Most decisions in one hand: per street at most ``max_raises`` raises, and between two
    raises every seat acts at most once."""
    n = int(g.num_players)
    return int(sum(r + (r + 1) * n for r in g.max_raises)) + 1


def walk_decisions(g, abstraction, max_street=0, max_nodes=5_000_000):
    """Every decision node up to ``max_street`` (depth first, actions in order), each with its
    history string (as :func:`holdem.games.nlhe.abstract.history_string`: ``f``, ``c``,
    ``r<raise-to in big blinds>``, streets separated by ``/``). Raises ValueError past
    ``max_nodes`` (the multi-way tree beyond preflop is far too large to walk)."""
    stack = [(MultiwayNode(g, abstraction), "")]
    bb = float(g.big_blind)
    out = []
    while stack:
        node, text = stack.pop()
        if node.is_terminal or node.street > max_street:
            continue
        out.append((node, text))
        if len(out) > max_nodes:
            raise ValueError(f"more than {max_nodes:,} decision nodes up to street {max_street}")
        children = []
        for a, (kind, to) in enumerate(node.actions()):
            child = node.child(a)
            changed = not child.is_terminal and child.street != node.street
            children.append((child, text + _step(kind, to, bb, changed)))
        stack.extend(reversed(children))
    return out


def _step(kind, to, big_blind, street_changed):
    """One action in history notation: ``f``, ``c``, ``r<raise-to in big blinds>``, then ``/``
    when the next decision is on the next street."""
    step = "f" if kind == mk.ACT_FOLD else "c" if kind == mk.ACT_CALL else f"r{to / big_blind:g}"
    return step + "/" if street_changed else step


Children = namedtuple("Children", [
    "rows",          # int64[m, WIDTH]: the child states
    "parent",        # int64[m]: index of the parent among the expanded rows (ascending)
    "kind",          # int64[m]: ACT_* of the action that leads to the child
    "to",            # int64[m]: its street commitment after the action (chips)
    "is_decision",   # bool[m]: the child is a decision node (else the hand is over)
    "street",        # int64[m]: the child's street (the parent's while the hand is over)
    "player",        # int64[m]: the player to act there
    "history",       # int64[m]: the child's history hash (its infoset keys: infoset_keys)
])
"""The children of some decision nodes, in parent order then action order: what
:func:`children` returns."""


def children(g, rows):
    """:data:`Children` of the decision state rows ``rows`` (int64[n, WIDTH]), every action
    of each row in order (one kernel call for them all)."""
    rows = np.ascontiguousarray(rows, dtype=np.int64).reshape(-1, mk.WIDTH)
    size = max_actions(g)
    m = rows.shape[0] * size
    out = np.empty((m, mk.WIDTH), np.int64)
    parent, kind, to = (np.empty(m, np.int64) for _ in range(3))
    m = mk.expand(g, rows, np.empty(size, np.int64), np.empty(size, np.int64), out, parent,
                  kind, to)
    out = out[:m]
    return Children(out, parent[:m], kind[:m], to[:m], out[:, mk.F_KIND] == mk.KIND_DECISION,
                    out[:, mk.F_STREET].copy(), out[:, mk.F_PLAYER].copy(),
                    out[:, mk.F_HASH].copy())


def history_steps(g, kids, index, parent_street):
    """The history notation of the actions leading to ``kids`` (:data:`Children`) at
    ``index``, as :func:`walk_decisions` writes them (``/`` after the last action of a
    street); ``parent_street``: the street of their parents."""
    bb = float(g.big_blind)
    return [_step(k, t, bb, d and s != parent_street) for k, t, d, s in zip(
        kids.kind[index].tolist(), kids.to[index].tolist(), kids.is_decision[index].tolist(),
        kids.street[index].tolist())]


def raise_labels(g, abstraction, row):
    """{raise-to: label} of the abstract raises at decision ``row`` (``r2.5b``, ``r0.5p``,
    ``a``), as :func:`raise_options` names them."""
    p = int(row[mk.F_PLAYER])
    bet, commit = int(row[mk.F_BET]), int(row[mk.F_COMMIT + p])
    inc = max(int(row[mk.F_INC]), int(g.big_blind))
    n = int(g.num_players)
    options = raise_options(
        abstraction, int(row[mk.F_STREET]), int(row[mk.F_RAISES]),
        pot=int(row[mk.F_CONTRIB:mk.F_CONTRIB + n].sum()), current_bet=bet, my_commit=commit,
        min_raise_to=bet + inc, max_to=int(mk.all_in_to(g, row, p)), big_blind=int(g.big_blind))
    return {o.to: o.label for o in options}


def action_labels(g, abstraction, row, kinds, tos, cache=None):
    """Labels of the actions (``kinds``, ``tos``: ACT_* and raise-to of each, in order) at
    decision ``row``: ``f``, ``c``, then the raise labels of :func:`raise_labels`. ``cache``
    (a dict) keeps the raise labels of each betting situation across calls."""
    raises = {}
    if mk.ACT_RAISE in kinds:
        if cache is None:
            raises = raise_labels(g, abstraction, row)
        else:
            p = int(row[mk.F_PLAYER])
            situation = (int(row[mk.F_STREET]), int(row[mk.F_RAISES]), int(row[mk.F_BET]),
                         int(row[mk.F_INC]), int(row[mk.F_COMMIT + p]), int(row[mk.F_CONTRIB + p]),
                         int(row[mk.F_CONTRIB:mk.F_CONTRIB + int(g.num_players)].sum()))
            raises = cache.get(situation)
            if raises is None:
                raises = cache[situation] = raise_labels(g, abstraction, row)
    return ["f" if k == mk.ACT_FOLD else "c" if k == mk.ACT_CALL else raises[t]
            for k, t in zip(kinds, tos)]


class MultiwayNode:
    """A node of the multi-way game, walked from Python (tests, analysis)."""

    def __init__(self, g, abstraction, row=None):
        self.g = g
        self.abstraction = abstraction
        self.row = (g.root if row is None else row).copy()
        self._actions = None

    @property
    def kind(self):
        return int(self.row[mk.F_KIND])

    @property
    def is_terminal(self):
        return self.kind != mk.KIND_DECISION

    @property
    def player(self):
        return int(self.row[mk.F_PLAYER])

    @property
    def street(self):
        return int(self.row[mk.F_STREET])

    @property
    def history(self):
        return int(self.row[mk.F_HASH])

    @property
    def contributions(self):
        n = int(self.g.num_players)
        return self.row[mk.F_CONTRIB:mk.F_CONTRIB + n].copy()

    @property
    def bet(self):
        """The highest street commitment (chips)."""
        return int(self.row[mk.F_BET])

    @property
    def commitments(self):
        """Each seat's street commitment (chips)."""
        n = int(self.g.num_players)
        return self.row[mk.F_COMMIT:mk.F_COMMIT + n].copy()

    @property
    def folded(self):
        return [bool((int(self.row[mk.F_FOLDED]) >> q) & 1) for q in range(int(self.g.num_players))]

    def actions(self):
        """[(kind, to)] of the abstract actions (kernel order); computed once per node."""
        if self._actions is None:
            size = max_actions(self.g)
            akind = np.zeros(size, np.int64)
            ato = np.zeros(size, np.int64)
            na = mk.legal_actions_py(self.g, self.row, akind, ato)
            self._actions = [(int(akind[i]), int(ato[i])) for i in range(na)]
        return self._actions

    def labels(self):
        """Labels of the actions: ``f``, ``c``, then the raise labels (``r2.5b``, ``r0.5p``,
        ``a``) as :func:`raise_options` names them."""
        actions = self.actions()
        return action_labels(self.g, self.abstraction, self.row, [k for k, _ in actions],
                             [t for _, t in actions])

    def child(self, index):
        kind, to = self.actions()[index]
        row = self.row.copy()
        mk.apply_action(self.g, self.row, row, kind, to, index)
        return MultiwayNode(self.g, self.abstraction, row)

    def infoset_key(self, bucket):
        return int(mk.infoset_key_py(self.row[mk.F_HASH], bucket))

    def payoffs(self, strengths):
        out = np.zeros(mk.MAX_PLAYERS, np.float64)
        mk.payoffs_py(self.g, self.row, np.asarray(strengths, dtype=np.int64), out)
        return out[:int(self.g.num_players)]


@dataclass(frozen=True, eq=False, kw_only=True)
class MultiwayGame(Game):
    """The implicit multi-way game (:class:`holdem.games.interface.Game`): infoset keys hash the
    betting history, so the store grows as traversals visit new infosets and keys can only be
    range-checked. Node hooks: :mod:`holdem.games.nlhe.multiway_kernels`."""

    arrays: mk.MultiwayArrays

    INITIAL_ROWS = 1 << 20
    HEADROOM_ROWS = 1 << 16
    """Rows kept free before each iteration (far above the new infosets one iteration creates;
    an insertion past the end is skipped, never written out of bounds)."""

    row_width = mk.WIDTH
    payoff_size = mk.MAX_PLAYERS

    @property
    def kernel(self):
        return self.arrays

    @property
    def initial_rows(self):
        return self.INITIAL_ROWS

    @property
    def max_new_rows(self):
        """A head-room the kernel checks per insertion."""
        return self.HEADROOM_ROWS

    @property
    def max_new_entries(self):
        return self.HEADROOM_ROWS * self.max_actions

    def keys_match(self, keys, num_actions):
        """Keys are hashes: only their range and the number of actions are checked (the store
        also rejects a key it holds with another num_actions)."""
        pair = shapes_match(keys, num_actions)
        if pair is None:
            return False
        keys, num_actions = pair
        return bool(np.all(keys >= 0) and np.all(num_actions >= 2)
                    and np.all(num_actions <= self.max_actions))

    def root_node(self):
        """The root as a :class:`MultiwayNode`, to walk the game from Python."""
        return MultiwayNode(self.arrays, self.rules.abstraction)

    def walk_decisions(self, max_street=0, max_nodes=5_000_000):
        """:func:`walk_decisions` of this game."""
        return walk_decisions(self.arrays, self.rules.abstraction, max_street, max_nodes)

    def root_rows(self):
        """int64[1, row_width]: the root's state row, to walk the game breadth first with
        :meth:`children`."""
        return self.arrays.root.reshape(1, -1).copy()

    def children(self, rows):
        """:func:`children` of decision state rows (:data:`Children`)."""
        return children(self.arrays, rows)

    def history_steps(self, kids, index, parent_street):
        """:func:`history_steps` of this game."""
        return history_steps(self.arrays, kids, index, parent_street)

    def action_labels(self, row, kinds, tos, cache=None):
        """:func:`action_labels` of this game."""
        return action_labels(self.arrays, self.rules.abstraction, row, kinds, tos, cache)

    def infoset_keys(self, histories, num_buckets):
        """int64[len(histories), num_buckets]: the infoset key of each (history hash,
        bucket)."""
        out = np.zeros((len(histories), int(num_buckets)), dtype=np.int64)
        mk.infoset_keys(np.asarray(histories, dtype=np.int64), np.int64(num_buckets), out)
        return out
