"""Pots of a No-Limit Hold'em hand: side pots from commitment levels, and how a pot is split.

Side pots. Each distinct total commitment of a player still in the hand (not folded) is a level.
The pot for a level takes, from every player (folded ones included), the chips they committed
between the previous level and this one; the players who can win it are those still in the hand
who committed at least this level. A pot with a single eligible player is the uncalled part of a
bet and simply goes back to that player. Folded chips are dead money: they fill the pots but their
owners are never eligible.

Odd chips. When a pot does not divide evenly among its winners, the leftover chips are handed out
one at a time to the winners in seat order starting from the first seat to the left of the button
(the postflop order of play: heads-up that is the big blind, player 1; 3+ handed, player 0, the
small blind, then 1, 2, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Pot", "side_pots", "split_pot"]


@dataclass(frozen=True)
class Pot:
    """One pot: ``amount`` chips, to be won by one of ``eligible`` (seats in ascending order)."""

    amount: int
    eligible: tuple[int, ...]


def side_pots(contributions: Sequence[int], folded: Sequence[bool]) -> tuple[Pot, ...]:
    """Split the chips committed in a hand into a main pot and side pots.

    ``contributions[p]`` is everything player p has put in (antes, blinds and bets, all
    streets); ``folded[p]`` says whether p has folded. Pots come main pot first; their amounts
    sum to ``sum(contributions)``.
    """
    live = [p for p in range(len(contributions)) if not folded[p]]
    levels = sorted({contributions[p] for p in live if contributions[p] > 0})
    pots: list[Pot] = []
    previous = 0
    for level in levels:
        amount = sum(min(c, level) - min(c, previous) for c in contributions)
        eligible = tuple(p for p in live if contributions[p] >= level)
        pots.append(Pot(amount, eligible))
        previous = level
    # Dead chips above the highest live commitment (only possible in odd set-ups) join the last pot.
    leftover = sum(c - min(c, previous) for c in contributions)
    if leftover:
        if pots:
            pots[-1] = Pot(pots[-1].amount + leftover, pots[-1].eligible)
        else:
            pots.append(Pot(leftover, tuple(live)))
    return tuple(pots)


def split_pot(amount: int, winners: Sequence[int], odd_chip_order: Sequence[int]) -> dict[int, int]:
    """Divide ``amount`` among ``winners``; leftover chips go one each in ``odd_chip_order``.

    ``odd_chip_order`` lists every seat, first seat left of the button first. Returns
    {player: chips won}.
    """
    if not winners:
        raise ValueError("a pot needs at least one winner")
    share, remainder = divmod(amount, len(winners))
    won = {p: share for p in winners}
    for p in (p for p in odd_chip_order if p in won):
        if remainder == 0:
            break
        won[p] += 1
        remainder -= 1
    return won
