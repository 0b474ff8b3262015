"""Local best response (LBR) kernels for heads-up No-Limit Hold'em blueprints.

After Lisý & Bowling 2017, "Equilibrium Approximation Quality of Current No-Limit Poker Bots"
(Algorithm 1). LBR plays the *real* game (integer chips, no cap on raises) against a blueprint
that plays on its abstract tree, as :mod:`holdem.cli.play`'s bot does. LBR sees its own cards and
the board, never the blueprint's; it keeps the blueprint's *range*, a distribution over the 1,326
hole-card combos, and at each of its decisions takes the action of its *action set* with the
highest expected chips assuming the hand is then checked down to showdown, except for the
blueprint's immediate answer to a raise (fold, or call):

- fold:  ``u = -contrib[LBR]`` (chips relative to the start of the hand);
- call:  ``u = WP * pot' - contrib'[LBR]`` after the call, with ``WP = sum_c range[c] eq[c]``
  and ``eq[c]`` LBR's share of the pot against combo ``c`` over the unseen board (ties half);
- raise: ``u = fp * contrib[blueprint] + (1 - fp) * (WP' * pot'' - contrib''[LBR])``, where
  ``fp = sum_c range[c] sigma(child, c)[fold]``, ``WP'`` uses the range weighted by the call
  probability ``sigma(child, c)[call]`` and ``pot''`` is the pot once the blueprint has called.

The action set is the blueprint tree's own sizes (``spec.abstract``), or fold, call, the pot
fractions ``spec.fractions`` of the real pot after calling (rounded to chips, raised to the
minimum raise, all-in at or above the stack) and optionally all-in. On streets before
``spec.first_round`` LBR checks or calls whatever it faces.

**Translation.** A real bet reaches the blueprint as ``translate_line`` reads it (the bot of
``play``): an off-tree size ``x`` (chips beyond the abstract current bet, over the abstract pot
after calling) between two abstract sizes is read as the smaller with the pseudo-harmonic
probability, else as the larger; a real all-in as the tree's all-in; a raise where the tree has
none, or any action once the abstract hand no longer matches the real one (wrong street, wrong
player, a terminal), leaves the tree, and the bot then checks or calls to the end. The bot's
abstract raises become real raises to the same street commitment, clamped to what is legal.
The bot draws its reading of each off-tree size once (``rng``); LBR does not see the draw, so
its belief is a small set of *branches*, each an abstract node with a weight per combo (their
sum is the range). LBR's raise splits every branch by the reading probabilities, so ``fp`` and
``WP'`` above are the blueprint's *translated* response; a blueprint action multiplies each
branch's weights by the probability that its node produces that real action. Branches at the
same node merge; past ``MAX_BRANCHES`` the lighter reading is dropped (LBR's belief is then
approximate, which keeps LBR a legal strategy and its result a lower bound).

The real hand and the bot's reading of it live in :mod:`holdem.analysis.lbr.hand_kernels`,
LBR's belief (its branches, their Bayes updates, the live combos and buckets of each street) in
:mod:`holdem.analysis.lbr.belief_kernels`; this module holds LBR's decision and the played
hands. Equity (:mod:`holdem.analysis.lbr.equity_kernels`) depends only on LBR's cards and the board,
so it is computed once per deal and street, when LBR first chooses there.

A hand that reaches showdown before the river (all-in) scores its expectation over the unseen
board (exact from the flop, ``allin_samples`` boards preflop) instead of the dealt board: the
remaining cards never influenced a decision, so the mean is the same and the variance smaller.

Every deal is played twice, LBR in each seat with the same cards (a duplicate pair); ``out[i]``
is LBR's mean chips over the pair. All scratch lives in :data:`LbrWork` (kernels never
allocate); the constant per-game arrays are in :data:`LbrSpec`.
"""

from collections import namedtuple

import numpy as np

from holdem import rng
from holdem._jit import njit, njit_inline
from holdem.analysis.lbr.equity_kernels import (NUM_CODES, NUM_COMBOS, STAT_BOARDS,  # noqa: F401
                                            STAT_STREETS, allin_equity, combo_of,
                                            street_equity)
from holdem.analysis.lbr.belief_kernels import (MAX_BRANCHES,  # noqa: F401
                                                STAT_DROPPED, STAT_EMPTY,
                                                STAT_MAX_BRANCHES, branch_weight,
                                                bucket_strategies, decision_equity, lbr_moves,
                                                normalize_range, prepare_street, update_range)
from holdem.analysis.lbr.hand_kernels import (NUM_REAL, R_BET, R_COMMIT,  # noqa: F401
                                              R_CONTRIB, R_FOLDER, R_OVER, R_PLAYER, R_STREET,
                                              bot_real_action, deal_nine, on_tree, real_apply,
                                              real_max_to, real_min_to, real_start,
                                              real_to_call, translate_action)
from holdem.analysis.matches.play_kernels import sample_average
from holdem.evaluator.kernels import CARD_BITS, rank_key_kernel
from holdem.games.tree import ActionCode
from holdem.games.tree_kernels import DECISION

# stats[] counters (for tools/bench_lbr.py and the tests); STAT_BOARDS (2) and STAT_STREETS
# (4 + street) count in equity_kernels, STAT_UPDATES (1), STAT_LOOKUPS (3) and
# STAT_MAX_BRANCHES (19) in belief_kernels
STAT_DECISIONS = 0              # LBR's chosen actions (on the streets it acts on)
STAT_FOLDS = 8                  # LBR's chosen actions by kind: fold, check/call, raise
STAT_CALLS = 9
STAT_RAISES = 10
STAT_FOLDED_TO = 11             # the blueprint folded right after an LBR raise
STAT_STREET_RAISES = 12         # [12 + street]: LBR's bets and raises on that street
STAT_PASSIVE = 16               # LBR's checks and calls on streets before first_round
STAT_TRANSLATED = 17            # LBR actions the bot read as one of two abstract sizes
STAT_OFF_TREE = 18              # hands in which the bot left its abstract tree
STAT_BELIEF_CHECKS = 20         # LBR decisions at which its belief was checked against the bot
STAT_BAD_BRANCHES = 21          # belief branches at a decision the bot cannot be at
STAT_TRUE_MISSING = 22          # decisions whose belief lacked the bot's node and cards
NUM_STATS = 25                  # (23, 24: STAT_EMPTY, STAT_DROPPED in belief_kernels)

# LBR's chosen bets and raises by street and size (work.sizes[street, bin]; the chips LBR won in
# the hands where it chose them in work.size_chips): preflop by the big blinds raised *to*,
# after the flop by the fraction of the pot after calling that the raise adds. A size falls in
# the first bin whose upper edge it does not exceed; past the last edge it is SIZE_ABOVE, and a
# raise to LBR's whole stack is SIZE_ALLIN whatever its size. The edges lie halfway between the
# sizes that name the bins (sampled.SIZE_LABELS), so a size rounded to whole chips stays in its
# bin.
PREFLOP_SIZE_EDGES = np.array([2.25, 2.75, 3.5, 4.5, 6.0, 8.5, 12.5, 17.5, 25.0, 35.0, 60.0])
"""Upper edges (big blinds raised to) of the preflop bins: 2 (the minimum raise), 2.5, 3, 4, 5,
7, 10, 15, 20, 30, 45."""
POSTFLOP_SIZE_EDGES = np.array([0.12, 0.2, 0.29, 0.42, 0.62, 0.87, 1.25, 1.75, 2.5, 4.0, 7.0])
"""Upper edges (pot fractions) of the postflop bins: 0.1 and less, 1/6, 1/4, 1/3, 1/2, 3/4, 1,
1.5, 2, 3, 5."""
SIZE_ABOVE = 11                 # past the last edge, not all-in
SIZE_ALLIN = 12
NUM_SIZE_BINS = 13
SIZE_RERAISES = 4               # sizes[] row of the preflop raises over a raise (3-bets, ...)

# audit[] sums: LBR's bets and raises against the bot's answers, for the fold calibration
AUD_BETS = 0                    # LBR bets and raises the bot answered
AUD_PREDICTED = 1               # sum of the fold probability LBR's model gave each
AUD_FOLDED = 2                  # how many the bot folded to
AUD_VARIANCE = 3                # sum over deals of (folds - predictions in the deal)^2
AUD_EXACT = 4                   # sum of the bot's own fold probability at its real node
AUD_EXACT_VARIANCE = 5          # sum over deals of (exact - predictions in the deal)^2
NUM_AUDIT = 6

LbrSpec = namedtuple("LbrSpec", [
    "stride",           # int: infoset key = history * stride + bucket
    "num_buckets",      # int64[4]: buckets per street
    "fold_child",       # int64[num_nodes]: fold child of a decision node, -1 if none
    "call_child",       # int64[num_nodes]: check/call child of a decision node
    "combo_card",       # int64[1326, 2]: the two cards of each combo (ascending)
    "combo_mask",       # int64[1326]: 1 << card for both cards
    "preflop_samples",  # int: Monte Carlo boards for preflop equity
    "allin_samples",    # int: boards for a preflop all-in's expectation; 0 = no expectation
    "bucket_samples",   # int: 0 = LBR sees its cards; else it sees only its bucket postflop
    "raise_to",         # int64[num_nodes]: street commitment after the action leading here
    "fraction",         # float64[num_nodes]: a raise's pot fraction at its parent (lbr.py)
    "is_allin",         # int64[num_nodes]: 1 where that action is the tree's all-in (``a``)
    "stack",            # int: chips per seat before antes and blinds
    "big_blind",        # int: chips
    "ante",             # int: chips
    "fractions",        # float64[m]: LBR's pot-fraction bets, ascending (unused if abstract)
    "bet_allin",        # int: 1 = LBR may go all-in (unused if abstract)
    "abstract",         # int: 1 = LBR bets the blueprint tree's sizes
    "first_round",      # int: LBR chooses from this street on; before it checks or calls
])
"""Per-game constants of the LBR kernels (built by
:func:`holdem.analysis.lbr.sampled.make_spec`)."""

LbrWork = namedtuple("LbrWork", [
    "cards",        # int64[9]: LBR's hole (0, 1), the blueprint's (2, 3), the board (4..8)
    "deck",         # int64[52]: shuffling scratch
    "ready",        # int64[8]: [0:4] live list and buckets of a street done, [4:8] its equity
    "live",         # int64[4, 1326]: combos disjoint from LBR's cards and the street's board
    "num_live",     # int64[4]
    "bucket",       # int64[4, 1326]: bucket of each live combo per street
    "equity",       # float64[4, 1326]: LBR's pot share against each live combo per street
    "new",          # int64[5]: the unseen cards of the board being scored
    "total",        # int32[5, 26 * 26]: result tables summed per board flush class
    "by_card",      # int32[5, 52, 26 * 26]: the same over the boards holding each card
    "used",         # int64[6 * 52]: whether total / by_card rows hold data yet
    "boards",       # int64[5]: boards per flush class
    "card_boards",  # int64[52]: boards holding each card
    "pair_score",   # int64[1326]: score of each combo on the boards holding both its cards
    "pair_boards",  # int64[1326]: how many such boards
    "preflop_equity",   # float64[1326, 1326]: preflop equity by LBR's combo, opponent combo
    "preflop_ready",    # int64[1326]: whether that row is computed
    "range",        # float64[MAX_BRANCHES, 1326]: weight of (branch, combo); sums to 1
    "node",         # int64[MAX_BRANCHES]: each branch's abstract node (-1: off the tree)
    "num_branches",  # int64[1]
    "strategy",     # float64[max buckets, max_actions]: sigma per bucket at one node
    "value",        # float64[max candidates]: LBR's action values at one decision
    "sigma",        # float64[max_actions]: sampling scratch
    "table",        # int32[26 * 26]: LBR's result on one board vs each pair of card codes
    "rep",          # int64[13, 3]: per rank up to two free non-flush cards, and their count
    "bucket_work",  # int64[RUNTIME_WORK]: river bucket scratch
    "strength",     # int64[2]: showdown ranks by seat
    "stats",        # int64[NUM_STATS]
    "own_bucket",   # int64[4]: LBR's own bucket per street
    "mates",        # int64[1326]: the combos sharing LBR's bucket (bucket-only LBR)
    "mate_sum",     # float64[1326]: bucket-only LBR's equity sums per live combo
    "mate_count",   # int64[1326]: and how many sampled hands each sum holds
    "real",         # int64[NUM_REAL]: the real hand (R_* fields)
    "cand_kind",    # int64[max candidates]: LBR's candidate actions (A_*) ...
    "cand_to",      # int64[max candidates]: ... and their street commitments
    "response",     # float64[MAX_BRANCHES, max_actions, 5]: the bot's answer to a raise per
                    #   (branch, abstract child): fold, call, call x equity, stay, stay x eq
    "response_ready",   # int64[MAX_BRANCHES, max_actions]
    "opt_child",    # int64[2]: a translation's readings ...
    "opt_prob",     # float64[2]: ... and their probabilities
    "cand_fold",    # float64[max candidates]: the bot's fold probability after each raise
    "audit",        # float64[NUM_AUDIT]: the fold calibration sums (AUD_*)
    "sizes",        # int64[5, NUM_SIZE_BINS]: LBR's bets and raises by street and size bin;
                    #   row SIZE_RERAISES: the preflop ones that re-raise (part of row 0)
    "size_chips",   # float64[5, NUM_SIZE_BINS]: LBR's chips in the hand, summed per such raise
    "hand_sizes",   # int64[5, NUM_SIZE_BINS]: this hand's raises (scratch of play_seat)
])
"""Scratch of the LBR kernels (built by :func:`holdem.analysis.lbr.sampled.make_work`)."""


# --------------------------------------------------------------------------------------------
# LBR's decision
# --------------------------------------------------------------------------------------------

@njit
def candidates(tree, spec, work):
    """LBR's actions at the real hand ``work.real`` into ``work.cand_kind`` / ``cand_to``
    (fold where there is something to call, check/call, then raises ascending); returns how
    many."""
    real = work.real
    m = 0
    if real_to_call(real) > 0:
        work.cand_kind[m] = ActionCode.FOLD
        work.cand_to[m] = 0
        m += 1
    work.cand_kind[m] = ActionCode.CALL
    work.cand_to[m] = 0
    m += 1
    max_to = real_max_to(spec, real)
    if max_to == 0:
        return m
    min_to = real_min_to(spec, real, max_to)
    first = m
    if spec.abstract:
        best = 0
        for b in range(1, work.num_branches[0]):
            if branch_weight(work, b, real[R_STREET]) > branch_weight(work, best,
                                                                        real[R_STREET]):
                best = b
        node = work.node[best]
        if not on_tree(tree, real, node, real[R_PLAYER]):
            return m
        c0 = tree.child_start[node]
        for child in range(spec.call_child[node] + 1, c0 + tree.num_actions[node]):
            k, to = bot_real_action(spec, real, child, spec.fold_child[node],
                                    spec.call_child[node])
            if k == ActionCode.RAISE:
                m = _add_raise(work, first, m, to)
        return m
    to_call = real_to_call(real)
    pot = real[R_CONTRIB] + real[R_CONTRIB + 1] + to_call
    for j in range(spec.fractions.shape[0]):
        to = real[R_BET] + np.int64(np.rint(spec.fractions[j] * pot))
        to = min(max(to, min_to), max_to)
        m = _add_raise(work, first, m, to)
    if spec.bet_allin:
        m = _add_raise(work, first, m, max_to)
    return m


@njit_inline
def _add_raise(work, first, m, to):
    """Append a raise to ``to`` unless the list already holds it; keeps the raises sorted."""
    for j in range(first, m):
        if work.cand_to[j] == to:
            return m
    j = m
    while j > first and work.cand_to[j - 1] > to:
        work.cand_to[j] = work.cand_to[j - 1]
        work.cand_kind[j] = ActionCode.RAISE
        j -= 1
    work.cand_to[j] = to
    work.cand_kind[j] = ActionCode.RAISE
    return m + 1


@njit
def _response(tree, store, spec, work, b, child, eq):
    """The bot's answer to a raise read as ``child`` at branch ``b``, into ``work.response[b,
    j]`` (j: the child's index among its siblings, returned): (fold, call, call x eq, stay,
    stay x eq) weight sums over the branch's combos, computed once per decision."""
    real = work.real
    street = real[R_STREET]
    parent = tree.parent[child]
    j = child - tree.child_start[parent]
    out = work.response[b, j]
    if work.response_ready[b, j]:
        return j
    bucket_strategies(tree, store, spec, child, work)
    live = work.live[street]
    buckets = work.bucket[street]
    prob = work.range[b]
    cc0 = tree.child_start[child]
    fi = spec.fold_child[child] - cc0 if spec.fold_child[child] >= 0 else -1
    ci = spec.call_child[child] - cc0
    fp = 0.0
    w_call = 0.0
    e_call = 0.0
    w_stay = 0.0
    e_stay = 0.0
    for i in range(work.num_live[street]):
        c = live[i]
        r = prob[c]
        row = buckets[c]
        f = work.strategy[row, fi] if fi >= 0 else 0.0
        k = r * work.strategy[row, ci]
        fp += r * f
        w_call += k
        e_call += k * eq[c]
        w_stay += r - r * f
        e_stay += (r - r * f) * eq[c]
    out[0] = fp
    out[1] = w_call
    out[2] = e_call
    out[3] = w_stay
    out[4] = e_stay
    work.response_ready[b, j] = 1
    return j


@njit
def lbr_action(tree, store, spec, seat, work):
    """LBR's greedy choice at the real hand ``work.real`` (its own decision): the index of the
    best of :func:`candidates` (values left in ``work.value``). Needs the street's range,
    buckets and equity."""
    real = work.real
    street = real[R_STREET]
    live = work.live[street]
    n = work.num_live[street]
    eq = work.equity[street]
    nb = work.num_branches[0]
    wp = 0.0
    for b in range(nb):
        prob = work.range[b]
        for i in range(n):
            c = live[i]
            wp += prob[c] * eq[c]
    other = 1 - seat
    for b in range(nb):
        for j in range(work.response_ready.shape[1]):
            work.response_ready[b, j] = 0
    m = candidates(tree, spec, work)
    contrib_me = float(real[R_CONTRIB + seat])
    best = 0
    for a in range(m):
        kind = work.cand_kind[a]
        work.cand_fold[a] = 0.0
        if kind == ActionCode.FOLD:
            u = -contrib_me
        elif kind == ActionCode.CALL:
            after0 = float(real[R_CONTRIB] + (real_to_call(real) if seat == 0 else 0))
            after1 = float(real[R_CONTRIB + 1] + (real_to_call(real) if seat == 1 else 0))
            u = wp * (after0 + after1) - (after0 if seat == 0 else after1)
        else:
            to = work.cand_to[a]
            all_in = to == real_max_to(spec, real)
            fp = 0.0
            w_call = 0.0
            e_call = 0.0
            w_stay = 0.0
            e_stay = 0.0
            for b in range(nb):
                num = translate_action(tree, spec, work.node[b], ActionCode.RAISE, to, all_in,
                                       real, work.opt_child, work.opt_prob)
                if num == 0:            # off the tree: the bot checks or calls
                    w = branch_weight(work, b, street)
                    e = 0.0
                    for i in range(n):
                        e += work.range[b, live[i]] * eq[live[i]]
                    w_call += w
                    e_call += e
                    w_stay += w
                    e_stay += e
                    continue
                for k in range(num):
                    p = work.opt_prob[k]
                    r = work.response[b, _response(tree, store, spec, work, b,
                                                   work.opt_child[k], eq)]
                    fp += p * r[0]
                    w_call += p * r[1]
                    e_call += p * r[2]
                    w_stay += p * r[3]
                    e_stay += p * r[4]
            if w_call > 1e-12:
                wp_call = e_call / w_call
            elif w_stay > 1e-12:        # the blueprint never calls here: it re-raises
                wp_call = e_stay / w_stay
            else:
                wp_call = wp
            called0 = float(real[R_CONTRIB] - real[R_COMMIT] + to)
            called1 = float(real[R_CONTRIB + 1] - real[R_COMMIT + 1] + to)
            work.cand_fold[a] = fp
            u = (fp * float(real[R_CONTRIB + other])
                 + (1.0 - fp) * (wp_call * (called0 + called1)
                                 - (called0 if seat == 0 else called1)))
        work.value[a] = u
        if u > work.value[best]:
            best = a
    kind = work.cand_kind[best]
    if kind == ActionCode.FOLD:
        work.stats[STAT_FOLDS] += 1
    elif kind == ActionCode.CALL:
        work.stats[STAT_CALLS] += 1
    else:
        work.stats[STAT_RAISES] += 1
        work.stats[STAT_STREET_RAISES + street] += 1
        k = size_bin(spec, real, work.cand_to[best])
        work.sizes[street, k] += 1
        work.hand_sizes[street, k] += 1
        if street == 0 and real[R_BET] > spec.big_blind:     # a 3-bet or later
            work.sizes[SIZE_RERAISES, k] += 1
            work.hand_sizes[SIZE_RERAISES, k] += 1
    work.stats[STAT_DECISIONS] += 1
    return best


@njit_inline
def size_bin(spec, real, to):
    """The bin (of ``work.sizes``) of a raise to street commitment ``to`` at the real hand
    ``real``: all-in, else preflop the big blinds raised to and after the flop the fraction of
    the pot after calling that the raise adds, against the edges above."""
    if to == real_max_to(spec, real):
        return SIZE_ALLIN
    if real[R_STREET] == 0:
        x = float(to) / float(spec.big_blind)
        edges = PREFLOP_SIZE_EDGES
    else:
        pot = real[R_CONTRIB] + real[R_CONTRIB + 1] + real_to_call(real)
        x = float(to - real[R_BET]) / float(pot)
        edges = POSTFLOP_SIZE_EDGES
    k = 0
    while k < edges.shape[0] and x > edges[k]:
        k += 1
    return k


# --------------------------------------------------------------------------------------------
# The played hands
# --------------------------------------------------------------------------------------------

@njit
def _deal(work, state):
    deal_nine(work.deck, work.cards, state)
    for i in range(8):
        work.ready[i] = 0


@njit
def _bot_moves(tree, spec, work, node, kind, to, state):
    """The bot's own abstract node after a real action (before it is applied), and how many
    readings it had: its reading, drawn where there are two (the draw is the bot's and LBR
    never sees it); -1 once it leaves the tree."""
    num = translate_action(tree, spec, node, kind, to, kind == ActionCode.RAISE
                           and to == real_max_to(spec, work.real), work.real, work.opt_child,
                           work.opt_prob)
    if num == 0:
        return np.int64(-1), num
    if num == 2:
        pick = work.opt_child[0] if rng.uniform(state) < work.opt_prob[0] else work.opt_child[1]
        return pick, num
    return work.opt_child[0], num


@njit
def audit_belief(tree, work, seat, bp_node, bp_combo):
    """Check LBR's belief against the bot at one of LBR's decisions (``work.stats``): every
    branch with weight sits where the bot can be (off its tree, or LBR's decision on this
    street), and the bot's own node -- read the same way -- holds the bot's real cards."""
    real = work.real
    street = real[R_STREET]
    true_node = bp_node if on_tree(tree, real, bp_node, seat) else np.int64(-1)
    found = False
    for b in range(work.num_branches[0]):
        node = work.node[b]
        if branch_weight(work, b, street) <= 0.0:
            continue
        if node >= 0 and tree.kind[node] == DECISION and not on_tree(tree, real, node, seat):
            work.stats[STAT_BAD_BRANCHES] += 1
        canonical = node if on_tree(tree, real, node, seat) else np.int64(-1)
        if canonical == true_node and work.range[b, bp_combo] > 0.0:
            found = True
    if not found:
        work.stats[STAT_TRUE_MISSING] += 1
    work.stats[STAT_BELIEF_CHECKS] += 1


@njit
def play_seat(tree, tables, store, spec, work, seat, state):
    """Play the dealt cards once with LBR in ``seat``; LBR's chips (also added to
    ``work.size_chips`` once for each bet or raise LBR made in the hand)."""
    work.hand_sizes[:, :] = 0
    chips = _play_seat(tree, tables, store, spec, work, seat, state)
    for row in range(work.hand_sizes.shape[0]):
        for k in range(NUM_SIZE_BINS):
            if work.hand_sizes[row, k] > 0:
                work.size_chips[row, k] += work.hand_sizes[row, k] * chips
    return chips


@njit
def _play_seat(tree, tables, store, spec, work, seat, state):
    cards = work.cards
    real = work.real
    bp = 1 - seat
    bp_combo = combo_of(cards[2], cards[3])
    board_key = (CARD_BITS[cards[4]] | CARD_BITS[cards[5]] | CARD_BITS[cards[6]]
                 | CARD_BITS[cards[7]] | CARD_BITS[cards[8]])
    work.strength[seat] = rank_key_kernel(board_key | CARD_BITS[cards[0]] | CARD_BITS[cards[1]])
    work.strength[bp] = rank_key_kernel(board_key | CARD_BITS[cards[2]] | CARD_BITS[cards[3]])
    prepare_street(tables, spec, work, 0)
    work.num_branches[0] = 1
    work.node[0] = 0
    for i in range(work.num_live[0]):
        work.range[0, work.live[0, i]] = 1.0
    normalize_range(work, 0)
    real_start(tree, spec, real)
    bp_node = np.int64(0)
    street = 0
    lbr_raised = False
    predicted = -1.0                    # the fold probability of LBR's pending raise
    while real[R_OVER] == 0:
        if real[R_STREET] != street:
            street = real[R_STREET]
            prepare_street(tables, spec, work, street)
            normalize_range(work, street)       # drops combos holding the new cards
        if real[R_PLAYER] == seat:
            audit_belief(tree, work, seat, bp_node, bp_combo)
            if street >= spec.first_round:
                decision_equity(spec, work, street, state)
                a = lbr_action(tree, store, spec, seat, work)
                kind = work.cand_kind[a]
                to = work.cand_to[a]
                if kind == ActionCode.RAISE:
                    predicted = work.cand_fold[a]
            else:
                kind = ActionCode.CALL
                to = np.int64(0)
                work.stats[STAT_PASSIVE] += 1
            was = bp_node
            bp_node, num = _bot_moves(tree, spec, work, bp_node, kind, to, state)
            if num == 2:
                work.stats[STAT_TRANSLATED] += 1
            if was >= 0 and bp_node < 0:
                work.stats[STAT_OFF_TREE] += 1
            lbr_moves(tree, spec, work, kind, to, kind == ActionCode.RAISE
                      and to == real_max_to(spec, real))
            lbr_raised = kind == ActionCode.RAISE
        else:
            exact = 0.0                 # the bot's fold probability, its node and cards known
            if on_tree(tree, real, bp_node, bp):
                key = np.int64(tree.history[bp_node]) * spec.stride + work.bucket[street,
                                                                                  bp_combo]
                a = sample_average(store, key, tree.num_actions[bp_node], work.sigma, state)
                if spec.fold_child[bp_node] >= 0 and real_to_call(real) > 0:
                    exact = work.sigma[spec.fold_child[bp_node] - tree.child_start[bp_node]]
                kind, to = bot_real_action(spec, real, tree.child_start[bp_node] + a,
                                           spec.fold_child[bp_node], spec.call_child[bp_node])
            else:
                if bp_node >= 0:
                    work.stats[STAT_OFF_TREE] += 1
                    bp_node = -1
                kind = ActionCode.CALL
                to = np.int64(0)
            if predicted >= 0.0:
                work.audit[AUD_BETS] += 1.0
                work.audit[AUD_PREDICTED] += predicted
                work.audit[AUD_EXACT] += exact
                if kind == ActionCode.FOLD:
                    work.audit[AUD_FOLDED] += 1.0
                predicted = -1.0
            update_range(tree, store, spec, bp, kind, to, work)
            if kind == ActionCode.FOLD and lbr_raised:
                work.stats[STAT_FOLDED_TO] += 1
            if bp_node >= 0:
                bp_node, _ = _bot_moves(tree, spec, work, bp_node, kind, to, state)
                if bp_node < 0:
                    work.stats[STAT_OFF_TREE] += 1
        real_apply(spec, real, kind, to)
    mine = float(real[R_CONTRIB + seat])
    theirs = float(real[R_CONTRIB + bp])
    if real[R_OVER] == 1:
        return -mine if real[R_FOLDER] == seat else theirs
    if street < 3 and spec.allin_samples > 0:
        # All-in before the river: the expectation over the unseen board, which is
        # independent of every decision made, replaces one sampled board (unbiased, and most
        # of the variance of big pots goes away).
        eq = allin_equity(work, street, spec.allin_samples, state)
        return eq * (float(real[R_CONTRIB]) + float(real[R_CONTRIB + 1])) - mine
    if work.strength[seat] > work.strength[bp]:
        return theirs
    if work.strength[seat] < work.strength[bp]:
        return -mine
    return 0.5 * (theirs - mine)


@njit
def lbr_play(tree, tables, store, spec, work, state, deals, n, out):
    """Deal ``n`` hands and play each twice (LBR in seat 0, then seat 1, same cards):
    ``out[i]`` = LBR's mean chips over deal i's two hands. The cards come from the random
    stream ``deals``, the rest from ``state``: pass the same array twice for one stream, or
    two streams so that runs of two settings with the same ``deals`` play the same cards (their
    difference is then paired deal by deal)."""
    for i in range(n):
        _deal(work, deals)
        gap = work.audit[AUD_FOLDED] - work.audit[AUD_PREDICTED]
        exact_gap = work.audit[AUD_EXACT] - work.audit[AUD_PREDICTED]
        total = 0.0
        for seat in range(2):
            total += play_seat(tree, tables, store, spec, work, seat, state)
        out[i] = 0.5 * total
        gap = work.audit[AUD_FOLDED] - work.audit[AUD_PREDICTED] - gap
        work.audit[AUD_VARIANCE] += gap * gap   # a deal's two hands share the bot's cards
        exact_gap = work.audit[AUD_EXACT] - work.audit[AUD_PREDICTED] - exact_gap
        work.audit[AUD_EXACT_VARIANCE] += exact_gap * exact_gap
