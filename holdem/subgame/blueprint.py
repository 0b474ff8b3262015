"""Spots from a heads-up blueprint: where a line reaches the start of the turn or river, the
pot and stacks there, both players' ranges as subgame weights, and the blueprint's bet sizes
as a :class:`BetMenu` (what ``solve_spot --checkpoint`` and the re-solving bot start from).
Subgame player 0 (out of position) is the big blind, blueprint seat 1."""

from dataclasses import dataclass

import numpy as np

from holdem.cards import card_tuple, describe_cards
from holdem.subgame.solver import COMBOS, Spot, combo_index
from holdem.subgame.tree import RIVER, STREET_NAMES, TURN, BetMenu


def subgame_ranges(node_range):
    """(out of position, in position) float64[1326] weights from a blueprint
    :class:`NodeRange`: each seat's own reach per live combo (big blind first)."""
    rows = [combo_index(a, b) for a, b in node_range.combos.tolist()]
    out = []
    for seat in (1, 0):
        weights = np.zeros(len(COMBOS))
        weights[rows] = node_range.reach[seat]
        out.append(weights)
    return out


@dataclass(frozen=True)
class BlueprintStart:
    """Where a blueprint line reaches the start of the turn or the river; amounts in the
    blueprint's chips (``big_blind`` of them to a big blind: 100 by default)."""

    labels: tuple               # the abstract labels
    street: int                 # TURN or RIVER
    pot: float                  # chips in the middle
    stack: float                # chips behind each player
    big_blind: int              # chips per big blind


def street_start(bp, line):
    """The start of the turn or river that ``line`` (labels or an export history, as
    :meth:`Blueprint.line_labels` reads) of the heads-up No-Limit blueprint ``bp`` reaches: the
    previous street's betting closed and nobody has acted yet. ValueError otherwise."""
    from holdem.games import CARDS, LINES

    if not bp.game.supports(LINES):         # a game of real cards lacks only the seats
        raise ValueError("a spot from a blueprint needs heads-up No-Limit Hold'em, not "
                         f"{bp.game.name!r}" + (f" with {bp.game.num_players} players"
                                                if bp.game.supports(CARDS) else ""))
    labels = tuple(bp.line_labels(line))
    node = bp.node_of(labels)
    tree = bp.game.tree
    text = " ".join(labels) or "(the root)"
    streets = ("preflop", "flop", "turn", "river")
    if tree.kind[node] != 0:
        raise ValueError(f"line {text!r} ends the hand")
    street = int(tree.street[node])
    first = node > 0 and int(tree.street[int(tree.parent[node])]) != street
    if street not in (TURN, RIVER) or not first:
        where = (f"a {streets[street]} decision" if not first or node == 0 else
                 f"the start of the {streets[street]}")
        raise ValueError(f"line {text!r} reaches {where}; a subgame starts where the turn or "
                         "the river begins (the flop's or turn's betting closed, e.g. "
                         "\"r2.5b c c c\" for the turn after a checked flop)")
    contrib = tree.contrib[node]
    table = bp.game.rules.table
    return BlueprintStart(labels, street, float(contrib.sum()),
                          float(table.chips(table.stack) - contrib.max()), bp._big_blind)


def blueprint_menu(bp, street):
    """The blueprint config's bet and raise sizes on the turn and river as a :class:`BetMenu`
    (its ``max_raises`` is the config's for ``street``, the subgame's first street)."""
    from holdem.abstraction.actions import ActionAbstraction

    actions = ActionAbstraction.from_config(bp.config.actions)
    caps = actions.max_raises
    return BetMenu({s: actions.pot_fractions(s, 0) for s in (TURN, RIVER)},
                   {s: actions.pot_fractions(s, 1) for s in (TURN, RIVER)},
                   bool(actions.all_in), int(caps[min(street, len(caps) - 1)]))


def blueprint_spot(bp, line, board, menu=None, average=True):
    """(:class:`Spot`, :class:`BlueprintStart`): the subgame at the start of the turn or river
    after ``line``, with both players' ranges there (their own reach per combo,
    :meth:`Blueprint.range`), in the blueprint's chips. Subgame player 0 (out of position) is
    the big blind, blueprint seat 1. ``menu``: default :func:`blueprint_menu`."""
    start = street_start(bp, line)
    board = card_tuple(board, "board")
    need = 4 if start.street == TURN else 5
    if len(board) != need:
        raise ValueError(f"board: line {' '.join(start.labels)!r} reaches the "
                         f"{STREET_NAMES[start.street]}, which needs {need} cards, got "
                         f"{len(board)}" + (f" ({describe_cards(board)})" if board else ""))
    ranges = subgame_ranges(bp.range(list(start.labels), board, average=average))
    spot = Spot.make(board, ranges[0], ranges[1], pot=start.pot, stack=start.stack,
                     menu=blueprint_menu(bp, start.street) if menu is None else menu)
    return spot, start
