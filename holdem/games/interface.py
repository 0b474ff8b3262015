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
  node (``game.tree``, ``game.rules.labels``): range charts, local best response, ``play``,
  bet translation, duplicate matches with per-node bot tables.

Kinds implementing it: :class:`holdem.games.tree_game.TreeGame` (an enumerated betting tree) and
:class:`holdem.games.nlhe.multiway.MultiwayGame` (nodes computed during traversal).
"""

from dataclasses import dataclass

import numpy as np

EXACT = "exact"
CARDS = "cards"
LINES = "lines"
CAPABILITIES = (EXACT, CARDS, LINES)


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
    capabilities: frozenset = frozenset()
    rules: object = None      # LimitRules (small games), NlheTree (labels, amounts) or
                              # MultiwayRules (table, action abstraction)
    buckets_sha256: str = ""  # of the bucket file (No-Limit Hold'em)
    buckets_path: str = ""

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
}


def shapes_match(keys, num_actions):
    """(keys int64, num_actions) as arrays when their shapes agree, else None."""
    keys = np.asarray(keys, dtype=np.int64)
    num_actions = np.asarray(num_actions)
    return (keys, num_actions) if keys.shape == num_actions.shape else None
