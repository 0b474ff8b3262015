"""Range strings: what we write reads back exactly, the shorthands of other tools expand as they
do there, and every unreadable entry is named with its position."""

import re

import numpy as np
import pytest

from holdem.analysis.ranges.charts import GRID, class_kind, combos
from holdem.analysis.ranges.strings import (CLASS_ORDER, DIGITS, RangeError, combo_text,
                                           format_range, parse_range)
from holdem.cards import SUIT_CHARS, card_tuple, format_card

HAND = r"(?:[2-9TJQKA]{2}[so]?|(?:[2-9TJQKA][cdhs]){2})"
PLAIN = re.compile(rf"{HAND}(?::0\.[0-9]{{1,{DIGITS}}})?(?:,{HAND}(?::0\.[0-9]{{1,{DIGITS}}})?)*")


def key(cards):
    """A combo given as text, as parse_range returns it: (higher card, lower card)."""
    return tuple(sorted(card_tuple(cards), reverse=True))


def names(text):
    return set(parse_range(text))


def random_weights(rng, hands, zeros=0.3, ones=0.2):
    """Weights at the written precision: some 0, some 1, the rest k / 10**DIGITS."""
    out = {}
    for hand in hands:
        u = rng.random()
        out[hand] = 0.0 if u < zeros else 1.0 if u < zeros + ones else \
            int(rng.integers(1, 10 ** DIGITS)) / 10 ** DIGITS
    return out


def all_combos():
    return [tuple(sorted(c, reverse=True)) for name in CLASS_ORDER for c in combos(name)]


# -- what we write -----------------------------------------------------------------------------
def test_class_order_is_pairs_then_suited_then_offsuit_high_card_first():
    assert sorted(CLASS_ORDER) == sorted(n for row in GRID for n in row)
    assert CLASS_ORDER[:3] == ("AA", "KK", "QQ") and CLASS_ORDER[12] == "22"
    assert CLASS_ORDER[13:16] == ("AKs", "AQs", "AJs") and CLASS_ORDER[24:26] == ("A2s", "KQs")
    assert CLASS_ORDER[90] == "32s" and CLASS_ORDER[91] == "AKo" and CLASS_ORDER[-1] == "32o"
    assert [class_kind(n) for n in CLASS_ORDER] == ["pair"] * 13 + ["suited"] * 78 + \
        ["offsuit"] * 78


def test_the_issue_example():
    text = "AA,KK:0.5,AKs,AQo:0.25,AsKh:0.75"
    w = parse_range(text)
    assert w[key("AsKh")] == 0.75 and key("AdKc") not in w and w[key("AhQd")] == 0.25
    assert len(w) == 6 + 6 + 4 + 12 + 1 and w[key("KsKh")] == 0.5
    assert format_range(w) == "AA,KK:0.5,AKs,AsKh:0.75,AQo:0.25"
    assert parse_range("AA,KK:0.5,AKs,AQo:0.25") == {"AA": 1.0, "KK": 0.5, "AKs": 1.0,
                                                     "AQo": 0.25}


def test_format_rounds_drops_zeros_and_writes_one_bare():
    w = {"22": 0.5, "AA": 1.0, "KK": 0.99996, "QQ": 0.00004, "JJ": 0.123456, "TT": 0.0,
         "AKs": 1 / 3, "72o": np.float32(0.25), "AKo": 1 + 1e-12}
    assert format_range(w) == "AA,KK,JJ:0.1235,22:0.5,AKs:0.3333,AKo,72o:0.25"
    assert format_range(w, digits=2) == "AA,KK,JJ:0.12,22:0.5,AKs:0.33,AKo,72o:0.25"
    assert format_range({}) == "" and format_range({"AA": 0}) == ""


def test_format_writes_combos_higher_card_first_in_a_fixed_order():
    w = {(46, 51): 0.5, "AdKc": 1, ("2c", "3d"): 0.25, (np.int8(51), np.int8(50)): 1}
    assert format_range(w) == "AsAh,AsKh:0.5,AdKc,3d2c:0.25"
    assert format_range({"AA": 1}, combos=True) == "AsAh,AsAd,AsAc,AhAd,AhAc,AdAc"
    assert combo_text((46, 51)) == combo_text((51, 46)) == "AsKh" == \
        format_card(51) + format_card(46)


def test_format_writes_a_class_whose_combos_agree_as_the_class():
    w = {c: 0.5 for c in combos("AKs")} | {c: 0.25 for c in combos("QQ")[:5]}
    text = format_range(w)
    assert text == "QsQd:0.25,QsQc:0.25,QhQd:0.25,QhQc:0.25,QdQc:0.25,AKs:0.5"   # no QsQh
    assert format_range(w, combos=True).count(",") == 8
    assert format_range({"AKs": 0.5, "AsKs": 0.5}) == "AKs:0.5"       # classes and combos agree


def test_output_is_the_plain_form_every_tool_reads(rng):
    for _ in range(20):
        text = format_range(random_weights(rng, CLASS_ORDER))
        assert PLAIN.fullmatch(text) and " " not in text and "+" not in text
        text = format_range(random_weights(rng, all_combos()), combos=True)
        assert PLAIN.fullmatch(text)


# -- round trips -------------------------------------------------------------------------------
def test_round_trip_class_weights(rng):
    for _ in range(50):
        w = random_weights(rng, CLASS_ORDER)
        text = format_range(w)
        assert parse_range(text) == {n: x for n, x in w.items() if x > 0}
        assert parse_range(text, combos=False) == parse_range(text)
        assert format_range(parse_range(text)) == text


def test_round_trip_combo_weights(rng):
    for _ in range(50):
        w = random_weights(rng, all_combos())
        expected = {c: x for c, x in w.items() if x > 0}
        assert parse_range(format_range(w, combos=True)) == expected
        assert parse_range(format_range(w), combos=True) == expected


def test_round_trip_keeps_the_order():
    w = parse_range("22,AKo:0.5,AA,32s")
    assert list(w) == ["AA", "22", "32s", "AKo"] and list(w) == [n for n in CLASS_ORDER if n in w]


def test_a_class_equals_its_combos_with_one_weight():
    for name in ("AA", "T9s", "72o"):
        as_combos = ",".join(f"{combo_text(c)}:0.375" for c in combos(name))
        assert parse_range(as_combos, combos=False) == parse_range(f"{name}:0.375") == \
            {name: 0.375}
        assert parse_range(as_combos) == parse_range(f"{name}:0.375", combos=True)
        assert format_range(parse_range(as_combos)) == f"{name}:0.375"


def test_class_weights_expand_to_combos_on_request():
    w = parse_range("JJ:0.5,KQo", combos=True)
    assert len(w) == 6 + 12 and w[key("JsJh")] == 0.5 and w[key("KhQs")] == 1.0
    assert set(w) == {tuple(sorted(c, reverse=True)) for n in ("JJ", "KQo") for c in combos(n)}
    assert all(hi > lo for hi, lo in w)


def test_classes_are_asked_for_but_a_class_is_split():
    with pytest.raises(ValueError, match="AKs: its combos have different weights"):
        parse_range("AsKs:0.5,AhKh", combos=False)
    with pytest.raises(ValueError, match="QQ: its combos have different weights"):
        parse_range("QsQh", combos=False)


# -- shorthands --------------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ("QQ+", ["QQ", "KK", "AA"]),
    ("AA+", ["AA"]),
    ("A2s+", [f"A{r}s" for r in "KQJT98765432"]),
    ("KTo+", ["KQo", "KJo", "KTo"]),
    ("T9s-65s", ["T9s", "98s", "87s", "76s", "65s"]),
    ("65s-T9s", ["T9s", "98s", "87s", "76s", "65s"]),
    ("22-55", ["22", "33", "44", "55"]),
    ("KQs-K9s", ["KQs", "KJs", "KTs", "K9s"]),
    ("J8o-J6o", ["J8o", "J7o", "J6o"]),
    ("AK", ["AKs", "AKo"]),
    ("QJ+", ["QJs", "QJo"]),
    ("KJ+", ["KQs", "KJs", "KQo", "KJo"]),
    ("AT-AJ", ["AJs", "ATs", "AJo", "ATo"]),
    (" QQ+ , 22 : 0.5 ", ["AA", "KK", "QQ", "22"]),
])
def test_shorthands(text, expected):
    assert names(text) == set(expected)


def test_a_weight_after_a_shorthand_applies_to_each_hand():
    assert parse_range("TT+:0.25,A5s-A3s:0.5") == {
        **dict.fromkeys(["AA", "KK", "QQ", "JJ", "TT"], 0.25),
        **dict.fromkeys(["A5s", "A4s", "A3s"], 0.5)}
    assert parse_range("QQ+,KK") == {"AA": 1.0, "KK": 1.0, "QQ": 1.0}      # same weight twice


def test_shorthands_expand_as_pokerkit_expands_them():
    pokerkit = pytest.importorskip("pokerkit")
    for text in ("QQ+", "A2s+", "KTo+", "T9s-65s", "22-55", "AK", "KJ+", "J9o-64o", "AsKh",
                 "QQ+,A2s+,KTo+,T9s-65s,22-55"):
        theirs = {frozenset(f"{c.rank.value}{c.suit.value}" for c in hand)
                  for hand in pokerkit.parse_range(text)}
        ours = {frozenset(map(format_card, c)) for c in parse_range(text, combos=True)}
        assert ours == theirs, text


def test_whitespace_and_empty_text():
    assert parse_range("") == {} == parse_range("  \n")
    assert parse_range("AA:0.5 ,\tKK , AsKh : 1") == parse_range("AA:0.5,KK,AsKh")
    assert len(parse_range("AA:0.5,KK,AsKh")) == 13
    assert parse_range("AA:.5,KK:1.,QQ:0") == {"AA": 0.5, "KK": 1.0}


# -- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, token, position, reason", [
    ("AA,AXs", "AXs", 3, "unknown rank 'X'"),
    ("AA, 1Ao", "1Ao", 4, "unknown rank '1'"),
    ("AKx", "AKx", 0, "unknown suffix 'x'"),
    ("KK,aa", "aa", 3, "unknown rank 'a'"),
    ("AsKx", "AsKx", 0, "bad card 'Kx'"),
    ("QQ,XsKh", "XsKh", 3, "bad card 'Xs'"),
    ("AsAs:0.5", "AsAs:0.5", 0, "card As used twice"),
    ("AA:1.5", "AA:1.5", 0, "outside"),
    ("KK,AA:-0.1", "AA:-0.1", 3, "not a decimal number"),
    ("AA:", "AA:", 0, "not a decimal number"),
    ("AA:nan", "AA:nan", 0, "not a decimal number"),
    ("AA:1e-3", "AA:1e-3", 0, "not a decimal number"),
    ("AA,AA:0.5", "AA:0.5", 3, "weight 0.5, but 'AA' at position 0 gave it 1"),
    ("QQ+,KK:0.5", "KK:0.5", 4, "gives KsKh weight 0.5, but 'QQ+' at position 0"),
    ("AKs:0.5,AsKs", "AsKs", 8, "gives AsKs weight 1"),
    ("AA,,KK", "", 3, "empty entry"),
    ("AA,", "", 3, "empty entry"),
    ("AAs", "AAs", 0, "a pair has no s/o suffix"),
    ("KAs", "KAs", 0, "higher rank first (AKs)"),
    ("T9s-65o", "T9s-65o", 0, "same kind"),
    ("T9s-64s", "T9s-64s", 0, "same high card"),
    ("AA-KQs", "AA-KQs", 0, "same kind"),
    ("As Kh", "As Kh", 0, "not a hand"),
])
def test_errors_name_the_entry_and_its_position(text, token, position, reason):
    with pytest.raises(RangeError, match=re.escape(reason)) as info:
        parse_range(text)
    assert (info.value.token, info.value.position) == (token, position)
    assert isinstance(info.value, ValueError)
    assert f"{token!r} at position {position}" in str(info.value)


@pytest.mark.parametrize("weights, message", [
    ({"AA": 1.2}, "AA: weight 1.2 is outside"),
    ({"AA": -0.01}, "outside"),
    ({"AA": float("nan")}, "outside"),
    ({"AA": "half"}, "not a number"),
    ({"AXs": 0.5}, "neither a hand class"),
    ({(51, 51): 0.5}, "card As used twice"),
    ({(51, 52): 0.5}, "outside 0..51"),
    ({51: 0.5}, "1 cards"),
    ({"AsKhQd": 0.5}, "3 cards"),
    ({"AsKh": 0.5, (46, 51): 0.25}, "AsKh is given two different weights"),
    ({"AKs": 0.5, "AsKs": 1}, "AsKs is given two different weights"),
])
def test_format_errors(weights, message):
    with pytest.raises(ValueError, match=message):
        format_range(weights)


def test_format_digits_must_be_sensible():
    for digits in (0, 13, 2.0):
        with pytest.raises(ValueError, match="digits"):
            format_range({"AA": 0.5}, digits=digits)


def test_parse_wants_text():
    with pytest.raises(TypeError, match="str"):
        parse_range(["AA"])


def test_every_suit_letter_reads():
    for a in SUIT_CHARS:
        for b in SUIT_CHARS:
            if a != b:
                assert list(parse_range(f"A{a}A{b}")) == [key(f"A{a}A{b}")]
