"""LBR's belief about the blueprint's cards: its range as weighted branches of the abstract
tree, the Bayes update after each real action, and what LBR knows on each street.

LBR (:mod:`holdem.analysis.lbr.kernels`) never sees the blueprint's cards. It keeps the
blueprint's *range*, a weight per hole-card combo, split into *branches*: an abstract node of
the blueprint's tree with its weights (their sum over branches is the range). The bot reads an
off-tree size as one of two abstract sizes with a draw LBR does not see, so LBR's belief holds
one branch per reading (:func:`lbr_moves`); a blueprint action multiplies each branch's weights
by the probability that its node produces it (:func:`update_range`). Branches at the same node
merge; past ``MAX_BRANCHES`` the lighter reading is dropped.

Per street, once per deal: the live combos (disjoint from LBR's cards and the visible board)
and their buckets (:func:`prepare_street`), and the equity LBR decides with
(:func:`decision_equity`: exact, from :mod:`holdem.analysis.lbr.equity_kernels`, or the mean over
hands of LBR's own bucket). The scratch is :data:`holdem.analysis.lbr.kernels.LbrWork`.
"""

import numpy as np

from holdem import rng
from holdem._jit import njit, njit_inline
from holdem.abstraction.deal_kernels import (hand_index_kernel, river_prepare_kernel,
                                             river_score_from_work)
from holdem.analysis.lbr.equity_kernels import NUM_COMBOS, combo_of, compute_equity, street_equity
from holdem.analysis.lbr.hand_kernels import (R_STREET, bot_real_action, on_tree, real_max_to,
                                              translate_action)
from holdem.analysis.matches.play_kernels import average_strategy
from holdem.evaluator.kernels import CARD_BITS
from holdem.games.tree import ActionCode

MAX_BRANCHES = 16               # abstract nodes LBR's belief keeps at once (module docstring)

# work.stats[] counters of this module (:mod:`holdem.analysis.lbr.kernels` lists them all)
STAT_UPDATES = 1                # Bayes updates of the range (blueprint actions)
STAT_LOOKUPS = 3                # per-bucket strategy rows read from the store
STAT_MAX_BRANCHES = 19          # the most branches LBR's belief held at once
STAT_EMPTY = 23                 # beliefs that lost every combo (fell back to a uniform range)
STAT_DROPPED = 24               # readings dropped because the belief held MAX_BRANCHES


# --------------------------------------------------------------------------------------------
# Blueprint strategy and LBR's belief
# --------------------------------------------------------------------------------------------

@njit
def bucket_strategies(tree, store, spec, node, work):
    """``work.strategy[b, :na]`` = the blueprint's average strategy at ``node`` with bucket
    ``b``, for every bucket of the node's street."""
    na = tree.num_actions[node]
    base = np.int64(tree.history[node]) * spec.stride
    k = spec.num_buckets[tree.street[node]]
    for b in range(k):
        average_strategy(store, base + b, na, work.strategy[b])
    work.stats[STAT_LOOKUPS] += k


@njit
def normalize_range(work, street):
    """Scale every branch's weights over the live combos of ``street`` to sum to 1."""
    total = 0.0
    live = work.live[street]
    n = work.num_live[street]
    for b in range(work.num_branches[0]):
        row = work.range[b]
        for i in range(n):
            total += row[live[i]]
    if total > 0.0:
        inv = 1.0 / total
        for b in range(work.num_branches[0]):
            row = work.range[b]
            for i in range(n):
                row[live[i]] *= inv
    else:                       # the bot did what LBR's model says it cannot: counted, and
        work.stats[STAT_EMPTY] += 1     # the tests require it never to happen
        work.num_branches[0] = 1
        for i in range(n):
            work.range[0, live[i]] = 1.0 / n


@njit
def branch_weight(work, b, street):
    """Branch ``b``'s weight: the sum of its weights over the live combos of ``street``."""
    row = work.range[b]
    live = work.live[street]
    total = 0.0
    for i in range(work.num_live[street]):
        total += row[live[i]]
    return total


@njit
def _tidy_branches(work, street):
    """Merge branches at the same node, drop the weightless, then renormalize."""
    nb = work.num_branches[0]
    live = work.live[street]
    n = work.num_live[street]
    keep = 0
    for b in range(nb):
        if branch_weight(work, b, street) <= 0.0:
            continue
        merged = False
        for k in range(keep):
            if work.node[k] == work.node[b]:
                for i in range(n):
                    work.range[k, live[i]] += work.range[b, live[i]]
                merged = True
                break
        if not merged:
            if keep != b:
                work.node[keep] = work.node[b]
                for i in range(n):
                    work.range[keep, live[i]] = work.range[b, live[i]]
            keep += 1
    work.num_branches[0] = max(keep, 1)
    if keep == 0:
        work.node[0] = -1
    normalize_range(work, street)
    if work.num_branches[0] > work.stats[STAT_MAX_BRANCHES]:
        work.stats[STAT_MAX_BRANCHES] = work.num_branches[0]


@njit
def _split_branch(work, b, street, num):
    """Branch ``b`` moves to its first reading ``opt_child[0]``; a second reading becomes a
    new branch (weights x its probability) while there is room, else the likelier stays."""
    live = work.live[street]
    n = work.num_live[street]
    if num == 0:
        work.node[b] = -1
        return
    if num == 1:
        work.node[b] = work.opt_child[0]
        return
    p0 = work.opt_prob[0]
    p1 = work.opt_prob[1]
    nb = work.num_branches[0]
    if nb >= MAX_BRANCHES:
        work.stats[STAT_DROPPED] += 1
        work.node[b] = work.opt_child[0] if p0 >= p1 else work.opt_child[1]
        return
    work.node[b] = work.opt_child[0]       # (this line was missing: the first reading
    work.node[nb] = work.opt_child[1]      # stayed at the node before the bet)
    for i in range(n):
        c = live[i]
        work.range[nb, c] = work.range[b, c] * p1
        work.range[b, c] *= p0
    work.num_branches[0] = nb + 1


@njit
def lbr_moves(tree, spec, work, kind, to, all_in):
    """LBR took a real action: every branch follows the bot's reading(s) of it."""
    street = work.real[R_STREET]
    for b in range(work.num_branches[0]):
        num = translate_action(tree, spec, work.node[b], kind, to, all_in, work.real,
                               work.opt_child, work.opt_prob)
        _split_branch(work, b, street, num)
    _tidy_branches(work, street)


@njit
def update_range(tree, store, spec, seat, kind, to, work):
    """Bayes' rule after the bot (in ``seat``) took the real action (``kind``, ``to``) on the
    real hand ``work.real`` (before it is applied): each branch's weights are multiplied by
    the probability that its node produces that action (1 for a check or call off the tree, 0
    for anything else there), and the branch moves on to the bot's reading of its action."""
    real = work.real
    street = real[R_STREET]
    live = work.live[street]
    n = work.num_live[street]
    buckets = work.bucket[street]
    all_in = kind == ActionCode.RAISE and to == real_max_to(spec, real)
    for b in range(work.num_branches[0]):
        node = work.node[b]
        row = work.range[b]
        if not on_tree(tree, real, node, seat):
            if kind != ActionCode.CALL:
                for i in range(n):
                    row[live[i]] = 0.0
            work.node[b] = -1
            continue
        c0 = tree.child_start[node]
        na = tree.num_actions[node]
        bucket_strategies(tree, store, spec, node, work)
        matches = 0
        last = -1
        for a in range(na):
            k, t = bot_real_action(spec, real, c0 + a, spec.fold_child[node],
                                   spec.call_child[node])
            if k == kind and (k != ActionCode.RAISE or t == to):
                matches += 1
                last = a
        if matches == 1:
            for i in range(n):
                c = live[i]
                row[c] *= work.strategy[buckets[c], last]
        else:                   # several abstract actions look alike in the real hand (or none)
            mask = work.sigma
            for a in range(na):
                k, t = bot_real_action(spec, real, c0 + a, spec.fold_child[node],
                                       spec.call_child[node])
                mask[a] = 1.0 if k == kind and (k != ActionCode.RAISE or t == to) else 0.0
            for i in range(n):
                c = live[i]
                s = 0.0
                for a in range(na):
                    s += mask[a] * work.strategy[buckets[c], a]
                row[c] *= s
        num = translate_action(tree, spec, node, kind, to, all_in, real, work.opt_child,
                               work.opt_prob)
        _split_branch(work, b, street, num)
    _tidy_branches(work, street)
    work.stats[STAT_UPDATES] += 1


# --------------------------------------------------------------------------------------------
# Live combos and buckets per street
# --------------------------------------------------------------------------------------------

@njit_inline
def _board_mask(cards, street):
    """1 << card for LBR's hole cards and the board cards visible on ``street``."""
    mask = (np.int64(1) << cards[0]) | (np.int64(1) << cards[1])
    shown = 0 if street == 0 else street + 2
    for j in range(shown):
        mask |= np.int64(1) << cards[4 + j]
    return mask


@njit_inline
def hand_bucket(tables, bucket_work, street, a, b, kf, kt):
    """Bucket of the hole pair (a, b) on ``street`` (flop key ``kf``, turn key ``kt``; the
    river's board prepared in ``bucket_work`` by ``river_prepare_kernel``)."""
    kh = CARD_BITS[a] | CARD_BITS[b]
    if street == 0:
        return np.int64(tables.preflop_bucket[a * 52 + b])
    if street == 1:
        return np.int64(tables.flop_bucket[hand_index_kernel(
            tables.flop_radix, tables.flop_offset, tables.flop_code_mult, kh, kf, 0, 0)])
    if street == 2:
        return np.int64(tables.turn_bucket[hand_index_kernel(
            tables.turn_radix, tables.turn_offset, tables.turn_code_mult, kh, kt, 0, 0)])
    return np.int64(tables.river_bucket[river_score_from_work(bucket_work, a, b)])


@njit
def prepare_street(tables, spec, work, street):
    """The live combos (disjoint from LBR's cards and the visible board) of ``street`` and
    their buckets, once per deal (the blueprint's true combo is among them)."""
    if work.ready[street]:
        return
    cards = work.cards
    dead = _board_mask(cards, street)
    kf = CARD_BITS[cards[4]] | CARD_BITS[cards[5]] | CARD_BITS[cards[6]]
    kt = kf | CARD_BITS[cards[7]]
    if street == 3:
        river_prepare_kernel(cards[4:9], work.bucket_work)
    n = 0
    for c in range(NUM_COMBOS):
        if spec.combo_mask[c] & dead:
            continue
        work.live[street, n] = c
        n += 1
        work.bucket[street, c] = hand_bucket(tables, work.bucket_work, street,
                                             spec.combo_card[c, 0], spec.combo_card[c, 1], kf,
                                             kt)
    own = hand_bucket(tables, work.bucket_work, street, cards[0], cards[1], kf, kt)
    work.own_bucket[street] = own
    work.num_live[street] = n
    work.ready[street] = 1


@njit
def decision_equity(spec, work, street, state):
    """The equity LBR decides with on ``street``: :func:`street_equity` (its own cards), or with
    ``spec.bucket_samples`` > 0 after the flop, the mean over that many hands drawn (with
    replacement) from the combos sharing LBR's bucket on this board, LBR's own included: LBR
    then knows only what the blueprint's abstraction knows (its cards still remove combos from
    the blueprint's range). A combo overlapping a drawn hand is averaged over the other draws."""
    if street == 0 or spec.bucket_samples == 0:
        street_equity(spec, work, street, state)
        return
    if work.ready[4 + street]:
        return
    cards = work.cards
    live = work.live[street]
    n = work.num_live[street]
    mates = work.mates
    m = 1
    mates[0] = combo_of(cards[0], cards[1])
    own = work.own_bucket[street]
    for i in range(n):
        c = live[i]
        work.mate_sum[c] = 0.0
        work.mate_count[c] = 0
        if work.bucket[street, c] == own:
            mates[m] = c
            m += 1
    hole0 = cards[0]
    hole1 = cards[1]
    for _ in range(spec.bucket_samples):
        pick = mates[rng.below(state, m)]
        cards[0] = spec.combo_card[pick, 0]
        cards[1] = spec.combo_card[pick, 1]
        compute_equity(spec, work, street, state)
        held = spec.combo_mask[pick]
        for i in range(n):
            c = live[i]
            if spec.combo_mask[c] & held:
                continue
            work.mate_sum[c] += work.equity[street, c]
            work.mate_count[c] += 1
    cards[0] = hole0
    cards[1] = hole1
    for i in range(n):
        c = live[i]
        cnt = work.mate_count[c]
        work.equity[street, c] = work.mate_sum[c] / cnt if cnt > 0 else 0.5
    work.ready[4 + street] = 1

