"""Betting trees as flat arrays: how a game reaches the kernels.

A game is a betting tree (public action sequences) plus a card deal. Nodes are numbered
breadth-first so the children of a node are consecutive: child ``a`` of ``node`` is
``child_start[node] + a``. Node 0 is the root. Per node:

- ``kind`` int8: DECISION, FOLD (someone folded: a terminal) or SHOWDOWN (a terminal).
- ``player`` int8: the player to act (DECISION) or the player who folded (FOLD); -1 otherwise.
- ``street`` int8: betting round of the node (0-based).
- ``num_actions`` int8 and ``child_start`` int32 (DECISION only).
- ``history`` int32: dense index of a decision node among decision nodes (the betting-history id);
  -1 elsewhere. An infoset key is ``history * bucket_stride + bucket``.
- ``action`` int8: the action that led here (an :class:`ActionCode`), -1 at the root.
- ``parent`` int32, ``contrib`` float64[num_nodes, num_players]: chips each player has put in.
- ``folded`` int32: bit ``p`` set when player ``p`` has folded before this node (at a FOLD
  node, the folder included), so a terminal's pot goes to the players left in the hand.

The card side is described by the game's deal kernel (see :mod:`holdem.games.deal_kernels`),
which fills ``buckets[player, street]`` and a showdown ``strength[player]`` once per iteration.
"""

from collections import namedtuple
from enum import IntEnum

import numpy as np

TreeArrays = namedtuple(
    "TreeArrays",
    ["kind", "player", "street", "num_actions", "child_start", "history", "action", "parent",
     "contrib", "folded"],
)


class NodeKind(IntEnum):
    """What happens at a node."""

    DECISION = 0
    """A player chooses one of ``num_actions`` actions."""
    FOLD = 1
    """Terminal: ``player`` folded and one player is left, who wins the pot."""
    SHOWDOWN = 2
    """Terminal: the pot goes to the strongest hand(s) of the players who have not folded."""


class ActionCode(IntEnum):
    """Abstract action letters shared by every game (NLHE adds sizes on top of RAISE)."""

    FOLD = 0
    """``f``: give up the pot."""
    CALL = 1
    """``c``: check, or call the outstanding bet."""
    RAISE = 2
    """``r``: bet, or raise."""


ACTION_LETTERS = "fcr"


class TreeBuilder:
    """Collects nodes in breadth-first order; ``finish()`` freezes them into :class:`TreeArrays`."""

    def __init__(self, num_players):
        self.num_players = num_players
        self._nodes = []          # dicts, index = node id

    def add_root(self, spec):
        return self._add(spec, parent=-1, action=-1)

    def _add(self, spec, parent, action):
        node = dict(spec)
        node["parent"], node["action"] = parent, action
        self._nodes.append(node)
        return len(self._nodes) - 1

    def build(self, expand_fn):
        """Breadth-first expansion: ``expand_fn(spec)`` returns [(action, child spec), ...]."""
        queue = [0]
        head = 0
        while head < len(queue):
            node_id = queue[head]
            head += 1
            spec = self._nodes[node_id]
            children = expand_fn(spec) if spec["kind"] == NodeKind.DECISION else []
            spec["child_start"] = len(self._nodes)
            spec["num_actions"] = len(children)
            for action, child in children:
                queue.append(self._add(child, node_id, action))
        return self.finish()

    def finish(self):
        nodes = self._nodes
        n = len(nodes)
        kind = np.array([s["kind"] for s in nodes], dtype=np.int8)
        history = np.full(n, -1, dtype=np.int32)
        decision = np.flatnonzero(kind == NodeKind.DECISION)
        history[decision] = np.arange(decision.size, dtype=np.int32)
        return TreeArrays(
            kind=kind,
            player=np.array([s.get("player", -1) for s in nodes], dtype=np.int8),
            street=np.array([s["street"] for s in nodes], dtype=np.int8),
            num_actions=np.array([s["num_actions"] for s in nodes], dtype=np.int8),
            child_start=np.array([s["child_start"] for s in nodes], dtype=np.int32),
            history=history,
            action=np.array([s["action"] for s in nodes], dtype=np.int8),
            parent=np.array([s["parent"] for s in nodes], dtype=np.int32),
            contrib=np.array([s["contrib"] for s in nodes], dtype=np.float64).reshape(
                n, self.num_players),
            folded=np.array([s.get("folded", 1 << s["player"] if s["kind"] == NodeKind.FOLD
                                   else 0) for s in nodes], dtype=np.int32),
        )


def tree_depth(tree):
    """Longest root-to-leaf path, in nodes."""
    depth = np.zeros(tree.kind.shape[0], dtype=np.int64)
    for node in range(1, depth.shape[0]):           # parents precede children (BFS order)
        depth[node] = depth[tree.parent[node]] + 1
    return int(depth.max()) + 1


def history_letters(tree, node, round_separator="/"):
    """The action letters from the root to ``node``, rounds separated by ``/``."""
    path = []
    while node > 0:
        path.append(node)
        node = int(tree.parent[node])
    out = []
    for child in reversed(path):
        parent = int(tree.parent[child])
        if tree.street[child] != tree.street[parent] and tree.kind[child] == NodeKind.DECISION:
            out.append(ACTION_LETTERS[tree.action[child]] + round_separator)
        else:
            out.append(ACTION_LETTERS[tree.action[child]])
    return "".join(out)
