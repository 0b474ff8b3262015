"""Tests of holdem.cards and holdem.evaluator against tests/reference/slow_evaluator.py.

Orderings are compared through dense ranks: both sides' values are mapped to 0..(distinct - 1) in
increasing strength, and the two dense arrays must be equal, i.e. the evaluator and the reference
agree on every comparison and every tie.
"""

import itertools

import numpy as np
import pytest

from holdem.cards import (card_rank, card_suit, card_tuple, describe_cards, format_card,
                          format_cards, make_card, parse, random_hands, repeated_card)
from holdem.evaluator import (CATEGORY_NAMES, NUM_DISTINCT_RANKS5, NUM_DISTINCT_RANKS7,
                              HandCategory, hand_category, kernels, rank5, rank6, rank7,
                              rank7_batch, rank7_histogram, rank_batch)
from tests.reference import slow_evaluator as reference

CATEGORY_COUNTS5 = [1_302_540, 1_098_240, 123_552, 54_912, 10_200, 5_108, 3_744, 624, 40]
CATEGORY_COUNTS7 = [23_294_460, 58_627_800, 31_433_400, 6_461_620, 6_180_020, 4_047_644,
                    3_473_184, 224_848, 41_584]


@pytest.fixture
def rng():
    return np.random.default_rng(20240607)


def dense(values):
    """Dense ranks of an array of comparable values (0 = weakest)."""
    return np.unique(values, return_inverse=True)[1].reshape(-1)


def dense_of_keys(keys):
    """Dense ranks of a list of reference values (tuples)."""
    index = {key: i for i, key in enumerate(sorted(set(keys)))}
    return np.array([index[key] for key in keys])


def reference_dense5(hands):
    """Dense reference ranks of many 5-card hands (m, 5), evaluating one hand per class.

    ``hand_value5`` reads only the sorted ranks and whether all suits agree, so hands sharing
    both have equal values; the evaluator under test still sees every hand.
    """
    ranks = np.sort(card_rank(hands.astype(np.int64)), axis=1)
    is_flush = (card_suit(hands) == card_suit(hands[:, :1])).all(axis=1)
    code = (ranks * 13 ** np.arange(5)).sum(axis=1) + is_flush * 13 ** 5
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    class_values = [reference.hand_value5(hands[i]) for i in first]
    return dense_of_keys(class_values)[inverse.reshape(-1)], class_values


# --- (1) every five-card hand ------------------------------------------------------------------

@pytest.mark.slow
def test_all_five_card_hands_match_reference():
    hands = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(52), 5)),
                        dtype=np.int8).reshape(-1, 5)
    assert hands.shape[0] == 2_598_960
    ours = rank_batch(hands)
    theirs = [reference.hand_value5(hand) for hand in hands.tolist()]   # every hand, no shortcut

    assert np.unique(ours).shape[0] == NUM_DISTINCT_RANKS5 == 7462
    assert np.array_equal(dense(ours), dense_of_keys(theirs))
    categories = hand_category(ours)
    assert np.bincount(categories, minlength=9).tolist() == CATEGORY_COUNTS5
    assert np.array_equal(categories, [value[0] for value in theirs])


# --- (2) random seven-card hands ---------------------------------------------------------------

def test_random_seven_card_hands_match_reference(rng):
    hands = random_hands(rng, 200_000, 7)
    ours = rank7_batch(hands)
    subsets = np.array(list(itertools.combinations(range(7), 5)))               # (21, 5)
    fives = hands[:, subsets].reshape(-1, 5)
    theirs_dense5, _ = reference_dense5(fives)
    theirs = theirs_dense5.reshape(-1, 21).max(axis=1)                           # best of 21
    assert np.array_equal(dense(ours), dense(theirs))


def test_seven_card_hands_match_reference_directly(rng):
    hands = random_hands(rng, 2_000, 7)
    ours = rank7_batch(hands)
    theirs = [reference.hand_value(hand) for hand in hands.tolist()]
    assert np.array_equal(dense(ours), dense_of_keys(theirs))
    assert np.array_equal(hand_category(ours), [value[0] for value in theirs])


def test_reference_classes_are_sound(rng):
    hands = random_hands(rng, 20_000, 5)
    grouped, _ = reference_dense5(hands)
    direct = dense_of_keys([reference.hand_value5(hand) for hand in hands.tolist()])
    assert np.array_equal(grouped, direct)


# --- (3) every seven-card hand -----------------------------------------------------------------

@pytest.mark.slow
def test_all_seven_card_hands():
    ranks, counts = rank7_histogram()
    assert counts.sum() == 133_784_560
    assert ranks.shape[0] == NUM_DISTINCT_RANKS7 == 4824
    per_category = np.bincount(hand_category(ranks), weights=counts, minlength=9)
    assert per_category.astype(np.int64).tolist() == CATEGORY_COUNTS7


# --- (4) cards, consistency, validation --------------------------------------------------------

def test_card_encoding():
    assert parse("2c").tolist() == [0]
    assert parse("2s").tolist() == [3]
    assert parse("Ac").tolist() == [48]
    assert parse("As").tolist() == [51]
    assert make_card(12, 3) == 51
    assert card_rank(51) == 12 and card_suit(51) == 3
    assert format_card(20) == "7c"


def test_parse_format_round_trip():
    deck = np.arange(52)
    text = format_cards(deck)
    assert text.split()[:5] == ["2c", "2d", "2h", "2s", "3c"]
    assert np.array_equal(parse(text), deck)
    assert np.array_equal(parse(text.replace(" ", "")), deck)
    assert parse("As Kd 7c").tolist() == parse("AsKd7c").tolist() == [51, 45, 20]
    assert parse("  AsKd \n 7c ").tolist() == [51, 45, 20]
    assert parse("").shape == (0,)
    assert parse("As").dtype == np.int8


@pytest.mark.parametrize("text, token", [("Xs", "Xs"), ("xs", "xs"), ("As Kx", "Kx"),
                                         ("AsK", "K"), ("10s", "10"), ("As, Kd", ",")])
def test_parse_errors_name_the_token(text, token):
    with pytest.raises(ValueError, match=repr(token)):
        parse(text)


def test_cards_are_read_in_either_case():
    assert parse("as kd 7C").tolist() == parse("AS KD 7c").tolist() == [51, 45, 20]
    assert card_tuple("tdTh", "board") == card_tuple("Td Th")


def test_people_pass_cards_as_text_and_errors_name_them_as_text():
    assert rank5("As Ks Qs Js Ts") == rank5(parse("As Ks Qs Js Ts")) == rank5([51, 47, 43, 39, 35])
    assert rank7("AsKsQsJsTs2c3d") == rank7(parse("As Ks Qs Js Ts 2c 3d"))
    assert card_tuple("As Kd") == card_tuple(["As", "Kd"]) == card_tuple([51, 45]) == (51, 45)
    assert card_tuple(np.array([51, 45], dtype=np.int8)) == (51, 45)
    for bad, message in [("As Kx", "hole: bad card 'Kx'"), ([51, 52], "hole: card 52 is outside"),
                         ([51.0], "hole: 51.0 is not a card"), ([True], "is not a card")]:
        with pytest.raises(ValueError, match=message):
            card_tuple(bad, "hole")
    assert describe_cards([51, 45, 20]) == "As Kd 7c" and describe_cards([51, 60]) == "[51, 60]"
    assert repeated_card([51, 45, 51]) == "As" and repeated_card([51, 45]) is None


def test_format_rejects_bad_cards():
    for card in (-1, 52):
        with pytest.raises(ValueError, match=str(card)):
            format_cards([card])


def test_known_hands():
    def value(text):
        return rank_batch(parse(text)[None, :])[0]

    assert hand_category(value("As Ks Qs Js Ts")) == HandCategory.STRAIGHT_FLUSH
    assert hand_category(value("Ah 2c 3d 4s 5h")) == HandCategory.STRAIGHT
    assert value("Ah 2c 3d 4s 5h") < value("2h 3c 4d 5s 6h") < value("Ts Js Qh Kd Ac")
    assert value("5s 4s 3s 2s As") < value("6s 5s 4s 3s 2s") < value("As Ks Qs Js Ts")
    assert value("Ac Ad Kc Kd 2h") > value("Ac Ad Qc Qd Kh")
    assert value("Ac Ad Kc Kd 2h") == value("Ah As Kh Ks 2c")
    assert value("2c 2d 2h 3c 3d") > value("Ac Ad Ah Kc Qd")
    assert hand_category(value("Ac Ad Ah As 2c 2d 2h")) == HandCategory.FOUR_OF_A_KIND
    assert value("Ac Ad Ah Kc Kd Kh 2c") == value("Ac Ad Ah Kc Kd")
    assert value("9c 8d 7h 6s 5c 4d 3h") == value("9c 8d 7h 6s 5c")
    assert [c.name for c in HandCategory][0] == "HIGH_CARD"
    assert len(CATEGORY_NAMES) == len(HandCategory) == 9
    assert CATEGORY_NAMES[HandCategory.FULL_HOUSE] == "full house"


def test_five_six_seven_consistency(rng):
    for hand in random_hands(rng, 1_000, 7).tolist():
        sixes = [rank6(six) for six in itertools.combinations(hand, 6)]
        fives = [rank5(five) for five in itertools.combinations(hand, 5)]
        assert rank7(hand) == max(sixes) == max(fives)
        for six, value in zip(itertools.combinations(hand, 6), sixes):
            assert value == max(rank5(five) for five in itertools.combinations(six, 5))


def test_kernel_entry_points_agree(rng):
    hands = random_hands(rng, 5_000, 7)
    batch = rank7_batch(hands)
    assert batch.dtype == np.int32
    assert np.array_equal(batch, rank_batch(hands))
    assert np.array_equal(batch, rank7_batch(hands.astype(np.int64)))
    for hand, expected in zip(hands[:200], batch[:200]):
        board_key = kernels.hand_key_kernel(hand[:5])
        hole_key = kernels.CARD_BITS[hand[5]] | kernels.CARD_BITS[hand[6]]
        assert kernels.rank_key_kernel(board_key | hole_key) == expected
        assert kernels.rank7_kernel(*hand.tolist()) == expected
        assert rank7(hand) == expected


@pytest.mark.parametrize("func, cards, message", [
    (rank5, [0, 1, 2, 3], "expected 5 cards"),
    (rank5, [0, 1, 2, 3, 4, 5], "expected 5 cards"),
    (rank6, [0, 1, 2, 3, 4], "expected 6 cards"),
    (rank7, [[0, 1, 2, 3, 4, 5, 6]], "expected 7 cards"),
    (rank5, [0, 1, 2, 3, 52], "0..51"),
    (rank5, [-1, 1, 2, 3, 4], "0..51"),
    (rank7, [0, 1, 2, 3, 4, 5, 5], "distinct"),
    (rank5, [0.0, 1.0, 2.0, 3.0, 4.0], "integers"),
    (rank5, "As Ks Qs Js Tx", "'Tx'"),
    (rank7, "As Ks Qs Js Ts 9c As", "As appears twice in As Ks Qs Js Ts 9c As"),
    (rank7, [51, 47, 43, 39, 35, 28, 51], "As appears twice in As Ks Qs Js Ts 9c As"),
])
def test_rank_validation(func, cards, message):
    with pytest.raises(ValueError, match=message):
        func(cards)


@pytest.mark.parametrize("cards, message", [
    (np.zeros((3, 6), dtype=np.int8), r"\(n, 7\)"),
    (np.arange(7), r"\(n, 7\)"),
    (np.arange(7, dtype=np.float64)[None, :], "integers"),
    (np.array([[0, 1, 2, 3, 4, 5, 300]]), "0..51"),
    (np.array([[0, 1, 2, 3, 4, 5, 6], [0, 1, 2, 3, 4, 5, 0]]), "row 1 repeats a card: 2c 2d"),
])
def test_batch_validation(cards, message):
    with pytest.raises(ValueError, match=message):
        rank7_batch(cards)


def test_empty_batch_and_category_errors():
    assert rank7_batch(np.zeros((0, 7), dtype=np.int8)).shape == (0,)
    with pytest.raises(ValueError, match="not a hand rank"):
        hand_category(-1)
    with pytest.raises(ValueError, match="not a hand rank"):
        hand_category(9 << kernels.CATEGORY_SHIFT)
