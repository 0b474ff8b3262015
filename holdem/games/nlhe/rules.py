"""Exact No-Limit Texas Hold'em rules for 2 to 6 players, in plain Python (no numba).

This is the reference the abstract betting game is derived from and tested against, and what the
analysis tools use to describe real spots. Speed is not a goal; being obviously right is.

Seats. Player 0 posts the small blind, player 1 the big blind, then 2 = UTG ... up to the button
(player n-1). Heads-up, player 0 is both small blind and button: it acts first preflop and second
on later streets. 3+ handed, player 2 acts first preflop (with 3 players it is the button) and
the first player still able to act from player 0 on acts first on the flop, turn and river.

Amounts. Chips are ints. Every amount in an `Action` or `ActionRecord` is a *total street
commitment* ("raise to"): the chips the player has in front of them on this street after the
action, blinds included, antes excluded (antes are dead money).

Legality. Each action X has ``verify_X`` (raises `IllegalActionError` with the reason),
``can_X`` (bool; a bet's is ``can(Action.bet(to))``) and ``do_X`` (applies it and returns a
frozen `ActionRecord`);
``verify``/``can``/``apply`` take an `Action` and dispatch. The rules:

* A bet is at least the big blind; a raise must increase the amount to call by at least the
  largest bet or raise increment so far this street (never less than the big blind). A player
  may always go all-in for less.
* An all-in that is not a full raise does not reopen the betting: a player who already acted may
  re-raise only if the amount to call grew by at least a full raise since they last acted
  (several short all-ins can add up, as in TDA rule 47). Players yet to act may raise.
* Preflop the amount to call is the full big blind even when the big blind was posted short.
* Nobody may bet or raise when no opponent could respond (all others folded or all-in).
  Folding is only offered when facing a bet (checking is free).
* A betting round ends when every player still able to act has acted and matched the highest
  commitment. When at most one player can act and bets are matched, the remaining board is dealt
  with no more betting. The last player standing wins everything without a showdown.
* Showdown: side pots by commitment levels and odd chips as described in `holdem.games.nlhe.pots`.

Cards are ints 0..51, card = rank * 4 + suit (rank 0 = '2' .. 12 = 'A'; suits c, d, h, s); hole
cards and the board may also be given as text (``hole_cards=["As Kd", "7c 7d"], board="2c 7h 9d"``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from holdem.cards import card_tuple, describe_cards, repeated_card
from holdem.games.nlhe.pots import Pot, side_pots, split_pot
from holdem.games.nlhe.records import (
    NUM_BOARD_CARDS, NUM_CARDS, Action, ActionKind, ActionRecord,
    AwardRecord, DealRecord, IllegalActionError, LegalActions, PostKind, PostRecord, RankFn,
    Record, Street, TableConfig, check_int,
)

__all__ = ["HandState", "deal_cards", "seat_name"]

_FROM_BUTTON = ("button", "cutoff", "hijack", "lojack")


def seat_name(seat: int, num_players: int) -> str:
    """The usual name of a seat: 'small blind', 'big blind', then 'UTG' (first to act preflop),
    ..., 'hijack', 'cutoff', 'button'; heads-up seat 0 is 'small blind (button)'."""
    if not 0 <= seat < num_players:
        raise ValueError(f"seat {seat} is outside 0..{num_players - 1}")
    if num_players == 2:
        return ("small blind (button)", "big blind")[seat]
    if seat < 2:
        return ("small blind", "big blind")[seat]
    back = num_players - 1 - seat                    # seats between it and the button
    if back == 0 or (seat > 2 and back < len(_FROM_BUTTON)):
        return _FROM_BUTTON[back]
    return "UTG" if seat == 2 else f"UTG+{seat - 2}"


def _check_cards(cards: str | Sequence[int], what: str) -> tuple[int, ...]:
    if isinstance(cards, str):
        return card_tuple(cards, what)
    out = tuple(check_int(c, what) for c in cards)
    if any(not 0 <= c < NUM_CARDS for c in out):
        raise ValueError(f"{what} must be card ints 0..51 or text such as 'As Kd', got {out}")
    return out


def deal_cards(num_players: int, hole_cards: Sequence[Sequence[int]] | None,
               board: Sequence[int] | None, rng: np.random.Generator | None,
               ) -> tuple[tuple[tuple[int, int], ...], tuple[int, ...]]:
    """Hole cards per player and the five board cards: given ones kept, missing ones drawn from
    ``rng`` (a numpy Generator; never the global RNG). Raises ValueError on bad or repeated
    cards, or when cards are missing and no rng is given."""
    holes = None
    if hole_cards is not None:
        holes = tuple(_check_cards(h, "hole cards") for h in hole_cards)
        if len(holes) != num_players or any(len(h) != 2 for h in holes):
            raise ValueError(f"need two hole cards for each of {num_players} players")
    given_board = _check_cards(board if board is not None else (), "board")
    if len(given_board) > NUM_BOARD_CARDS:
        raise ValueError(f"a board has at most 5 cards, got {len(given_board)}")
    used = [c for h in holes or () for c in h] + list(given_board)
    if len(set(used)) != len(used):
        raise ValueError(f"a card is dealt twice: {repeated_card(used)} in "
                         f"{describe_cards(used)}")
    num_missing = (0 if holes else 2 * num_players) + NUM_BOARD_CARDS - len(given_board)
    drawn: list[int] = []
    if num_missing:
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"{num_missing} cards are not given: pass rng=np.random.Generator")
        deck = np.setdiff1d(np.arange(NUM_CARDS), used)
        drawn = [int(c) for c in rng.permutation(deck)[:num_missing]]
    if holes is None:
        holes = tuple(tuple(drawn[2 * p:2 * p + 2]) for p in range(num_players))
        drawn = drawn[2 * num_players:]
    return holes, given_board + tuple(drawn)  # type: ignore[return-value]


def _default_rank_fn(cards: tuple[int, ...]) -> int:
    from holdem.evaluator import rank7  # lazy: the evaluator is only needed at showdown

    return int(rank7(cards))


class HandState:
    """One hand of No-Limit Hold'em from the blinds to the payoffs.

    Construction posts antes and blinds and deals (``hole_cards``/``board`` given explicitly,
    the rest from ``rng``). The hand then advances only through ``do_X``/``apply``; street
    changes, run-outs and the showdown happen automatically. ``rank_fn`` ranks seven cards
    (default: ``holdem.evaluator.rank7``, imported when first needed).
    """

    def __init__(self, config: TableConfig, *, hole_cards: Sequence[Sequence[int]] | None = None,
                 board: Sequence[int] | None = None, rng: np.random.Generator | None = None,
                 rank_fn: RankFn | None = None) -> None:
        n = config.num_players
        self.config = config
        self._hole_cards, self._full_board = deal_cards(n, hole_cards, board, rng)
        self._rank_fn = rank_fn or _default_rank_fn
        self._stacks = list(config.stacks)
        self._street_commitments = [0] * n
        self._total_commitments = [0] * n
        self._folded = [False] * n
        self._street = Street.PREFLOP
        self._bet_to = 0  # the highest commitment to match this street
        self._min_increment = config.big_blind  # largest bet/raise increment this street
        self._acted_at: list[int | None] = [None] * n  # bet_to when each player last acted
        self._to_act: int | None = None
        self._history: list[Record] = []
        self._payoffs: tuple[int, ...] | None = None
        self._post_forced_bets()
        self._bet_to = config.big_blind
        self._begin_round(first=2 % n)

    # ---- read-only view ------------------------------------------------------------------
    @property
    def num_players(self) -> int:
        return self.config.num_players

    @property
    def street(self) -> Street:
        return self._street

    @property
    def board(self) -> tuple[int, ...]:
        """Board cards visible now (all five after a showdown)."""
        return self._full_board[:self._street.num_board_cards]

    @property
    def full_board(self) -> tuple[int, ...]:
        """All five board cards as dealt, including those not revealed yet."""
        return self._full_board

    @property
    def hole_cards(self) -> tuple[tuple[int, int], ...]:
        return self._hole_cards

    @property
    def stacks(self) -> tuple[int, ...]:
        """Chips behind (not committed); after the hand, the final stacks."""
        return tuple(self._stacks)

    @property
    def street_commitments(self) -> tuple[int, ...]:
        return tuple(self._street_commitments)

    @property
    def total_commitments(self) -> tuple[int, ...]:
        """Everything put in this hand, antes included."""
        return tuple(self._total_commitments)

    @property
    def folded(self) -> tuple[bool, ...]:
        return tuple(self._folded)

    @property
    def all_in(self) -> tuple[bool, ...]:
        return tuple(not f and s == 0 for f, s in zip(self._folded, self._stacks))

    @property
    def bet_to(self) -> int:
        """The street commitment a player must reach to call."""
        return self._bet_to

    @property
    def min_increment(self) -> int:
        """The smallest full raise increment now (largest increment so far, >= big blind)."""
        return self._min_increment

    @property
    def to_act(self) -> int | None:
        """The player whose turn it is; None once the hand is over."""
        return self._to_act

    @property
    def is_terminal(self) -> bool:
        return self._payoffs is not None

    @property
    def history(self) -> tuple[Record, ...]:
        return tuple(self._history)

    @property
    def actions(self) -> tuple[ActionRecord, ...]:
        """The decisions only (no posts, deals or awards)."""
        return tuple(r for r in self._history if isinstance(r, ActionRecord))

    @property
    def pot_total(self) -> int:
        """Chips committed this hand (after the hand: what was awarded)."""
        return sum(self._total_commitments)

    def pots(self) -> tuple[Pot, ...]:
        """Main pot then side pots from the total commitments (after the hand: as awarded)."""
        return side_pots(self._total_commitments, self._folded)

    def payoffs(self) -> tuple[int, ...]:
        """Net chips won (+) or lost (-) per player; they sum to zero. Only once terminal."""
        if self._payoffs is None:
            raise ValueError("the hand is not over")
        return self._payoffs

    def legal_actions(self) -> LegalActions:
        """What the player to act may do, with the bet/raise-to range."""
        player = self._require_turn()
        kinds = tuple(k for k in ActionKind if self.can(Action(k, self._default_amount(k))))
        wager = next((k for k in (ActionKind.BET, ActionKind.RAISE) if k in kinds), None)
        return LegalActions(
            player, kinds,
            call_to=self._call_to(player) if ActionKind.CALL in kinds else 0,
            min_to=self._min_to(player) if wager is not None else 0,
            max_to=self._all_in_to(player) if wager is not None else 0)

    # ---- verify / can / do, one triple per action -----------------------------------------
    def verify_fold(self) -> None:
        p = self._require_turn()
        if self._street_commitments[p] >= self._bet_to:
            raise IllegalActionError(f"player {p} cannot fold: there is nothing to call (check)")

    def verify_check(self) -> None:
        p = self._require_turn()
        if self._street_commitments[p] < self._bet_to:
            raise IllegalActionError(
                f"player {p} cannot check: facing {self._bet_to} with {self._street_commitments[p]}"
                f" committed (call, raise or fold)")

    def verify_call(self) -> int:
        """Returns the street commitment after the call."""
        p = self._require_turn()
        if self._street_commitments[p] >= self._bet_to:
            raise IllegalActionError(f"player {p} cannot call: there is nothing to call (check)")
        return self._call_to(p)

    def verify_bet(self, amount: int) -> None:
        p = self._require_turn()
        if self._bet_to > 0:
            raise IllegalActionError(
                f"player {p} cannot bet: there is already a bet to {self._bet_to} (raise instead)")
        self._verify_wager(p, check_int(amount, "amount"), "bet")

    def verify_raise(self, amount: int) -> None:
        p = self._require_turn()
        if self._bet_to == 0:
            raise IllegalActionError(f"player {p} cannot raise: there is no bet (bet instead)")
        self._verify_wager(p, check_int(amount, "amount"), "raise")

    def verify_all_in(self) -> tuple[ActionKind, int]:
        """Returns what the all-in amounts to: (CALL, BET or RAISE, street commitment after)."""
        p = self._require_turn()
        to = self._all_in_to(p)
        if to <= self._bet_to:
            self.verify_call()
            return ActionKind.CALL, to
        kind = ActionKind.BET if self._bet_to == 0 else ActionKind.RAISE
        (self.verify_bet if kind == ActionKind.BET else self.verify_raise)(to)
        return kind, to

    def can_fold(self) -> bool:
        return self._passes(self.verify_fold)

    def can_check(self) -> bool:
        return self._passes(self.verify_check)

    def can_call(self) -> bool:
        return self._passes(self.verify_call)

    def can_raise(self, amount: int) -> bool:
        return self._passes(self.verify_raise, amount)

    def can_all_in(self) -> bool:
        return self._passes(self.verify_all_in)

    def do_fold(self) -> ActionRecord:
        self.verify_fold()
        p = self._to_act
        self._folded[p] = True
        return self._record(p, ActionKind.FOLD, 0)

    def do_check(self) -> ActionRecord:
        self.verify_check()
        return self._commit(ActionKind.CHECK, self._bet_to)

    def do_call(self) -> ActionRecord:
        return self._commit(ActionKind.CALL, self.verify_call())

    def do_bet(self, amount: int) -> ActionRecord:
        self.verify_bet(amount)
        return self._commit(ActionKind.BET, int(amount))

    def do_raise(self, amount: int) -> ActionRecord:
        self.verify_raise(amount)
        return self._commit(ActionKind.RAISE, int(amount))

    def do_all_in(self) -> ActionRecord:
        return self._commit(*self.verify_all_in())

    def verify(self, action: Action) -> None:
        """Raise IllegalActionError unless ``action`` is legal now."""
        kind, amount = ActionKind(action.kind), action.amount
        if kind in (ActionKind.BET, ActionKind.RAISE):
            if amount is None:
                raise IllegalActionError(f"{kind.name} needs an amount (the raise-to total)")
            (self.verify_bet if kind == ActionKind.BET else self.verify_raise)(amount)
            return
        if kind == ActionKind.FOLD:
            self.verify_fold()
            implied = self._street_commitments[self._to_act]
        elif kind == ActionKind.CHECK:
            self.verify_check()
            implied = self._bet_to
        elif kind == ActionKind.CALL:
            implied = self.verify_call()
        else:
            implied = self.verify_all_in()[1]
        if amount is not None and check_int(amount, "amount") != implied:
            raise IllegalActionError(f"{kind.name} goes to {implied}, not {amount}")

    def can(self, action: Action) -> bool:
        return self._passes(self.verify, action)

    def apply(self, action: Action) -> ActionRecord:
        """Apply a legal action; returns its record."""
        self.verify(action)
        kind = ActionKind(action.kind)
        if kind == ActionKind.BET:
            return self.do_bet(action.amount)
        if kind == ActionKind.RAISE:
            return self.do_raise(action.amount)
        return {ActionKind.FOLD: self.do_fold, ActionKind.CHECK: self.do_check,
                ActionKind.CALL: self.do_call, ActionKind.ALL_IN: self.do_all_in}[kind]()

    # ---- legality helpers -----------------------------------------------------------------
    def _require_turn(self) -> int:
        if self._to_act is None:
            raise IllegalActionError("the hand is over")
        return self._to_act

    @staticmethod
    def _passes(verify: Callable[..., object], *args: object) -> bool:
        try:
            verify(*args)
        except IllegalActionError:
            return False
        return True

    def _can_act(self, p: int) -> bool:
        return not self._folded[p] and self._stacks[p] > 0

    def _all_in_to(self, p: int) -> int:
        return self._street_commitments[p] + self._stacks[p]

    def _call_to(self, p: int) -> int:
        return min(self._bet_to, self._all_in_to(p))

    def _min_to(self, p: int) -> int:
        return min(self._bet_to + self._min_increment, self._all_in_to(p))

    def _default_amount(self, kind: ActionKind) -> int | None:
        if kind in (ActionKind.BET, ActionKind.RAISE):
            return self._min_to(self._to_act)
        return None

    def _verify_wager(self, p: int, amount: int, word: str) -> None:
        top = self._all_in_to(p)
        if top <= self._bet_to:
            raise IllegalActionError(f"player {p} cannot {word}: their stack only covers a call")
        acted_at = self._acted_at[p]
        if acted_at is not None and self._bet_to - acted_at < self._min_increment:
            raise IllegalActionError(
                f"player {p} cannot {word}: the betting was not reopened (it rose by "
                f"{self._bet_to - acted_at} since they acted, less than a full raise of "
                f"{self._min_increment}); they may only call or fold")
        if not any(self._can_act(q) for q in range(self.num_players) if q != p):
            raise IllegalActionError(
                f"player {p} cannot {word}: no opponent can respond (all are all-in or folded)")
        if amount > top:
            raise IllegalActionError(f"{word} to {amount} is more than player {p}'s all-in "
                                     f"total of {top}")
        minimum = self._bet_to + self._min_increment
        if amount < minimum and amount != top:
            raise IllegalActionError(f"{word} to {amount} is below the minimum {word} to "
                                     f"{minimum} (only an all-in may be smaller)")

    # ---- state changes --------------------------------------------------------------------
    def _post_forced_bets(self) -> None:
        cfg = self.config
        posts = [(p, PostKind.ANTE, cfg.ante) for p in range(cfg.num_players)]
        posts += [(0, PostKind.SMALL_BLIND, cfg.small_blind),
                  (1, PostKind.BIG_BLIND, cfg.big_blind)]
        for p, kind, asked in posts:
            chips = min(asked, self._stacks[p])
            if chips == 0:
                continue
            self._stacks[p] -= chips
            self._total_commitments[p] += chips
            if kind != PostKind.ANTE:
                self._street_commitments[p] += chips
            self._history.append(PostRecord(p, kind, chips, self._stacks[p] == 0))

    def _commit(self, kind: ActionKind, to: int) -> ActionRecord:
        p = self._to_act
        chips = to - self._street_commitments[p]
        self._stacks[p] -= chips
        self._street_commitments[p] = to
        self._total_commitments[p] += chips
        if to > self._bet_to:
            # A full raise sets the new minimum increment; a short all-in leaves it unchanged.
            self._min_increment = max(self._min_increment, to - self._bet_to)
            self._bet_to = to
        self._acted_at[p] = self._bet_to
        return self._record(p, kind, chips)

    def _record(self, p: int, kind: ActionKind, chips: int) -> ActionRecord:
        record = ActionRecord(p, self._street, kind, self._street_commitments[p], chips,
                              not self._folded[p] and self._stacks[p] == 0)
        self._history.append(record)
        self._advance(after=p)
        return record

    def _needs_action(self, p: int) -> bool:
        return self._can_act(p) and (
            self._acted_at[p] is None or self._street_commitments[p] < self._bet_to)

    def _round_is_over(self) -> bool:
        able = [p for p in range(self.num_players) if self._can_act(p)]
        if len(able) <= 1:
            return all(self._street_commitments[p] >= self._bet_to for p in able)
        return not any(self._needs_action(p) for p in able)

    def _begin_round(self, first: int) -> None:
        self._to_act = None
        self._advance(after=first - 1)

    def _advance(self, after: int) -> None:
        n = self.num_players
        if sum(not f for f in self._folded) == 1:
            self._finish()
        elif self._round_is_over():
            self._end_round()
        else:
            self._to_act = next(q for q in ((after + i) % n for i in range(1, n + 1))
                                if self._needs_action(q))

    def _end_round(self) -> None:
        num_able = sum(self._can_act(p) for p in range(self.num_players))
        if self._street == Street.RIVER or num_able <= 1:
            while self._street < Street.RIVER:  # run the board out, no more betting
                self._deal_next_street()
            self._finish()
            return
        self._deal_next_street()
        self._street_commitments = [0] * self.num_players
        self._bet_to = 0
        self._min_increment = self.config.big_blind
        self._acted_at = [None] * self.num_players
        self._begin_round(first=1 if self.num_players == 2 else 0)

    def _deal_next_street(self) -> None:
        before = self._street.num_board_cards
        self._street = Street(self._street + 1)
        self._history.append(DealRecord(self._street, self.board[before:]))

    def _finish(self) -> None:
        n = self.num_players
        self._to_act = None
        button = 0 if n == 2 else n - 1
        odd_chip_order = [(button + 1 + i) % n for i in range(n)]
        ranks: dict[int, int] = {}
        for index, pot in enumerate(self.pots()):
            winners = list(pot.eligible)
            if len(winners) > 1:
                for p in winners:
                    if p not in ranks:
                        ranks[p] = self._rank_fn(self._hole_cards[p] + self._full_board)
                best = max(ranks[p] for p in winners)
                winners = [p for p in winners if ranks[p] == best]
            for p, chips in sorted(split_pot(pot.amount, winners, odd_chip_order).items()):
                self._stacks[p] += chips
                self._history.append(AwardRecord(p, chips, index))
        self._payoffs = tuple(s - s0 for s, s0 in zip(self._stacks, self.config.stacks))

    def __repr__(self) -> str:
        return (f"HandState(street={self._street.name}, board={self.board}, "
                f"stacks={self.stacks}, commitments={self.street_commitments}, "
                f"to_act={self._to_act}, terminal={self.is_terminal})")
