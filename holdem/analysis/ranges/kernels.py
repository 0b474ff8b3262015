"""Kernels of range views: every hole-card pair's buckets, reach and action mix at one node.

A *line* is the sequence of decisions from the root to a node of a heads-up tree game, each as
(betting-history id, player, street, action index, number of actions). For every live combo
(two cards not on the board) :func:`line_reach` multiplies, for each player, the probabilities
of that player's actions along the line under the blueprint's strategy at the combo's bucket
(the player's own reach), and gives the action mix of the player to act at the end of the line.
:func:`joint_weights` turns the two own reaches into each combo's share of the probability of
the line, card removal between the two hands included. Strategies are looked up in a
blueprint's rows by binary search over its sorted keys; a key never visited plays uniformly.
"""

import numpy as np

from holdem._jit import njit_exact
from holdem.abstraction.deal_kernels import (hand_index_kernel, river_prepare_kernel,
                                             river_score_from_work)
from holdem.evaluator.kernels import CARD_BITS


@njit_exact
def combo_buckets(tables, combos, board, street, out, work):
    """out[i, s] = the bucket of hole pair ``combos[i]`` on street s <= ``street`` with the
    board ``board`` (int64[5]; only the cards dealt by ``street`` are read)."""
    kf = np.int64(0)
    kt = np.int64(0)
    if street >= 1:
        kf = CARD_BITS[board[0]] | CARD_BITS[board[1]] | CARD_BITS[board[2]]
    if street >= 2:
        kt = CARD_BITS[board[3]]
    if street >= 3:
        river_prepare_kernel(board, work)
    for i in range(combos.shape[0]):
        h0 = combos[i, 0]
        h1 = combos[i, 1]
        kh = CARD_BITS[h0] | CARD_BITS[h1]
        out[i, 0] = tables.preflop_bucket[h0 * 52 + h1]
        if street >= 1:
            out[i, 1] = tables.flop_bucket[hand_index_kernel(
                tables.flop_radix, tables.flop_offset, tables.flop_code_mult, kh, kf, 0, 0)]
        if street >= 2:
            out[i, 2] = tables.turn_bucket[hand_index_kernel(
                tables.turn_radix, tables.turn_offset, tables.turn_code_mult, kh, kf | kt, 0, 0)]
        if street >= 3:
            out[i, 3] = tables.river_bucket[river_score_from_work(work, h0, h1)]


@njit_exact
def _strategy(sorted_keys, order, offsets, strategy_sum, regrets, average, key, na, out):
    """out[:na] = the normalized average (or current) strategy at ``key``; uniform if unseen."""
    i = np.searchsorted(sorted_keys, key)
    total = 0.0
    if i < sorted_keys.shape[0] and sorted_keys[i] == key:
        off = offsets[order[i]]
        for a in range(na):
            v = np.float64(strategy_sum[off + a]) if average else max(
                np.float64(regrets[off + a]), 0.0)
            out[a] = v
            total += v
    if total > 0.0:
        for a in range(na):
            out[a] = out[a] / total
    else:
        for a in range(na):
            out[a] = 1.0 / na


@njit_exact
def line_reach(sorted_keys, order, offsets, strategy_sum, regrets, average, stride, steps,
               buckets, node_history, node_street, node_actions, reach_out, mix_out, scratch):
    """``steps`` int64[S, 5]: (history, player, street, action, num_actions) of each decision on
    the line; ``buckets`` int64[n, 4] per combo. reach_out[p, i] = product over player p's
    steps of the probability of its action with combo i; mix_out[i, :node_actions] = the mix of
    the player to act at the node (``node_history``, ``node_street``) with combo i."""
    for i in range(buckets.shape[0]):
        reach_out[0, i] = 1.0
        reach_out[1, i] = 1.0
        for s in range(steps.shape[0]):
            key = steps[s, 0] * stride + buckets[i, steps[s, 2]]
            _strategy(sorted_keys, order, offsets, strategy_sum, regrets, average, key,
                      steps[s, 4], scratch)
            reach_out[steps[s, 1], i] *= scratch[steps[s, 3]]
        key = node_history * stride + buckets[i, node_street]
        _strategy(sorted_keys, order, offsets, strategy_sum, regrets, average, key,
                  node_actions, scratch)
        for a in range(node_actions):
            mix_out[i, a] = scratch[a]


@njit_exact
def joint_weights(combos, reach, pairs, out, blockers, totals):
    """out[p, i] = reach[p, i] * (sum of the other player's reach over the combos sharing no
    card with combo i) / ``pairs`` (the number of ordered pairs of disjoint live combos): the
    probability that player p holds combo i and both players play the line. ``blockers``
    float64[2, 52] and ``totals`` float64[2]: scratch (kernels do not allocate)."""
    blockers[:] = 0.0
    totals[:] = 0.0
    for p in range(2):
        for i in range(combos.shape[0]):
            r = reach[p, i]
            totals[p] += r
            blockers[p, combos[i, 0]] += r
            blockers[p, combos[i, 1]] += r
    for p in range(2):
        q = 1 - p
        for i in range(combos.shape[0]):
            a = combos[i, 0]
            b = combos[i, 1]
            disjoint = totals[q] - blockers[q, a] - blockers[q, b] + reach[q, i]
            out[p, i] = reach[p, i] * disjoint / pairs
