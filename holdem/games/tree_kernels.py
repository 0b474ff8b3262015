"""Tree games' kernels: the node hooks of :mod:`holdem.games.node_kernels` for games whose betting
tree is enumerated (Kuhn and Leduc for 2 or 3 players, heads-up NLHE), and their terminal
utilities.

A stack level holds a node id (``ws.node[d]``); infoset keys are history * stride + bucket, the
bucket being the acting player's on the node's street.
"""

from collections import namedtuple

import numpy as np

from holdem._jit import njit_inline
from holdem.games import node_kernels
from holdem.store import kernels as store_kernels

DECISION = 0          # TreeArrays.kind (holdem.games.tree.NodeKind)
FOLD = 1

TreeNodes = namedtuple("TreeNodes", [
    "tree",            # TreeArrays
    "stride",          # int64: infoset key = history * stride + bucket
    "last_street",     # int64: num_streets - 1
])
"""A tree game as the traversal kernels take it (``TreeGame.kernel``)."""



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
def multiway_terminal_utility(tree, node, player, strength):
    """Chips won by ``player`` at a terminal of an N-player tree (``strength`` int64[N]): the pot
    (every contribution) goes to the strongest hands among the players who have not folded
    (``tree.folded``), split evenly; everyone else loses what they put in."""
    folded = tree.folded[node]
    best = np.int64(-1)
    winners = 0
    pot = 0.0
    for q in range(strength.shape[0]):
        pot += tree.contrib[node, q]
        if (folded >> q) & 1:
            continue
        if strength[q] > best:
            best = strength[q]
            winners = 1
        elif strength[q] == best:
            winners += 1
    if (folded >> player) & 1 or strength[player] != best:
        return -tree.contrib[node, player]
    return pot / winners - tree.contrib[node, player]


@njit_inline
def tree_utility(tree, node, player, strength):
    """Chips won by ``player`` at a terminal: :func:`terminal_utility` with two players (the
    heads-up arithmetic, unchanged), :func:`multiway_terminal_utility` with more."""
    if strength.shape[0] == 2:
        return terminal_utility(tree, node, player, strength)
    return multiway_terminal_utility(tree, node, player, strength)


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
    return tree_utility(game.tree, ws.node[d], traverser, ws.strength)


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


node_kernels.implement(
    TreeNodes, start=_tree_start, is_terminal=_tree_is_terminal,
    terminal_value=_tree_terminal_value, open_node=_tree_open_node,
    find_infoset=_tree_find_infoset, to_child=_tree_to_child, child_key=_tree_child_key,
    last_street=_tree_last_street)
