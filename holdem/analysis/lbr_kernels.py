"""Local best response (LBR) kernels for heads-up No-Limit Hold'em blueprints.

After Lisý & Bowling 2017, "Equilibrium Approximation Quality of Current No-Limit Poker Bots"
(Algorithm 1). LBR sees its own cards and the board, never the blueprint's; it keeps the
blueprint's *range*, a distribution over the 1,326 hole-card combos, and at each of its decisions
takes the abstract action with the highest expected chips assuming the hand is then checked down
to showdown, except for the blueprint's immediate answer to a raise (fold, or call):

- fold:  ``u = -contrib[LBR]`` (chips relative to the start of the hand);
- call:  ``u = WP * pot' - contrib'[LBR]`` after the call, with ``WP = sum_c range[c] eq[c]``
  and ``eq[c]`` LBR's share of the pot against combo ``c`` over the unseen board (ties half);
- raise: ``u = fp * contrib[blueprint] + (1 - fp) * (WP' * pot'' - contrib''[LBR])``, where
  ``fp = sum_c range[c] sigma(child, c)[fold]``, ``WP'`` uses the range weighted by the call
  probability ``sigma(child, c)[call]`` and ``pot''`` is the pot once the blueprint has called.

When the blueprint acts, ``range[c] *= sigma(node, bucket of c)[action]`` (Bayes' rule) and the
range is renormalized; a new board card removes the combos holding it. ``sigma`` is the
blueprint's average strategy (normalized strategy sums; regret matching where those are zero,
uniform where the infoset was never stored).

Equity ``eq[street, c]`` depends only on LBR's cards and the board, so it is computed once per
deal and street and shared by both seatings and every decision: the river board exactly; every
river (turn); all C(47, 2) = 1,081 turn-river runouts (flop); ``preflop_samples`` random boards
(preflop, Monte Carlo; kept per LBR hole-card combo for the rest of the run). One board is
scored for all combos at once. A card's *code* is its rank, or 13 + rank in the board's flush
suit (a suit with 3+ board cards); a combo's result depends only on its two codes, so the board
is ranked once per pair of codes (91 rank pairs, plus 45 flush-card pairs when 3 board cards
share a suit, plus 130 (flush card, rank) pairs with 4 or 5) into a 26 x 26 result table. The
tables are summed per flush suit over all boards and over the boards holding each card; a
combo's score is then the sum minus the boards holding either of its cards, plus the ones
holding both (inclusion-exclusion), so a board costs a few hundred evaluations and three
vector additions instead of one evaluation per combo.

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
from holdem.abstraction.deal_kernels import (POPCOUNT, RANK_MASK, hand_index_kernel,
                                             river_prepare_kernel, river_score_from_work)
from holdem.analysis.play_kernels import blueprint_action, average_strategy
from holdem.evaluator.kernels import CARD_BITS, rank_key_kernel
from holdem.games.tree_kernels import DECISION, FOLD, terminal_utility

NUM_COMBOS = 1326
CALL = 1                        # ActionCode.CALL: the action leading to a call child
RAISE = 2                       # ActionCode.RAISE

# stats[] counters (for tools/bench_lbr.py)
STAT_DECISIONS = 0              # LBR decisions
STAT_UPDATES = 1                # Bayes updates of the range (blueprint actions)
STAT_BOARDS = 2                 # boards scored against every live combo
STAT_LOOKUPS = 3                # per-bucket strategy rows read from the store
STAT_STREETS = 4                # [4 + street]: equity vectors computed on that street
STAT_FOLDS = 8                  # LBR's decisions by kind: fold, check/call, raise
STAT_CALLS = 9
STAT_RAISES = 10
STAT_FOLDED_TO = 11             # the blueprint folded right after an LBR raise
NUM_STATS = 12

NUM_CODES = 26                  # card codes on a board: rank, or 13 + rank in the flush suit

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
])
"""Per-game constants of the LBR kernels (built by :func:`holdem.analysis.lbr.make_spec`)."""

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
    "range",        # float64[1326]: the blueprint's range, normalized over the live combos
    "strategy",     # float64[max buckets, max_actions]: sigma per bucket at one node
    "value",        # float64[max_actions]: LBR's action values at one decision
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
])
"""Scratch of the LBR kernels (built by :func:`holdem.analysis.lbr.make_work`)."""


# --------------------------------------------------------------------------------------------
# Blueprint strategy and range
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
def _normalize_range(work, street):
    total = 0.0
    live = work.live[street]
    n = work.num_live[street]
    for i in range(n):
        total += work.range[live[i]]
    if total > 0.0:
        inv = 1.0 / total
        for i in range(n):
            work.range[live[i]] *= inv
    else:                       # cannot happen with exact arithmetic; stay defined
        for i in range(n):
            work.range[live[i]] = 1.0 / n


@njit
def update_range(tree, store, spec, node, action, work):
    """Bayes' rule after the blueprint took ``action`` at ``node``: ``range[c] *=
    sigma(node, bucket of c)[action]`` over the live combos of the node's street, then
    renormalize (``work.bucket`` of that street must be ready)."""
    street = tree.street[node]
    bucket_strategies(tree, store, spec, node, work)
    live = work.live[street]
    buckets = work.bucket[street]
    for i in range(work.num_live[street]):
        c = live[i]
        work.range[c] *= work.strategy[buckets[c], action]
    _normalize_range(work, street)
    work.stats[STAT_UPDATES] += 1


# --------------------------------------------------------------------------------------------
# Live combos, buckets and equity per street
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
def _hand_bucket(tables, work, street, a, b, kf, kt):
    """Bucket of the hole pair (a, b) on ``street`` (flop key ``kf``, turn key ``kt``; the
    river's board prepared in ``work.bucket_work``)."""
    kh = CARD_BITS[a] | CARD_BITS[b]
    if street == 0:
        return np.int64(tables.preflop_bucket[a * 52 + b])
    if street == 1:
        return np.int64(tables.flop_bucket[hand_index_kernel(
            tables.flop_radix, tables.flop_offset, tables.flop_code_mult, kh, kf, 0, 0)])
    if street == 2:
        return np.int64(tables.turn_bucket[hand_index_kernel(
            tables.turn_radix, tables.turn_offset, tables.turn_code_mult, kh, kt, 0, 0)])
    return np.int64(tables.river_bucket[river_score_from_work(work.bucket_work, a, b)])


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
        work.bucket[street, c] = _hand_bucket(tables, work, street, spec.combo_card[c, 0],
                                              spec.combo_card[c, 1], kf, kt)
    own = _hand_bucket(tables, work, street, cards[0], cards[1], kf, kt)
    work.own_bucket[street] = own
    work.num_live[street] = n
    work.ready[street] = 1


@njit_inline
def _result(mine, rank):
    """LBR's score against one hand: 2 win, 1 tie, 0 loss."""
    return 2 * (mine > rank) + (mine == rank)


@njit_inline
def _code(card, flush_suit):
    """A card's code on a board: its rank, or 13 + rank in the board's flush suit."""
    return 13 + (card >> 2) if (card & 3) == flush_suit else card >> 2


@njit_inline
def _set_result(table, i, j, value):
    table[i * NUM_CODES + j] = value
    table[j * NUM_CODES + i] = value


@njit
def board_table(work, board_key, board_mask):
    """``work.table[i * 26 + j]`` = LBR's result (2 win, 1 tie, 0 loss) on the 5-card board
    ``board_key`` against any combo disjoint from it (``board_mask``) whose cards have codes
    ``i`` and ``j`` (:func:`_code`); entries no such combo has are left as they were. Returns
    the board's flush suit (-1: none). A combo with no card of the flush suit ranks by its two
    ranks, so the board is ranked 91 times, plus 45 times for pairs of flush cards on a board
    with 3 cards of the suit and 130 more with 4 or 5 (then one flush card makes a flush)."""
    cards = work.cards
    mine = rank_key_kernel(board_key | CARD_BITS[cards[0]] | CARD_BITS[cards[1]])
    flush_suit = -1
    num_flush = 0
    for suit in range(4):
        count = POPCOUNT[(board_key >> (16 * suit)) & RANK_MASK]
        if count >= 3:
            flush_suit = suit
            num_flush = count
    rep = work.rep
    for r in range(13):
        rep[r, 2] = 0
    for card in range(52):
        r = card >> 2
        if not (board_mask >> card) & 1 and (card & 3) != flush_suit:
            if rep[r, 2] < 2:
                rep[r, rep[r, 2]] = card
            rep[r, 2] += 1
    table = work.table
    for r1 in range(13):
        if rep[r1, 2] == 0:
            continue
        k1 = board_key | CARD_BITS[rep[r1, 0]]
        if rep[r1, 2] >= 2:
            table[r1 * (NUM_CODES + 1)] = _result(mine, rank_key_kernel(
                k1 | CARD_BITS[rep[r1, 1]]))
        for r2 in range(r1 + 1, 13):
            if rep[r2, 2] > 0:
                _set_result(table, r1, r2, _result(mine, rank_key_kernel(
                    k1 | CARD_BITS[rep[r2, 0]])))
    if flush_suit >= 0:
        for f1 in range(13):
            c1 = 4 * f1 + flush_suit
            if (board_mask >> c1) & 1:
                continue
            k1 = board_key | CARD_BITS[c1]
            for r in range(13):
                if rep[r, 2] == 0:
                    continue
                if num_flush == 3 and (r != f1 or rep[r, 2] >= 2):
                    # one flush card cannot make a flush here: the ranks decide
                    _set_result(table, 13 + f1, r, table[f1 * NUM_CODES + r])
                else:
                    _set_result(table, 13 + f1, r, _result(mine, rank_key_kernel(
                        k1 | CARD_BITS[rep[r, 0]])))
            for f2 in range(f1 + 1, 13):
                c2 = 4 * f2 + flush_suit
                if not (board_mask >> c2) & 1:
                    _set_result(table, 13 + f1, 13 + f2, _result(mine, rank_key_kernel(
                        k1 | CARD_BITS[c2])))
    work.stats[STAT_BOARDS] += 1
    return flush_suit


@njit_inline
def _add_into(dst, src, first):
    """``dst = src`` if ``first`` else ``dst += src`` (plain arrays, so the loop vectorizes)."""
    if first:
        for i in range(NUM_CODES * NUM_CODES):
            dst[i] = src[i]
    else:
        for i in range(NUM_CODES * NUM_CODES):
            dst[i] += src[i]


@njit_inline
def _add_table(work, dst, flag_index):
    """``dst += work.table`` (``dst = work.table`` the first time: ``work.used`` flag)."""
    _add_into(dst, work.table, work.used[flag_index] == 0)
    work.used[flag_index] = 1


@njit
def _accumulate(work, board_key, board_mask, num_new):
    """Score one board for every combo at once: add its result table (:func:`board_table`)
    to ``by_card[s, x]`` for each of its ``num_new`` unseen cards ``x = work.new[j]`` (s =
    flush suit + 1; to ``total[s]`` when it has none) and count it. A combo's score is later
    ``total - by_card[a] - by_card[b]`` (boards holding its cards removed) plus the boards
    holding both, which are added to ``pair_score`` here."""
    flush_suit = board_table(work, board_key, board_mask)
    s = flush_suit + 1
    work.boards[s] += 1
    if num_new == 0:
        _add_table(work, work.total[s], 5 * 52 + s)
    new = work.new
    table = work.table
    for j in range(num_new):
        x = new[j]
        _add_table(work, work.by_card[s, x], s * 52 + x)
        work.card_boards[x] += 1
        cx = _code(x, flush_suit) * NUM_CODES
        for k in range(j + 1, num_new):
            y = new[k]
            c = _combo_of(x, y)
            work.pair_score[c] += table[cx + _code(y, flush_suit)]
            work.pair_boards[c] += 1


@njit
def _totals(work, num_new):
    """``total[s]`` = the sum of ``by_card[s, x]`` over the cards, divided by ``num_new``
    (every board was added once per unseen card)."""
    for s in range(5):
        if work.boards[s] == 0:
            continue
        total = work.total[s]
        for i in range(NUM_CODES * NUM_CODES):
            total[i] = 0
        for x in range(52):
            if work.used[s * 52 + x]:
                row = work.by_card[s, x]
                for i in range(NUM_CODES * NUM_CODES):
                    total[i] += row[i]
        for i in range(NUM_CODES * NUM_CODES):
            total[i] //= num_new


@njit
def street_equity(spec, work, street, state):
    """``work.equity[street, c]`` = LBR's pot share against every live combo ``c`` of
    ``street`` (``prepare_street`` first), over the unseen board: exact from the flop on,
    ``spec.preflop_samples`` random boards preflop (drawn with ``state``). Preflop vectors
    depend on LBR's hole cards only and are kept per hole-card combo for later deals (so LBR's
    preflop play is one fixed strategy, and the estimate costs once per combo and run)."""
    if work.ready[4 + street]:
        return
    if street == 0:
        hole = _combo_of(work.cards[0], work.cards[1])
        live = work.live[0]
        n = work.num_live[0]
        if work.preflop_ready[hole]:
            for i in range(n):
                work.equity[0, live[i]] = work.preflop_equity[hole, live[i]]
        else:
            _compute_equity(spec, work, 0, state)
            for i in range(n):
                work.preflop_equity[hole, live[i]] = work.equity[0, live[i]]
            work.preflop_ready[hole] = 1
    else:
        _compute_equity(spec, work, street, state)
    work.ready[4 + street] = 1


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
    mates[0] = _combo_of(cards[0], cards[1])
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
        _compute_equity(spec, work, street, state)
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


@njit
def _compute_equity(spec, work, street, state):
    """:func:`street_equity` without the preflop cache. Boards are scored for all combos at
    once by :func:`_accumulate`; combos then read their score from the accumulated tables
    with card removal."""
    for i in range(work.used.shape[0]):
        work.used[i] = 0
    for s in range(5):
        work.boards[s] = 0
    for card in range(52):
        work.card_boards[card] = 0
    live = work.live[street]
    n = work.num_live[street]
    for i in range(n):
        work.pair_score[live[i]] = 0
        work.pair_boards[live[i]] = 0
    cards = work.cards
    shown = 0 if street == 0 else street + 2
    known = np.int64(0)
    known_key = np.int64(0)
    for j in range(shown):
        known |= np.int64(1) << cards[4 + j]
        known_key |= CARD_BITS[cards[4 + j]]
    dead = known | (np.int64(1) << cards[0]) | (np.int64(1) << cards[1])
    deck = work.deck
    new = work.new
    m = 0
    for card in range(52):
        if not (dead >> card) & 1:
            deck[m] = card
            m += 1
    if street == 3:
        _accumulate(work, known_key, known, 0)
    elif street == 2:
        for i in range(m):
            new[0] = deck[i]
            _accumulate(work, known_key | CARD_BITS[deck[i]], known | (np.int64(1) << deck[i]),
                        1)
    elif street == 1:
        for i in range(m):
            new[0] = deck[i]
            ki = known_key | CARD_BITS[deck[i]]
            bi = known | (np.int64(1) << deck[i])
            for j in range(i + 1, m):
                new[1] = deck[j]
                _accumulate(work, ki | CARD_BITS[deck[j]], bi | (np.int64(1) << deck[j]), 2)
    else:
        for _ in range(spec.preflop_samples):
            key = np.int64(0)
            mask = np.int64(0)
            for j in range(5):                     # partial Fisher-Yates
                k = j + rng.below(state, m - j)
                tmp = deck[j]
                deck[j] = deck[k]
                deck[k] = tmp
                new[j] = deck[j]
                key |= CARD_BITS[deck[j]]
                mask |= np.int64(1) << deck[j]
            _accumulate(work, key, mask, 5)
    if street < 3:
        _totals(work, 5 if street == 0 else 3 - street)
    num_boards = 0
    for s in range(5):
        num_boards += work.boards[s]
    for i in range(n):
        c = live[i]
        a = spec.combo_card[c, 0]
        b = spec.combo_card[c, 1]
        score = np.int64(work.pair_score[c])
        count = num_boards - work.card_boards[a] - work.card_boards[b] + work.pair_boards[c]
        for s in range(5):
            if work.boards[s] == 0:
                continue
            idx = _code(a, s - 1) * NUM_CODES + _code(b, s - 1)
            score += work.total[s, idx]
            if work.used[s * 52 + a]:
                score -= work.by_card[s, a, idx]
            if work.used[s * 52 + b]:
                score -= work.by_card[s, b, idx]
        work.equity[street, c] = score / (2.0 * count) if count > 0 else 0.5
    work.stats[STAT_STREETS + street] += 1


# --------------------------------------------------------------------------------------------
# LBR's decision and the played hands
# --------------------------------------------------------------------------------------------

@njit
def lbr_action(tree, store, spec, node, seat, work):
    """LBR's greedy choice at ``node`` (its own decision): the action index with the highest
    value (module docstring); the values are left in ``work.value``. Needs the street's range,
    buckets and equity."""
    street = tree.street[node]
    live = work.live[street]
    n = work.num_live[street]
    prob = work.range
    eq = work.equity[street]
    buckets = work.bucket[street]
    wp = 0.0
    for i in range(n):
        c = live[i]
        wp += prob[c] * eq[c]
    other = 1 - seat
    contrib = tree.contrib
    c0 = tree.child_start[node]
    best = 0
    for a in range(tree.num_actions[node]):
        child = c0 + a
        if tree.kind[child] == FOLD:
            u = -contrib[node, seat]
        elif tree.action[child] == CALL or tree.kind[child] != DECISION:
            u = wp * (contrib[child, 0] + contrib[child, 1]) - contrib[child, seat]
        else:
            bucket_strategies(tree, store, spec, child, work)
            cc0 = tree.child_start[child]
            fi = spec.fold_child[child] - cc0 if spec.fold_child[child] >= 0 else -1
            ci = spec.call_child[child] - cc0
            fp = 0.0
            w_call = 0.0
            e_call = 0.0
            w_stay = 0.0
            e_stay = 0.0
            for i in range(n):
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
            if w_call > 1e-12:
                wp_call = e_call / w_call
            elif w_stay > 1e-12:        # the blueprint never calls here: it re-raises
                wp_call = e_stay / w_stay
            else:
                wp_call = wp
            gc = spec.call_child[child]
            u = (fp * contrib[child, other]
                 + (1.0 - fp) * (wp_call * (contrib[gc, 0] + contrib[gc, 1]) - contrib[gc, seat]))
        work.value[a] = u
        if u > work.value[best]:
            best = a
    chosen = c0 + best
    if tree.kind[chosen] == FOLD:
        work.stats[STAT_FOLDS] += 1
    elif tree.action[chosen] == CALL:
        work.stats[STAT_CALLS] += 1
    else:
        work.stats[STAT_RAISES] += 1
    work.stats[STAT_DECISIONS] += 1
    return best


@njit
def _deal(work, state):
    deck = work.deck
    for i in range(52):
        deck[i] = i
    for i in range(9):
        j = i + rng.below(state, 52 - i)
        tmp = deck[i]
        deck[i] = deck[j]
        deck[j] = tmp
        work.cards[i] = deck[i]
    for i in range(8):
        work.ready[i] = 0


@njit
def _combo_of(a, b):
    """Index of the combo {a, b} in the ascending lexicographic order of ``combo_card``."""
    lo = a if a < b else b
    hi = b if a < b else a
    return lo * (103 - lo) // 2 + (hi - lo - 1)


@njit
def play_seat(tree, tables, store, spec, work, seat, state):
    """Play the dealt cards once with LBR in ``seat``; LBR's chips."""
    cards = work.cards
    bp_combo = _combo_of(cards[2], cards[3])
    board_key = (CARD_BITS[cards[4]] | CARD_BITS[cards[5]] | CARD_BITS[cards[6]]
                 | CARD_BITS[cards[7]] | CARD_BITS[cards[8]])
    work.strength[seat] = rank_key_kernel(board_key | CARD_BITS[cards[0]] | CARD_BITS[cards[1]])
    work.strength[1 - seat] = rank_key_kernel(board_key | CARD_BITS[cards[2]]
                                              | CARD_BITS[cards[3]])
    prepare_street(tables, spec, work, 0)
    for i in range(work.num_live[0]):
        work.range[work.live[0, i]] = 1.0
    _normalize_range(work, 0)
    street = 0
    node = 0
    while tree.kind[node] == DECISION:
        if tree.street[node] != street:
            street = tree.street[node]
            prepare_street(tables, spec, work, street)
            _normalize_range(work, street)      # drops combos holding the new cards
        c0 = tree.child_start[node]
        if tree.player[node] == seat:
            decision_equity(spec, work, street, state)
            a = lbr_action(tree, store, spec, node, seat, work)
        else:
            key = np.int64(tree.history[node]) * spec.stride + work.bucket[street, bp_combo]
            a = blueprint_action(tree, store, key, node, work.sigma, state)
            update_range(tree, store, spec, node, a, work)
            if tree.kind[c0 + a] == FOLD and tree.action[node] == RAISE:
                work.stats[STAT_FOLDED_TO] += 1
        node = c0 + a
    street = tree.street[node]
    if tree.kind[node] != FOLD and street < 3 and spec.allin_samples > 0:
        # All-in before the river: the expectation over the unseen board, which is
        # independent of every decision made, replaces one sampled board (unbiased, and most
        # of the variance of big pots goes away).
        eq = allin_equity(work, street, spec.allin_samples, state)
        contrib = tree.contrib
        return eq * (contrib[node, 0] + contrib[node, 1]) - contrib[node, seat]
    return terminal_utility(tree, node, seat, work.strength)


@njit
def allin_equity(work, street, samples, state):
    """LBR's pot share against the blueprint's actual hand over the board cards still unseen
    after ``street`` (all-in before the river): exact from the flop on, ``samples`` random
    boards preflop."""
    cards = work.cards
    lbr_key = CARD_BITS[cards[0]] | CARD_BITS[cards[1]]
    bp_key = CARD_BITS[cards[2]] | CARD_BITS[cards[3]]
    shown = 0 if street == 0 else street + 2
    known_key = np.int64(0)
    for j in range(shown):
        known_key |= CARD_BITS[cards[4 + j]]
    deck = work.deck
    m = 0
    for card in range(52):
        if not (known_key | lbr_key | bp_key) & CARD_BITS[card]:
            deck[m] = card
            m += 1
    score = 0.0
    total = 0.0
    if street == 2:
        for i in range(m):
            key = known_key | CARD_BITS[deck[i]]
            score += _result(rank_key_kernel(key | lbr_key), rank_key_kernel(key | bp_key))
            total += 1.0
    elif street == 1:
        for i in range(m):
            for j in range(i + 1, m):
                key = known_key | CARD_BITS[deck[i]] | CARD_BITS[deck[j]]
                score += _result(rank_key_kernel(key | lbr_key), rank_key_kernel(key | bp_key))
                total += 1.0
    else:
        for _ in range(samples):
            key = np.int64(0)
            for j in range(5):
                k = j + rng.below(state, m - j)
                tmp = deck[j]
                deck[j] = deck[k]
                deck[k] = tmp
                key |= CARD_BITS[deck[j]]
            score += _result(rank_key_kernel(key | lbr_key), rank_key_kernel(key | bp_key))
            total += 1.0
    return score / (2.0 * total)


@njit
def lbr_play(tree, tables, store, spec, work, state, n, out):
    """Deal ``n`` hands and play each twice (LBR in seat 0, then seat 1, same cards):
    ``out[i]`` = LBR's mean chips over deal i's two hands."""
    for i in range(n):
        _deal(work, state)
        total = 0.0
        for seat in range(2):
            total += play_seat(tree, tables, store, spec, work, seat, state)
        out[i] = 0.5 * total
