"""No-Limit Texas Hold'em: the exact rules engine (plain Python) that abstract games are derived
from and tested against.

``rules`` holds `HandState` (a hand from the blinds to the payoffs), ``records`` the plain data
(enums, `TableConfig`, `Action`, frozen records) and ``pots`` side pots and odd-chip splitting.
"""

from holdem.games.nlhe.pots import Pot, side_pots, split_pot
from holdem.games.nlhe.records import (
    Action, ActionKind, ActionRecord, AwardRecord, DealRecord, IllegalActionError, LegalActions,
    PostKind, PostRecord, RankFn, Record, Street, TableConfig,
)
from holdem.games.nlhe.rules import HandState, deal_cards

__all__ = [
    "Action", "ActionKind", "ActionRecord", "AwardRecord", "DealRecord", "HandState",
    "IllegalActionError", "LegalActions", "Pot", "PostKind", "PostRecord", "RankFn", "Record",
    "Street", "TableConfig", "deal_cards", "side_pots", "split_pot",
]
