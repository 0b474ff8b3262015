"""Games the solver can train: a betting tree plus a deal, both as flat arrays.

:func:`make_game` returns a :class:`Game`, the one object the solver, checkpoints, evaluation and
export need to know about a game.
"""

from dataclasses import dataclass

import numpy as np

from holdem.games import small
from holdem.games.deal import DealArrays, small_deal
from holdem.games.tree import NodeKind, TreeArrays, tree_depth

GAME_NAMES = ("kuhn", "leduc")


@dataclass(frozen=True, eq=False)
class Game:
    """Everything the kernels need about a game, plus what export needs to label it."""

    name: str
    num_players: int
    num_streets: int
    tree: TreeArrays
    deal: DealArrays
    bucket_stride: int        # infoset key = history * bucket_stride + bucket
    max_depth: int
    max_actions: int
    deck_size: int
    rules: object = None

    @property
    def num_decision_nodes(self):
        return int(np.count_nonzero(self.tree.kind == NodeKind.DECISION))

    @property
    def max_new_rows(self):
        """At most one new infoset per decision node in one iteration (buckets are fixed per deal)."""
        return self.num_decision_nodes

    @property
    def max_new_entries(self):
        return int(self.tree.num_actions[self.tree.kind == NodeKind.DECISION].sum())

    def num_actions_of_keys(self, keys):
        """num_actions for each infoset key (-1 where the key is not an infoset of this game)."""
        keys = np.asarray(keys, dtype=np.int64)
        history = keys // self.bucket_stride
        decision = np.flatnonzero(self.tree.kind == NodeKind.DECISION)
        ok = (keys >= 0) & (history < decision.size)
        out = np.full(keys.shape, -1, dtype=np.int64)
        out[ok] = self.tree.num_actions[decision[history[ok]]]
        return out


def make_game(name):
    """Build a game by name (one of :data:`GAME_NAMES`)."""
    if name == "kuhn":
        rules = small.KUHN
    elif name == "leduc":
        rules = small.LEDUC
    else:
        raise ValueError(f"unknown game {name!r}; choose one of {', '.join(GAME_NAMES)}")
    tree = small.build_limit_tree(rules)
    stride = rules.num_ranks * rules.num_ranks if rules.num_streets > 1 else rules.num_ranks
    return Game(name=name, num_players=2, num_streets=rules.num_streets, tree=tree,
                deal=small_deal(rules), bucket_stride=stride, max_depth=tree_depth(tree),
                max_actions=int(tree.num_actions.max()), deck_size=len(rules.deck_ranks),
                rules=rules)
