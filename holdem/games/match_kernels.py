"""What the match kernels of every kind of game share: who plays a seat and the hand log.

A seat is played by a *policy* (an int the kernels branch on): a blueprint (a regret store's
average strategy) or one of the baseline bots, ``POLICY_FOLD`` ... ``POLICY_EQUITY`` (what each
does: :data:`holdem.analysis.matches.headtohead.BASELINES`). A :data:`HandLog` records the first
hands of a match as they were played (cards, decisions, chips won), for hand histories
(:mod:`holdem.analysis.matches.hand_history`); it only writes, so a match plays the same with or
without one. The heads-up matches on an enumerated tree
(:mod:`holdem.analysis.matches.play_kernels`) and the multi-way ones of the No-Limit kind
(:mod:`holdem.games.nlhe.multiway_play_kernels`) both take these.
"""

from collections import namedtuple

import numpy as np

from holdem._jit import njit_inline

POLICY_BLUEPRINT = 0
POLICY_FOLD = 1
POLICY_CALL = 2
POLICY_POT = 3
POLICY_RANDOM = 4
POLICY_EQUITY = 5


HandLog = namedtuple("HandLog", ["hole", "board", "actions", "num_actions", "net", "seat_a"])
"""The first H hands of a match as played (hand ``h`` = deal ``h // seats``, A in seat
``h % seats``): ``hole`` int64[H, seats, 2] and ``board`` int64[H, 5] the cards dealt,
``actions`` int64[H, D, 4] the decisions in order as (street, seat, action code, the seat's total
contribution after it, antes and blinds included), ``num_actions`` int64[H] how many (more than D:
the rest did not fit), ``net`` int64[H, seats] the chips each seat won, ``seat_a`` int64[H].
Action codes are :class:`holdem.games.tree.ActionCode`'s (fold, check or call, bet or raise),
which the multi-way kernels' ``ACT_*`` share. H = 0 records nothing."""


def make_hand_log(hands, seats, depth):
    """An empty :data:`HandLog` for ``hands`` hands of ``seats`` players and up to ``depth``
    decisions each (``hands`` = 0: no log)."""
    return HandLog(hole=np.zeros((hands, seats, 2), np.int64),
                   board=np.zeros((hands, 5), np.int64),
                   actions=np.zeros((hands, depth, 4), np.int64),
                   num_actions=np.zeros(hands, np.int64),
                   net=np.zeros((hands, seats), np.int64), seat_a=np.zeros(hands, np.int64))


@njit_inline
def log_deal(log, h, hole, board, seat_a):
    """Start hand ``h`` of ``log``: its cards and A's seat."""
    for p in range(log.hole.shape[1]):
        log.hole[h, p, 0] = hole[p, 0]
        log.hole[h, p, 1] = hole[p, 1]
    for j in range(5):
        log.board[h, j] = board[j]
    log.seat_a[h] = seat_a
    log.num_actions[h] = 0


@njit_inline
def log_action(log, h, street, seat, code, contrib):
    """Append a decision to hand ``h`` of ``log`` (counted even when it does not fit)."""
    k = log.num_actions[h]
    if k < log.actions.shape[1]:
        log.actions[h, k, 0] = street
        log.actions[h, k, 1] = seat
        log.actions[h, k, 2] = code
        log.actions[h, k, 3] = contrib
    log.num_actions[h] = k + 1
