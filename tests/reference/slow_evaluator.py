"""A slow, obviously-correct poker hand evaluator: the oracle for :mod:`holdem.evaluator`.

Plain Python, no tables and no code shared with ``holdem``. Cards are ints 0..51 with
``rank = card // 4`` (0 = '2' .. 12 = 'A') and ``suit = card % 4``. A hand's value is a tuple
``(category, tiebreak)``: category 0 (high card) .. 8 (straight flush), tiebreak a tuple of ranks
compared left to right. Python's tuple order is poker's order. A hand of more than five cards is
worth its best five-card subset.
"""

from collections import Counter
from itertools import combinations

HIGH_CARD, PAIR, TWO_PAIR, THREE_OF_A_KIND, STRAIGHT, FLUSH, FULL_HOUSE, FOUR_OF_A_KIND, \
    STRAIGHT_FLUSH = range(9)


def straight_top(ranks):
    """Top rank of the straight formed by five ranks, or None. The wheel A-2-3-4-5 tops at '5'."""
    distinct = sorted(set(ranks), reverse=True)
    if len(distinct) != 5:
        return None
    if distinct[0] - distinct[4] == 4:
        return distinct[0]
    if distinct == [12, 3, 2, 1, 0]:
        return 3
    return None


def hand_value5(cards):
    """Value ``(category, tiebreak)`` of exactly five distinct cards."""
    cards = [int(card) for card in cards]
    if len(cards) != 5 or len(set(cards)) != 5:
        raise ValueError(f"need five distinct cards, got {cards}")
    ranks = sorted((card // 4 for card in cards), reverse=True)
    is_flush = len({card % 4 for card in cards}) == 1
    top = straight_top(ranks)
    counts = Counter(ranks)
    # Ranks by how often they occur, then by rank: 9 9 9 3 3 -> (9, 3); 8 8 5 5 K -> (8, 5, K).
    by_count = tuple(sorted(counts, key=lambda rank: (counts[rank], rank), reverse=True))
    shape = sorted(counts.values(), reverse=True)

    if top is not None and is_flush:
        return (STRAIGHT_FLUSH, (top,))
    if shape == [4, 1]:
        return (FOUR_OF_A_KIND, by_count)
    if shape == [3, 2]:
        return (FULL_HOUSE, by_count)
    if is_flush:
        return (FLUSH, tuple(ranks))
    if top is not None:
        return (STRAIGHT, (top,))
    if shape == [3, 1, 1]:
        return (THREE_OF_A_KIND, by_count)
    if shape == [2, 2, 1]:
        return (TWO_PAIR, by_count)
    if shape == [2, 1, 1, 1]:
        return (PAIR, by_count)
    return (HIGH_CARD, tuple(ranks))


def hand_value(cards):
    """Value of the best five of five or more distinct cards (max over all 5-card subsets)."""
    cards = [int(card) for card in cards]
    if len(cards) < 5 or len(set(cards)) != len(cards):
        raise ValueError(f"need at least five distinct cards, got {cards}")
    return max(hand_value5(five) for five in combinations(cards, 5))
