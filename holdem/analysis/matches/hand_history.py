"""Hand histories in the Poker Hand History format (PHH), the open format of PokerKit's authors
(Kim 2024, https://phh.readthedocs.io): what ``play --history`` and ``eval_blueprint --history``
write.

PHH is TOML. One hand is a set of fields; the multi-hand form (``.phhs``) puts each hand in a
table named by its number, ``[1]``, ``[2]``, ..., which PokerKit reads with
``HandHistory.load_all``. holdem writes one such file per session (``play``) or per run of
``eval_blueprint`` (the first hands of each match), so a session stays one file, and rewrites it
whole through :func:`holdem.fileio.atomic_open` after every hand: a crash leaves the previous
version, never a half-written one.

Each hand has the fields a No-Limit Hold'em hand needs (``variant = "NT"``, ``antes``,
``blinds_or_straddles``, ``min_bet`` = the big blind, ``starting_stacks``, ``actions``) and
``hand`` (its number in the file: a session's hands, or ``eval_blueprint``'s matches one
after the other, never restarting with a match), ``seat_count``, ``seats``, ``players``,
``finishing_stacks`` and, for
matches, ``event`` and ``_deal`` (the duplicate deal the hand belongs to; fields starting with
``_`` are PHH's user-defined fields). Actions: every player's hole cards (``d dh p1 AcKd``), the
decisions (``p2 cbr 250`` raises to 250, ``p1 cc`` checks or calls, ``p1 f`` folds), the board as
it is dealt (``d db 7h8h9h``) and at a showdown every remaining hand shown (``p1 sm AcKd``) in
PokerKit's order: before the rest of the board when the betting stopped early (all-in).

Players are listed in PHH's order, by position: p1 = small blind, then clockwise, the button last;
heads-up the blinds are reverse-assigned, so p1 is the big blind and p2 the small blind and
button. holdem's seats run 0 = small blind, 1 = big blind, ..., n-1 = button (heads-up 0 = small
blind = button), so 3+ handed seat q is p(q+1) and heads-up seat 0 is p2. Amounts are integer
chips as the game counts them (the file's opening comment says how many make a big blind); a raise
amount is the street total after it, as in holdem's own records.

Where PokerKit's rules differ from holdem's (the game's rules engine, ``game.cards.engine``),
``finishing_stacks`` holds holdem's result. Two differences, neither of which changes a heads-up
hand: a pot split three or more ways gives its odd chips one each from the first seat left of the
button in holdem, all to the first winner in PokerKit; and holdem lets a player raise when every
opponent left can only call all-in (the excess comes back), which PokerKit refuses, but only uneven
stacks allow it and ``play`` and the matches deal even ones.
"""

from dataclasses import dataclass, field
from pathlib import Path

from holdem.fileio import atomic_open
from holdem.games.tree import ActionCode

VERBS = {ActionCode.FOLD: "f", ActionCode.CALL: "cc", ActionCode.RAISE: "cbr"}
"""PHH's verb of each action code of a :data:`holdem.games.match_kernels.HandLog`."""
SIGNATURE = "# Poker Hand History (PHH) written by holdem"
"""The first line of every file written here; an existing file without it is never replaced."""


@dataclass(frozen=True)
class PlayedHand:
    """One hand as played, in holdem's seats (seat 0 = small blind; heads-up also the button).

    ``actions``: (street, seat, verb, to) per decision, verb one of ``f``, ``cc``, ``cbr`` and
    ``to`` the seat's street commitment after it (blinds included, antes not). ``board``: the
    five cards as dealt (the file shows those the hand reached). ``net``: chips won per seat.
    ``seats``: the physical seat number of each holdem seat (who sits where while the button
    moves). ``extra``: more PHH fields (``event``, user-defined ``_name`` fields)."""

    stacks: tuple
    small_blind: int
    big_blind: int
    ante: int
    hole: tuple
    board: tuple
    actions: tuple
    net: tuple
    players: tuple
    seats: tuple
    number: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def num_players(self):
        return len(self.stacks)


# -- hands from holdem's games ------------------------------------------------------------------
def hand_from_state(state, players, seats, number, **extra):
    """The :class:`PlayedHand` of a finished hand state of the game's rules engine
    (``game.cards.engine.HandState``)."""
    verbs = {"FOLD": "f", "CHECK": "cc", "CALL": "cc", "BET": "cbr", "RAISE": "cbr"}
    config = state.config
    actions = tuple((int(r.street), r.player, verbs[r.kind.name], r.amount)
                    for r in state.actions)
    return PlayedHand(stacks=tuple(config.stacks), small_blind=config.small_blind,
                      big_blind=config.big_blind, ante=config.ante,
                      hole=tuple(tuple(h) for h in state.hole_cards),
                      board=tuple(state.full_board), actions=actions,
                      net=tuple(state.payoffs()), players=tuple(players), seats=tuple(seats),
                      number=number, extra=extra)


def hands_from_log(log, table, name_a, name_b, first_number=1, **extra):
    """The hands of a :data:`holdem.games.match_kernels.HandLog` of a match played on
    ``table`` (the game's ``cards.table``, :class:`holdem.games.interface.Units`: stakes in big
    blinds, ``chips_per_bb``). A sits in physical seat 1, the opponent's seats follow clockwise; the
    players are ``A: name_a`` and ``B: name_b`` (B1, B2, ... with 3+ players). Hands are numbered
    from ``first_number`` (a file holding several matches numbers them on); each gets the field
    ``_deal``, its duplicate deal in its match."""
    hands_count, num_players = log.net.shape
    stack, sb, bb, ante = (table.chips(x) for x in (table.stack, table.small_blind,
                                                     table.big_blind, table.ante))
    hands = []
    for h in range(hands_count):
        seat_a = int(log.seat_a[h])
        seats = tuple((q - seat_a) % num_players + 1 for q in range(num_players))
        names = tuple(f"A: {name_a}" if s == 1 else f"B: {name_b}" if num_players == 2 else
                      f"B{s - 1}: {name_b}" for s in seats)
        decisions = log.actions[h, :int(log.num_actions[h])].tolist()
        hands.append(PlayedHand(
            stacks=(stack,) * num_players, small_blind=sb, big_blind=bb, ante=ante,
            hole=tuple(tuple(cards) for cards in log.hole[h].tolist()),
            board=tuple(log.board[h].tolist()),
            actions=_street_commitments(decisions, num_players, sb, bb, ante),
            net=tuple(log.net[h].tolist()), players=names, seats=seats,
            number=first_number + h, extra={**extra, "_deal": h // num_players + 1}))
    return hands


def _street_commitments(decisions, num_players, sb, bb, ante):
    """(street, seat, verb, to) from a log's (street, seat, code, total contribution)."""
    total = [ante] * num_players
    total[0] += sb
    total[1] += bb
    street_start, street = [ante] * num_players, 0
    out = []
    for s, seat, code, contrib in decisions:
        if s != street:
            street_start, street = list(total), s
        if code != ActionCode.FOLD:
            total[seat] = contrib
        out.append((s, seat, VERBS[code], total[seat] - street_start[seat]))
    return tuple(out)


# -- PHH text -----------------------------------------------------------------------------------
def phh_order(num_players):
    """holdem's seats in PHH's player order (p1 first)."""
    return (1, 0) if num_players == 2 else tuple(range(num_players))


def phh_actions(hand):
    """The PHH ``actions`` of a hand (module docstring)."""
    order = phh_order(hand.num_players)
    player = {seat: f"p{i + 1}" for i, seat in enumerate(order)}
    out = [f"d dh {player[seat]} {_cards(hand.hole[seat])}" for seat in order]
    dealt = 0

    def deal_to(street):
        nonlocal dealt
        while dealt < street:
            dealt += 1
            out.append(f"d db {_cards(hand.board[(0, 3, 4, 5)[dealt - 1]:(0, 3, 4, 5)[dealt]])}")

    folded = set()
    for street, seat, verb, to in hand.actions:
        deal_to(street)
        out.append(f"{player[seat]} {verb}" + (f" {to}" if verb == "cbr" else ""))
        if verb == "f":
            folded.add(seat)
    if hand.num_players - len(folded) > 1:
        for seat in _showdown_order(hand, order, folded):
            out.append(f"{player[seat]} sm {_cards(hand.hole[seat])}")
        deal_to(3)
    return out


def _showdown_order(hand, order, folded):
    """Who shows first, as PokerKit orders a showdown: the last bettor or raiser of the last
    betting round, else its first player in position (preflop the one after the big blind,
    later p1), then clockwise."""
    last = hand.actions[-1][0] if hand.actions else 0
    start = 0 if last else (order.index(1) + 1) % len(order)
    for street, seat, verb, _ in hand.actions:
        if street == last and verb == "cbr":
            start = order.index(seat)
    rotated = order[start:] + order[:start]
    return [seat for seat in rotated if seat not in folded]


def _cards(cards):
    from holdem.cards import format_card

    return "".join(format_card(c) for c in cards)


def phh_fields(hand):
    """The PHH fields of a hand, in the order they are written: (name, value) pairs."""
    order = phh_order(hand.num_players)
    blinds = [hand.small_blind, hand.big_blind] + [0] * (hand.num_players - 2)
    fields = [("variant", "NT"), ("antes", [hand.ante] * hand.num_players),
              ("blinds_or_straddles", blinds), ("min_bet", hand.big_blind),
              ("starting_stacks", [hand.stacks[s] for s in order]),
              ("actions", phh_actions(hand)), ("hand", hand.number),
              ("seat_count", hand.num_players), ("seats", [hand.seats[s] for s in order]),
              ("players", [hand.players[s] for s in order]),
              ("finishing_stacks", [hand.stacks[s] + hand.net[s] for s in order])]
    return fields + sorted(hand.extra.items(), key=lambda kv: kv[0].startswith("_"))


def dumps(hands, comment=()):
    """The PHH text of ``hands`` in the multi-hand form (tables ``[1]``, ``[2]``, ...), after
    :data:`SIGNATURE` and the lines of ``comment`` as TOML comments."""
    lines = [SIGNATURE] + [f"# {line}".rstrip() for line in comment]
    for index, hand in enumerate(hands, 1):
        lines += ["", f"[{index}]"]
        for name, value in phh_fields(hand):
            lines.append(f"{name} = {_toml(value, multiline=name == 'actions')}")
    return "\n".join(lines) + "\n"


def _toml(value, multiline=False):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _toml_string(value)
    items = [_toml(v) for v in value]
    if multiline and items:
        return "[\n" + "".join(f"  {item},\n" for item in items) + "]"
    return "[" + ", ".join(items) + "]"


def _toml_string(text):
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code < 0xE000:        # a lone surrogate (undecodable file name)
            out.append("\\ufffd")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


# -- files --------------------------------------------------------------------------------------
def check_replaceable(path):
    """Raise ValueError unless ``path`` is free or a hand history file written here (the only
    files :func:`write` replaces), so a mistyped name never overwrites other data."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a directory")
    if not path.exists():
        return
    try:
        with open(path, "rb") as f:
            first = f.readline()
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    if first.rstrip(b"\r\n") != SIGNATURE.encode():
        raise ValueError(f"{path} exists and is not a hand history written by holdem; "
                         "choose another file")


def write(path, hands, comment=()):
    """Write ``hands`` to ``path`` atomically (:func:`dumps`); returns the path."""
    with atomic_open(path, "w", encoding="utf-8") as f:
        f.write(dumps(hands, comment))
    return Path(path)


def chips_comment(big_blind):
    """The comment lines that state a file's unit and player order."""
    return (f"Amounts are chips: {big_blind} chips = 1 big blind.",
            "Players are in PHH order: p1 = small blind, the button last; heads-up p1 = big "
            "blind,", "p2 = small blind and button. seats: where each player sits.")


class HistoryFile:
    """A session's hand history file: :meth:`add` appends a hand and rewrites the file."""

    def __init__(self, path, comment=()):
        check_replaceable(path)
        self.path, self.comment, self.hands = Path(path), tuple(comment), []
        write(self.path, self.hands, self.comment)

    def add(self, hand):
        hands = self.hands + [hand]
        write(self.path, hands, self.comment)
        self.hands = hands
