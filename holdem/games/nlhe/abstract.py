"""The abstract heads-up No-Limit Hold'em betting tree, as flat arrays for the kernels.

Derived from the rules of :mod:`holdem.games.nlhe.rules` (seat 0 = small blind = button acts first
preflop and second on later streets) with the bets and raises of an
:class:`holdem.abstraction.actions.ActionAbstraction`. Amounts are integer chips
(``chips_per_bb`` per big blind); ``stack`` is each player's chips before the ante and blinds.
Heads-up only the effective (smaller) stack matters, so both players get it. The minimum raise
is the previous raise increment (at least a big blind); once a player is all-in the other may
only call or fold, and when both are all-in or matched with one all-in the remaining streets
are dealt without betting (a SHOWDOWN leaf).

Besides :class:`holdem.games.tree.TreeArrays` the builder returns per-node labels (``f``, ``c``,
``r0.5p``, ``r2.5b``, ``a``) and the raise-to amounts, for export and analysis.
"""

from dataclasses import dataclass

import numpy as np

from holdem.abstraction.actions import raise_options
from holdem.games.nlhe.engine import RealCards
from holdem.games.tree import ActionCode, NodeKind, TreeBuilder


@dataclass(frozen=True)
class HeadsUpTable:
    """Stakes of the abstract heads-up game, in big blinds."""

    stack: float = 100.0
    small_blind: float = 0.5
    big_blind: float = 1.0
    ante: float = 0.0
    chips_per_bb: int = 100

    def chips(self, bb):
        return int(round(bb * self.chips_per_bb))


@dataclass
class NlheTree(RealCards):
    """The heads-up game's rules: :class:`holdem.games.interface.Lines` and
    :class:`holdem.games.interface.Cards`."""

    tree: object                 # TreeArrays
    labels: list                 # label of the action leading to each node ('' at the root)
    raise_to: np.ndarray         # street commitment after the action leading here (chips)
    table: HeadsUpTable

    def history_string(self, node):
        """:func:`history_string` of ``node``."""
        return history_string(self, node)


def build_heads_up_tree(table, abstraction, max_nodes=20_000_000):
    """Enumerate the abstract betting tree breadth-first. Raises ValueError past ``max_nodes``."""
    stack = table.chips(table.stack)
    sb, bb, ante = table.chips(table.small_blind), table.chips(table.big_blind), table.chips(
        table.ante)
    if not 0 < sb <= bb < stack - ante:
        raise ValueError("need 0 < small blind <= big blind < stack - ante")
    builder = TreeBuilder(num_players=2)
    root = dict(kind=NodeKind.DECISION, player=0, street=0,
                contrib=(float(ante + sb), float(ante + bb)),
                commit=(sb, bb), bet=bb, inc=bb, raises=0, acted=0, label="", to=0)
    builder.add_root(root)
    count = [1]

    def next_street(spec, contrib):
        street = spec["street"]
        total = [int(c) for c in contrib]
        all_in = any(c >= stack for c in total)
        if street == 3 or all_in:
            return dict(kind=NodeKind.SHOWDOWN, street=street, contrib=contrib)
        return dict(kind=NodeKind.DECISION, player=1, street=street + 1, contrib=contrib,
                    commit=(0, 0), bet=0, inc=bb, raises=0, acted=0)

    def expand(spec):
        p, street = spec["player"], spec["street"]
        o = 1 - p
        commit, contrib = list(spec["commit"]), list(spec["contrib"])
        to_call = spec["bet"] - commit[p]
        children = []
        if to_call > 0:
            children.append((ActionCode.FOLD, dict(kind=NodeKind.FOLD, player=p, street=street,
                                                   contrib=tuple(contrib), label="f",
                                                   to=commit[p])))
        # check / call
        c_commit, c_contrib = list(commit), list(contrib)
        c_commit[p] = spec["bet"]
        c_contrib[p] += to_call
        acted = spec["acted"] | (1 << p)
        if acted == 3 and c_commit[0] == c_commit[1]:
            nxt = next_street(spec, tuple(c_contrib))
        else:
            nxt = dict(spec, player=o, commit=tuple(c_commit), contrib=tuple(c_contrib),
                       acted=acted)
        nxt.update(label="c", to=c_commit[p])
        children.append((ActionCode.CALL, nxt))
        # bets and raises
        opponent_all_in = contrib[o] >= stack
        if spec["raises"] < abstraction_max(street) and not opponent_all_in:
            street_start = contrib[p] - commit[p]
            max_to = int(stack - street_start)
            options = raise_options(
                abstraction, street, spec["raises"], pot=int(sum(contrib)),
                current_bet=spec["bet"], my_commit=commit[p],
                min_raise_to=spec["bet"] + max(spec["inc"], bb), max_to=max_to, big_blind=bb)
            for option in options:
                r_commit, r_contrib = list(commit), list(contrib)
                r_commit[p] = option.to
                r_contrib[p] += option.to - commit[p]
                children.append((ActionCode.RAISE, dict(
                    kind=NodeKind.DECISION, player=o, street=street, contrib=tuple(r_contrib),
                    commit=tuple(r_commit), bet=option.to,
                    inc=max(option.to - spec["bet"], spec["inc"]), raises=spec["raises"] + 1,
                    acted=1 << p, label=option.label, to=option.to)))
        count[0] += len(children)
        if count[0] > max_nodes:
            raise ValueError(f"the abstract betting tree exceeds {max_nodes:,} nodes: use fewer "
                             "sizes or a lower max_raises")
        return children

    def abstraction_max(street):
        return abstraction.max_raises[min(street, len(abstraction.max_raises) - 1)]

    tree = builder.build(expand)
    labels = [s.get("label", "") for s in builder._nodes]
    raise_to = np.array([s.get("to", 0) for s in builder._nodes], dtype=np.int64)
    return NlheTree(tree=tree, labels=labels, raise_to=raise_to, table=table)


def history_string(nlhe, node):
    """Export notation: one letter per action, raise-to amounts in big blinds after ``r``
    (all-ins included), streets separated by ``/`` (e.g. ``r2.5c/r1.6``)."""
    tree = nlhe.tree
    path = []
    while node > 0:
        path.append(node)
        node = int(tree.parent[node])
    out = []
    bb = nlhe.table.chips_per_bb
    for child in reversed(path):
        label = nlhe.labels[child]
        if label in ("f", "c"):
            text = label
        else:
            text = f"r{nlhe.raise_to[child] / bb:g}"
        parent = int(tree.parent[child])
        if tree.street[child] != tree.street[parent] and tree.kind[child] == NodeKind.DECISION:
            text += "/"
        out.append(text)
    return "".join(out)
