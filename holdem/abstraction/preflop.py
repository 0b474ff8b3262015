"""Preflop hand classes: the 169 hole-pair classes (pair, suited, offsuit by ranks) and their names.

Preflop, only the ranks of the hole pair and whether it is suited matter, so the 1,326 hole pairs
fall into 169 classes on the usual 13 x 13 grid. Bucket files store a bucket per class
(``preflop_bucket``, 169); the run-time table is 52 x 52 by card
(:func:`holdem.abstraction.bucket_tables.make_tables`).
"""

import numpy as np

from holdem.cards import RANK_CHARS

NUM_PREFLOP_CLASSES = 169


def preflop_class(c0, c1):
    """Class 0..168 of the hole pair (c0, c1): ``13 * r + r`` for a pair of rank r,
    ``13 * high + low`` suited, ``13 * low + high`` offsuit (the usual 13 x 13 grid)."""
    r0, r1 = int(c0) >> 2, int(c1) >> 2
    high, low = max(r0, r1), min(r0, r1)
    if (int(c0) & 3) == (int(c1) & 3) and r0 != r1:
        return 13 * high + low
    return 13 * low + high


def _class_names():
    names = [""] * NUM_PREFLOP_CLASSES
    for high in range(13):
        for low in range(high + 1):
            h, lo = RANK_CHARS[high], RANK_CHARS[low]
            if high == low:
                names[13 * high + low] = h + h
            else:
                names[13 * high + low] = h + lo + "s"
                names[13 * low + high] = h + lo + "o"
    return tuple(names)


PREFLOP_CLASS_NAMES = _class_names()
"""Name of each preflop class ('AA', 'AKs', 'AKo', ...), indexed by :func:`preflop_class`."""


def preflop_tables():
    """(class of each card pair (52 * 52, -1 for c0 == c1), class sizes (169), a representative
    hole pair per class (169, 2))."""
    cls = np.full(52 * 52, -1, dtype=np.int64)
    sizes = np.zeros(NUM_PREFLOP_CLASSES, dtype=np.int64)
    reps = np.full((NUM_PREFLOP_CLASSES, 2), -1, dtype=np.int64)
    for c0 in range(52):
        for c1 in range(52):
            if c0 != c1:
                k = preflop_class(c0, c1)
                cls[c0 * 52 + c1] = k
                if c0 < c1:
                    sizes[k] += 1
                    if reps[k, 0] < 0:
                        reps[k] = (c0, c1)
    return cls, sizes, reps


def preflop_hands(tables):
    """The hand classes in each preflop bucket of ``tables`` (a
    :data:`~holdem.abstraction.bucket_tables.BucketTables`): a list indexed by bucket of tuples of
    class names (``('AKs',)``; one class per bucket when the buckets are the 169 lossless
    classes), in grid order AA, AKs, ..., AKo, KK, ..., 22."""
    _, _, reps = preflop_tables()
    out = [[] for _ in range(int(tables.num_buckets[0]))]
    for k in range(NUM_PREFLOP_CLASSES - 1, -1, -1):        # class index descending = grid order
        c0, c1 = reps[k]
        out[int(tables.preflop_bucket[c0 * 52 + c1])].append(PREFLOP_CLASS_NAMES[k])
    return [tuple(names) for names in out]

