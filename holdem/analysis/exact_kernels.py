"""Exact evaluation kernels of tree games: a strategy profile's value, or a best response's, on
every deal at once.

One walk of the betting tree, depth first with an explicit stack (no recursion: numba's cache and
speed), carries a vector over the enumerated deals (``prob`` float64[D], ``buckets``
int64[D, P, S], ``strength`` int64[D, P]: :func:`holdem.analysis.exact.enumerate_deals`):

- down the tree, ``reach[d]`` = chance x the reach of every player but the one valued (all of
  them when nobody best-responds): at another player's node child ``a`` gets
  ``reach * profile[key(d), a]``;
- up the tree, ``value[d]`` = ``reach[d]`` x the valued player's payoff below (the
  counterfactual value times chance): a terminal pays :func:`tree_utility`, a node sums its
  children, except where the valued player best-responds: there each of its infosets (node,
  bucket) takes the action whose children's values summed over the infoset's deals are largest
  (the first on a tie), which is exact for perfect recall because a node's infosets partition
  its deals (Johanson et al. 2011, "Accelerating Best Response Calculation in Large Extensive
  Games", sec. 3: the public tree walked once with vectors over private states).

The root's values summed over deals are the player's expected value (the profile's, or its best
response's). Work: one pass over the nodes, O(D x actions) each.
"""

from collections import namedtuple

import numpy as np

from holdem._jit import njit_exact as njit
from holdem.games.tree_kernels import DECISION, tree_utility

ValueWork = namedtuple("ValueWork", [
    "node", "next_action",     # int64[depth]: the stack
    "reach",                   # float64[depth, D]
    "child_value",             # float64[depth, max_actions, D]
    "totals",                  # float64[stride, max_actions]: per bucket, at a best response
    "ret",                     # float64[D]: the value of the level just left
])
"""Scratch arrays of :func:`tree_value` (kernels do not allocate)."""


def make_value_work(max_depth, max_actions, stride, num_deals):
    return ValueWork(node=np.zeros(max_depth, np.int64),
                     next_action=np.zeros(max_depth, np.int64),
                     reach=np.zeros((max_depth, num_deals)),
                     child_value=np.zeros((max_depth, max_actions, num_deals)),
                     totals=np.zeros((stride, max_actions)), ret=np.zeros(num_deals))


@njit
def tree_value(tree, stride, buckets, strength, prob, profile, player, best_respond, work):
    """Expected chips per game of ``player`` when every player follows ``profile``
    (float64[num_keys, max_actions]), or when ``player`` best-responds to the others
    (``best_respond``). ``work``: :func:`make_value_work` for the game's depth (nodes on the
    longest root-to-leaf path), widest node, bucket stride and the number of deals."""
    num_deals = prob.shape[0]
    node, next_action, reach = work.node, work.next_action, work.reach
    child_value, totals, ret = work.child_value, work.totals, work.ret
    node[0] = 0
    for k in range(num_deals):
        reach[0, k] = prob[k]
    next_action[0] = -1
    d = 0
    while True:
        nd = node[d]
        if next_action[d] < 0 and tree.kind[nd] != DECISION:
            for k in range(num_deals):
                ret[k] = reach[d, k] * tree_utility(tree, nd, player, strength[k])
        else:
            next_action[d] += 1
            a = next_action[d]
            na = tree.num_actions[nd]
            p = tree.player[nd]
            street = tree.street[nd]
            mine = best_respond and p == player
            if a < na:
                base = np.int64(tree.history[nd]) * stride
                for k in range(num_deals):
                    r = reach[d, k]
                    if not mine and r != 0.0:
                        r *= profile[base + buckets[k, p, street], a]
                    reach[d + 1, k] = r
                d += 1
                node[d] = tree.child_start[nd] + a
                next_action[d] = -1
                continue
            if mine:
                for b in range(stride):
                    for c in range(na):
                        totals[b, c] = 0.0
                for k in range(num_deals):
                    b = buckets[k, p, street]
                    for c in range(na):
                        totals[b, c] += child_value[d, c, k]
                for k in range(num_deals):
                    b = buckets[k, p, street]
                    best = 0
                    for c in range(1, na):
                        if totals[b, c] > totals[b, best]:
                            best = c
                    ret[k] = child_value[d, best, k]
            else:
                for k in range(num_deals):
                    v = 0.0
                    for c in range(na):
                        v += child_value[d, c, k]
                    ret[k] = v
        d -= 1
        if d < 0:
            total = 0.0
            for k in range(num_deals):
                total += ret[k]
            return total
        a = next_action[d]
        for k in range(num_deals):
            child_value[d, a, k] = ret[k]
