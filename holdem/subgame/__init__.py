"""Subgame solving: the turn and river of a heads-up hand solved with exact cards from two
ranges (:mod:`holdem.subgame.solver`), as postflop solvers do."""

from holdem.subgame.solver import (COMBOS, Solution, Spot, SubgameSolver, combo_index,  # noqa
                                   range_weights)
from holdem.subgame.tree import BetMenu  # noqa: F401
