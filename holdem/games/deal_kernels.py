"""Deal kernels: sample the cards of one iteration and turn them into buckets and strengths.

A deal kernel fills ``buckets[player, street]`` (the card part of the player's infoset key on each
street) and ``strength[player]`` (higher wins at showdown, equal splits). The traversal kernels
never look at cards, only at these two arrays, so every game (Kuhn, Leduc, No-Limit Hold'em with a
card abstraction) plugs into the same traversal. ``DealArrays.kind`` selects the deal kernel;
both are compiled for every game, so the small games carry placeholder NLHE arrays.
"""

from collections import namedtuple

import numpy as np

from holdem import rng
from holdem._jit import njit_exact as njit
from holdem.abstraction.bucket_tables import BucketTables, make_work
from holdem.abstraction.deal_kernels import deal_buckets
from holdem.evaluator.kernels import CARD_BITS, rank_key_kernel

DEAL_SMALL = 0
DEAL_NLHE = 1

DealArrays = namedtuple("DealArrays", [
    "kind", "deck_ranks", "num_ranks", "num_streets",
    "tables", "hole", "board", "work",         # No-Limit Hold'em only (placeholders otherwise)
])


def _placeholder_tables():
    """Tiny tables of the right types, so one compiled deal kernel serves the small games."""
    one = np.zeros(1, dtype=np.int64)
    small = np.zeros(1, dtype=np.uint8)
    return BucketTables(num_buckets=np.zeros(4, np.int64), preflop_bucket=small,
                        flop_bucket=small, turn_bucket=small, river_bucket=small,
                        flop_radix=one, flop_offset=one, flop_code_mult=one, turn_radix=one,
                        turn_offset=one, turn_code_mult=one)


def small_deal(rules):
    """The deal of a one-private-card game (:class:`holdem.games.small.LimitRules`)."""
    return DealArrays(kind=DEAL_SMALL, deck_ranks=np.asarray(rules.deck_ranks, dtype=np.int64),
                      num_ranks=int(rules.num_ranks), num_streets=int(rules.num_streets),
                      tables=_placeholder_tables(), hole=np.zeros((1, 2), np.int64),
                      board=np.zeros(5, np.int64), work=np.zeros(1, np.int64))


def nlhe_deal(tables, num_players):
    """The deal of No-Limit Hold'em with a card abstraction (a :data:`BucketTables`).

    The scratch arrays belong to this deal: one per process (workers build their own game).
    """
    return DealArrays(kind=DEAL_NLHE, deck_ranks=np.arange(52, dtype=np.int64), num_ranks=13,
                      num_streets=4, tables=tables,
                      hole=np.zeros((num_players, 2), np.int64), board=np.zeros(5, np.int64),
                      work=make_work(tables))


@njit
def _deal_small(deal, state, deck, buckets, strength):
    """One private card each, then one board card if the game has a second round.

    Round 0 bucket: private rank. Round 1 bucket: private * num_ranks + board rank. Strength: a
    pair with the board beats any high card; otherwise the higher private rank wins.
    """
    n = deal.deck_ranks.shape[0]
    num_players = buckets.shape[0]
    for i in range(n):
        deck[i] = i
    drawn = num_players + (1 if deal.num_streets > 1 else 0)
    for i in range(drawn):                 # partial Fisher-Yates
        j = i + rng.below(state, n - i)
        tmp = deck[i]
        deck[i] = deck[j]
        deck[j] = tmp
    r = deal.num_ranks
    for p in range(num_players):
        private = deal.deck_ranks[deck[p]]
        buckets[p, 0] = private
        strength[p] = private
        if deal.num_streets > 1:
            board = deal.deck_ranks[deck[num_players]]
            buckets[p, 1] = private * r + board
            if private == board:
                strength[p] = r + private


@njit
def _deal_nlhe(deal, state, deck, buckets, strength):
    """Two hole cards per player and a five-card board; buckets from the card abstraction
    (:func:`holdem.abstraction.deal_kernels.deal_buckets`), strength = 7-card rank."""
    num_players = buckets.shape[0]
    for i in range(52):
        deck[i] = i
    drawn = 2 * num_players + 5
    for i in range(drawn):
        j = i + rng.below(state, 52 - i)
        tmp = deck[i]
        deck[i] = deck[j]
        deck[j] = tmp
    hole, board = deal.hole, deal.board
    for p in range(num_players):
        hole[p, 0] = deck[2 * p]
        hole[p, 1] = deck[2 * p + 1]
    board_key = np.int64(0)
    for j in range(5):
        board[j] = deck[2 * num_players + j]
        board_key |= CARD_BITS[board[j]]
    deal_buckets(deal.tables, hole, board, num_players, buckets, deal.work)
    for p in range(num_players):
        strength[p] = rank_key_kernel(board_key | CARD_BITS[hole[p, 0]] | CARD_BITS[hole[p, 1]])


@njit
def deal(deal, state, deck, buckets, strength):
    """Sample one deal into ``buckets`` and ``strength`` (see the module docstring)."""
    if deal.kind == DEAL_SMALL:
        _deal_small(deal, state, deck, buckets, strength)
    else:
        _deal_nlhe(deal, state, deck, buckets, strength)
