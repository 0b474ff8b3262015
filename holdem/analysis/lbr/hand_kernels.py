"""The real hand of an LBR match, and how the blueprint's bot reads it on its abstract tree.

LBR (:mod:`holdem.analysis.lbr.kernels`) plays the real heads-up game: integer chips, no cap on
raises. ``real`` (int64[NUM_REAL], the ``R_*`` fields below) is that hand's state and
:func:`real_apply` plays an action on it. An action is a :class:`holdem.games.tree.ActionCode`
(fold, check or call, bet or raise) and, for a raise, the street commitment it raises to.

The blueprint plays on its abstract tree as the bot of ``play`` does: :func:`translate_action`
is its reading of a real action at an abstract node (``translate_line``: on the real pot, an
off-tree size between two abstract sizes is either, with the pseudo-harmonic probability),
:func:`bot_real_action` the real action for one of its abstract actions (its pot fraction of
the real pot), and :func:`on_tree` whether an abstract node still matches the real hand. ``spec`` is
:data:`holdem.analysis.lbr.kernels.LbrSpec`.
"""

import numpy as np

from holdem import rng
from holdem._jit import njit, njit_inline
from holdem.games.tree import ActionCode
from holdem.games.tree_kernels import DECISION

# real[] fields: the real hand's state, integer chips
R_CONTRIB = 0                   # [0:2] chips each seat has put in (antes and blinds included)
R_COMMIT = 2                    # [2:4] each seat's commitment on this street
R_BET = 4                       # the street's highest commitment
R_INC = 5                       # the last raise increment (the minimum raise's step)
R_ACTED = 6                     # bit p: seat p has acted since the last raise
R_PLAYER = 7                    # seat to act
R_STREET = 8
R_OVER = 9                      # 0 running, 1 someone folded, 2 showdown
R_FOLDER = 10
NUM_REAL = 11


@njit
def deal_nine(deck, cards, state):
    """Shuffle the first nine cards of a fresh deck (``deck`` int64[52] scratch) into
    ``cards``: two hole cards for each seat, then the board."""
    for i in range(52):
        deck[i] = i
    for i in range(9):
        j = i + rng.below(state, 52 - i)
        tmp = deck[i]
        deck[i] = deck[j]
        deck[j] = tmp
        cards[i] = deck[i]


@njit
def real_start(tree, spec, real):
    """The real hand at its first decision: the root's contributions (antes and blinds)."""
    for p in range(2):
        real[R_CONTRIB + p] = np.int64(tree.contrib[0, p])
        real[R_COMMIT + p] = real[R_CONTRIB + p] - spec.ante
    real[R_BET] = max(real[R_COMMIT], real[R_COMMIT + 1])
    real[R_INC] = spec.big_blind
    real[R_ACTED] = 0
    real[R_PLAYER] = 0
    real[R_STREET] = 0
    real[R_OVER] = 0
    real[R_FOLDER] = -1


@njit_inline
def real_to_call(real):
    return real[R_BET] - real[R_COMMIT + real[R_PLAYER]]


@njit_inline
def real_max_to(spec, real):
    """The street commitment of the seat to act's all-in; no raise is legal at or below the
    current bet, nor once the other seat is all-in (then 0)."""
    p = real[R_PLAYER]
    if real[R_CONTRIB + 1 - p] >= spec.stack:
        return np.int64(0)
    max_to = spec.stack - (real[R_CONTRIB + p] - real[R_COMMIT + p])
    return max_to if max_to > real[R_BET] else np.int64(0)


@njit_inline
def real_min_to(spec, real, max_to):
    """The legal minimum raise-to (all-in where the stack is short of it)."""
    return min(real[R_BET] + max(real[R_INC], spec.big_blind), max_to)


@njit
def real_apply(spec, real, kind, to):
    """The seat to act folds, checks/calls, or raises to street commitment ``to``."""
    p = real[R_PLAYER]
    o = 1 - p
    if kind == ActionCode.FOLD:
        real[R_OVER] = 1
        real[R_FOLDER] = p
        return
    if kind == ActionCode.CALL:
        real[R_CONTRIB + p] += real[R_BET] - real[R_COMMIT + p]
        real[R_COMMIT + p] = real[R_BET]
        real[R_ACTED] |= 1 << p
        if real[R_ACTED] == 3 and real[R_COMMIT] == real[R_COMMIT + 1]:
            if (real[R_STREET] == 3 or real[R_CONTRIB] >= spec.stack
                    or real[R_CONTRIB + 1] >= spec.stack):
                real[R_OVER] = 2
                return
            real[R_STREET] += 1
            real[R_COMMIT] = 0
            real[R_COMMIT + 1] = 0
            real[R_BET] = 0
            real[R_INC] = spec.big_blind
            real[R_ACTED] = 0
            real[R_PLAYER] = 1
        else:
            real[R_PLAYER] = o
        return
    real[R_CONTRIB + p] += to - real[R_COMMIT + p]
    real[R_INC] = max(to - real[R_BET], real[R_INC])
    real[R_BET] = to
    real[R_COMMIT + p] = to
    real[R_ACTED] = 1 << p
    real[R_PLAYER] = o


# --------------------------------------------------------------------------------------------
# Translation between the real hand and the abstract tree
# --------------------------------------------------------------------------------------------

@njit_inline
def real_pot(real):
    """The real pot once the seat to act has called: what a bet's pot fraction is of."""
    return real[R_CONTRIB] + real[R_CONTRIB + 1] + real_to_call(real)


@njit
def bot_raise_to(spec, real, child):
    """The real street commitment of the bot's abstract raise leading to ``child``: its pot
    fraction (``spec.fraction``) of the real pot after calling, rounded to chips and clamped to
    the legal range; the tree's all-in is the real all-in. Needs a legal raise (``real_max_to``
    above 0)."""
    max_to = real_max_to(spec, real)
    if spec.is_allin[child]:
        return max_to
    to = real[R_BET] + np.int64(np.rint(spec.fraction[child] * float(real_pot(real))))
    return min(max(to, real_min_to(spec, real, max_to)), max_to)


@njit
def translate_action(tree, spec, node, kind, to, all_in, real, opt_child, opt_prob):
    """How the bot reads a real action taken at abstract ``node`` on the real hand ``real``
    (before it is applied; ``translate_line``): its one or two readings into ``opt_child`` /
    ``opt_prob``; returns how many (0: the action leaves the tree). ``to``: a raise's street
    commitment; ``all_in``: the raise is all-in. A raise is read on the real pot: the size the
    bot itself makes for an abstract raise (:func:`bot_raise_to`) is that raise; any other is
    its fraction of the real pot after calling, between the abstract raises' fractions."""
    if node < 0 or tree.kind[node] != DECISION:
        return 0
    if kind == ActionCode.FOLD:
        if spec.fold_child[node] < 0:
            return 0
        opt_child[0] = spec.fold_child[node]
        opt_prob[0] = 1.0
        return 1
    call = spec.call_child[node]
    if kind == ActionCode.CALL:
        opt_child[0] = call
        opt_prob[0] = 1.0
        return 1
    last = tree.child_start[node] + tree.num_actions[node] - 1
    first = call + 1
    if first > last:
        return 0
    if all_in and spec.is_allin[last]:
        opt_child[0] = last
        opt_prob[0] = 1.0
        return 1
    for c in range(first, last + 1):
        if bot_raise_to(spec, real, c) == to:
            opt_child[0] = c
            opt_prob[0] = 1.0
            return 1
    x = float(to - real[R_BET]) / float(real_pot(real))
    if x <= spec.fraction[first]:
        opt_child[0] = first
        opt_prob[0] = 1.0
        return 1
    if x >= spec.fraction[last]:
        opt_child[0] = last
        opt_prob[0] = 1.0
        return 1
    for c in range(first, last):
        a = spec.fraction[c]
        b = spec.fraction[c + 1]
        if a <= x <= b:
            if x == a or x == b:
                opt_child[0] = c if x == a else c + 1
                opt_prob[0] = 1.0
                return 1
            opt_child[0] = c
            opt_child[1] = c + 1
            opt_prob[0] = (b - x) * (1.0 + a) / ((b - a) * (1.0 + x))   # pseudo-harmonic
            opt_prob[1] = 1.0 - opt_prob[0]
            return 2
    return 0                    # unreachable: the sizes are increasing


@njit
def bot_real_action(spec, real, child, fold_child, call_child):
    """The real action for the bot's abstract action leading to ``child`` (``bot_action`` of
    :mod:`holdem.analysis.bot`): (ActionCode, street commitment). A fold with nothing to call
    checks; a raise the rules do not allow calls; a raise is :func:`bot_raise_to`."""
    if child == fold_child:
        if real_to_call(real) > 0:
            return ActionCode.FOLD, np.int64(0)
        return ActionCode.CALL, np.int64(0)
    if child == call_child or real_max_to(spec, real) == 0:
        return ActionCode.CALL, np.int64(0)
    return ActionCode.RAISE, bot_raise_to(spec, real, child)


@njit
def on_tree(tree, real, node, seat):
    """Whether abstract ``node`` is ``seat``'s decision on the real hand's street (the bot
    leaves its tree where its node is not)."""
    return (node >= 0 and tree.kind[node] == DECISION and tree.player[node] == seat
            and tree.street[node] == real[R_STREET])

