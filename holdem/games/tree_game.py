"""Games whose betting tree is enumerated: Kuhn, Leduc (2 or 3 players) and heads-up No-Limit
Hold'em.

Infoset keys are ``history * bucket_stride + bucket``, so a store's keys can be checked exactly
and a new store can be sized from the tree. Node hooks: :mod:`holdem.games.tree_kernels`.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from holdem.games.interface import Game, shapes_match
from holdem.games.tree import NodeKind, TreeArrays, tree_depth
from holdem.games.tree_kernels import TreeNodes


@dataclass(frozen=True, eq=False, kw_only=True)
class TreeGame(Game):
    tree: TreeArrays

    @cached_property
    def kernel(self):
        return TreeNodes(self.tree, np.int64(self.bucket_stride), np.int64(self.num_streets - 1))

    @property
    def payoff_size(self):
        return self.num_players

    @cached_property
    def decision_nodes(self):
        """Node ids of the decision nodes, in history-id order."""
        return np.flatnonzero(self.tree.kind == NodeKind.DECISION)

    @cached_property
    def history_num_actions(self):
        """num_actions per betting-history id (int8)."""
        return self.tree.num_actions[self.decision_nodes]

    @property
    def num_decision_nodes(self):
        return int(self.decision_nodes.size)

    @property
    def initial_rows(self):
        return 4 * self.num_decision_nodes

    @property
    def max_new_rows(self):
        """At most one row per decision node (buckets are fixed per deal)."""
        return self.num_decision_nodes

    @cached_property
    def max_new_entries(self):
        """The actions of all decision nodes (a sum over the tree: cached, since a worker asks
        twice per flush and it took 24 us on hunl_default's tree)."""
        return int(self.tree.num_actions[self.tree.kind == NodeKind.DECISION].sum())

    def keys_match(self, keys, num_actions):
        """Exactly: every key names a betting history of this tree with that many actions."""
        pair = shapes_match(keys, num_actions)
        if pair is None:
            return False
        keys, num_actions = pair
        return bool(np.all(self.num_actions_of_keys(keys) == num_actions))

    def num_actions_of_keys(self, keys):
        """num_actions for each infoset key (-1 where the key is not an infoset of this game)."""
        keys = np.asarray(keys, dtype=np.int64)
        history = keys // self.bucket_stride
        per_history = self.history_num_actions
        ok = (keys >= 0) & (history < per_history.size)
        out = np.full(keys.shape, -1, dtype=np.int64)
        out[ok] = per_history[history[ok]]
        return out


def tree_game(name, tree, deal, bucket_stride, num_streets, deck_size, **fields):
    """A :class:`TreeGame` over ``tree``, its depth and width read from the tree; ``fields``
    declare its rules and capabilities (``rules=``, ``exact=``, ``cards=``, ``lines=``)."""
    return TreeGame(name=name, num_players=int(tree.contrib.shape[1]), num_streets=num_streets,
                    tree=tree, deal=deal,
                    bucket_stride=bucket_stride, max_depth=tree_depth(tree),
                    max_actions=int(tree.num_actions.max()), deck_size=deck_size, **fields)
