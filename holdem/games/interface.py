"""The game interface: what the solver, the runtime, checkpoints and analysis know about a game.

A built game is a :class:`Game`. Callers use its fields (seats, streets, deal, depth and width of
a hand), its kernel form (``game.kernel``, what the traversal kernels take; its node hooks are in
:mod:`holdem.games.node_kernels`), the store sizes it needs, the check of infoset keys, and its
*capabilities*, never its name or its class:

- :data:`EXACT`: small enough for exact evaluation (dense strategy profiles, best responses,
  exploitability; ``holdem.analysis.exact``).
- :data:`CARDS`: deals are real cards with chips at stake, so hands can be played out between
  strategies (head-to-head matches, baseline bots).
- :data:`LINES`: an enumerated betting tree whose actions have labels, so a line of play names a
  node (``game.tree``, ``game.lines.labels``): range charts, local best response, ``play``,
  bet translation, duplicate matches with per-node bot tables.
- :data:`ROTATIONS`: the kind plays whole hands with a kernel of its own, one strategy in one
  seat and another in every other seat, every deal once with the first in each seat
  (``game.rotations.play``): head-to-head matches where no betting tree is enumerated.

Each capability is a typed protocol below (:class:`Exact`, :class:`Cards`, :class:`Lines`,
:class:`Rotations`), and a game *declares* the ones it has: the builder of a kind passes the
object that implements each (``exact=``, ``cards=``, ``lines=``, ``rotations=``), so
``game.capabilities`` is read off what was declared and code that holds a capability reads it
through its protocol (``game.cards.table.chips_per_bb``, ``game.lines.labels``), never through
the kind's own rules object.

Kinds implementing it: :class:`holdem.games.tree_game.TreeGame` (an enumerated betting tree) and
:class:`holdem.games.nlhe.multiway.MultiwayGame` (nodes computed during traversal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from holdem.games.tree import TreeArrays

EXACT = "exact"
CARDS = "cards"
LINES = "lines"
ROTATIONS = "rotations"
CAPABILITIES = (EXACT, CARDS, LINES, ROTATIONS)


class Units(Protocol):
    """The table's units: stakes in big blinds, ``chips_per_bb`` integer chips per big blind."""

    stack: float
    small_blind: float
    big_blind: float
    ante: float
    chips_per_bb: int

    def chips(self, bb: float) -> int:
        """``bb`` big blinds in chips."""
        ...


class HandEngine(Protocol):
    """The exact rules engine real hands run on (integer chips): its table configuration and
    hand state, and the names of the seats. A hand state's ``legal_actions()`` names the legal
    kinds (``names()``) and makes an action of one (``action(kind, to)``)."""

    TableConfig: type
    HandState: type

    def seat_name(self, seat: int, num_players: int) -> str:
        ...


class Exact(Protocol):
    """:data:`EXACT`: a game small enough for exact evaluation; one private card per player
    (``deck_ranks``: the rank of each card) and ``num_streets`` betting rounds."""

    num_streets: int
    num_ranks: int
    deck_ranks: tuple


class Cards(Protocol):
    """:data:`CARDS`: real cards and chips; ``table`` in :class:`Units`, the streets' names and
    the :class:`HandEngine` a real hand runs on."""

    table: Units
    street_names: tuple
    engine: HandEngine


class Lines(Protocol):
    """:data:`LINES`: an enumerated betting tree whose actions have labels. Per node of ``tree``:
    the label of the action leading to it (``f``, ``c``, ``r0.5p``, ``r2.5b``, ``a``; ``''`` at
    the root) and the street commitment after it (``raise_to``, chips of ``table``)."""

    tree: TreeArrays
    labels: list
    raise_to: np.ndarray
    table: Units

    def history_string(self, node: int) -> str:
        """The line to ``node`` in export notation (e.g. ``r2.5c/r1.6``)."""
        ...


class Rotations(Protocol):
    """:data:`ROTATIONS`: the kind's own kernel plays a match: A (a blueprint) in one seat, B in
    every other seat, every deal once with A in each seat, the cards staying with the seats."""

    def play(self, store_a, store_b, kind_b: int, num_buckets, ws, state, deals: int, out, log,
             seat_out, correction, samples: int, value_state) -> None:
        """Play ``deals`` deals (``store_a``, ``store_b``: StoreArrays; ``kind_b``: B's policy,
        a ``POLICY_*`` of :mod:`holdem.games.match_kernels`; ``num_buckets`` int64[streets];
        ``ws``: a traversal workspace of the game's :meth:`Game.workspace_shape`; ``state``:
        the match's random state). Writes A's mean chips of deal i over its rotations into
        ``out[i]`` (float64[deals]), A's chips in seat s into ``seat_out[i, s]`` and that hand's
        mean-zero correction into ``correction[i, s]`` (float64[deals, seats]; its check-down
        values draw ``samples`` board completions with ``value_state``, 0: no correction), and
        the first hands into ``log`` (a :data:`holdem.games.match_kernels.HandLog`)."""
        ...


Rules = Exact | Cards | Lines


@dataclass(frozen=True, eq=False, kw_only=True)
class Game:
    """A built game (abstract: see the kinds above)."""

    name: str
    num_players: int
    num_streets: int
    deal: object              # DealArrays (holdem.games.deal_kernels)
    bucket_stride: int        # the number of card buckets an infoset key leaves room for
    max_depth: int            # actions in a hand
    max_actions: int          # actions at a node
    deck_size: int
    tree: TreeArrays | None = None  # the enumerated betting tree (None: nodes are computed
                                    # during traversal)
    rules: Rules | None = None      # the kind's rules (it implements the capabilities below)
    exact: Exact | None = None      # the declared capabilities (None: the game has not got it)
    cards: Cards | None = None
    lines: Lines | None = None
    rotations: Rotations | None = None
    buckets_sha256: str = ""  # of the bucket file (No-Limit Hold'em)
    buckets_path: str = ""

    @property
    def capabilities(self) -> frozenset:
        """The names of the capabilities the game declared (a subset of :data:`CAPABILITIES`)."""
        declared = {EXACT: self.exact, CARDS: self.cards, LINES: self.lines,
                    ROTATIONS: self.rotations}
        return frozenset(name for name, value in declared.items() if value is not None)

    def supports(self, capability):
        """Whether the game has ``capability`` (one of :data:`CAPABILITIES`)."""
        if capability not in CAPABILITIES:
            raise ValueError(f"unknown capability {capability!r}")
        return capability in self.capabilities

    def require(self, capability, what):
        """Raise ValueError saying ``what`` needs ``capability`` unless the game has it."""
        if not self.supports(capability):
            raise ValueError(f"{what} {_NEEDS[capability]}; this game ({self.describe()}) "
                             "has none")

    def describe(self):
        """The game in a few words, for messages: its name and seats."""
        return f"{self.name}, {self.num_players} players"

    # -- what a kind implements ---------------------------------------------------------------
    @property
    def kernel(self):
        """The game as the traversal kernels take it (a namedtuple with node hooks)."""
        raise NotImplementedError

    row_width = 1             # int64 per state row in the traversal's workspace
    payoff_size = 2           # float64 terminal payoffs in the workspace

    @property
    def initial_rows(self):
        """Rows a new store starts with."""
        raise NotImplementedError

    @property
    def max_new_rows(self):
        """Rows one iteration may add (or the head-room the kernel checks per insertion)."""
        raise NotImplementedError

    @property
    def max_new_entries(self):
        raise NotImplementedError

    def keys_match(self, keys, num_actions):
        """True when every (key, num_actions) pair can be an infoset of this game."""
        raise NotImplementedError

    def workspace_shape(self):
        """Keyword arguments of ``holdem.solver.kernels.make_workspace`` for this game."""
        return dict(max_depth=self.max_depth, max_actions=self.max_actions,
                    num_players=self.num_players, num_streets=self.num_streets,
                    deck_size=self.deck_size, row_width=self.row_width,
                    payoff_size=self.payoff_size)


_NEEDS = {
    EXACT: "needs a game small enough for exact evaluation (Kuhn, Leduc)",
    CARDS: "needs a game dealt with real cards and chips (No-Limit Hold'em)",
    LINES: "needs an enumerated betting tree with labelled actions (heads-up No-Limit Hold'em)",
    ROTATIONS: "needs a game that plays a hand from every seat with its own kernel "
               "(3-6 player No-Limit Hold'em)",
}


def shapes_match(keys, num_actions):
    """(keys int64, num_actions) as arrays when their shapes agree, else None."""
    keys = np.asarray(keys, dtype=np.int64)
    num_actions = np.asarray(num_actions)
    return (keys, num_actions) if keys.shape == num_actions.shape else None
