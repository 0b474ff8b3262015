"""Exact showdown equity of one hand against every hole-card combo, over the unseen board.

``street_equity`` fills ``work.equity[street, c]``: a hand's share of the pot (ties half)
against every live combo ``c`` (``work.live[street]``), over every board completion: the river
board exactly; every river (turn); all C(47, 2) = 1,081 turn-river runouts (flop);
``preflop_samples`` random boards (preflop, Monte Carlo; kept per hole-card combo for the rest
of the run). The hand is ``work.cards[0:2]``, the board ``work.cards[4:9]``.

One board is scored for all combos at once. A card's *code* is its rank, or 13 + rank in the
board's flush suit (a suit with 3+ board cards); a combo's result depends only on its two codes,
so the board is ranked once per pair of codes (91 rank pairs, plus 45 flush-card pairs when 3
board cards share a suit, plus 130 (flush card, rank) pairs with 4 or 5) into a 26 x 26 result
table. The tables are summed per flush suit over all boards and over the boards holding each
card; a combo's score is then the sum minus the boards holding either of its cards, plus the
ones holding both (inclusion-exclusion), so a board costs a few hundred evaluations and three
vector additions instead of one evaluation per combo.

``allin_equity`` is the same for one opposing hand (``work.cards[2:4]``), for hands that reach
showdown before the river. The scratch arrays are fields of a namedtuple ``work`` (see
:data:`holdem.analysis.lbr.kernels.LbrWork` for their shapes); kernels never allocate.
Combos are numbered in ascending lexicographic order of their two cards (:func:`combo_of`).
"""

import numpy as np

from holdem import rng
from holdem._jit import njit, njit_inline
from holdem.abstraction.deal_kernels import POPCOUNT, RANK_MASK
from holdem.evaluator.kernels import CARD_BITS, rank_key_kernel

NUM_COMBOS = 1326
NUM_CODES = 26                  # card codes on a board: rank, or 13 + rank in the flush suit
STAT_BOARDS = 2                 # work.stats[]: boards scored against every live combo
STAT_STREETS = 4                # [4 + street]: equity vectors computed on that street


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
            c = combo_of(x, y)
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
        hole = combo_of(work.cards[0], work.cards[1])
        live = work.live[0]
        n = work.num_live[0]
        if work.preflop_ready[hole]:
            for i in range(n):
                work.equity[0, live[i]] = work.preflop_equity[hole, live[i]]
        else:
            compute_equity(spec, work, 0, state)
            for i in range(n):
                work.preflop_equity[hole, live[i]] = work.equity[0, live[i]]
            work.preflop_ready[hole] = 1
    else:
        compute_equity(spec, work, street, state)
    work.ready[4 + street] = 1


@njit
def compute_equity(spec, work, street, state):
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


@njit
def combo_of(a, b):
    """Index of the combo {a, b} in the ascending lexicographic order of ``combo_card``."""
    lo = a if a < b else b
    hi = b if a < b else a
    return lo * (103 - lo) // 2 + (hi - lo - 1)


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
