"""Card encoding: every card is an int 0..51, ``card = rank * 4 + suit``.

    rank  0..12  ->  '2' '3' '4' '5' '6' '7' '8' '9' 'T' 'J' 'Q' 'K' 'A'
    suit  0..3   ->  'c' 'd' 'h' 's'   (clubs, diamonds, hearts, spades)

so '2c' = 0, '2s' = 3, 'Ac' = 48 and 'As' = 51; ``card >> 2`` is the rank, ``card & 3`` the suit.
A card's text is its rank letter (upper case for T J Q K A) followed by its suit letter (lower
case).
Arrays of cards use ``CARD_DTYPE`` (int8); the kernels accept any integer dtype.

Functions a person calls take cards as text (``"As Kd"``) or as ints (:func:`card_tuple`), and
their errors name cards as text (:func:`describe_cards`).
"""

import numpy as np

NUM_CARDS = 52
NUM_RANKS = 13
NUM_SUITS = 4
RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"
CARD_DTYPE = np.int8

COMBOS = np.array([(a, b) for a in range(NUM_CARDS) for b in range(a + 1, NUM_CARDS)],
                  dtype=np.int64)
"""The 1,326 combos (pairs of hole cards), int64[1326, 2], lower card first, in ascending
lexicographic order: the one order of every per-combo array (ranges, subgame vectors, LBR's
equities; ``holdem.analysis.lbr.equity_kernels.combo_of`` inverts it). Read-only."""
COMBOS.setflags(write=False)


def card_rank(card):
    """Rank 0..12 ('2'..'A') of a card or an integer array of cards."""
    return card >> 2


def card_suit(card):
    """Suit 0..3 ('c', 'd', 'h', 's') of a card or an integer array of cards."""
    return card & 3


def make_card(rank, suit):
    """The card of rank 0..12 and suit 0..3."""
    return rank * NUM_SUITS + suit


def _parse_token(token, text):
    rank, suit = (token[0].upper(), token[1].lower()) if len(token) == 2 else ("", "")
    if not (rank and rank in RANK_CHARS and suit in SUIT_CHARS):     # either case: "as", "AS"
        raise ValueError(
            f"bad card {token!r} in {text!r}: a card is a rank from {RANK_CHARS!r} followed by "
            f"a suit from {SUIT_CHARS!r}, e.g. 'As' or 'Td'")
    return make_card(RANK_CHARS.index(rank), SUIT_CHARS.index(suit))


def parse(text):
    """Cards from text such as ``"As Kd 7c"`` or ``"AsKd7c"`` -> 1-D ``CARD_DTYPE`` array.

    Whitespace between cards is optional, and case does not matter (``"as kd"``). Repeated
    cards are returned as given (the evaluator rejects them). Raises ValueError naming the
    first bad token.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse expects a str, got {type(text).__name__}")
    cards = []
    for chunk in text.split():
        for start in range(0, len(chunk), 2):
            cards.append(_parse_token(chunk[start:start + 2], text))
    return np.array(cards, dtype=CARD_DTYPE)


def format_card(card):
    """Text of one card, e.g. 51 -> 'As'."""
    card = int(card)
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card {card} is outside 0..{NUM_CARDS - 1}")
    return RANK_CHARS[card_rank(card)] + SUIT_CHARS[card_suit(card)]


def format_cards(cards):
    """Text of a sequence of cards separated by spaces, e.g. [51, 46, 20] -> 'As Kh 7c'.

    ``parse(format_cards(cards))`` returns the cards.
    """
    return " ".join(format_card(card) for card in np.asarray(cards).reshape(-1))


def card_tuple(cards, what="cards"):
    """Cards given as text (``"As Kd"``, see :func:`parse`), as a sequence of card texts
    (``["As", "Kd"]``) or as ints 0..51 -> tuple of ints. Raises ValueError naming ``what``."""
    if isinstance(cards, str):
        try:
            return tuple(int(c) for c in parse(cards))
        except ValueError as exc:
            raise ValueError(f"{what}: {exc}") from None
    out = []
    for card in np.asarray(cards, dtype=object).reshape(-1):
        if isinstance(card, str):
            out.extend(card_tuple(card, what))
            continue
        if isinstance(card, (bool, np.bool_)) or not isinstance(card, (int, np.integer)):
            raise ValueError(f"{what}: {card!r} is not a card (give text such as 'As Kd', or "
                             f"ints 0..{NUM_CARDS - 1})")
        if not 0 <= card < NUM_CARDS:
            raise ValueError(f"{what}: card {int(card)} is outside 0..{NUM_CARDS - 1}")
        out.append(int(card))
    return tuple(out)


def describe_cards(cards):
    """Text of cards for an error message: ``format_cards`` where every card is in 0..51, else
    the numbers as given."""
    values = np.asarray(cards).reshape(-1)
    if values.dtype.kind in "iu" and values.size and (values.min() < 0
                                                        or values.max() >= NUM_CARDS):
        return str(values.tolist())
    return format_cards(values) if values.size else "(none)"


def repeated_card(cards):
    """The text of the first card that occurs twice in ``cards`` (ints), or None."""
    seen = set()
    for card in np.asarray(cards).reshape(-1).tolist():
        if card in seen:
            return format_card(card)
        seen.add(card)
    return None


def random_hands(rng, num_hands, num_cards):
    """``num_hands`` uniformly random hands of ``num_cards`` distinct cards -> (num_hands,
    num_cards) ``CARD_DTYPE`` array, drawn from the ``numpy.random.Generator`` ``rng``."""
    if not 0 <= num_cards <= NUM_CARDS:
        raise ValueError(f"num_cards must be in 0..{NUM_CARDS}, got {num_cards}")
    if num_cards > 10:     # rejection below would redraw most rows
        deck = np.tile(np.arange(NUM_CARDS, dtype=CARD_DTYPE), (num_hands, 1))
        return np.ascontiguousarray(rng.permuted(deck, axis=1)[:, :num_cards])
    hands = np.empty((num_hands, num_cards), dtype=CARD_DTYPE)
    todo = np.arange(num_hands)
    while todo.size:       # draw with replacement, redraw rows holding a repeated card
        draw = rng.integers(0, NUM_CARDS, size=(todo.size, num_cards), dtype=CARD_DTYPE)
        ordered = np.sort(draw, axis=1)
        is_distinct = (ordered[:, 1:] != ordered[:, :-1]).all(axis=1)
        hands[todo[is_distinct]] = draw[is_distinct]
        todo = todo[~is_distinct]
    return hands
