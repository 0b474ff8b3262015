"""Card-abstraction kernels of the per-deal hot path: hand isomorphism index, river hand strength
at run time, and the buckets of every player of a deal.

Everything here is @njit, iterative and allocation-free (``_nrt=False``): callers pass every
scratch array in. The Python side (:mod:`holdem.abstraction.isomorphism`,
:mod:`holdem.abstraction.bucket_tables`) builds the tables, allocates, validates and owns the
loops. The sweeps that build bucket files are in :mod:`holdem.abstraction.build_kernels`.

Hand isomorphism index (after Waugh 2013, "A Fast and Optimal Hand Isomorphism Algorithm")
    A hand is dealt in rounds (the hole pair, then the board as one set of 3, 4 or 5 cards; up to
    four rounds are supported). Each round's cards are given as a *key*: the OR of
    ``CARD_BITS`` (four 13-bit rank masks, one per suit, in 16-bit lanes).
    Per suit, the rank sets of the rounds form a *column*; two hands are isomorphic iff their
    multisets of columns are equal. A column has

    - a *code*: its per-round card counts ``n_r`` in mixed radix (``radix[r]``);
    - an *index* in ``[0, code_mult[code])``: the colex index of each round's rank set among the
      ranks the suit has not used in earlier rounds, combined in mixed radix (as in Waugh).

    The columns are sorted by (code descending, index descending); equal codes form a group whose
    indices are a multiset, ranked by the combinations-with-repetition colex formula
    ``sum_i C(a_i + i, i + 1)`` over the ascending indices ``a_i`` (size ``C(M + g - 1, g)``).
    The hand index is ``offset[P] + mixed radix of the group ranks``, where ``P`` packs the codes
    of suits 0..2 (suit 3's is implied) and ``offset[P]`` is the first index of the hand's
    configuration (its sorted code tuple). The index is dense: 169 / 1,286,792 / 13,960,050 /
    123,156,254 values for preflop / flop / turn / river. Tables: ``IsoTables`` in
    :mod:`holdem.abstraction.isomorphism`.

Hand strength (HS) on the river
    ``score = 2 * wins + ties`` against all C(45, 2) = 990 opponent hole pairs that share no card
    with the hand or the board, so ``HS = score / 1980`` exactly and the river bucket is a table
    lookup ``river_bucket[score]``. Run time ranks the unseen pairs once per deal (by rank pair
    where suits cannot matter, see :func:`river_prepare_kernel`) and counts per player.
"""

import numpy as np

from holdem._jit import njit_exact, njit_inline
from holdem.evaluator.kernels import CARD_BITS, rank_key_kernel

NUM_RANKS = 13
RANK_MASK = (1 << NUM_RANKS) - 1
LANE_BITS = 16
MAX_SCORE = 1980               # 2 * C(45, 2)
_IDX_BITS = 40                 # column index bits inside a sort key (code << 40 | index)
_IDX_MASK = (1 << _IDX_BITS) - 1

POPCOUNT = np.array([bin(i).count("1") for i in range(1 << NUM_RANKS)], dtype=np.int64)


def _ncr_table(n_max, k_max):
    table = np.zeros((n_max + 1, k_max + 1), dtype=np.int64)
    for n in range(n_max + 1):
        table[n, 0] = 1
        for k in range(1, min(n, k_max) + 1):
            table[n, k] = table[n - 1, k - 1] + table[n - 1, k]
    return table


NCR = _ncr_table(52, 7)


# --------------------------------------------------------------------------------------------
# Hand isomorphism index
# --------------------------------------------------------------------------------------------

@njit_inline
def _comb(n, k):
    """C(n, k) for small k and n >= 0 (exact: every partial product is a binomial)."""
    result = np.int64(1)
    for t in range(k):
        result = result * (n - t) // (t + 1)
    return result


@njit_inline
def _column(radix, num_rounds, k0, k1, k2, k3, shift):
    """(code, index) of the column of the suit in lane ``shift`` (see the module docstring)."""
    used = np.int64(0)
    index = np.int64(0)
    mult = np.int64(1)
    code = np.int64(0)
    for r in range(num_rounds):
        if r == 0:
            key = k0
        elif r == 1:
            key = k1
        elif r == 2:
            key = k2
        else:
            key = k3
        ranks = (key >> shift) & RANK_MASK
        free = ~used & RANK_MASK
        part = np.int64(0)
        j = 1
        x = ranks
        while x != 0:
            low = x & -x
            part += NCR[POPCOUNT[(low - 1) & free], j]
            j += 1
            x ^= low
        index += mult * part
        mult *= NCR[NUM_RANKS - POPCOUNT[used], j - 1]
        code += (j - 1) * radix[r]
        used |= ranks
    return code, index


@njit_inline
def _sort_desc(a, b):
    if a < b:
        return b, a
    return a, b


@njit_exact
def hand_index_kernel(radix, offset, code_mult, k0, k1, k2, k3):
    """Dense isomorphism index (int64) of a hand given per-round keys ``k0..k3`` (OR of
    ``CARD_BITS`` of distinct cards, as many per round as the tables' rounds; unused rounds 0).
    ``radix`` int64[num_rounds + 1], ``offset`` int64[B**3], ``code_mult`` int64[B] with
    ``B = radix[num_rounds]`` come from ``IsoTables``."""
    num_rounds = radix.shape[0] - 1
    big = radix[num_rounds]
    c0, i0 = _column(radix, num_rounds, k0, k1, k2, k3, 0)
    c1, i1 = _column(radix, num_rounds, k0, k1, k2, k3, LANE_BITS)
    c2, i2 = _column(radix, num_rounds, k0, k1, k2, k3, 2 * LANE_BITS)
    c3, i3 = _column(radix, num_rounds, k0, k1, k2, k3, 3 * LANE_BITS)
    result = offset[c0 + big * (c1 + big * c2)]
    s0 = (c0 << _IDX_BITS) | i0
    s1 = (c1 << _IDX_BITS) | i1
    s2 = (c2 << _IDX_BITS) | i2
    s3 = (c3 << _IDX_BITS) | i3
    # Optimal 4-element sorting network, descending.
    s0, s1 = _sort_desc(s0, s1)
    s2, s3 = _sort_desc(s2, s3)
    s0, s2 = _sort_desc(s0, s2)
    s1, s3 = _sort_desc(s1, s3)
    s1, s2 = _sort_desc(s1, s2)
    cols = (s0, s1, s2, s3)
    mult = np.int64(1)
    i = 0
    while i < 4:
        code = cols[i] >> _IDX_BITS
        g = 1
        while i + g < 4 and (cols[i + g] >> _IDX_BITS) == code:
            g += 1
        size = code_mult[code]
        if g == 1:
            part = cols[i] & _IDX_MASK
        else:
            part = np.int64(0)
            for q in range(g):                      # q-th smallest index sits at i + g - 1 - q
                part += _comb((cols[i + g - 1 - q] & _IDX_MASK) + q, q + 1)
            size = _comb(size + g - 1, g)
        result += mult * part
        mult *= size
        i += g
    return result


@njit_exact
def hand_index_batch_kernel(radix, offset, code_mult, cards, round_sizes, out):
    """Index every row of ``cards`` (n, total) (rounds laid out consecutively with the sizes in
    ``round_sizes``) into ``out`` (n,) int64, in place."""
    num_rounds = round_sizes.shape[0]
    for i in range(cards.shape[0]):
        k0 = np.int64(0)
        k1 = np.int64(0)
        k2 = np.int64(0)
        k3 = np.int64(0)
        pos = 0
        for r in range(num_rounds):
            key = np.int64(0)
            for _ in range(round_sizes[r]):
                key |= CARD_BITS[cards[i, pos]]
                pos += 1
            if r == 0:
                k0 = key
            elif r == 1:
                k1 = key
            elif r == 2:
                k2 = key
            else:
                k3 = key
        out[i] = hand_index_kernel(radix, offset, code_mult, k0, k1, k2, k3)


# --------------------------------------------------------------------------------------------
# Run time
# --------------------------------------------------------------------------------------------

# Run-time river scoring. A hole pair with no card of the board's flush suit (a suit with 3+
# board cards; none on most boards) ranks by its two ranks alone, so those pairs are ranked
# once per rank pair (at most 91 evaluations) and counted per player with card removal by
# rank; only pairs holding a flush-suit card (at most 415) are ranked one by one. About 3x
# fewer evaluations than ranking all 1,081 unseen pairs.
# Work layout (int64): [0:91] rank-pair group ranks, [91:182] their ranks r1 | r2 << 4,
# [182:195] unseen non-flush-suit cards per rank, [195:208] the same less one player's cards,
# [208:221] / [221:234] two such cards per rank, [240:655] flush-suit pair ranks, [660:1075]
# their card masks, [1080] group count, [1081] flush-suit pair count, [1082] the board key.
_W_GROUP_RANK = 0
_W_GROUP_RANKS = 91
_W_COUNT = 182
_W_ADJUST = 195
_W_REP0 = 208
_W_REP1 = 221
_W_SUIT_RANK = 240
_W_SUIT_MASK = 660
_W_NUM_GROUPS = 1080
_W_NUM_SUITED = 1081
_W_BOARD_KEY = 1082
RUNTIME_WORK = 1088


@njit_inline
def _is_flush_card(board_key, card):
    """Whether ``card``'s suit has 3+ cards in the 5-card ``board_key``."""
    return POPCOUNT[(board_key >> (LANE_BITS * (card & 3))) & RANK_MASK] >= 3


@njit_exact
def river_prepare_kernel(board, work):
    """Rank the unseen hole pairs of the 5-card ``board`` into ``work`` (int64[>=
    RUNTIME_WORK]) for :func:`river_score_from_work`; once per deal."""
    b0 = board[0]
    b1 = board[1]
    b2 = board[2]
    b3 = board[3]
    b4 = board[4]
    board_key = (CARD_BITS[b0] | CARD_BITS[b1] | CARD_BITS[b2] | CARD_BITS[b3]
                 | CARD_BITS[b4])
    board_mask = ((np.int64(1) << b0) | (np.int64(1) << b1) | (np.int64(1) << b2)
                  | (np.int64(1) << b3) | (np.int64(1) << b4))
    flush_suit = -1
    for suit in range(4):
        if POPCOUNT[(board_key >> (LANE_BITS * suit)) & RANK_MASK] >= 3:
            flush_suit = suit
    for r in range(NUM_RANKS):
        work[_W_COUNT + r] = 0
    for c in range(52):
        if (board_mask >> c) & 1 or (c & 3) == flush_suit:
            continue
        r = c >> 2
        n = work[_W_COUNT + r]
        if n == 0:
            work[_W_REP0 + r] = c
        elif n == 1:
            work[_W_REP1 + r] = c
        work[_W_COUNT + r] = n + 1
    num_groups = 0
    for r1 in range(NUM_RANKS):
        n1 = work[_W_COUNT + r1]
        if n1 == 0:
            continue
        key1 = board_key | CARD_BITS[work[_W_REP0 + r1]]
        if n1 >= 2:
            work[_W_GROUP_RANK + num_groups] = rank_key_kernel(
                key1 | CARD_BITS[work[_W_REP1 + r1]])
            work[_W_GROUP_RANKS + num_groups] = r1 | (r1 << 4)
            num_groups += 1
        for r2 in range(r1 + 1, NUM_RANKS):
            if work[_W_COUNT + r2] > 0:
                work[_W_GROUP_RANK + num_groups] = rank_key_kernel(
                    key1 | CARD_BITS[work[_W_REP0 + r2]])
                work[_W_GROUP_RANKS + num_groups] = r1 | (r2 << 4)
                num_groups += 1
    num_suited = 0
    if flush_suit >= 0:
        for r in range(NUM_RANKS):
            f = 4 * r + flush_suit
            bit_f = np.int64(1) << f
            if board_mask & bit_f:
                continue
            key_f = board_key | CARD_BITS[f]
            for c in range(52):
                bit_c = np.int64(1) << c
                if board_mask & bit_c or c == f or ((c & 3) == flush_suit and c < f):
                    continue
                work[_W_SUIT_RANK + num_suited] = rank_key_kernel(key_f | CARD_BITS[c])
                work[_W_SUIT_MASK + num_suited] = bit_f | bit_c
                num_suited += 1
    work[_W_NUM_GROUPS] = num_groups
    work[_W_NUM_SUITED] = num_suited
    work[_W_BOARD_KEY] = board_key


@njit_exact
def river_score_from_work(work, h0, h1):
    """Score (2 * wins + ties vs the 990 pairs disjoint from the hand and the board) of the
    hole pair (h0, h1) on the board of the last :func:`river_prepare_kernel` call."""
    board_key = work[_W_BOARD_KEY]
    mine = rank_key_kernel(board_key | CARD_BITS[h0] | CARD_BITS[h1])
    for r in range(NUM_RANKS):
        work[_W_ADJUST + r] = work[_W_COUNT + r]
    num_groups = work[_W_NUM_GROUPS]
    num_suited = work[_W_NUM_SUITED]
    hole_mask = (np.int64(1) << h0) | (np.int64(1) << h1)
    for h in (h0, h1):
        if not _is_flush_card(board_key, h):
            work[_W_ADJUST + (h >> 2)] -= 1
    score = np.int64(0)
    for g in range(num_groups):
        r = work[_W_GROUP_RANK + g]
        ranks = work[_W_GROUP_RANKS + g]
        n1 = work[_W_ADJUST + (ranks & 15)]
        n2 = work[_W_ADJUST + (ranks >> 4)]
        count = n1 * (n1 - 1) // 2 if (ranks & 15) == (ranks >> 4) else n1 * n2
        score += count * (2 * (r < mine) + (r == mine))
    for i in range(num_suited):
        r = work[_W_SUIT_RANK + i]
        free = (work[_W_SUIT_MASK + i] & hole_mask) == 0
        score += free * (2 * (r < mine) + (r == mine))
    return score


@njit_exact
def river_score_kernel(hole0, hole1, board, work):
    """Score (2 * wins + ties vs the 990 disjoint pairs) of one hole pair on a 5-card ``board``
    (int array); ``work`` int64[>= RUNTIME_WORK]."""
    river_prepare_kernel(board, work)
    return river_score_from_work(work, hole0, hole1)


@njit_exact
def deal_buckets(tables, hole, board, num_players, buckets_out, work):
    """Buckets of every player of one deal, in place.

    ``tables`` a ``BucketTables``; ``hole`` int[num_players, 2] and ``board`` int[5] distinct
    cards 0..51; ``buckets_out`` int64[>= num_players, 4] gets (preflop, flop, turn, river)
    buckets per player; ``work`` int64[>= RUNTIME_WORK] scratch (``bucket_tables.make_work``). The
    unseen pairs are ranked once for all players (:func:`river_prepare_kernel`).
    """
    kf = CARD_BITS[board[0]] | CARD_BITS[board[1]] | CARD_BITS[board[2]]
    kt = CARD_BITS[board[3]]
    river_prepare_kernel(board, work)
    for p in range(num_players):
        h0 = hole[p, 0]
        h1 = hole[p, 1]
        kh = CARD_BITS[h0] | CARD_BITS[h1]
        buckets_out[p, 0] = tables.preflop_bucket[h0 * 52 + h1]
        buckets_out[p, 1] = tables.flop_bucket[hand_index_kernel(
            tables.flop_radix, tables.flop_offset, tables.flop_code_mult, kh, kf, 0, 0)]
        buckets_out[p, 2] = tables.turn_bucket[hand_index_kernel(
            tables.turn_radix, tables.turn_offset, tables.turn_code_mult, kh, kf | kt, 0, 0)]
        buckets_out[p, 3] = tables.river_bucket[river_score_from_work(work, h0, h1)]


@njit_exact
def deal_buckets_batch_kernel(tables, holes, boards, num_players, buckets_out, work):
    """``deal_buckets`` for many deals: ``holes`` (n, P, 2), ``boards`` (n, 5), ``buckets_out``
    (n, P, 4) int64 (benchmarks and tests)."""
    for i in range(holes.shape[0]):
        deal_buckets(tables, holes[i], boards[i], num_players, buckets_out[i], work)


@njit_exact
def num_buckets(tables):
    """(k_preflop, k_flop, k_turn, k_river) of ``tables``; callable from Python and kernels."""
    k = tables.num_buckets
    return k[0], k[1], k[2], k[3]
