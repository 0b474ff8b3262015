"""Range strings: the text form of a weighted range that PioSOLVER, GTO+ and Flopzilla read.

A range string is a comma-separated list of hands, each with an optional weight::

    AA,KK:0.5,AKs,AQo:0.25,AsKh:0.75

A hand is a class (``AA``, ``AKs`` suited, ``AKo`` offsuit: the 169 classes of
:mod:`holdem.analysis.ranges.charts`) or a combo (``AsKh``: two cards as :mod:`holdem.cards` writes
them, ranks ``23456789TJQKA``, suits ``cdhs``). A weight is a number in [0, 1]; an omitted weight
is 1 and a hand that is not written has weight 0. A class's weight is the weight of each of its
combos, so ``AKs:0.5`` and ``AsKs:0.5,AhKh:0.5,AdKd:0.5,AcKc:0.5`` are the same range.

What :func:`format_range` writes (and nothing else, so every tool reads it):

- Order: the pairs from ``AA`` down to ``22``, then the suited classes by high card and then
  kicker (``AKs, AQs, ..., A2s, KQs, ..., 32s``), then the offsuit classes in the same order
  (:data:`CLASS_ORDER`). Combos stand at their class's place, higher card first (``AsKh``), and
  within a class from the highest card down (``AsAh, AsAd, AsAc, AhAd, AhAc, AdAc``).
- Weights: rounded to ``digits`` decimals (:data:`DIGITS` = 4 by default: steps of 0.01 %,
  finer than a sampled blueprint strategy is accurate, and short), trailing zeros dropped
  (``0.5``). A hand whose weight rounds to 0 is left out; one that rounds to 1 is written
  without a weight.
- No shorthands and no spaces: ``AA,KK,QQ``, never ``QQ+``.

What :func:`parse_range` reads: the above, whitespace around entries and weights, and the
shorthands other tools write -- ``QQ+`` (QQ, KK, AA), ``A2s+`` (A2s..AKs), ``KTo+`` (KTo..KQo),
ranges with the same high card (``KQs-K9s``) or the same gap (``T9s-65s``, ``22-55``), and ``AK``
for both ``AKs`` and ``AKo`` (with ``AK+``, ``AK-AT``). A weight after a shorthand applies to
every hand it names. Hands may repeat with the same weight; a combo given two different weights
(``AA,AA:0.5``, ``AKs:0.5,AsKs``) is an error. Errors are :class:`RangeError` (a ValueError)
naming the entry and its position in the text.
"""

import math
import re

from holdem.analysis.ranges.charts import combos as class_combos
from holdem.analysis.ranges.charts import class_name
from holdem.cards import RANK_CHARS, card_tuple, format_card

DIGITS = 4          # decimals of a written weight: steps of 0.01 %

_PAIRS = tuple(class_name(i, i) for i in range(13))
_SUITED = tuple(class_name(r, c) for r in range(13) for c in range(r + 1, 13))
_OFFSUIT = tuple(class_name(c, r) for r in range(13) for c in range(r + 1, 13))
CLASS_ORDER = _PAIRS + _SUITED + _OFFSUIT
"""The 169 class names in the order :func:`format_range` writes them."""

_RANK = f"[{RANK_CHARS}]"
_CLASS_RE = re.compile(rf"({_RANK})({_RANK})([so]?)")
_WEIGHT_RE = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")


class RangeError(ValueError):
    """A range string that cannot be read: ``token`` (the entry as written) at ``position``
    (0-based offset of the entry in the text)."""

    def __init__(self, token, position, reason):
        super().__init__(f"range: {token!r} at position {position}: {reason}")
        self.token, self.position, self.reason = token, position, reason


def _combo_key(cards):
    """A combo as (higher card, lower card) ints; ValueError for a repeated card."""
    hi, lo = sorted(cards, reverse=True)
    if hi == lo:
        raise ValueError(f"card {format_card(hi)} used twice in one combo")
    return hi, lo


def _class_key_combos(name):
    """The combos of a class, each as (higher card, lower card), highest first."""
    return sorted((_combo_key(c) for c in class_combos(name)), reverse=True)


_COMBOS_OF = {name: _class_key_combos(name) for name in CLASS_ORDER}


def combo_text(combo):
    """A combo's text, higher card first: ``(51, 46)`` or ``(46, 51)`` -> ``'AsKh'``."""
    return "".join(format_card(c) for c in _combo_key(combo))


# -- writing --------------------------------------------------------------------------------
def _weight_text(hand, weight, digits):
    """'' for a weight that rounds to 1, '0' for one that rounds to 0, else e.g. '0.25'."""
    try:
        value = float(weight)
    except (TypeError, ValueError):
        raise ValueError(f"{hand}: weight {weight!r} is not a number") from None
    text = f"{value:.{digits}f}" if math.isfinite(value) else ""
    if not text or not 0 <= float(text) <= 1:
        raise ValueError(f"{hand}: weight {weight!r} is outside [0, 1]")
    if float(text) == 0:
        return "0"
    return "" if float(text) == 1 else text.rstrip("0")


def _combo_weights(weights, digits):
    """{(hi, lo): weight text} of a mapping keyed by classes or combos (ints or text)."""
    out = {}
    for key, weight in weights.items():
        if isinstance(key, str) and key in _COMBOS_OF:
            hands = _COMBOS_OF[key]
        else:
            try:
                cards = card_tuple(key, "combo")
                if len(cards) != 2:
                    raise ValueError(f"{len(cards)} cards")
                hands = [_combo_key(cards)]
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{key!r} is neither a hand class (AA, AKs, AKo) nor a combo "
                                 f"((card, card) or 'AsKh'): {exc}") from None
        text = _weight_text(key if len(hands) > 1 else combo_text(hands[0]), weight, digits)
        for combo in hands:
            if out.get(combo, text) != text:
                raise ValueError(f"combo {combo_text(combo)} is given two different weights")
            out[combo] = text
    return out


def format_range(weights, combos=False, digits=DIGITS):
    """The range string of ``weights``: a mapping {class name: weight} (``"AKs"``) or
    {combo: weight}, a combo being a pair of card ints of :mod:`holdem.cards` (either order) or
    its text (``"AsKh"``); classes and combos may be mixed where they agree. Weights are numbers
    in [0, 1]; absent hands have weight 0.

    With ``combos`` every combo is written on its own (a class's weight applies to each of its
    combos). Without, classes are written as classes, and combos as their class wherever all the
    class's combos have the same (rounded) weight. Order and precision: see the module
    docstring. ``parse_range(format_range(w)) == w`` for class weights given at that precision
    (weight-0 entries aside); ``parse_range(format_range(w), combos=True) == w`` for combo
    weights with the higher card first. Raises ValueError for an unknown class or card, a weight
    not in [0, 1] after rounding, a combo with a repeated card, or a combo given two weights.
    """
    if not isinstance(digits, int) or not 1 <= digits <= 12:
        raise ValueError(f"digits must be an int in 1..12, got {digits!r}")
    if not combos and all(isinstance(key, str) and key in _COMBOS_OF for key in weights):
        texts = {name: _weight_text(name, w, digits) for name, w in weights.items()}
        entries = [(name, texts[name]) for name in CLASS_ORDER if name in texts]
    else:
        texts = _combo_weights(weights, digits)
        entries = []
        for name in CLASS_ORDER:
            own = [(combo_text(c), texts.get(c, "0")) for c in _COMBOS_OF[name]]
            if not combos and len({t for _, t in own}) == 1:
                own = [(name, own[0][1])]
            entries += own
    return ",".join(hand + (f":{text}" if text else "") for hand, text in entries
                    if text != "0")


# -- reading --------------------------------------------------------------------------------
def _entries(text):
    """(entry as written, its offset, hand part, weight part or None) for each entry."""
    position = 0
    for piece in text.split(","):
        token = piece.strip()
        start = position + len(piece) - len(piece.lstrip())
        position += len(piece) + 1
        if not token:
            raise RangeError(token, start, "empty entry (two commas, or a comma at an end)")
        hand, colon, weight = token.partition(":")
        yield token, start, hand.strip(), weight.strip() if colon else None


def _parse_weight(token, position, text):
    if text is None:
        return 1.0
    if not _WEIGHT_RE.fullmatch(text):
        raise RangeError(token, position, f"weight {text!r} is not a decimal number")
    value = float(text)
    if not 0 <= value <= 1:
        raise RangeError(token, position, f"weight {text} is outside [0, 1]")
    return value


def _why_not_a_class(hand):
    if 2 <= len(hand) <= 3:
        bad = [c for c in hand[:2] if c not in RANK_CHARS]
        if bad:
            return f"unknown rank {bad[0]!r} (ranks are {RANK_CHARS})"
        return f"unknown suffix {hand[2]!r} (s suited, o offsuit)"
    return ("not a hand: write a class (AA, AKs, AKo, AK), a combo (AsKh), QQ+ / A2s+, or a "
            "range such as T9s-65s or 22-55")


def _class_parts(hand, token, position):
    """(high rank, low rank, suffixes) of one class such as 'AKs', 'AK', 'TT' (ranks 0..12)."""
    match = _CLASS_RE.fullmatch(hand)
    if match is None:
        raise RangeError(token, position, _why_not_a_class(hand))
    hi, lo = RANK_CHARS.index(match[1]), RANK_CHARS.index(match[2])
    if hi == lo:
        if match[3]:
            raise RangeError(token, position, "a pair has no s/o suffix")
        return hi, lo, ("",)
    if hi < lo:
        raise RangeError(token, position, f"write the higher rank first "
                                          f"({match[2]}{match[1]}{match[3]})")
    return hi, lo, (match[3],) if match[3] else ("s", "o")


def _class_names(hi, lo, suffixes):
    if hi == lo:
        return [RANK_CHARS[hi] * 2]
    return [RANK_CHARS[hi] + RANK_CHARS[lo] + s for s in suffixes]


def _expand(hand, token, position):
    """The class names that ``hand`` (a class, ``X+`` or ``X-Y``) stands for."""
    if hand.endswith("+"):
        hi, lo, suffixes = _class_parts(hand[:-1], token, position)
        if hi == lo:
            return [n for r in range(hi, 13) for n in _class_names(r, r, suffixes)]
        return [n for k in range(lo, hi) for n in _class_names(hi, k, suffixes)]
    if "-" not in hand:
        return _class_names(*_class_parts(hand, token, position))
    first, _, last = (part.strip() for part in hand.partition("-"))
    (h1, l1, s1), (h2, l2, s2) = (_class_parts(p, token, position) for p in (first, last))
    if s1 != s2:
        raise RangeError(token, position, "both ends of a range must be the same kind "
                                          "(pairs, suited or offsuit)")
    if h1 == h2 or h1 - l1 == h2 - l2:             # a kicker range, or the same gap
        steps = range(min(l1, l2), max(l1, l2) + 1)
        pairs = [(h1, k) for k in steps] if h1 == h2 else [(k + h1 - l1, k) for k in steps]
        return [n for h, k in pairs for n in _class_names(h, k, s1)]
    raise RangeError(token, position, "a range needs the same high card (KQs-K9s) or the same "
                                      "gap (T9s-65s, 22-55) at both ends")


def _hand_combos(hand, token, position):
    """(combos, is_combo) of one hand of an entry."""
    if len(hand) == 4 and hand[1].islower() and hand[3].islower():
        try:
            return [_combo_key(card_tuple(hand, "combo"))], True
        except ValueError as exc:
            raise RangeError(token, position, str(exc)) from None
    return [c for name in _expand(hand, token, position) for c in _COMBOS_OF[name]], False


def parse_range(text, combos=None):
    """The weights of a range string (see the module docstring for what it accepts).

    Returns {class name: weight} or {(higher card, lower card): weight} with card ints of
    :mod:`holdem.cards`, holding only the hands of weight above 0, in :func:`format_range`'s
    order: per class when ``combos`` is False, per combo when it is True, and with the default
    None per combo exactly when the text writes a combo. Raises :class:`RangeError` for an entry
    that cannot be read (unknown rank or suit, a card twice in a combo, a weight not in [0, 1],
    a combo given two different weights), and ValueError when classes are asked for but some
    class's combos have different weights.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_range expects a str, got {type(text).__name__}")
    weights, origin, has_combo = {}, {}, False
    if text.strip():
        for token, position, hand, weight_text in _entries(text):
            weight = _parse_weight(token, position, weight_text)
            hand_combos, is_combo = _hand_combos(hand, token, position)
            has_combo |= is_combo
            for combo in hand_combos:
                if weights.get(combo, weight) != weight:
                    earlier, at = origin[combo]
                    raise RangeError(token, position, f"gives {combo_text(combo)} weight "
                                     f"{weight:g}, but {earlier!r} at position {at} gave it "
                                     f"{weights[combo]:g}")
                weights[combo] = weight
                origin.setdefault(combo, (token, position))
    if combos or (combos is None and has_combo):
        return {c: weights[c] for name in CLASS_ORDER for c in _COMBOS_OF[name]
                if weights.get(c, 0) > 0}
    out = {}
    for name in CLASS_ORDER:
        found = {weights.get(c, 0.0) for c in _COMBOS_OF[name]}
        if len(found) > 1:
            raise ValueError(f"{name}: its combos have different weights in this range; "
                             "read it with combos=True")
        if found != {0.0}:
            out[name] = found.pop()
    return out
