"""Kernels that play multi-way (3-6 player) hands: one blueprint seat against the others.

The other seats are all played by a baseline bot (the policies of
:mod:`holdem.games.match_kernels`, here computed from the node's actions) or by a second
blueprint. Deals are *duplicate*: every deal is played once with the blueprint in each seat (the
cards stay with the seats), and the mean over those rotations is one sample. The kernel steps
the multi-way kind's state rows (:mod:`holdem.games.nlhe.multiway_kernels`); analysis reaches it
through the game's :data:`holdem.games.interface.ROTATIONS` capability
(:class:`holdem.games.nlhe.multiway.MultiwayRotations`).

Beside each hand's chips the kernel sums an AIVAT-style correction (Burch et al. 2018) for A's
seat, of mean zero, which the caller adds with the variance-minimising coefficient
(:func:`holdem.analysis.matches.headtohead.play_match`). Its value function is the *check-down
value* ``V``: A's expected chips if every player still in checked to showdown from here, over the
board cards not yet dealt (every river; every turn-river pair is too slow here, so before the
turn ``samples`` random completions drawn from a random stream of their own, which changes
nothing else in the match). The correction adds, where cards come (the flop, turn and river
between two rounds, or the run-out after the betting ends), ``V`` before them minus ``V`` after,
and at each decision of a player whose strategy mixes (a blueprint, the random bot)
``sum_a sigma(a) V(child a) - V(chosen child)``. Given everything before, each term has mean
zero whatever ``V`` is; the closer ``V`` follows the real outcome the more luck it removes (on a
10-minute 6-max blueprint against the equity bot, about 2.3 times narrower intervals).
"""

from collections import namedtuple

import numpy as np

from holdem import rng
from holdem._jit import njit
from holdem.evaluator.kernels import CARD_BITS, rank_key_kernel
from holdem.games import deal_kernels
from holdem.games.match_kernels import (POLICY_BLUEPRINT, POLICY_CALL, POLICY_FOLD,
                                        POLICY_POT, POLICY_RANDOM, log_action, log_deal)
from holdem.games.nlhe import multiway_kernels as mk
from holdem.rng import sample_action
from holdem.store.strategy_kernels import average_strategy

BOARD_CARDS = np.array([0, 3, 4, 5], np.int64)     # board cards seen on each street

Scratch = namedtuple("Scratch", ["rows", "values", "strength", "payoff"])
"""Scratch of :func:`play_rotations`' correction: ``rows`` int64[A + 1, WIDTH] (the children
of a decision, A the most actions at a node), ``values`` float64[A + 1], ``strength`` int64[P]
and ``payoff`` float64[P] (P players)."""


def make_scratch(num_players, max_actions):
    """A :data:`Scratch` for a game of ``num_players`` and at most ``max_actions`` at a node."""
    return Scratch(rows=np.zeros((max_actions + 1, mk.WIDTH), np.int64),
                   values=np.zeros(max_actions + 1, np.float64),
                   strength=np.zeros(num_players, np.int64),
                   payoff=np.zeros(num_players, np.float64))


@njit
def _add_showdowns(g, rows, nrows, seat, key, hole, live, scratch):
    """Add ``seat``'s chips at showdown of ``rows[:nrows]`` on the 5-card board ``key``."""
    strength = scratch.strength
    for p in range(g.num_players):
        if (live >> p) & 1:
            strength[p] = rank_key_kernel(key | CARD_BITS[hole[p, 0]] | CARD_BITS[hole[p, 1]])
        else:
            strength[p] = 0
    for r in range(nrows):
        mk.payoffs(g, rows[r], strength, scratch.payoff)
        scratch.values[r] += scratch.payoff[seat]


@njit
def checkdown_values(g, nrows, seat, hole, board, street, samples, state, scratch):
    """``scratch.values[r]`` = ``seat``'s expected chips if the players still in
    ``scratch.rows[r]`` checked to showdown, the board as seen on ``street`` (exact from the
    turn on; before it the mean over ``samples`` random completions drawn with ``state``)."""
    rows = scratch.rows
    seen = BOARD_CARDS[street]
    used = np.int64(0)
    for p in range(g.num_players):
        used |= CARD_BITS[hole[p, 0]] | CARD_BITS[hole[p, 1]]
    key = np.int64(0)
    for j in range(seen):
        key |= CARD_BITS[board[j]]
    used |= key
    folded = rows[0, mk.F_FOLDED]
    for r in range(nrows):
        folded &= rows[r, mk.F_FOLDED]     # anyone still in some row gets a strength
        scratch.values[r] = 0.0
    live = ~folded
    count = 0
    if seen == 5:
        _add_showdowns(g, rows, nrows, seat, key, hole, live, scratch)
        count = 1
    elif seen == 4:
        for c in range(52):
            if used & CARD_BITS[c] == 0:
                _add_showdowns(g, rows, nrows, seat, key | CARD_BITS[c], hole, live, scratch)
                count += 1
    else:
        for _ in range(samples):
            full = key
            for _ in range(5 - seen):
                c = rng.below(state, 52)
                while (used | full) & CARD_BITS[c]:
                    c = rng.below(state, 52)
                full |= CARD_BITS[c]
            _add_showdowns(g, rows, nrows, seat, full, hole, live, scratch)
            count += 1
    for r in range(nrows):
        scratch.values[r] /= count


@njit
def _decision_term(g, row, na, akind, ato, sigma, chosen, seat, hole, board, samples, state,
                   scratch):
    """``sum_a sigma(a) V(child a) - V(chosen)`` at a decision (:func:`checkdown_values`)."""
    for a in range(na):
        mk.apply_action(g, row, scratch.rows[a], akind[a], ato[a], a)
    checkdown_values(g, na, seat, hole, board, row[mk.F_STREET], samples, state, scratch)
    expected = 0.0
    for a in range(na):
        expected += sigma[a] * scratch.values[a]
    return expected - scratch.values[chosen]


@njit
def _chance_term(g, row, before, seat, hole, board, samples, state, scratch):
    """``V`` before the cards that come after street ``before`` minus ``V`` after them, at the
    state ``row`` that follows the round's last action."""
    for j in range(mk.WIDTH):
        scratch.rows[0, j] = row[j]
    checkdown_values(g, 1, seat, hole, board, before, samples, state, scratch)
    value = scratch.values[0]
    after = 3 if row[mk.F_KIND] == mk.KIND_SHOWDOWN else row[mk.F_STREET]
    checkdown_values(g, 1, seat, hole, board, after, samples, state, scratch)
    return value - scratch.values[0]


@njit
def _bot_action(kind, g, row, akind, ato, na, bucket, num_buckets, state):
    """A baseline bot's action index (see :data:`holdem.analysis.matches.headtohead.BASELINES`)."""
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
def play_rotations(g, deal, store_a, store_b, kind_b, num_buckets, ws, state, n, out, log,
                   seat_out, correction, samples, value_state, scratch):
    """Play ``n`` deals, each once with blueprint A (``store_a``) in every seat and the other
    seats played by B (``store_b`` when ``kind_b`` is POLICY_BLUEPRINT, else a bot).
    ``ws``: a :func:`holdem.solver.kernels.make_workspace` (its level 0 and the deal's arrays
    are scratch). ``out[i]`` = A's mean chips over deal i's rotations, ``seat_out[i, s]`` A's
    chips in seat s and ``correction[i, s]`` that hand's correction (module docstring; its
    check-down values before the turn use ``samples`` completions drawn with ``value_state``,
    ``samples`` = 0: no correction). ``log``: a
    :data:`holdem.games.match_kernels.HandLog` that the first hands are written to."""
    num_players = g.num_players
    row = ws.rows[0]
    akind, ato, sigma = ws.akind[0], ws.ato[0], ws.sigma[0]
    buckets, strength = ws.buckets, ws.strength
    hole, board = deal.hole, deal.board
    for i in range(n):
        deal_kernels.deal(deal, state, ws.deck, buckets, strength)
        total = 0.0
        for seat_a in range(num_players):
            h = i * num_players + seat_a
            logged = h < log.num_actions.shape[0]
            if logged:
                log_deal(log, h, hole, board, seat_a)
            for j in range(mk.WIDTH):
                row[j] = g.root[j]
            term = 0.0
            while row[mk.F_KIND] == mk.KIND_DECISION:
                p = row[mk.F_PLAYER]
                street = row[mk.F_STREET]
                na = mk.legal_actions(g, row, akind, ato)
                bucket = buckets[p, street]
                mixes = False
                if p == seat_a or kind_b == POLICY_BLUEPRINT:
                    key = mk.infoset_key(row[mk.F_HASH], bucket)
                    average_strategy(store_a if p == seat_a else store_b, key, na, sigma)
                    a = sample_action(sigma, na, state)
                    for b in range(na):
                        if sigma[b] > 0.0 and sigma[b] < 1.0:
                            mixes = True
                else:
                    a = _bot_action(kind_b, g, row, akind, ato, na, bucket, num_buckets[street],
                                    state)
                    if kind_b == POLICY_RANDOM:
                        for b in range(na):
                            sigma[b] = 1.0 / na
                        mixes = na > 1
                if mixes and samples > 0:
                    term += _decision_term(g, row, na, akind, ato, sigma, a, seat_a, hole,
                                           board, samples, value_state, scratch)
                mk.apply_action(g, row, row, akind[a], ato[a], a)
                if logged:
                    log_action(log, h, street, p, akind[a], row[mk.F_CONTRIB + p])
                if (samples > 0 and row[mk.F_KIND] != mk.KIND_FOLD
                        and (row[mk.F_KIND] == mk.KIND_SHOWDOWN or row[mk.F_STREET] != street)
                        and street < 3):
                    term += _chance_term(g, row, street, seat_a, hole, board, samples,
                                         value_state, scratch)
            mk.payoffs(g, row, strength, ws.payoff)
            total += ws.payoff[seat_a]
            seat_out[i, seat_a] = ws.payoff[seat_a]
            correction[i, seat_a] = term
            if logged:
                for q in range(num_players):
                    log.net[h, q] = np.int64(np.rint(ws.payoff[q]))
        out[i] = total / num_players
