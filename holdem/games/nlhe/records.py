"""The plain data of a No-Limit Hold'em hand: enums, table config, actions and frozen records.

Every amount in an `Action` or `ActionRecord` is a *total street commitment* ("raise to"): the
chips a player has in front of them on this street after the action, blinds included, antes
excluded. A hand's history is a list of these records, so it can be stored, compared and replayed.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum, unique

__all__ = [
    "Action", "ActionKind", "ActionRecord", "AwardRecord", "DealRecord", "IllegalActionError",
    "LegalActions", "PostKind", "PostRecord", "RankFn", "Record", "Street", "TableConfig",
]

MIN_PLAYERS = 2
MAX_PLAYERS = 6
NUM_CARDS = 52
NUM_BOARD_CARDS = 5

RankFn = Callable[[tuple[int, ...]], int]
"""Hand ranking: seven cards (the player's two hole cards, then the five board cards) -> int;
higher is stronger, equal hands rank equal."""


@unique
class Street(IntEnum):
    """A betting round."""

    PREFLOP = 0
    """Hole cards dealt and blinds posted; no board cards."""
    FLOP = 1
    """Three board cards."""
    TURN = 2
    """Fourth board card."""
    RIVER = 3
    """Fifth and last board card; the hand ends after this round."""

    @property
    def num_board_cards(self) -> int:
        """Board cards visible during this street."""
        return (0, 3, 4, 5)[self]


@unique
class ActionKind(IntEnum):
    """What a player does when it is their turn."""

    FOLD = 0
    """Give up the hand, facing a bet."""
    CHECK = 1
    """Pass when there is nothing to call."""
    CALL = 2
    """Match the highest commitment (or put in the whole stack if it is smaller)."""
    BET = 3
    """First wager of a postflop street; amount = total street commitment after it."""
    RAISE = 4
    """Increase an existing wager (the big blind counts preflop); amount = raise-to total."""
    ALL_IN = 5
    """Put in the whole stack. Input only: it is resolved to CALL, BET or RAISE, and the record
    says ``is_all_in``."""


@unique
class PostKind(IntEnum):
    """A forced bet posted before the cards are dealt."""

    ANTE = 0
    """Dead chips from every player; not part of the street commitment."""
    SMALL_BLIND = 1
    """Posted by player 0; counts toward the preflop commitment."""
    BIG_BLIND = 2
    """Posted by player 1; counts toward the preflop commitment and sets the amount to call."""


class IllegalActionError(ValueError):
    """An action that the rules do not allow in this state; the message gives the reason."""


def check_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class TableConfig:
    """Stacks (chips at the start of the hand, per seat), blinds and ante."""

    stacks: tuple[int, ...]
    small_blind: int
    big_blind: int
    ante: int = 0

    def __post_init__(self) -> None:
        stacks = tuple(check_int(s, "stack") for s in self.stacks)
        object.__setattr__(self, "stacks", stacks)
        if not MIN_PLAYERS <= len(stacks) <= MAX_PLAYERS:
            raise ValueError(f"{len(stacks)} players; need {MIN_PLAYERS} to {MAX_PLAYERS}")
        if min(stacks) <= 0:
            raise ValueError(f"every stack must be positive, got {stacks}")
        sb, bb, ante = (check_int(x, n) for x, n in
                        ((self.small_blind, "small_blind"), (self.big_blind, "big_blind"),
                         (self.ante, "ante")))
        if not (bb > 0 and 0 <= sb <= bb and ante >= 0):
            raise ValueError(f"need 0 <= small blind <= big blind, big blind > 0, ante >= 0; "
                             f"got {sb}/{bb} ante {ante}")

    @property
    def num_players(self) -> int:
        return len(self.stacks)


@dataclass(frozen=True)
class Action:
    """A decision. ``amount`` is the total street commitment after it: required for BET and
    RAISE; optional for the others, and then checked against what the action implies."""

    kind: ActionKind
    amount: int | None = None

    @classmethod
    def fold(cls) -> Action:
        return cls(ActionKind.FOLD)

    @classmethod
    def check(cls) -> Action:
        return cls(ActionKind.CHECK)

    @classmethod
    def call(cls) -> Action:
        return cls(ActionKind.CALL)

    @classmethod
    def bet(cls, to: int) -> Action:
        return cls(ActionKind.BET, to)

    @classmethod
    def raise_to(cls, to: int) -> Action:
        return cls(ActionKind.RAISE, to)

    @classmethod
    def all_in(cls) -> Action:
        return cls(ActionKind.ALL_IN)


@dataclass(frozen=True)
class LegalActions:
    """What ``player`` may do. ``call_to`` is the street commitment after a call (0 if calling
    is not legal); bets/raises may go to any total in [``min_to``, ``max_to``] (both 0 if
    neither is legal); ``max_to`` is the all-in total and may be below a full raise."""

    player: int
    kinds: tuple[ActionKind, ...]
    call_to: int
    min_to: int
    max_to: int

    def __contains__(self, kind: object) -> bool:
        return kind in self.kinds

    def names(self) -> frozenset[str]:
        """The legal kinds by name, lower case (``fold``, ``check``, ``call``, ``bet``,
        ``raise``, ``all_in``): what a caller that knows no :class:`ActionKind` asks."""
        return frozenset(kind.name.lower() for kind in self.kinds)

    def action(self, kind: str, to: int | None = None) -> Action:
        """The :class:`Action` of the kind named ``kind`` (as :meth:`names` spells it)."""
        return Action(ActionKind[kind.upper()], to)


@dataclass(frozen=True)
class PostRecord:
    """A forced bet: ``amount`` chips (less than asked if the stack ran out)."""

    player: int
    kind: PostKind
    amount: int
    is_all_in: bool


@dataclass(frozen=True)
class ActionRecord:
    """A decision taken: ``amount`` is the street commitment after it, ``chips`` what moved
    from the stack. ``kind`` is never ALL_IN; ``is_all_in`` says the stack is now empty."""

    player: int
    street: Street
    kind: ActionKind
    amount: int
    chips: int
    is_all_in: bool


@dataclass(frozen=True)
class DealRecord:
    """Board cards revealed at the start of ``street``."""

    street: Street
    cards: tuple[int, ...]


@dataclass(frozen=True)
class AwardRecord:
    """``amount`` chips of pot ``pot_index`` (0 = main pot) go to ``player``."""

    player: int
    amount: int
    pot_index: int


Record = PostRecord | ActionRecord | DealRecord | AwardRecord
