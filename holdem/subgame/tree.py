"""The betting tree of a turn or river subgame, as flat arrays the solver's kernels walk.

A subgame starts at the beginning of a street with a pot, both players' remaining (effective)
stack and a board of 4 cards (turn) or 5 (river). Player 0 is out of position: it acts first
on every street. A :class:`BetMenu` gives the sizes:

- ``bets[street]`` / ``raises[street]``: fractions of the pot. A bet of ``f`` puts ``f`` x pot
  in; a raise of ``f`` raises by ``f`` x (the pot after calling), so a pot-size raise against a
  bet ``b`` into ``p`` raises to ``b + (p + 2b)``. A raise smaller than the last bet or raise
  is lifted to that (the min-raise rule of No-Limit).
- ``all_in``: whether going all-in is always an action. A size that would put in the whole
  stack (or more) *is* the all-in, and sizes that land on the same amount are merged.
- ``max_raises``: bets plus raises per street (None: until someone is all-in).
- ``chip``: sizes are rounded to whole chips of this size (1: the integer chips of a real
  table; 0.01 for a spot given in big blinds).

Nodes (``SubgameTree`` arrays, one entry per node; children of a node are contiguous):

- ``kind``: DECISION, CHANCE (the river card is dealt: one child per card the turn board
  leaves), FOLD or SHOWDOWN.
- ``player``: who acts (DECISION) or who folded (FOLD).
- ``invest``: chips each player has put in since the subgame began, ``invest[node, p]``.
- ``board``: which board the node sees: 0 = the root's, 1 + k = the turn board plus the k-th
  card of ``river_cards`` (turn subgames).
- ``offset``: where a decision's regrets start in the solver's flat arrays (``num_actions x
  hands of the player to act``, action-major).
- ``segment``: -1 for nodes before the river card; the index of the (chance node, card) pair a
  node belongs to otherwise. A turn subgame's river subtrees are the solver's units of
  parallel work.

Labels: ``x`` check, ``c`` call, ``f`` fold, ``b<chips>`` bet, ``r<chips>`` raise to that many
chips put in on the street by the raiser, ``a`` all-in; chips are the subgame's units.
"""

import math
from dataclasses import dataclass, field

import numpy as np

DECISION, CHANCE, FOLD, SHOWDOWN = 0, 1, 2, 3
TURN, RIVER = 2, 3
STREET_NAMES = {TURN: "turn", RIVER: "river"}


@dataclass(frozen=True)
class BetMenu:
    """Bet and raise sizes (fractions of the pot) per street; see the module docstring."""

    bets: dict = field(default_factory=lambda: {TURN: (0.5, 1.0), RIVER: (0.5, 1.0)})
    raises: dict = field(default_factory=lambda: {TURN: (1.0,), RIVER: (1.0,)})
    all_in: bool = True
    max_raises: int = None
    chip: float = 1.0           # sizes are rounded to whole chips of this size

    @classmethod
    def uniform(cls, bets=(0.5, 1.0), raises=(1.0,), all_in=True, max_raises=None, chip=1.0):
        """The same sizes on the turn and the river."""
        return cls({TURN: tuple(bets), RIVER: tuple(bets)},
                   {TURN: tuple(raises), RIVER: tuple(raises)}, all_in, max_raises, chip)

    def validate(self):
        for name in ("bets", "raises"):
            for street, sizes in getattr(self, name).items():
                for size in sizes:
                    if not size > 0:
                        raise ValueError(f"bet menu: {name} on the {STREET_NAMES[street]}: "
                                         f"sizes are fractions of the pot above 0, got {size}")
        if not self.chip > 0:
            raise ValueError(f"bet menu: chip must be above 0, got {self.chip}")
        if self.max_raises is not None and self.max_raises < 0:
            raise ValueError(f"bet menu: max_raises must be >= 0, got {self.max_raises}")


def _amount_text(chips):
    return f"{chips:g}"


def street_actions(menu, street, pot, invest, to_act, last_raise, num_raises, stack, base=0.0,
                   extra=()):
    """The actions at a decision: [(label, new investment of the player to act)]; fold and
    call (or check) first. ``invest`` is both players' chips in so far this subgame, ``pot``
    the pot at the subgame's start, ``last_raise`` the size of the last bet or raise on this
    street (0: none), ``base`` the chips each had in when the street began (labels count
    from there). ``extra``: more sizes, as chips in on the street after the action (an
    opponent's bet that the menu lacks, for re-solving)."""
    me, opp = invest[to_act], invest[1 - to_act]
    out = []
    facing = opp > me
    if facing:
        out.append(("f", me))
        out.append(("c", opp))
    else:
        out.append(("x", me))
    if opp >= stack or (menu.max_raises is not None and num_raises >= menu.max_raises):
        return out
    total_pot = pot + invest[0] + invest[1]
    amounts = []
    if facing:
        call = opp - me
        for f in menu.raises.get(street, ()):
            size = max(f * (total_pot + call), last_raise)
            amounts.append(opp + size)
    else:
        for f in menu.bets.get(street, ()):
            amounts.append(me + max(f * total_pot, 1.0 if last_raise == 0 else last_raise))
    amounts.extend(base + x for x in extra if base + x > opp)
    seen = set()
    for amount in sorted(amounts):
        amount = min(math.floor(amount / menu.chip + 0.5) * menu.chip, stack)  # chips, halves up
        if amount >= stack:
            continue            # the all-in, added below
        if amount <= opp or amount in seen:
            continue            # rounded down to a call or check, or a size already there
        seen.add(amount)
        out.append(((f"r{_amount_text(amount - base)}" if facing
                     else f"b{_amount_text(amount - me)}"), amount))
    if menu.all_in or any(min(a, stack) >= stack for a in amounts):
        out.append(("a", stack))
    return out


class _Builder:
    def __init__(self, menus, pot, stack, street, num_river_cards, extra):
        self.menus, self.pot, self.stack, self.extra = menus, pot, stack, extra
        self.num_river_cards = num_river_cards
        self.kind, self.player, self.invest, self.board = [], [], [], []
        self.first_child, self.num_children, self.segment, self.labels = [], [], [], []
        self.street, self.parent = [], []
        self.chance_nodes = []
        self.pending = []           # (node, state) to expand, in order

    def add(self, kind, player, invest, board, street, segment, label, parent, state=None):
        index = len(self.kind)
        self.kind.append(kind)
        self.player.append(player)
        self.invest.append(tuple(invest))
        self.board.append(board)
        self.street.append(street)
        self.segment.append(segment)
        self.labels.append(label)
        self.parent.append(parent)
        self.first_child.append(-1)
        self.num_children.append(0)
        if state is not None:
            self.pending.append((index, state))
        return index

    def street_start(self, street, invest, board, segment, parent, label):
        """The node that begins ``street`` (a decision, or a showdown when someone is all-in)."""
        if invest[0] >= self.stack or invest[1] >= self.stack:
            if street == TURN:
                return self.add(CHANCE, -1, invest, board, street, segment, label, parent,
                                ("chance",))
            return self.add(SHOWDOWN, -1, invest, board, street, segment, label, parent)
        return self.add(DECISION, 0, invest, board, street, segment, label, parent,
                        (street, 0, 0.0, 0, False))

    def after_round(self, node_invest, street, board, segment, parent, label):
        """The node after a betting round closes with equal investments."""
        if street == RIVER:
            return self.add(SHOWDOWN, -1, node_invest, board, street, segment, label, parent)
        return self.add(CHANCE, -1, node_invest, board, street, segment, label, parent,
                        ("chance",))

    def line(self, index):
        out = []
        while index > 0:
            out.append(self.labels[index])
            index = self.parent[index]
        return tuple(reversed(out))

    def street_base(self, index):
        """Chips each player had in when the node's street began."""
        street = self.street[index]
        while index > 0 and self.street[self.parent[index]] == street:
            index = self.parent[index]
        return self.invest[index][0]

    def expand(self, index, state):
        invest = self.invest[index]
        if state[0] == "chance":
            chance_id = len(self.chance_nodes)
            self.chance_nodes.append(index)
            first = len(self.kind)
            for k in range(self.num_river_cards):
                seg = chance_id * self.num_river_cards + k
                self.street_start(RIVER, invest, 1 + k, seg, index, f"card{k}")
            self.first_child[index], self.num_children[index] = first, self.num_river_cards
            return
        street, to_act, last_raise, num_raises, acted = state
        board, segment = self.board[index], self.segment[index]
        line = self.line(index) if self.extra else ()
        actions = street_actions(self.menus[to_act], street, self.pot, invest, to_act,
                                 last_raise, num_raises, self.stack, self.street_base(index),
                                 self.extra.get(line, ()))
        first = len(self.kind)
        for label, amount in actions:
            new = list(invest)
            new[to_act] = amount
            opp = invest[1 - to_act]
            if label == "f":
                self.add(FOLD, to_act, invest, board, street, segment, label, index)
            elif label in ("x", "c"):
                if label == "c" or acted:          # a call, or the second check
                    self.after_round(new, street, board, segment, index, label)
                else:
                    self.add(DECISION, 1 - to_act, new, board, street, segment, label, index,
                             (street, 1 - to_act, last_raise, num_raises, True))
            else:
                raise_size = amount - max(opp, invest[to_act])
                self.add(DECISION, 1 - to_act, new, board, street, segment, label, index,
                         (street, 1 - to_act, max(last_raise, raise_size), num_raises + 1,
                          True))
        self.first_child[index], self.num_children[index] = first, len(self.kind) - first

    def build(self, street):
        self.street_start(street, (0.0, 0.0), 0, -1, -1, "")
        while self.pending:
            index, state = self.pending.pop(0)
            self.expand(index, state)


@dataclass(frozen=True)
class SubgameTree:
    """The flat tree (see the module docstring) and what it was built from."""

    pot: float
    stack: float
    street: int                 # the root's street: TURN or RIVER
    menu: tuple                 # (player 0's BetMenu, player 1's)
    kind: np.ndarray            # int64[N]
    player: np.ndarray          # int64[N]
    invest: np.ndarray          # float64[N, 2]
    board: np.ndarray           # int64[N]
    node_street: np.ndarray     # int64[N]
    first_child: np.ndarray     # int64[N]
    num_children: np.ndarray    # int64[N]
    parent: np.ndarray          # int64[N]
    segment: np.ndarray         # int64[N]
    chance_nodes: np.ndarray    # int64[C]
    labels: tuple               # per node: the action that led to it ("cardK" below chance)
    num_river_cards: int

    @property
    def num_nodes(self):
        return len(self.kind)

    def num_decisions(self):
        return int((self.kind == DECISION).sum())

    def line(self, node):
        """The labels from the root to ``node``."""
        out = []
        while node > 0:
            out.append(self.labels[node])
            node = int(self.parent[node])
        return tuple(reversed(out))

    def children(self, node):
        first = int(self.first_child[node])
        return range(first, first + int(self.num_children[node]))

    def child_labels(self, node):
        return tuple(self.labels[c] for c in self.children(node))

    def find(self, line, river_index=None):
        """The node after ``line`` (labels; a river card's place in the line is skipped:
        give its index in ``river_cards`` as ``river_index``). KeyError naming the label that
        is not an action there."""
        node = 0
        for label in line:
            if self.kind[node] == CHANCE:
                if river_index is None:
                    raise KeyError(f"line {' '.join(line)!r} reaches the river: say which card")
                node = int(self.first_child[node]) + river_index
            if self.kind[node] != DECISION:
                raise KeyError(f"line {' '.join(line)!r}: the hand is over before {label!r}")
            labels = self.child_labels(node)
            if label not in labels:
                where = " ".join(self.line(node)) or "the root"
                raise KeyError(f"{label!r} is not an action at {where} "
                               f"(actions: {', '.join(labels)})")
            node = int(self.first_child[node]) + labels.index(label)
        if self.kind[node] == CHANCE and river_index is not None:
            node = int(self.first_child[node]) + river_index
        return node


def player_menus(menu):
    """(player 0's BetMenu, player 1's) from one BetMenu for both, a pair, or None."""
    menu = BetMenu() if menu is None else menu
    menus = (menu, menu) if isinstance(menu, BetMenu) else tuple(menu)
    if len(menus) != 2 or not all(isinstance(m, BetMenu) for m in menus):
        raise TypeError("a bet menu is a BetMenu or a pair of them (out of position, in "
                        f"position), got {menu!r}")
    for m in menus:
        m.validate()
    return menus


def build_tree(pot, stack, street, menu=None, num_river_cards=48, extra=None):
    """The betting tree of a subgame that starts on ``street`` (TURN or RIVER) with ``pot``
    in the middle and ``stack`` chips behind for each player (the effective stack). ``menu``:
    a BetMenu for both players or a pair (out of position, in position). ``extra``: {line:
    sizes} adds sizes (chips in on the street after the action) at the node after ``line``."""
    menus = player_menus(menu)
    if street not in (TURN, RIVER):
        raise ValueError(f"a subgame starts on the turn ({TURN}) or the river ({RIVER}), "
                         f"got street {street}")
    if not pot > 0:
        raise ValueError(f"the pot must be above 0 chips, got {pot}")
    if not stack >= 0:
        raise ValueError(f"the stack must be 0 chips or more, got {stack}")
    b = _Builder(menus, float(pot), float(stack), street,
                 num_river_cards if street == TURN else 0,
                 {tuple(k): tuple(v) for k, v in (extra or {}).items()})
    b.build(street)
    as_int = lambda values: np.array(values, dtype=np.int64)   # noqa: E731
    return SubgameTree(
        pot=float(pot), stack=float(stack), street=street, menu=menus, kind=as_int(b.kind),
        player=as_int(b.player), invest=np.array(b.invest, dtype=np.float64).reshape(-1, 2),
        board=as_int(b.board), node_street=as_int(b.street), first_child=as_int(b.first_child),
        num_children=as_int(b.num_children), parent=as_int(b.parent),
        segment=as_int(b.segment), chance_nodes=as_int(b.chance_nodes),
        labels=tuple(b.labels), num_river_cards=b.num_river_cards)
