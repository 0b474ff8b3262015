"""Subgame solving: the turn and river of a heads-up hand solved with exact cards from two
ranges (:mod:`holdem.subgame.solver`), as postflop solvers do; the study report
(:mod:`holdem.subgame.report`); a bot that re-solves as it plays
(:mod:`holdem.subgame.resolving`), its match and LBR against it (``match``, ``lbr``)."""

from holdem.subgame.solver import (COMBOS, Solution, Spot, SubgameSolver, combo_index,
                                   range_weights)
from holdem.subgame.tree import BetMenu

__all__ = ["BetMenu", "COMBOS", "Solution", "Spot", "SubgameSolver", "combo_index",
           "range_weights"]
