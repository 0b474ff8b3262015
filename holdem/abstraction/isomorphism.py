"""Hand isomorphism: a dense index of (hole, board) hands up to suit permutation.

Two hands are isomorphic when a permutation of the suits maps one onto the other, round by
round (the hole pair, then the flop as a set, then the turn, then the river). They play the
same, so the card abstraction stores one bucket per class. :class:`HandIndexer` builds the
tables of :func:`holdem.abstraction.deal_kernels.hand_index_kernel` (the algorithm is described
there, after Waugh 2013) for any sequence of round sizes; the street indexers are

    ==========  ===========  ===============
    street      rounds       canonical hands
    ==========  ===========  ===============
    preflop     2            169
    flop        2, 3         1,286,792
    turn        2, 4         13,960,050
    river       2, 5         123,156,254
    ==========  ===========  ===============

The board is one round (a set): which board card came on the turn does not change a hand's
strength or potential, and it cuts the turn and river classes 4x and 20x against the
(2, 3, 1, 1) round structure (55,190,538 and 2,428,287,420 classes). The builder also indexes
bare boards (one round of 3 or 4 cards: 1,755 flops, 16,432 turn boards).

Tables (``IsoTables``, plain int64 arrays)
    ``radix[r]``      place value of round r's count in a column code; ``radix[-1]`` = B, the
                      number of codes;
    ``offset[P]``     first index of the configuration of a hand whose suits 0..2 have codes
                      (c0, c1, c2), ``P = c0 + B * (c1 + B * c2)`` (suit 3's code is implied);
                      -1 where no hand has those codes;
    ``code_mult[c]``  number of column indices of code c.
"""

import functools
import itertools
from collections import namedtuple
from math import comb

import numpy as np

from holdem.abstraction import deal_kernels

IsoTables = namedtuple("IsoTables", ["radix", "offset", "code_mult"])

STREET_ROUNDS = ((2,), (2, 3), (2, 4), (2, 5))
"""Round sizes of the hand indexer of each street (preflop, flop, turn, river)."""

STREET_SIZES = (169, 1_286_792, 13_960_050, 123_156_254)
"""Number of canonical hands per street."""


class HandIndexer:
    """Index hands dealt in rounds of ``round_sizes`` cards (1 to 4 rounds, at most 7 cards).

    ``size`` is the number of classes; ``tables`` the kernel tables; ``index(cards)`` indexes
    rows of cards (rounds consecutive).
    """

    def __init__(self, round_sizes):
        round_sizes = tuple(int(n) for n in round_sizes)
        if not 1 <= len(round_sizes) <= 4 or min(round_sizes) < 1 or sum(round_sizes) > 7:
            raise ValueError(f"round sizes must be 1..4 positive counts of at most 7 cards in "
                             f"all, got {round_sizes}")
        self.round_sizes = round_sizes
        self.tables, self.size = _build_tables(round_sizes)

    def index(self, cards):
        """Indices (int64, shape (n,)) of the rows of ``cards`` (n, sum(round_sizes)) ints."""
        cards = np.ascontiguousarray(cards, dtype=np.int64)
        if cards.ndim == 1:
            cards = cards[None, :]
        if cards.ndim != 2 or cards.shape[1] != sum(self.round_sizes):
            raise ValueError(f"expected (n, {sum(self.round_sizes)}) cards, got {cards.shape}")
        out = np.empty(cards.shape[0], dtype=np.int64)
        deal_kernels.hand_index_batch_kernel(*self.tables, cards,
                                        np.array(self.round_sizes, dtype=np.int64), out)
        return out


@functools.lru_cache(maxsize=None)
def street_indexer(street):
    """The (cached) :class:`HandIndexer` of street 0..3 (preflop, flop, turn, river)."""
    return HandIndexer(STREET_ROUNDS[street])


@functools.lru_cache(maxsize=None)
def board_indexer(num_cards):
    """The (cached) indexer of bare boards of 3 (flops) or 4 (turn boards) cards, as sets."""
    return HandIndexer((num_cards,))


def _build_tables(round_sizes):
    num_rounds = len(round_sizes)
    radix = [1]
    for n in round_sizes:
        radix.append(radix[-1] * (n + 1))
    big = radix[-1]

    def counts(code):
        return tuple((code // radix[r]) % (round_sizes[r] + 1) for r in range(num_rounds))

    def mult(code):
        used, result = 0, 1
        for n in counts(code):
            result *= comb(13 - used, n)
            used += n
        return result

    code_mult = [mult(c) for c in range(big)]
    offsets = {}
    total = 0
    for config in itertools.combinations_with_replacement(range(big - 1, -1, -1), 4):
        sums = [sum(counts(c)[r] for c in config) for r in range(num_rounds)]
        if sums != list(round_sizes):
            continue
        size = 1
        for code, group in itertools.groupby(config):
            g = len(list(group))
            size *= comb(code_mult[code] + g - 1, g)
        offsets[config] = total
        total += size
    offset = np.full(big ** 3, -1, dtype=np.int64)
    for c0, c1, c2 in itertools.product(range(big), repeat=3):
        rest = [round_sizes[r] - counts(c0)[r] - counts(c1)[r] - counts(c2)[r]
                for r in range(num_rounds)]
        if min(rest) < 0:
            continue
        c3 = sum(n * radix[r] for r, n in enumerate(rest))
        config = tuple(sorted((c0, c1, c2, c3), reverse=True))
        offset[c0 + big * (c1 + big * c2)] = offsets[config]
    tables = IsoTables(radix=np.array(radix, dtype=np.int64), offset=offset,
                       code_mult=np.array(code_mult, dtype=np.int64))
    return tables, total
