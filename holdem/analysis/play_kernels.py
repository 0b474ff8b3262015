"""Kernels that play heads-up hands between a blueprint and an opponent on the abstract tree.

An opponent is a *policy kind* (IntEnum value) plus per-node child tables built in Python:
``fold_child``, ``call_child``, ``pot_child`` (the raise closest to a pot-size raise, else
all-in, else call) and ``allin_child``, each -1 where the action does not exist. A second
blueprint is just another store. Hands are *duplicate*: every deal is played twice with the
seats swapped, and the pair's mean is one sample, which removes most of the card luck.
"""

import numpy as np

from holdem import rng
from holdem._jit import njit, njit_inline
from holdem.abstraction.kernels import deal_buckets
from holdem.games import deal as deal_kernels
from holdem.solver.game_nodes import DECISION, terminal_utility
from holdem.solver.kernels import regret_matching, sample_action
from holdem.store import kernels as store_kernels

POLICY_BLUEPRINT = 0
POLICY_FOLD = 1
POLICY_CALL = 2
POLICY_POT = 3
POLICY_RANDOM = 4
POLICY_EQUITY = 5


@njit_inline
def average_strategy(store, key, na, out):
    """The average strategy of infoset ``key`` into ``out[:na]``: normalized strategy sums,
    else regret matching (no sums yet), else uniform (never visited)."""
    entry = store_kernels.find_entry(store, key)
    if entry < 0:
        for a in range(na):
            out[a] = 1.0 / na
        return
    off = store_kernels.entry_offset(entry)
    total = 0.0
    for a in range(na):
        total += store.strategy_sum[off + a]
    if total <= 0.0:
        regret_matching(store.regrets, off, na, out)
    else:
        for a in range(na):
            out[a] = store.strategy_sum[off + a] / total


@njit
def sample_average(store, key, na, sigma, state):
    """Sample an action of infoset ``key`` from its :func:`average_strategy`."""
    average_strategy(store, key, na, sigma)
    return sample_action(sigma, na, state)


@njit
def blueprint_action(tree, store, key, node, sigma, state):
    return sample_average(store, key, tree.num_actions[node], sigma, state)


@njit
def _bot_action(kind, tables, node, child0, na, bucket, num_buckets, state):
    fold_c, call_c, pot_c = tables[0, node], tables[1, node], tables[2, node]
    if kind == POLICY_FOLD:
        target = fold_c if fold_c >= 0 else call_c
    elif kind == POLICY_CALL:
        target = call_c
    elif kind == POLICY_POT:
        target = pot_c if pot_c >= 0 else call_c
    elif kind == POLICY_RANDOM:
        return rng.below(state, na)
    else:                       # equity threshold: buckets are equity quantiles
        strength = (bucket + 0.5) / num_buckets
        if strength > 0.8 and pot_c >= 0:
            target = pot_c
        elif strength > 0.4 or fold_c < 0:
            target = call_c
        else:
            target = fold_c
    return target - child0


@njit
def play_duplicate(tree, deal, stride, store_a, store_b, kind_b, tables, num_buckets, ws,
                   state, n, out, cards_b, stride_b, buckets_b):
    """Play ``n`` duplicate deals: player A (a blueprint, ``store_a``) against B (``store_b`` if
    ``kind_b`` is POLICY_BLUEPRINT, else a bot). ``out[i]`` = A's mean chips over the deal's two
    seatings. A blueprint B with a card abstraction of its own passes it as ``cards_b``
    (BucketTables) with its key stride ``stride_b``: B's buckets of each deal are then looked up
    there into ``buckets_b`` (int64[2, 4]). ``stride_b`` = -1: B shares A's buckets."""
    cross = stride_b >= 0
    for i in range(n):
        deal_kernels.deal(deal, state, ws.deck, ws.buckets, ws.strength)
        if cross:
            deal_buckets(cards_b, deal.hole, deal.board, 2, buckets_b, deal.work)
        total = 0.0
        for seat_a in range(2):
            node = 0
            while tree.kind[node] == DECISION:
                p = tree.player[node]
                street = tree.street[node]
                bucket = ws.buckets[p, street]
                key = np.int64(tree.history[node]) * stride + bucket
                child0 = tree.child_start[node]
                na = tree.num_actions[node]
                if p == seat_a:
                    a = blueprint_action(tree, store_a, key, node, ws.sigma[0], state)
                elif kind_b == POLICY_BLUEPRINT:
                    if cross:
                        key = np.int64(tree.history[node]) * stride_b + buckets_b[p, street]
                    a = blueprint_action(tree, store_b, key, node, ws.sigma[0], state)
                else:
                    a = _bot_action(kind_b, tables, node, child0, na, bucket,
                                    num_buckets[street], state)
                node = child0 + a
            total += terminal_utility(tree, node, seat_a, ws.strength)
        out[i] = 0.5 * total
