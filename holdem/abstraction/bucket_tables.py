"""Run-time bucket tables: what the solver reads to put every player of a deal in a bucket.

A player's *bucket* on a street is the card part of its infoset key. Buckets depend only on the
player's own hole cards and the board, so the solver computes them once per deal (for every
player and street) with :func:`~holdem.abstraction.deal_kernels.deal_buckets` and never looks at
cards again. How the buckets are built is in :mod:`holdem.abstraction.bucket_build`, the file
that stores them in :mod:`holdem.abstraction.bucket_file`.

What each street uses
    ========  =========================================  ======================================
    street    bucket of a hand                           stored in the file / done at run time
    ========  =========================================  ======================================
    preflop   one of the 169 classes (pair, suited,      ``preflop_bucket[class]`` (169); the
              offsuit by ranks) when k = 169; else       run-time table is 52 x 52 by card
              quantile bins of the pot share against
              ``num_players - 1`` random hands (MC)
    flop      quantile bin of E[HS^2], or with           ``flop_bucket[index]`` for each of the
              method "emd" a k-means cluster of its      1,286,792 canonical flop hands
              histogram over turn buckets
    turn      quantile bin of E[HS^2], or with "emd"     ``turn_bucket[index]`` for each of the
              a k-means cluster of its histogram over    13,960,050 canonical turn hands
              river buckets (:mod:`.emd`)
    river     quantile bin of HS                         ``river_bucket[score]`` (1,981): HS is
                                                         computed per deal at run time
    ========  =========================================  ======================================

    ``index`` is the hand isomorphism index (:mod:`holdem.abstraction.isomorphism`: the hole pair
    and the board as a set, up to suit permutation), so isomorphic hands share a bucket and the
    tables hold one byte per class (two when k > 256): 15.2 MB. A river table would take
    123,156,254 bytes more, while HS is cheap enough to compute at run time: ``score = 2 * wins
    + ties`` of the hand against the 990 hole pairs that share no card with it or the board
    (``HS = score / 1980``, exact), for all players at once: the unseen pairs are ranked once per
    deal (per rank pair where suits cannot matter: at most 91 evaluations, plus up to 415 pairs
    holding a card of a suit with 3+ board cards), then each player counts with card removal.


Run time (from a kernel)::

    from holdem.abstraction.deal_kernels import deal_buckets
    deal_buckets(tables, hole, board, num_players, buckets_out, work)

``tables`` = ``load_buckets(path).tables`` (a :data:`BucketTables` of plain arrays), ``hole``
int[num_players, 2], ``board`` int[5], ``buckets_out`` int64[num_players, 4] (preflop, flop,
turn, river), ``work`` = :func:`make_work` (int64[1,088]). Measured cost (tools/bench_buckets.py,
one core, random deals): about 2.3 us per heads-up deal, i.e. 290 ns per player per street; 3.0
us per 6-player deal (2.0 us per deal + 0.17 us per player).
"""

from collections import namedtuple

import numpy as np

from holdem.abstraction import deal_kernels
from holdem.abstraction.deal_kernels import MAX_SCORE, RUNTIME_WORK, deal_buckets
from holdem.abstraction.isomorphism import street_indexer
from holdem.abstraction.preflop import preflop_tables
from holdem.cards import describe_cards, repeated_card

NUM_SCORES = MAX_SCORE + 1
MAX_PLAYERS = 9

BucketTables = namedtuple("BucketTables", [
    "num_buckets",      # int64[4]: k per street
    "preflop_bucket",   # uint8/uint16[52 * 52]: bucket of hole (c0, c1) at c0 * 52 + c1
    "flop_bucket",      # uint8/uint16[1,286,792]: bucket by flop isomorphism index
    "turn_bucket",      # uint8/uint16[13,960,050]: bucket by turn isomorphism index
    "river_bucket",     # uint8/uint16[1981]: bucket by river score (2 * wins + ties)
    "flop_radix", "flop_offset", "flop_code_mult",      # flop IsoTables (int64)
    "turn_radix", "turn_offset", "turn_code_mult",      # turn IsoTables (int64)
])
"""Everything :func:`~holdem.abstraction.deal_kernels.deal_buckets` reads, as plain arrays (see
the module docstring)."""


def make_tables(arrays, params):
    """:data:`BucketTables` from a bucket file's arrays (as
    :func:`holdem.abstraction.bucket_build.build_buckets` returns or
    :func:`holdem.abstraction.bucket_file.load_buckets` reads them) and its parameters (a
    :class:`~holdem.abstraction.bucket_file.BucketParams`: its ``k_*``)."""
    cls, _, _ = preflop_tables()
    preflop_by_class = arrays["preflop_bucket"]
    preflop = np.zeros(52 * 52, dtype=preflop_by_class.dtype)
    valid = cls >= 0
    preflop[valid] = preflop_by_class[cls[valid]]
    flop_iso, turn_iso = street_indexer(1), street_indexer(2)
    return BucketTables(
        num_buckets=np.array([params.k_preflop, params.k_flop, params.k_turn, params.k_river],
                             dtype=np.int64),
        preflop_bucket=preflop,
        flop_bucket=np.ascontiguousarray(arrays["flop_bucket"]),
        turn_bucket=np.ascontiguousarray(arrays["turn_bucket"]),
        river_bucket=np.ascontiguousarray(arrays["river_bucket"]),
        flop_radix=flop_iso.tables.radix, flop_offset=flop_iso.tables.offset,
        flop_code_mult=flop_iso.tables.code_mult,
        turn_radix=turn_iso.tables.radix, turn_offset=turn_iso.tables.offset,
        turn_code_mult=turn_iso.tables.code_mult)


def make_work(tables=None):
    """Scratch for :func:`deal_buckets`: int64[1,088] (the ranked unseen pairs of the deal's
    board, see :func:`holdem.abstraction.deal_kernels.river_prepare_kernel`); one per thread. Its
    size depends neither on ``tables`` nor on the number of players."""
    return np.zeros(RUNTIME_WORK, dtype=np.int64)


def _checked_deal(hole, board):
    hole = np.asarray(hole)
    board = np.asarray(board)
    if hole.ndim == 1:
        hole = hole[None, :]
    if hole.ndim != 2 or hole.shape[1] != 2 or not 1 <= hole.shape[0] <= MAX_PLAYERS:
        raise ValueError(f"hole must be (num_players, 2) cards, got shape {hole.shape}")
    if board.shape != (5,):
        raise ValueError(f"board must be 5 cards, got shape {board.shape}")
    cards = np.concatenate([hole.reshape(-1), board])
    if cards.dtype.kind not in "iu" or cards.min() < 0 or cards.max() > 51:
        raise ValueError(f"cards must be integers 0..51, got {cards.tolist()}")
    if np.unique(cards).size != cards.size:
        raise ValueError(f"cards must be distinct: {repeated_card(cards)} appears twice in "
                         f"{describe_cards(cards)}")
    return hole.astype(np.int64), board.astype(np.int64)


def lookup_buckets(tables, hole, board):
    """Buckets (int64[num_players, 4]: preflop, flop, turn, river) of one deal; ``hole``
    (num_players, 2) or (2,) and ``board`` (5,) distinct cards. Validating Python wrapper of
    :func:`deal_buckets`."""
    hole, board = _checked_deal(hole, board)
    out = np.zeros((hole.shape[0], 4), dtype=np.int64)
    deal_buckets(tables, hole, board, hole.shape[0], out, make_work(tables))
    return out


def river_hand_strength(hole, board):
    """HS of a hole pair on a 5-card board: share of the 990 other hole pairs it beats, ties
    count half (float in [0, 1])."""
    hole, board = _checked_deal(hole, board)
    score = deal_kernels.river_score_kernel(hole[0, 0], hole[0, 1], board, make_work())
    return score / MAX_SCORE
