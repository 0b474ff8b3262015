"""Kernels of a heads-up match on the real game between two blueprints whose action
abstractions differ (:mod:`holdem.analysis.matches.crossmatch`).

Each blueprint plays as the bot of ``play`` does and as LBR models it
(:mod:`holdem.analysis.lbr.hand_kernels`): it keeps its own abstract node, reads every real
action there on the real pot (:func:`translate_action`; a size between two of its sizes is
either, drawn with the pseudo-harmonic odds; its own sizes are read exactly), samples its
average strategy at that node with its bucket of its cards, and bets its abstract pot fraction
of the real pot (:func:`bot_real_action`). Once the real hand leaves a bot's tree it checks or
calls. The real hand is integer chips, no cap on raises; showdowns use the dealt board.

Every deal is played twice with the seats swapped; ``out[i]`` is blueprint A's mean chips over
deal i's two hands. A bot's scratch is a :data:`CrossBot` (its tree, spec, store, bucket tables
and river scratch).
"""

from collections import namedtuple

import numpy as np

from holdem import rng
from holdem._jit import njit
from holdem.abstraction.deal_kernels import river_prepare_kernel
from holdem.analysis.lbr.belief_kernels import hand_bucket
from holdem.analysis.lbr.hand_kernels import (R_CONTRIB, R_FOLDER, R_OVER, R_PLAYER, R_STREET,
                                              bot_real_action, deal_nine, on_tree, real_apply,
                                              real_max_to, real_start, translate_action)
from holdem.analysis.matches.play_kernels import sample_average
from holdem.evaluator.kernels import CARD_BITS, rank_key_kernel
from holdem.games.tree import ActionCode

CrossBot = namedtuple("CrossBot", [
    "tree",         # the blueprint's abstract tree (TreeArrays)
    "spec",         # its LbrSpec (lbr.sampled.make_spec): translation and real rules
    "store",        # its StoreArrays
    "tables",       # its DealTables (buckets)
    "bucket_work",  # int64[RUNTIME_WORK]: river bucket scratch
    "sigma",        # float64[max_actions]: sampling scratch
    "opt_child",    # int64[2]: a translation's readings ...
    "opt_prob",     # float64[2]: ... and their probabilities
])


@njit
def _move(bot, node, kind, to, real, state):
    """The bot's node after the real action (``kind``, ``to``) at ``node``; -1 off its tree."""
    all_in = kind == ActionCode.RAISE and to == real_max_to(bot.spec, real)
    num = translate_action(bot.tree, bot.spec, node, kind, to, all_in, real, bot.opt_child,
                           bot.opt_prob)
    if num == 0:
        return np.int64(-1)
    if num == 2 and rng.uniform(state) >= bot.opt_prob[0]:
        return bot.opt_child[1]
    return bot.opt_child[0]


@njit
def _act(bot, node, real, cards, seat, state):
    """The real action of ``bot`` in ``seat`` at its ``node``: (kind, raise-to)."""
    tree = bot.tree
    spec = bot.spec
    if not on_tree(tree, real, node, seat):
        return ActionCode.CALL, np.int64(0)
    street = real[R_STREET]
    kf = CARD_BITS[cards[4]] | CARD_BITS[cards[5]] | CARD_BITS[cards[6]]
    kt = kf | CARD_BITS[cards[7]]
    bucket = hand_bucket(bot.tables, bot.bucket_work, street, cards[2 * seat],
                         cards[2 * seat + 1], kf, kt)
    key = np.int64(tree.history[node]) * spec.stride + bucket
    a = sample_average(bot.store, key, tree.num_actions[node], bot.sigma, state)
    return bot_real_action(spec, real, tree.child_start[node] + a, spec.fold_child[node],
                           spec.call_child[node])


@njit
def _play_hand(bot_a, bot_b, a_seat, cards, real, state):
    """One hand, blueprint A in ``a_seat``: A's chips. ``cards``: seat 0's hole (0, 1), seat
    1's (2, 3), the board (4..8)."""
    real_start(bot_a.tree, bot_a.spec, real)
    river_prepare_kernel(cards[4:9], bot_a.bucket_work)
    river_prepare_kernel(cards[4:9], bot_b.bucket_work)
    node_a = np.int64(0)
    node_b = np.int64(0)
    while real[R_OVER] == 0:
        p = real[R_PLAYER]
        if p == a_seat:
            kind, to = _act(bot_a, node_a, real, cards, p, state)
        else:
            kind, to = _act(bot_b, node_b, real, cards, p, state)
        if node_a >= 0:
            node_a = _move(bot_a, node_a, kind, to, real, state)
        if node_b >= 0:
            node_b = _move(bot_b, node_b, kind, to, real, state)
        real_apply(bot_a.spec, real, kind, to)
    mine = float(real[R_CONTRIB + a_seat])
    theirs = float(real[R_CONTRIB + 1 - a_seat])
    if real[R_OVER] == 1:
        return -mine if real[R_FOLDER] == a_seat else theirs
    board = (CARD_BITS[cards[4]] | CARD_BITS[cards[5]] | CARD_BITS[cards[6]]
             | CARD_BITS[cards[7]] | CARD_BITS[cards[8]])
    rank_a = rank_key_kernel(board | CARD_BITS[cards[2 * a_seat]]
                             | CARD_BITS[cards[2 * a_seat + 1]])
    rank_b = rank_key_kernel(board | CARD_BITS[cards[2 - 2 * a_seat]]
                             | CARD_BITS[cards[3 - 2 * a_seat]])
    if rank_a > rank_b:
        return theirs
    if rank_a < rank_b:
        return -mine
    return 0.5 * (theirs - mine)


@njit
def cross_play(bot_a, bot_b, state, deals, n, deck, cards, real, out):
    """Deal ``n`` hands from the stream ``deals`` and play each twice (A in seat 0, then in
    seat 1, the seats' cards kept): ``out[i]`` = A's mean chips over deal i. ``state`` draws
    the bots' actions and readings. Scratch: ``deck`` int64[52], ``cards`` int64[9], ``real``
    int64[NUM_REAL]."""
    for i in range(n):
        deal_nine(deck, cards, deals)
        total = 0.0
        for a_seat in range(2):
            total += _play_hand(bot_a, bot_b, a_seat, cards, real, state)
        out[i] = 0.5 * total
