"""Hand-evaluator kernels: rank any 5, 6 or 7 distinct cards with bit tricks and four small tables.

Cards are ints 0..51, ``card = rank * 4 + suit`` (see :mod:`holdem.cards`).

Hand key
    ``CARD_BITS[card] = 1 << (16 * suit + rank)``; a hand's *key* is the OR (equivalently the sum:
    the cards are distinct) of its cards' bits, an int64 holding four 13-bit suit masks in 16-bit
    lanes. Keys compose, so a caller that evaluates many hands on one board computes the board's key
    once and adds the two hole cards per player: ``rank_key_kernel(board_key | CARD_BITS[h0] |
    CARD_BITS[h1])``.

Rank value (int32, higher is stronger, equal for equal hands)
    ``category << CATEGORY_SHIFT | major << 13 | minor``, where ``category`` is 0 (high card) ..
    8 (straight flush) and ``major``/``minor`` are 13-bit rank masks breaking ties inside the
    category. Comparing two masks with the same number of bits compares their ranks from the top
    down, which is exactly poker's kicker rule:

    ==============  =================  ==========================
    category        major              minor
    ==============  =================  ==========================
    high card       0                  the 5 highest ranks
    pair            the pair           the 3 highest other ranks
    two pair        the 2 best pairs   the best other rank
    three of a kind the trips          the 2 highest other ranks
    straight        0                  the straight's top rank
    flush           0                  the 5 highest flush ranks
    full house      the trips          the pair
    four of a kind  the quads          the best other rank
    straight flush  0                  the straight's top rank
    ==============  =================  ==========================

    A wheel (A-2-3-4-5) has top rank '5'. Values are the same for the best 5 of 6 or 7 cards as for
    those 5 cards alone, so 5-, 6- and 7-card ranks compare directly. They are not dense: 7,462
    distinct 5-card values spread over [0, 2**30).

Evaluation of one key (no loops, no recursion)
    1. Flush: ``FLUSH_VALUE[suit mask]`` is 0 unless the mask has 5+ bits; at most one suit can, and
       a flush in 7 cards rules out quads and full houses, so OR-ing the four lookups decides it.
    2. Per-rank counts by a bit-sliced adder over the four suit masks: masks of ranks held exactly
       once, twice, three and four times.
    3. Categories from the top down; ``TOP1/TOP2/TOP3/TOP5`` keep the highest 1/2/3/5 bits of a
       mask and ``STRAIGHT_TOP`` maps a rank mask to the bit of its best straight's top rank.

The tables are module-level numpy arrays (built here with numpy in about a millisecond); numba
freezes them into the compiled code as constants, so kernels need no table arguments and the
on-disk cache stays valid.
"""

import numpy as np

from holdem._jit import njit_exact

NUM_RANKS = 13
RANK_MASK = (1 << NUM_RANKS) - 1
LANE_BITS = 16
CATEGORY_SHIFT = 26

HIGH_CARD = 0
PAIR = 1
TWO_PAIR = 2
THREE_OF_A_KIND = 3
STRAIGHT = 4
FLUSH = 5
FULL_HOUSE = 6
FOUR_OF_A_KIND = 7
STRAIGHT_FLUSH = 8


def _build_tables():
    masks = np.arange(1 << NUM_RANKS, dtype=np.int64)
    positions = np.arange(NUM_RANKS, dtype=np.int64)
    bits = (masks[:, None] >> positions) & 1                    # (8192, 13), bit r = rank r
    at_or_above = np.cumsum(bits[:, ::-1], axis=1)[:, ::-1]      # set bits at rank >= r

    def top(k):
        return ((bits * (at_or_above <= k)) << positions).sum(axis=1).astype(np.uint16)

    straight_top = np.zeros(masks.shape, dtype=np.uint16)
    runs = [(0b1000000001111, 3)] + [(0b11111 << (high - 4), high) for high in range(4, NUM_RANKS)]
    for run, high in runs:                                        # ascending: best straight wins
        straight_top[(masks & run) == run] = 1 << high

    top5 = top(5)
    is_flush = bits.sum(axis=1) >= 5
    flush_value = np.where(straight_top > 0,
                           (STRAIGHT_FLUSH << CATEGORY_SHIFT) | straight_top.astype(np.int64),
                           (FLUSH << CATEGORY_SHIFT) | top5.astype(np.int64))
    flush_value = np.where(is_flush, flush_value, 0).astype(np.int32)

    cards = np.arange(52, dtype=np.int64)
    card_bits = np.left_shift(1, LANE_BITS * (cards & 3) + (cards >> 2)).astype(np.int64)
    return card_bits, top(1), top(2), top(3), top5, straight_top, flush_value


CARD_BITS, TOP1, TOP2, TOP3, TOP5, STRAIGHT_TOP, FLUSH_VALUE = _build_tables()


@njit_exact
def rank_key_kernel(key):
    """Rank of the hand whose key (OR of ``CARD_BITS``) holds 5, 6 or 7 distinct cards -> int64."""
    s0 = key & RANK_MASK
    s1 = (key >> LANE_BITS) & RANK_MASK
    s2 = (key >> (2 * LANE_BITS)) & RANK_MASK
    s3 = (key >> (3 * LANE_BITS)) & RANK_MASK

    flush = FLUSH_VALUE[s0] | FLUSH_VALUE[s1] | FLUSH_VALUE[s2] | FLUSH_VALUE[s3]
    if flush != 0:
        return np.int64(flush)

    # Bit-sliced sum of the four suit masks: rank r is held (odd + 2 * twos + 4 * quads)[r] times.
    x01 = s0 ^ s1
    x23 = s2 ^ s3
    c01 = s0 & s1
    c23 = s2 & s3
    odd = x01 ^ x23
    twos = c01 ^ c23 ^ (x01 & x23)
    quads = c01 & c23
    held = s0 | s1 | s2 | s3

    if quads != 0:
        return (FOUR_OF_A_KIND << CATEGORY_SHIFT) | (quads << 13) | np.int64(TOP1[held ^ quads])
    trips = odd & twos
    pairs = twos & ~odd
    if trips != 0 and (pairs != 0 or (trips & (trips - 1)) != 0):
        best = np.int64(TOP1[trips])
        pair = np.int64(TOP1[(trips ^ best) | pairs])
        return (FULL_HOUSE << CATEGORY_SHIFT) | (best << 13) | pair
    straight = np.int64(STRAIGHT_TOP[held])
    if straight != 0:
        return (STRAIGHT << CATEGORY_SHIFT) | straight
    singles = odd & ~twos
    if trips != 0:
        return (THREE_OF_A_KIND << CATEGORY_SHIFT) | (trips << 13) | np.int64(TOP2[singles])
    if pairs != 0:
        if (pairs & (pairs - 1)) != 0:
            two = np.int64(TOP2[pairs])
            return (TWO_PAIR << CATEGORY_SHIFT) | (two << 13) | np.int64(TOP1[held ^ two])
        return (PAIR << CATEGORY_SHIFT) | (pairs << 13) | np.int64(TOP3[singles])
    return np.int64(TOP5[held])


@njit_exact
def hand_key_kernel(cards):
    """Key (int64) of a 1-D array of distinct cards: the OR of their ``CARD_BITS``."""
    key = np.int64(0)
    for i in range(cards.shape[0]):
        key |= CARD_BITS[cards[i]]
    return key


@njit_exact
def rank_cards_kernel(cards):
    """Rank (int64) of a 1-D array of 5, 6 or 7 distinct cards."""
    return rank_key_kernel(hand_key_kernel(cards))


@njit_exact
def rank7_kernel(c0, c1, c2, c3, c4, c5, c6):
    """Rank (int64) of seven distinct cards given as scalars."""
    return rank_key_kernel(CARD_BITS[c0] | CARD_BITS[c1] | CARD_BITS[c2] | CARD_BITS[c3]
                           | CARD_BITS[c4] | CARD_BITS[c5] | CARD_BITS[c6])


@njit_exact
def rank7_batch_kernel(cards, out):
    """Rank every row of ``cards`` (n, 7) of distinct cards into ``out`` (n,) int32, in place."""
    for i in range(cards.shape[0]):
        out[i] = rank7_kernel(cards[i, 0], cards[i, 1], cards[i, 2], cards[i, 3],
                              cards[i, 4], cards[i, 5], cards[i, 6])


@njit_exact
def rank_batch_kernel(cards, out):
    """Rank every row of ``cards`` (n, k), k in 5..7, of distinct cards into ``out`` (n,) int32,
    in place."""
    for i in range(cards.shape[0]):
        out[i] = rank_cards_kernel(cards[i])


@njit_exact
def first_invalid_row_kernel(cards):
    """Index of the first row of ``cards`` (n, k) with a card outside 0..51 or a repeated card,
    or -1 if every row is valid."""
    for i in range(cards.shape[0]):
        seen = np.int64(0)
        for j in range(cards.shape[1]):
            c = np.int64(cards[i, j])
            if c < 0 or c >= 52:
                return i
            bit = np.int64(1) << c
            if seen & bit:
                return i
            seen |= bit
    return -1


@njit_exact
def _count_into(table_values, table_counts, value):
    """Add one to ``value``'s slot of an open-addressing table (multiplicative hash, linear
    probing; empty slots hold -1)."""
    size_mask = table_values.shape[0] - 1
    slot = ((value * np.int64(-7046029254386353131)) >> 40) & size_mask
    while table_values[slot] != value:
        if table_values[slot] == -1:
            table_values[slot] = value
            break
        slot = (slot + 1) & size_mask
    table_counts[slot] += 1


@njit_exact
def rank7_histogram_kernel(table_values, table_counts):
    """Count the ranks of all C(52, 7) = 133,784,560 seven-card hands, in place, into an
    open-addressing table: ``table_values`` (m,) int64 filled with -1 and ``table_counts`` (m,)
    int64 zeros, m a power of two above the number of distinct ranks (4,824). Iterative nested
    loops; the key of the first cards is kept per level."""
    for c0 in range(46):
        k0 = CARD_BITS[c0]
        for c1 in range(c0 + 1, 47):
            k1 = k0 | CARD_BITS[c1]
            for c2 in range(c1 + 1, 48):
                k2 = k1 | CARD_BITS[c2]
                for c3 in range(c2 + 1, 49):
                    k3 = k2 | CARD_BITS[c3]
                    for c4 in range(c3 + 1, 50):
                        k4 = k3 | CARD_BITS[c4]
                        for c5 in range(c4 + 1, 51):
                            k5 = k4 | CARD_BITS[c5]
                            for c6 in range(c5 + 1, 52):
                                _count_into(table_values, table_counts,
                                            rank_key_kernel(k5 | CARD_BITS[c6]))
