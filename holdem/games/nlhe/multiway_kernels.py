"""Kernels of the implicit multi-way (2-6 player) abstract No-Limit Hold'em game.

A 6-max betting tree with even a small action abstraction has far more nodes than fit in memory,
so the multi-way game is never enumerated: a node is a *state row* (int64[WIDTH]) computed from its
parent by :func:`apply_action`, and an infoset key hashes the betting history (the sequence of
abstract action indices) with the acting player's card bucket. The regret store only ever holds
the infosets a traversal visited.

The rules are those of :mod:`holdem.games.nlhe.rules` (the reference these kernels are tested
against): seat 0 small blind, 1 big blind, 2 = UTG ... n-1 = button; heads-up seat 0 is the
button and acts first preflop only. A raise must add at least the largest increment so far this
street (at least a big blind); an all-in for less does not reopen the betting for players who
already acted; side pots and odd chips as in :mod:`holdem.games.nlhe.pots`. The abstract bets
are those of :func:`holdem.abstraction.actions.raise_options` (same clamping and merging), so with
two players this game is exactly the heads-up tree of :mod:`holdem.games.nlhe.abstract`.

State row fields (``F_*``): street, player to act, highest street commitment (``bet``), largest
raise increment (``inc``), bets + raises this street, folded players (bit mask), history hash,
node kind, then per seat the total contribution, the street commitment and the bet level when the
seat last acted this street (-1 = not yet).
"""

from collections import namedtuple

import numpy as np

from holdem._jit import njit_exact as njit
from holdem._jit import njit_inline
from holdem.games import node_kernels
from holdem.rng import GOLDEN, mix64
from holdem.store import kernels as store_kernels

MAX_PLAYERS = 6

F_STREET, F_PLAYER, F_BET, F_INC, F_RAISES, F_FOLDED, F_HASH, F_KIND = range(8)
F_CONTRIB = 8
F_COMMIT = F_CONTRIB + MAX_PLAYERS
F_ACTED = F_COMMIT + MAX_PLAYERS
WIDTH = F_ACTED + MAX_PLAYERS

KIND_DECISION = 0
KIND_FOLD = 1          # one player left
KIND_SHOWDOWN = 2      # betting over; the board is run out

ACT_FOLD = 0
ACT_CALL = 1           # check or call
ACT_RAISE = 2          # bet, raise or all-in (to an amount)

SIZE_BIG_BLINDS = 1    # preflop open: raise to x big blinds
SIZE_POT = 2           # pot fraction

MultiwayArrays = namedtuple("MultiwayArrays", [
    "num_players", "stack", "small_blind", "big_blind", "ante",
    "menu_kind",       # int64[4, D, K]: SIZE_* per street, raise depth and candidate (0 = none)
    "menu_value",      # float64[4, D, K]
    "all_in",          # int64: 1 = all-in is always offered when a raise is
    "max_raises",      # int64[4]: bets + raises per street
    "odd_order",       # int64[n]: seats in odd-chip order (first seat left of the button first)
    "root",            # int64[WIDTH]: the state after antes and blinds
])

_ROOT_HASH = np.uint64(0x6A09E667F3BCC908)
_MUL2 = np.uint64(0x94D049BB133111EB)
_S2 = np.uint64(2)


@njit_inline
def history_after(h, action_index):
    """The history hash after taking abstract action ``action_index`` at history ``h``."""
    return np.int64(mix64(np.uint64(h) + np.uint64(action_index + 1) * GOLDEN))


@njit_inline
def infoset_key(h, bucket):
    """Store key of the infoset (history ``h``, card bucket): 62 bits, never negative."""
    return np.int64(mix64(np.uint64(h) ^ (np.uint64(bucket + 1) * _MUL2)) >> _S2)


@njit_inline
def _can_act(g, row, p):
    return (row[F_FOLDED] >> p) & 1 == 0 and row[F_CONTRIB + p] < g.stack


@njit_inline
def _needs_action(g, row, p):
    return _can_act(g, row, p) and (row[F_ACTED + p] < 0 or row[F_COMMIT + p] < row[F_BET])


@njit_inline
def all_in_to(g, row, p):
    """Street commitment of seat ``p`` when all-in."""
    return row[F_COMMIT + p] + g.stack - row[F_CONTRIB + p]


@njit_inline
def _insert_sorted(ato, start, count, to):
    """Insert ``to`` into ascending ato[start:start+count] unless present; returns new count."""
    i = start + count
    for j in range(start, start + count):
        if ato[j] == to:
            return count
    while i > start and ato[i - 1] > to:
        ato[i] = ato[i - 1]
        i -= 1
    ato[i] = to
    return count + 1


@njit
def legal_actions(g, row, akind, ato):
    """Fill akind[:n] / ato[:n] with the abstract actions at a decision ``row``; returns n.

    Order: fold (only facing a bet), check/call, then raises by amount (``ato`` = street
    commitment after the action; for a call, the commitment after calling).
    """
    n = g.num_players
    p = row[F_PLAYER]
    street = row[F_STREET]
    bet = row[F_BET]
    commit = row[F_COMMIT + p]
    top = all_in_to(g, row, p)
    na = 0
    if commit < bet:
        akind[na] = ACT_FOLD
        ato[na] = commit
        na += 1
    akind[na] = ACT_CALL
    ato[na] = bet if bet < top else top
    na += 1
    depth = row[F_RAISES]
    if depth >= g.max_raises[street] or top <= bet:
        return na
    acted = row[F_ACTED + p]
    if acted >= 0 and bet - acted < row[F_INC]:
        return na                                   # not reopened: call or fold only
    anyone = False
    for q in range(n):
        if q != p and _can_act(g, row, q):
            anyone = True
    if not anyone:
        return na
    pot = 0
    for q in range(n):
        pot += row[F_CONTRIB + q]
    inc = row[F_INC] if row[F_INC] > g.big_blind else g.big_blind
    min_to = bet + inc
    to_call = bet - commit
    over = g.all_in != 0
    count = 0
    d = depth if depth < g.menu_kind.shape[1] else g.menu_kind.shape[1] - 1
    for k in range(g.menu_kind.shape[2]):
        kind = g.menu_kind[street, d, k]
        if kind == 0:
            continue
        if kind == SIZE_BIG_BLINDS:
            to = np.int64(np.rint(g.menu_value[street, d, k] * g.big_blind))
        else:
            to = bet + np.int64(np.rint(g.menu_value[street, d, k] * (pot + to_call)))
        if to >= top:
            over = True
        if to < min_to:
            to = min_to
        if to >= top:
            continue
        count = _insert_sorted(ato, na, count, to)
    for j in range(na, na + count):
        akind[j] = ACT_RAISE
    na += count
    if over:
        akind[na] = ACT_RAISE
        ato[na] = top
        na += 1
    return na


@njit
def apply_action(g, src, dst, kind, to, action_index):
    """dst = the state after the player to act in ``src`` takes (kind, to); src may be dst."""
    for i in range(WIDTH):
        dst[i] = src[i]
    p = dst[F_PLAYER]
    dst[F_HASH] = history_after(dst[F_HASH], action_index)
    if kind == ACT_FOLD:
        dst[F_FOLDED] |= np.int64(1) << p
    else:
        chips = to - dst[F_COMMIT + p]
        dst[F_COMMIT + p] = to
        dst[F_CONTRIB + p] += chips
        bet = dst[F_BET]
        if to > bet:
            if to - bet > dst[F_INC]:
                dst[F_INC] = to - bet      # a full raise sets the increment; short all-in not
            dst[F_BET] = to
            dst[F_RAISES] += 1
    dst[F_ACTED + p] = dst[F_BET]
    _advance(g, dst, p)


@njit_inline
def _advance(g, row, after):
    n = g.num_players
    live = 0
    for q in range(n):
        if (row[F_FOLDED] >> q) & 1 == 0:
            live += 1
    if live == 1:
        row[F_KIND] = KIND_FOLD
        return
    able = 0
    matched = True
    pending = False
    for q in range(n):
        if _can_act(g, row, q):
            able += 1
            if row[F_COMMIT + q] < row[F_BET]:
                matched = False
            if _needs_action(g, row, q):
                pending = True
    over = matched if able <= 1 else not pending
    if not over:
        for i in range(1, n + 1):
            q = (after + i) % n
            if _needs_action(g, row, q):
                row[F_PLAYER] = q
                return
    if row[F_STREET] == 3 or able <= 1:
        row[F_KIND] = KIND_SHOWDOWN
        return
    row[F_STREET] += 1
    row[F_BET] = 0
    row[F_INC] = g.big_blind
    row[F_RAISES] = 0
    for q in range(n):
        row[F_COMMIT + q] = 0
        row[F_ACTED + q] = -1
    first = 1 if n == 2 else 0
    for i in range(n):
        q = (first + i) % n
        if _needs_action(g, row, q):
            row[F_PLAYER] = q
            return


@njit
def init_root(g, row):
    """The state after antes and blinds, with the first player to act preflop."""
    n = g.num_players
    for i in range(WIDTH):
        row[i] = 0
    for q in range(MAX_PLAYERS):
        row[F_ACTED + q] = -1
    for q in range(n):
        row[F_CONTRIB + q] = g.ante
    row[F_COMMIT + 0] = g.small_blind
    row[F_CONTRIB + 0] += g.small_blind
    row[F_COMMIT + 1] = g.big_blind
    row[F_CONTRIB + 1] += g.big_blind
    row[F_BET] = g.big_blind
    row[F_INC] = g.big_blind
    row[F_HASH] = np.int64(_ROOT_HASH)
    row[F_KIND] = KIND_DECISION
    _advance(g, row, (2 % n) - 1 + n)


@njit_inline
def payoffs(g, row, strength, out):
    """Net chips of every seat at a terminal ``row`` (``strength``: higher wins; folded seats'
    strengths are ignored): side pots by contribution level, odd chips in ``g.odd_order``."""
    n = g.num_players
    folded = row[F_FOLDED]
    for q in range(n):
        out[q] = -np.float64(row[F_CONTRIB + q])
    previous = 0
    while True:
        level = -1                  # the next live contribution level above ``previous``
        for q in range(n):
            c = row[F_CONTRIB + q]
            if (folded >> q) & 1 == 0 and c > previous and (level < 0 or c < level):
                level = c
        if level < 0:
            break
        amount = 0
        top = True                  # is this the highest live level?
        best = np.int64(-1)
        winners = 0
        for q in range(n):
            c = row[F_CONTRIB + q]
            lo = c if c < previous else previous
            hi = c if c < level else level
            amount += hi - lo
            if (folded >> q) & 1 == 0:
                if c > level:
                    top = False
                if c >= level:
                    if strength[q] > best:
                        best = strength[q]
                        winners = 1
                    elif strength[q] == best:
                        winners += 1
        if top:                     # dead chips above the highest live level join its pot
            for q in range(n):
                c = row[F_CONTRIB + q]
                if c > level:
                    amount += c - level
        share = amount // winners
        remainder = amount - share * winners
        for i in range(n):
            q = g.odd_order[i]
            if (folded >> q) & 1 == 0 and row[F_CONTRIB + q] >= level and strength[q] == best:
                out[q] += share
                if remainder > 0:
                    out[q] += 1
                    remainder -= 1
        previous = level
        if top:
            break


@njit
def payoffs_py(g, row, strength, out):
    """:func:`payoffs` callable from Python (tests, analysis)."""
    payoffs(g, row, strength, out)


@njit
def legal_actions_py(g, row, akind, ato):
    """:func:`legal_actions` for Python callers."""
    return legal_actions(g, row, akind, ato)


@njit
def infoset_key_py(h, bucket):
    return infoset_key(h, bucket)


@njit
def infoset_keys(histories, num_buckets, out):
    """out[i, b] = infoset_key(histories[i], b) for b < num_buckets."""
    for i in range(histories.shape[0]):
        for b in range(num_buckets):
            out[i, b] = infoset_key(histories[i], b)


@njit
def expand(g, rows, akind, ato, out_rows, parent, kind, to):
    """The children of the decision state rows ``rows`` (int64[n, WIDTH]), every legal action
    of each row in kernel order: out_rows[m] is the state after action (kind[m], to[m]) at
    rows[parent[m]]. Returns the number of children m. The outputs need room for n times the
    most actions at a node (:func:`holdem.games.nlhe.multiway.max_actions`); ``akind`` and
    ``ato`` are scratch of that many."""
    m = 0
    for i in range(rows.shape[0]):
        na = legal_actions(g, rows[i], akind, ato)
        for a in range(na):
            apply_action(g, rows[i], out_rows[m], akind[a], ato[a], a)
            parent[m] = i
            kind[m] = akind[a]
            to[m] = ato[a]
            m += 1
    return m


# -- the node hooks (holdem.games.node_kernels) ---------------------------------------------

def _multiway_start(game, ws):
    for i in range(WIDTH):
        ws.rows[0, i] = game.root[i]


def _multiway_is_terminal(game, ws, d, traverser):
    row = ws.rows[d]
    # ``|``, not ``or``: a short-circuit in a loop condition trips numba's inliner (a
    # NumbaIRAssumptionWarning in outcome_traverse).
    return (row[F_KIND] != KIND_DECISION) | ((row[F_FOLDED] >> traverser) & 1 != 0)


def _multiway_terminal_value(game, ws, d, traverser):
    row = ws.rows[d]
    if (row[F_FOLDED] >> traverser) & 1:
        return -np.float64(row[F_CONTRIB + traverser])
    payoffs(game, row, ws.strength, ws.payoff)
    return ws.payoff[traverser]


def _multiway_open_node(game, ws, d):
    row = ws.rows[d]
    p = row[F_PLAYER]
    street = row[F_STREET]
    na = legal_actions(game, row, ws.akind[d], ws.ato[d])
    ws.num_actions[d] = na
    return p, street, na, infoset_key(row[F_HASH], ws.buckets[p, street])


def _multiway_find_infoset(game, write, key, num_actions):
    # How many infosets an iteration adds is not known in advance: insert only while there is
    # room for one more, else look up (NOT_FOUND when new: the traversal treats it as uniform
    # and does not update it).
    if store_kernels.has_headroom(write, 1, num_actions):
        return store_kernels.find_or_insert(write, key, num_actions)
    return store_kernels.find_entry(write, key)


def _multiway_to_child(game, ws, d, a, dst):
    apply_action(game, ws.rows[d], ws.rows[dst], ws.akind[d, a], ws.ato[d, a], a)


def _multiway_child_key(game, ws, d, a):
    if ws.akind[d, a] == ACT_FOLD:
        return np.int64(-1)
    scratch = ws.rows[d + 1]
    apply_action(game, ws.rows[d], scratch, ws.akind[d, a], ws.ato[d, a], a)
    if scratch[F_KIND] != KIND_DECISION:
        return np.int64(-1)
    return infoset_key(scratch[F_HASH],
                          ws.buckets[scratch[F_PLAYER], scratch[F_STREET]])


def _multiway_last_street(game):
    return np.int64(3)


node_kernels.implement(
    MultiwayArrays, outcome_sampling=False, start=_multiway_start,
    is_terminal=_multiway_is_terminal, terminal_value=_multiway_terminal_value,
    open_node=_multiway_open_node, find_infoset=_multiway_find_infoset,
    to_child=_multiway_to_child, child_key=_multiway_child_key,
    last_street=_multiway_last_street)
