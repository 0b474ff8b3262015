"""External-sampling MCCFR over the implicit multi-way No-Limit Hold'em game.

The same algorithm as :func:`holdem.solver.kernels.external_traverse` (see that module for the
update rules, weighting, regret floor and Pluribus pruning), with nodes computed on the fly by
:mod:`holdem.games.nlhe.multiway_kernels` instead of read from a tree: the stack holds one state
row per depth. A traversal ends as soon as the traverser has folded (its value is then fixed), as
in Pluribus.

The store cannot know in advance how many infosets an iteration creates, so every insertion checks
head-room; an iteration that would overflow treats the new infoset as uniform and does not update
it (counted in ``visits[1]``). :func:`run_iterations` stops at an iteration boundary once less
than ``max_new_rows`` rows remain, so the Python side grows the store long before that happens.
"""

from collections import namedtuple

import numpy as np

from holdem._jit import njit, njit_inline
from holdem.games.nlhe import multiway_kernels as mw
from holdem.solver.kernels import (NO_FLOOR, _add_strategy, _normalize_positive, _sample,
                                   begin_iteration, close_node)
from holdem.store import kernels as store_kernels

MwWorkspace = namedtuple("MwWorkspace", [
    "rows", "akind", "ato", "num_actions", "next_action", "offset", "sigma", "util", "explored",
    "payoff", "buckets", "strength", "deck", "visits",
])


def make_workspace(max_depth, max_actions, num_players, deck_size=52):
    d, a = max_depth + 2, max(2, max_actions)
    return MwWorkspace(
        rows=np.zeros((d, mw.WIDTH), np.int64), akind=np.zeros((d, a), np.int64),
        ato=np.zeros((d, a), np.int64), num_actions=np.zeros(d, np.int64),
        next_action=np.zeros(d, np.int64), offset=np.zeros(d, np.int64),
        sigma=np.zeros((d, a), np.float64), util=np.zeros((d, a), np.float64),
        explored=np.zeros((d, a), np.bool_), payoff=np.zeros(mw.MAX_PLAYERS, np.float64),
        buckets=np.zeros((num_players, 4), np.int64), strength=np.zeros(num_players, np.int64),
        deck=np.zeros(deck_size, np.int64), visits=np.zeros(2, np.int64),
    )


@njit_inline
def _entry(write, key, num_actions):
    """find_or_insert when there is room for one more infoset, else a lookup (NOT_FOUND if new)."""
    if store_kernels.has_headroom(write, 1, num_actions):
        return store_kernels.find_or_insert(write, key, num_actions)
    return store_kernels.find_entry(write, key)


@njit_inline
def _strategy(read, write, key, na, sigma, is_delta, own_weight):
    """Current strategy into ``sigma``; returns (offset in ``write`` or -1 when the store is
    full, offset in ``read`` or -1)."""
    entry = _entry(write, key, na)
    woff = store_kernels.entry_offset(entry) if entry >= 0 else -1
    roff = woff
    if is_delta:
        shared = store_kernels.find_entry(read, key)
        roff = store_kernels.entry_offset(shared) if shared >= 0 else -1
    total = 0.0
    for a in range(na):
        r = 0.0
        if woff >= 0:
            r = own_weight * write.regrets[woff + a] if is_delta else write.regrets[woff + a]
        if is_delta and roff >= 0:
            r += read.regrets[roff + a]
        r = r if r > 0.0 else 0.0
        sigma[a] = r
        total += r
    _normalize_positive(sigma, total, na)
    return woff, roff


@njit_inline
def _prefetch_children(g, row, scratch, ws, d, na, read, write, is_delta):
    """Prefetch the hash slots of the traverser's explored children that are decision nodes
    (not its folds), before it explores them depth first; ``scratch`` is overwritten. Each
    child costs an extra ``apply_action``; alternating runs with and without it in one process
    on 6-max: +9% iterations/s in-process and in a worker."""
    for a in range(na):
        if ws.explored[d, a] and ws.akind[d, a] != mw.ACT_FOLD:
            mw.apply_action(g, row, scratch, ws.akind[d, a], ws.ato[d, a], a)
            if scratch[mw.F_KIND] == mw.KIND_DECISION:
                key = mw.infoset_key(scratch[mw.F_HASH],
                                     ws.buckets[scratch[mw.F_PLAYER], scratch[mw.F_STREET]])
                store_kernels.prefetch_lookups(read, write, key, is_delta)


@njit_inline
def _terminal_value(g, row, traverser, ws):
    if (row[mw.F_FOLDED] >> traverser) & 1:
        return -np.float64(row[mw.F_CONTRIB + traverser])
    mw.payoffs(g, row, ws.strength, ws.payoff)
    return ws.payoff[traverser]


@njit
def external_traverse(g, read, write, params, ws, traverser, w, prune, state):
    """One external-sampling traversal for ``traverser``; returns its sampled value."""
    rows = ws.rows
    d = 0
    for i in range(mw.WIDTH):
        rows[0, i] = g.root[i]
    ws.next_action[0] = -1
    floor = params.regret_floor * w if params.regret_floor > NO_FLOOR else NO_FLOOR
    threshold = params.prune_threshold * w
    ret = 0.0
    while True:
        row = rows[d]
        if ws.next_action[d] < 0:
            if row[mw.F_KIND] != mw.KIND_DECISION or (row[mw.F_FOLDED] >> traverser) & 1:
                ret = _terminal_value(g, row, traverser, ws)
                d -= 1
                if d < 0:
                    return ret
                ws.util[d, ws.next_action[d] - 1] = ret
                continue
            ws.visits[0] += 1
            p = row[mw.F_PLAYER]
            street = row[mw.F_STREET]
            na = mw.legal_actions(g, row, ws.akind[d], ws.ato[d])
            ws.num_actions[d] = na
            key = mw.infoset_key(row[mw.F_HASH], ws.buckets[p, street])
            sigma = ws.sigma[d]
            woff, roff = _strategy(read, write, key, na, sigma, params.is_delta,
                                   params.own_weight)
            if woff < 0:
                ws.visits[1] += 1
            if p != traverser:
                if woff >= 0 and street <= params.avg_max_street:
                    _add_strategy(write, woff, na, sigma, w)
                a = _sample(sigma, na, state)
                mw.apply_action(g, row, row, ws.akind[d, a], ws.ato[d, a], a)
                continue
            ws.offset[d] = woff
            # Pluribus: skip actions whose regret is below the threshold, except on the river
            # and for actions that end the hand for the traverser (fold, or a terminal child).
            check = prune and street != 3 and roff >= 0
            for a in range(na):
                skip = False
                if check and ws.akind[d, a] != mw.ACT_FOLD and read.regrets[roff + a] < threshold:
                    mw.apply_action(g, row, rows[d + 1], ws.akind[d, a], ws.ato[d, a], a)
                    skip = rows[d + 1, mw.F_KIND] == mw.KIND_DECISION
                ws.explored[d, a] = not skip
            _prefetch_children(g, row, rows[d + 1], ws, d, na, read, write, params.is_delta)
            ws.next_action[d] = 0
        na = ws.num_actions[d]
        a = ws.next_action[d]
        while a < na and not ws.explored[d, a]:
            a += 1
        if a < na:
            ws.next_action[d] = a + 1
            mw.apply_action(g, row, rows[d + 1], ws.akind[d, a], ws.ato[d, a], a)
            d += 1
            ws.next_action[d] = -1
            continue
        ret = close_node(write, ws, d, na, w, floor, params.is_delta)
        d -= 1
        if d < 0:
            return ret
        ws.util[d, ws.next_action[d] - 1] = ret


@njit
def run_iterations(g, deal, read, write, params, ws, state, t0, n, max_new_rows,
                   max_new_entries, utility_out):
    """As :func:`holdem.solver.kernels.run_iterations`, over the multi-way game ``g``."""
    num_players = ws.strength.shape[0]
    for i in range(n):
        if not store_kernels.has_headroom(write, max_new_rows, max_new_entries):
            return i
        w, prune = begin_iteration(deal, write, params, ws, state, t0 + i)
        for traverser in range(num_players):
            v = external_traverse(g, read, write, params, ws, traverser, w, prune, state)
            if traverser == 0:
                utility_out[i] = v
    return n
