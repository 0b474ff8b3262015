"""Kernels that play heads-up hands between a blueprint and an opponent on the abstract tree.

An opponent is a *policy kind* (IntEnum value) plus per-node child tables built in Python:
``fold_child``, ``call_child``, ``pot_child`` (the raise closest to a pot-size raise, else
all-in, else call) and ``allin_child``, each -1 where the action does not exist. A second
blueprint is just another store. Hands are *duplicate*: every deal is played twice with the
seats swapped, and the pair's mean is one sample, which removes most of the card luck.

Two variance reductions, both unbiased:

- *Common random numbers*: every action is drawn with a random number that depends only on the
  deal and the node, so where the two seatings of a deal reach the same decision with the same
  cards, two blueprints that mix alike choose alike (a blueprint against itself scores exactly 0
  on every deal).
- A *control variate* (a simple form of AIVAT, Burch et al. 2018): every strategy in a match is
  known (each blueprint's, each bot's), so at every decision the kernel sums ``sum_a sigma(a)
  v(a) - v(chosen)``, with ``v`` a value estimate of each child for A that may use every card
  (:func:`lookahead2_value`: two decisions of the known strategies, then checked down). Given
  the deal and the line so far the chosen action is drawn from ``sigma``, so the sum has mean
  zero; the caller adds it with the coefficient that minimises the variance
  (:func:`holdem.analysis.matches.headtohead.play_match`). A bot that never mixes adds nothing.

A :data:`holdem.games.match_kernels.HandLog` records the first hands of a match as they were
played (cards, decisions, chips won), for hand histories
(:mod:`holdem.analysis.matches.hand_history`); it only writes, so a match plays the same with or
without one. The policy ids and the hand log (shared with the games' own match kernels) and the
average strategy (:mod:`holdem.store.strategy_kernels`) are importable from here too.
"""

from collections import namedtuple

import numpy as np

from holdem import rng
from holdem._jit import njit, njit_inline
from holdem.abstraction.deal_kernels import deal_buckets
from holdem.games import deal_kernels
from holdem.games.match_kernels import (POLICY_BLUEPRINT, POLICY_CALL,  # noqa: F401
                                        POLICY_EQUITY, POLICY_FOLD, POLICY_POT, POLICY_RANDOM,
                                        HandLog, log_action, log_deal, make_hand_log)
from holdem.games.tree_kernels import DECISION, terminal_utility
from holdem.rng import pick_action, sample_action
from holdem.store.strategy_kernels import average_strategy


@njit
def sample_average(store, key, na, sigma, state):
    """Sample an action of infoset ``key`` from its :func:`average_strategy`."""
    average_strategy(store, key, na, sigma)
    return sample_action(sigma, na, state)


@njit
def bot_strategy(kind, tables, node, child0, na, bucket, num_buckets, sigma):
    """A bot's strategy at ``node`` into ``sigma[:na]``: uniform for the random bot, else all
    on its one action."""
    if kind == POLICY_RANDOM:
        for a in range(na):
            sigma[a] = 1.0 / na
        return
    for a in range(na):
        sigma[a] = 0.0
    sigma[_bot_target(kind, tables, node, bucket, num_buckets) - child0] = 1.0


@njit
def _bot_target(kind, tables, node, bucket, num_buckets):
    fold_c, call_c, pot_c = tables[0, node], tables[1, node], tables[2, node]
    if kind == POLICY_FOLD:
        target = fold_c if fold_c >= 0 else call_c
    elif kind == POLICY_CALL:
        target = call_c
    elif kind == POLICY_POT:
        target = pot_c if pot_c >= 0 else call_c
    else:                       # equity threshold: buckets are equity quantiles
        strength = (bucket + 0.5) / num_buckets
        if strength > 0.8 and pot_c >= 0:
            target = pot_c
        elif strength > 0.4 or fold_c < 0:
            target = call_c
        else:
            target = fold_c
    return target


@njit_inline
def checkdown_value(tree, node, player, strength):
    """Chips ``player`` wins at ``node`` if the hand went no further than matching the larger
    stake and showing down (every card is dealt already): a terminal's own payoff, else the
    larger contribution won, lost or split."""
    if tree.kind[node] != DECISION:
        return terminal_utility(tree, node, player, strength)
    stake = max(tree.contrib[node, 0], tree.contrib[node, 1])
    other = 1 - player
    if strength[player] > strength[other]:
        return stake
    if strength[player] < strength[other]:
        return -stake
    return 0.0


@njit_inline
def strategy_at(m, seat_a, node, sigma):
    """The strategy of whoever acts at ``node`` in match ``m`` (:class:`Match`), A sitting in
    ``seat_a``, into ``sigma``."""
    tree = m.tree
    p = tree.player[node]
    street = tree.street[node]
    na = tree.num_actions[node]
    if p != seat_a and m.kind_b != POLICY_BLUEPRINT:
        bot_strategy(m.kind_b, m.tables, node, tree.child_start[node], na, m.buckets[p, street],
                     m.num_buckets[street], sigma)
        return
    history = np.int64(tree.history[node])
    if p == seat_a:
        store, key = m.store_a, history * m.stride + m.buckets[p, street]
    else:
        store, key = m.store_b, history * m.stride_b + m.buckets_b[p, street]
    average_strategy(store, key, na, sigma)


@njit_inline
def lookahead2_value(m, seat_a, node, sigma, scratch):
    """A's value at ``node`` two decisions ahead: the mean over the strategy of whoever acts at
    ``node`` (into ``sigma``) of each child's value one decision ahead -- the mean over the
    strategy of whoever acts there (into ``scratch``) of its children's
    :func:`checkdown_value` -- and a terminal's payoff wherever a terminal comes first. Unlike
    checking down it counts those players' folds. The two levels are two nested loops, since
    kernels stay iterative. Each level costs a store lookup per action and narrows the
    intervals further (docs/performance.md has the figures for none, one and two)."""
    tree = m.tree
    if tree.kind[node] != DECISION:
        return terminal_utility(tree, node, seat_a, m.strength)
    strategy_at(m, seat_a, node, sigma)
    child0 = tree.child_start[node]
    value = 0.0
    for b in range(tree.num_actions[node]):
        if sigma[b] <= 0.0:
            continue
        child = child0 + b
        if tree.kind[child] != DECISION:
            value += sigma[b] * terminal_utility(tree, child, seat_a, m.strength)
            continue
        strategy_at(m, seat_a, child, scratch)
        grandchild0 = tree.child_start[child]
        ahead = 0.0
        for c in range(tree.num_actions[child]):
            if scratch[c] > 0.0:
                ahead += scratch[c] * checkdown_value(tree, grandchild0 + c, seat_a, m.strength)
        value += sigma[b] * ahead
    return value


@njit_inline
def action_correction(m, seat_a, node, chosen, sigma, scratch):
    """``sum_a sigma(a) v(a) - v(chosen)`` over the children of one decision, v the
    :func:`lookahead2_value` for A (mean zero when ``chosen`` is drawn from ``sigma``);
    ``scratch``: two rows of scratch."""
    child0 = m.tree.child_start[node]
    expected = 0.0
    chosen_value = 0.0
    for a in range(m.tree.num_actions[node]):
        if sigma[a] > 0.0:
            v = lookahead2_value(m, seat_a, child0 + a, scratch[0], scratch[1])
            expected += sigma[a] * v
            if a == chosen:
                chosen_value = v
    return expected - chosen_value


Match = namedtuple("Match", ["tree", "store_a", "store_b", "kind_b", "tables", "num_buckets",
                             "stride", "stride_b", "buckets", "buckets_b", "strength"])
"""One heads-up match's inputs for :func:`strategy_at`: the arguments of :func:`play_duplicate`
and the deal's buckets and strengths (``buckets_b`` is ``buckets`` when B shares A's)."""


@njit
def play_duplicate(tree, deal, stride, store_a, store_b, kind_b, tables, num_buckets, ws,
                   state, n, out, correction, cards_b, stride_b, buckets_b, log):
    """Play ``n`` duplicate deals: player A (a blueprint, ``store_a``) against B (``store_b`` if
    ``kind_b`` is POLICY_BLUEPRINT, else a bot). ``out[i]`` = A's mean chips over the deal's two
    seatings, ``correction[i]`` the mean of their control-variate sums (module docstring). A
    blueprint B with a card abstraction of its own passes it as ``cards_b`` (BucketTables) with
    its key stride ``stride_b``: B's buckets of each deal are then looked up there into
    ``buckets_b`` (int64[2, 4]). ``stride_b`` = -1: B shares A's buckets. ``log``: a
    :data:`HandLog` that the first hands are written to."""
    cross = stride_b >= 0
    m = Match(tree, store_a, store_b, kind_b, tables, num_buckets, stride,
              stride_b if cross else stride, ws.buckets, buckets_b if cross else ws.buckets,
              ws.strength)
    sigma, scratch = ws.sigma[0], ws.sigma[1:3]
    for i in range(n):
        deal_kernels.deal(deal, state, ws.deck, ws.buckets, ws.strength)
        if cross:
            deal_buckets(cards_b, deal.hole, deal.board, 2, buckets_b, deal.work)
        total = 0.0
        cv_sum = 0.0
        deal_key = rng.next_u64(state)
        for seat in range(2):
            h = 2 * i + seat
            logged = h < log.num_actions.shape[0]
            if logged:
                log_deal(log, h, deal.hole, deal.board, seat)
            node = 0
            while tree.kind[node] == DECISION:
                strategy_at(m, seat, node, sigma)
                a = pick_action(sigma, tree.num_actions[node], rng.keyed_uniform(deal_key, node))
                cv_sum += action_correction(m, seat, node, a, sigma, scratch)
                child = tree.child_start[node] + a
                if logged:
                    p = tree.player[node]
                    log_action(log, h, tree.street[node], p, tree.action[child],
                               np.int64(np.rint(tree.contrib[child, p])))
                node = child
            total += terminal_utility(tree, node, seat, ws.strength)
            if logged:
                for p in range(2):
                    log.net[h, p] = np.int64(np.rint(terminal_utility(tree, node, p,
                                                                      ws.strength)))
        out[i] = 0.5 * total
        correction[i] = 0.5 * cv_sum
