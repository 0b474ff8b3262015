"""Hand evaluator for No-Limit Hold'em: the rank of the best 5 of 5, 6 or 7 cards.

Layout
    ``__init__`` (this module)  the Python API: validates cards, calls a kernel, returns ints.
    ``kernels``                 the @njit kernels and their lookup tables; the rank value's bit
                                layout and the evaluation steps are documented there.

A rank is an int, higher is stronger, equal for equal hands; 5-, 6- and 7-card ranks compare
directly. ``hand_category(rank)`` gives its :class:`HandCategory`. Ranks are not dense (7,462
distinct values in [0, 2**30)); compare them, do not index by them.

From @njit code call the kernels directly (they take plain ints and arrays)::

    from holdem.evaluator.kernels import CARD_BITS, rank7_kernel, rank_key_kernel
    rank = rank7_kernel(c0, c1, c2, c3, c4, c5, c6)
    board_key = CARD_BITS[b0] | CARD_BITS[b1] | CARD_BITS[b2] | CARD_BITS[b3] | CARD_BITS[b4]
    rank = rank_key_kernel(board_key | CARD_BITS[h0] | CARD_BITS[h1])
"""

import enum

import numpy as np

from holdem.cards import CARD_DTYPE, NUM_CARDS, card_tuple, describe_cards, repeated_card
from holdem.evaluator import kernels
from holdem.evaluator.kernels import CATEGORY_SHIFT

RANK_DTYPE = np.int32


class HandCategory(enum.IntEnum):
    """The nine hand categories, weakest first; ``rank >> CATEGORY_SHIFT``."""

    HIGH_CARD = kernels.HIGH_CARD             #: no pair, straight or flush
    PAIR = kernels.PAIR                       #: two cards of one rank
    TWO_PAIR = kernels.TWO_PAIR               #: two cards of each of two ranks
    THREE_OF_A_KIND = kernels.THREE_OF_A_KIND  #: three cards of one rank
    STRAIGHT = kernels.STRAIGHT               #: five consecutive ranks (A-2-3-4-5 is the lowest)
    FLUSH = kernels.FLUSH                     #: five cards of one suit
    FULL_HOUSE = kernels.FULL_HOUSE           #: three of one rank and two of another
    FOUR_OF_A_KIND = kernels.FOUR_OF_A_KIND   #: four cards of one rank
    STRAIGHT_FLUSH = kernels.STRAIGHT_FLUSH   #: a straight in one suit (the royal flush included)


CATEGORY_NAMES = ("high card", "pair", "two pair", "three of a kind", "straight", "flush",
                  "full house", "four of a kind", "straight flush")
"""Display name of each category, indexed by :class:`HandCategory`."""

NUM_DISTINCT_RANKS5 = 7462
NUM_DISTINCT_RANKS7 = 4824


def _checked_hand(cards, num_cards):
    """``cards`` as a 1-D ``CARD_DTYPE`` array after checking it holds ``num_cards`` distinct
    cards in 0..51; raises ValueError otherwise."""
    array = np.asarray(card_tuple(cards) if isinstance(cards, str) else cards)
    if array.dtype.kind not in "iu":
        raise ValueError(f"cards must be integers 0..51 or text such as 'As Kd', got dtype "
                         f"{array.dtype}")
    if array.ndim != 1 or array.shape[0] != num_cards:
        raise ValueError(f"expected {num_cards} cards, got shape {array.shape}")
    if array.min() < 0 or array.max() >= NUM_CARDS:
        raise ValueError(f"cards must be in 0..{NUM_CARDS - 1}, got {array.tolist()}")
    if np.unique(array).shape[0] != num_cards:
        raise ValueError(f"cards must be distinct: {repeated_card(array)} appears twice in "
                         f"{describe_cards(array)}")
    return array.astype(CARD_DTYPE)


def rank5(cards):
    """Rank (int) of 5 distinct cards: text such as ``"As Kd ..."`` or ints 0..51."""
    return int(kernels.rank_cards_kernel(_checked_hand(cards, 5)))


def rank6(cards):
    """Rank (int) of the best 5 of 6 distinct cards: text such as ``"As Kd ..."`` or ints 0..51."""
    return int(kernels.rank_cards_kernel(_checked_hand(cards, 6)))


def rank7(cards):
    """Rank (int) of the best 5 of 7 distinct cards: text such as ``"As Kd ..."`` or ints 0..51."""
    return int(kernels.rank_cards_kernel(_checked_hand(cards, 7)))


def _checked_batch(cards, widths):
    """``cards`` as a C-contiguous (n, k) ``CARD_DTYPE`` array after checking k is in ``widths``
    and every row holds distinct cards in 0..51; raises ValueError otherwise."""
    if isinstance(cards, str):
        raise ValueError(f"cards must be ints 0..51, got the string {cards!r}")
    array = np.asarray(cards)
    if array.dtype.kind not in "iu":
        raise ValueError(f"cards must be integers 0..51, got dtype {array.dtype}")
    if array.ndim != 2 or array.shape[1] not in widths:
        names = " or ".join(f"(n, {k})" for k in widths)
        raise ValueError(f"expected an {names} array of cards, got shape {array.shape}")
    if array.size and (array.min() < 0 or array.max() >= NUM_CARDS):
        raise ValueError(f"cards must be in 0..{NUM_CARDS - 1}, got values "
                         f"{array.min()}..{array.max()}")
    array = np.ascontiguousarray(array, dtype=CARD_DTYPE)
    bad = kernels.first_invalid_row_kernel(array)
    if bad >= 0:
        raise ValueError(f"row {bad} repeats a card: {describe_cards(array[bad])}")
    return array


def rank7_batch(cards):
    """Ranks of many 7-card hands: ``cards`` (n, 7) integer array -> (n,) int32 array.

    Raises ValueError on a wrong shape or dtype, a card outside 0..51 or a row repeating a card.
    Arrays other than C-contiguous int8 are copied to that layout first.
    """
    array = _checked_batch(cards, (7,))
    out = np.empty(array.shape[0], dtype=RANK_DTYPE)
    kernels.rank7_batch_kernel(array, out)
    return out


def rank_batch(cards):
    """Ranks of many hands of 5, 6 or 7 cards: ``cards`` (n, k) integer array, k in 5..7 ->
    (n,) int32 array. Validation as in :func:`rank7_batch`; for k = 7 that function is faster."""
    array = _checked_batch(cards, (5, 6, 7))
    out = np.empty(array.shape[0], dtype=RANK_DTYPE)
    kernels.rank_batch_kernel(array, out)
    return out


def hand_category(rank):
    """:class:`HandCategory` of a rank; for an integer array of ranks, an int8 array of
    categories."""
    if isinstance(rank, np.ndarray):
        return (rank >> CATEGORY_SHIFT).astype(np.int8)
    category = int(rank) >> CATEGORY_SHIFT
    if int(rank) < 0 or category > HandCategory.STRAIGHT_FLUSH:
        raise ValueError(f"{rank} is not a hand rank")
    return HandCategory(category)


def rank7_histogram():
    """Ranks of all C(52, 7) = 133,784,560 seven-card hands, tallied -> (ranks, counts): the
    distinct ranks ascending (int32) and how many hands have each (int64). Takes a few seconds."""
    size = 1 << 14
    values = np.full(size, -1, dtype=np.int64)
    counts = np.zeros(size, dtype=np.int64)
    kernels.rank7_histogram_kernel(values, counts)
    used = values >= 0
    order = np.argsort(values[used])
    return values[used][order].astype(RANK_DTYPE), counts[used][order]
