"""What No-Limit Hold'em declares for the :data:`holdem.games.interface.CARDS` capability: the
exact rules engine its real hands run on (:class:`holdem.games.interface.HandEngine`) and the
names of its streets. :class:`RealCards` is the part every No-Limit rules object shares."""

from holdem.games.nlhe.records import TableConfig
from holdem.games.nlhe.rules import HandState, seat_name

STREET_NAMES = ("preflop", "flop", "turn", "river")


class NlheEngine:
    """:class:`holdem.games.interface.HandEngine` of No-Limit Hold'em (:mod:`.rules`)."""

    TableConfig = TableConfig
    HandState = HandState
    seat_name = staticmethod(seat_name)


ENGINE = NlheEngine()


class RealCards:
    """Mixed into a No-Limit rules object that has a ``table``: with it the object is a
    :class:`holdem.games.interface.Cards`."""

    street_names = STREET_NAMES
    engine = ENGINE
