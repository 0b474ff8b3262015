"""Kernels that play multi-way (3-6 player) hands: one blueprint seat against the others.

The other seats are all played by a baseline bot (the policies of
:mod:`holdem.analysis.play_kernels`, here computed from the node's actions) or by a second
blueprint. Deals are *duplicate*: every deal is played once with the blueprint in each seat (the
cards stay with the seats), and the mean over those rotations is one sample.
"""

import numpy as np

from holdem import rng
from holdem._jit import njit
from holdem.analysis.play_kernels import (POLICY_BLUEPRINT, POLICY_CALL, POLICY_FOLD,
                                          POLICY_POT, POLICY_RANDOM, log_action, log_deal,
                                          sample_average)
from holdem.games import deal_kernels
from holdem.games.nlhe import multiway_kernels as mk


@njit
def _bot_action(kind, g, row, akind, ato, na, bucket, num_buckets, state):
    """A baseline bot's action index (see :data:`holdem.analysis.headtohead.BASELINES`)."""
    fold = 0 if akind[0] == mk.ACT_FOLD else -1
    call = fold + 1
    pot_raise = -1                         # the raise closest to a pot-size raise
    p = row[mk.F_PLAYER]
    pot = 0
    for q in range(g.num_players):
        pot += row[mk.F_CONTRIB + q]
    bet = row[mk.F_BET]
    target = bet + pot + (bet - row[mk.F_COMMIT + p])
    best = -1
    for a in range(call + 1, na):
        gap = abs(ato[a] - target)
        if pot_raise < 0 or gap < best:
            pot_raise, best = a, gap
    if kind == POLICY_FOLD:
        return fold if fold >= 0 else call
    if kind == POLICY_CALL:
        return call
    if kind == POLICY_POT:
        return pot_raise if pot_raise >= 0 else call
    if kind == POLICY_RANDOM:
        return rng.below(state, na)
    strength = (bucket + 0.5) / num_buckets           # equity threshold
    if strength > 0.8 and pot_raise >= 0:
        return pot_raise
    if strength > 0.4 or fold < 0:
        return call
    return fold


@njit
def play_rotations(g, deal, store_a, store_b, kind_b, num_buckets, ws, state, n, out, log):
    """Play ``n`` deals, each once with blueprint A (``store_a``) in every seat and the other
    seats played by B (``store_b`` when ``kind_b`` is POLICY_BLUEPRINT, else a bot).
    ``ws``: a :func:`holdem.solver.kernels.make_workspace` (its level 0 and the deal's arrays
    are scratch). ``out[i]`` = A's mean chips over deal i's rotations. ``log``: a
    :data:`holdem.analysis.play_kernels.HandLog` that the first hands are written to."""
    num_players = g.num_players
    row = ws.rows[0]
    akind, ato, sigma = ws.akind[0], ws.ato[0], ws.sigma[0]
    buckets, strength = ws.buckets, ws.strength
    for i in range(n):
        deal_kernels.deal(deal, state, ws.deck, buckets, strength)
        total = 0.0
        for seat_a in range(num_players):
            h = i * num_players + seat_a
            logged = h < log.num_actions.shape[0]
            if logged:
                log_deal(log, h, deal.hole, deal.board, seat_a)
            for j in range(mk.WIDTH):
                row[j] = g.root[j]
            while row[mk.F_KIND] == mk.KIND_DECISION:
                p = row[mk.F_PLAYER]
                street = row[mk.F_STREET]
                na = mk.legal_actions(g, row, akind, ato)
                bucket = buckets[p, street]
                if p == seat_a:
                    key = mk.infoset_key(row[mk.F_HASH], bucket)
                    a = sample_average(store_a, key, na, sigma, state)
                elif kind_b == POLICY_BLUEPRINT:
                    key = mk.infoset_key(row[mk.F_HASH], bucket)
                    a = sample_average(store_b, key, na, sigma, state)
                else:
                    a = _bot_action(kind_b, g, row, akind, ato, na, bucket, num_buckets[street],
                                    state)
                mk.apply_action(g, row, row, akind[a], ato[a], a)
                if logged:
                    log_action(log, h, street, p, akind[a], row[mk.F_CONTRIB + p])
            mk.payoffs(g, row, strength, ws.payoff)
            total += ws.payoff[seat_a]
            if logged:
                for q in range(num_players):
                    log.net[h, q] = np.int64(np.rint(ws.payoff[q]))
        out[i] = total / num_players
