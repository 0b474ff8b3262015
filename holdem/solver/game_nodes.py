"""How the traversal skeleton of :mod:`holdem.solver.kernels` steps through each kind of game.

The MCCFR traversals are written once, against a few *node hooks* that take the game as first
argument. Each hook has one implementation per game type, chosen by numba at compile time from
the namedtuple type of the game (``numba.extending.overload``), and inlined: every game gets its
own specialization of the same skeleton, as fast as a hand-written copy.

- :class:`TreeGame`: a game whose betting tree is enumerated (Kuhn, Leduc, heads-up NLHE); a
  stack level holds a node id (``ws.node[d]``), infoset keys are history * stride + bucket.
- :class:`holdem.games.nlhe.multiway_kernels.MultiwayArrays`: the implicit multi-way NLHE game;
  a stack level holds a state row (``ws.rows[d]``) computed from its parent, and a traversal
  ends as soon as the traverser has folded (its value is then fixed), as in Pluribus.

Hooks (``d``: the stack level; level ``d`` holds the node being visited):

- :func:`start`: put the root at level 0.
- :func:`is_terminal` / :func:`terminal_value`: whether the traverser's value at level ``d`` is
  fixed, and that value.
- :func:`open_node`: at a decision node, its (player, street, num_actions, infoset key); also
  stores ``ws.num_actions[d]`` and whatever the game needs to step to a child later.
- :func:`find_infoset`: the infoset's store entry (NOT_FOUND when it cannot be added).
- :func:`to_child`: write child ``a`` of level ``d`` into level ``dst`` (``d`` itself, or
  ``d + 1``).
- :func:`child_key`: the infoset key of child ``a`` when the traverser's play continues there
  (a decision node), else -1; may overwrite level ``d + 1``.
- :func:`last_street`: the street on which pruning stops.
"""

from collections import namedtuple

import numpy as np
from numba.core import types

from holdem._jit import njit_inline, overload_inline
from holdem.games.nlhe import multiway_kernels as mw
from holdem.store import kernels as store_kernels

DECISION = 0          # TreeArrays.kind (holdem.games.tree.NodeKind)
FOLD = 1

TreeGame = namedtuple("TreeGame", [
    "tree",            # TreeArrays
    "stride",          # int64: infoset key = history * stride + bucket
    "last_street",     # int64: num_streets - 1
])


def _game_hook(tree_impl, multiway_impl):
    """Make the decorated stub a hook: ``tree_impl`` for a :class:`TreeGame`, ``multiway_impl``
    for ``MultiwayArrays`` (both take the stub's arguments)."""
    impls = {TreeGame: tree_impl, mw.MultiwayArrays: multiway_impl}

    def decorate(stub):
        @overload_inline(stub, strict=False)
        def typer(game, *args):
            if isinstance(game, types.BaseNamedTuple):
                return impls.get(game.instance_class)
            return None
        return stub
    return decorate


# -- tree games ----------------------------------------------------------------------------------

@njit_inline
def terminal_utility(tree, node, player, strength):
    """Chips won by ``player`` at a two-player terminal (zero-sum)."""
    contrib = tree.contrib
    other = 1 - player
    if tree.kind[node] == FOLD:
        folder = tree.player[node]
        return -contrib[node, player] if folder == player else contrib[node, other]
    if strength[player] > strength[other]:
        return contrib[node, other]
    if strength[player] < strength[other]:
        return -contrib[node, player]
    return 0.5 * (contrib[node, other] - contrib[node, player])


@njit_inline
def tree_infoset_key(game, node, buckets):
    tree = game.tree
    return np.int64(tree.history[node]) * game.stride + buckets[tree.player[node],
                                                                 tree.street[node]]


def _tree_start(game, ws):
    ws.node[0] = 0


def _tree_is_terminal(game, ws, d, traverser):
    return game.tree.kind[ws.node[d]] != DECISION


def _tree_terminal_value(game, ws, d, traverser):
    return terminal_utility(game.tree, ws.node[d], traverser, ws.strength)


def _tree_open_node(game, ws, d):
    tree = game.tree
    node = ws.node[d]
    na = np.int64(tree.num_actions[node])
    ws.num_actions[d] = na
    return (np.int64(tree.player[node]), np.int64(tree.street[node]), na,
            tree_infoset_key(game, node, ws.buckets))


def _tree_find_infoset(game, write, key, num_actions):
    # An iteration adds at most one infoset per decision node, and run_iterations only starts
    # one with that much head-room: no check per insertion.
    return store_kernels.find_or_insert(write, key, num_actions)


def _tree_to_child(game, ws, d, a, dst):
    ws.node[dst] = game.tree.child_start[ws.node[d]] + a


def _tree_child_key(game, ws, d, a):
    child = game.tree.child_start[ws.node[d]] + a
    if game.tree.kind[child] != DECISION:
        return np.int64(-1)
    return tree_infoset_key(game, child, ws.buckets)


def _tree_last_street(game):
    return game.last_street


# -- the implicit multi-way game -----------------------------------------------------------------

def _multiway_start(game, ws):
    for i in range(mw.WIDTH):
        ws.rows[0, i] = game.root[i]


def _multiway_is_terminal(game, ws, d, traverser):
    row = ws.rows[d]
    # ``|``, not ``or``: a short-circuit in a loop condition trips numba's inliner (a
    # NumbaIRAssumptionWarning in outcome_traverse).
    return (row[mw.F_KIND] != mw.KIND_DECISION) | ((row[mw.F_FOLDED] >> traverser) & 1 != 0)


def _multiway_terminal_value(game, ws, d, traverser):
    row = ws.rows[d]
    if (row[mw.F_FOLDED] >> traverser) & 1:
        return -np.float64(row[mw.F_CONTRIB + traverser])
    mw.payoffs(game, row, ws.strength, ws.payoff)
    return ws.payoff[traverser]


def _multiway_open_node(game, ws, d):
    row = ws.rows[d]
    p = row[mw.F_PLAYER]
    street = row[mw.F_STREET]
    na = mw.legal_actions(game, row, ws.akind[d], ws.ato[d])
    ws.num_actions[d] = na
    return p, street, na, mw.infoset_key(row[mw.F_HASH], ws.buckets[p, street])


def _multiway_find_infoset(game, write, key, num_actions):
    # How many infosets an iteration adds is not known in advance: insert only while there is
    # room for one more, else look up (NOT_FOUND when new: the traversal treats it as uniform
    # and does not update it).
    if store_kernels.has_headroom(write, 1, num_actions):
        return store_kernels.find_or_insert(write, key, num_actions)
    return store_kernels.find_entry(write, key)


def _multiway_to_child(game, ws, d, a, dst):
    mw.apply_action(game, ws.rows[d], ws.rows[dst], ws.akind[d, a], ws.ato[d, a], a)


def _multiway_child_key(game, ws, d, a):
    if ws.akind[d, a] == mw.ACT_FOLD:
        return np.int64(-1)
    scratch = ws.rows[d + 1]
    mw.apply_action(game, ws.rows[d], scratch, ws.akind[d, a], ws.ato[d, a], a)
    if scratch[mw.F_KIND] != mw.KIND_DECISION:
        return np.int64(-1)
    return mw.infoset_key(scratch[mw.F_HASH],
                          ws.buckets[scratch[mw.F_PLAYER], scratch[mw.F_STREET]])


def _multiway_last_street(game):
    return np.int64(3)


# -- the hooks -----------------------------------------------------------------------------------

@_game_hook(_tree_start, _multiway_start)
def start(game, ws):
    """Put the root at stack level 0."""


@_game_hook(_tree_is_terminal, _multiway_is_terminal)
def is_terminal(game, ws, d, traverser):
    """Whether ``traverser``'s value at level ``d`` is fixed (a terminal; multi-way, also once
    the traverser has folded)."""


@_game_hook(_tree_terminal_value, _multiway_terminal_value)
def terminal_value(game, ws, d, traverser):
    """Chips won by ``traverser`` at the terminal level ``d`` (float64)."""


@_game_hook(_tree_open_node, _multiway_open_node)
def open_node(game, ws, d):
    """(player, street, num_actions, infoset key) of the decision node at level ``d``; stores
    ``ws.num_actions[d]`` (and, multi-way, the actions in ``ws.akind[d]`` / ``ws.ato[d]``)."""


@_game_hook(_tree_find_infoset, _multiway_find_infoset)
def find_infoset(game, write, key, num_actions):
    """The store entry of infoset ``key`` in ``write``, inserted if new (NOT_FOUND when the game
    cannot guarantee room for it and there is none)."""


@_game_hook(_tree_to_child, _multiway_to_child)
def to_child(game, ws, d, a, dst):
    """Write child ``a`` of the node at level ``d`` into level ``dst`` (``d`` or ``d + 1``)."""


@_game_hook(_tree_child_key, _multiway_child_key)
def child_key(game, ws, d, a):
    """Infoset key of child ``a`` of level ``d`` if it is a decision node of the traversal, else
    -1 (may overwrite level ``d + 1``)."""


@_game_hook(_tree_last_street, _multiway_last_street)
def last_street(game):
    """The last street (no pruning there)."""
