"""Six-max on the real game between blueprints of different bet menus
(:mod:`holdem.analysis.matches.table_crossmatch`)."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from holdem import config as config_mod
from holdem.analysis.blueprint import Blueprint
from holdem.analysis.matches.table_crossmatch import table_cross_match
from holdem.games import make_game
from holdem.solver.solver import Solver, save_solver

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _train(name, iterations, tmp, **game):
    cfg = config_mod.load(ROOT / "configs" / name)
    if game:
        cfg = dataclasses.replace(cfg, game=dataclasses.replace(cfg.game, **game))
    solver = Solver(make_game(cfg), cfg)
    solver.run(iterations)
    save_solver(solver, tmp / "checkpoints" / f"ckpt-{iterations:012d}.ckpt")
    return Blueprint.load(tmp)


@pytest.fixture(scope="module")
def one_open(tmp_path_factory):
    return _train("6max.yaml", 3_000, tmp_path_factory.mktemp("one"))


@pytest.fixture(scope="module")
def two_opens(tmp_path_factory):
    return _train("6max_opens.yaml", 3_000, tmp_path_factory.mktemp("two"))


def test_a_blueprint_against_itself_ties_and_runs_reproduce(one_open):
    one = table_cross_match(one_open, one_open, hands=300, seed=3)
    assert one.hands == 300 and len(one.seats) == 6
    assert abs(one.mbb_per_hand) < 3 * one.ci95
    assert np.mean([mbb for mbb, _ in one.seats]) == pytest.approx(one.mbb_per_hand)
    again = table_cross_match(one_open, one_open, hands=300, seed=3)
    assert again.mbb_per_hand == one.mbb_per_hand


def test_two_menus_meet_on_the_real_game(one_open, two_opens):
    """The two-open blueprint's 4 bb opens and 1.5 pot 3-bets are off the other's tree (read on
    the real pot); the match plays, and what A wins from a seat is the other five's loss (each
    deal's payoffs sum to zero: a tie against itself is checked above)."""
    result = table_cross_match(two_opens, one_open, hands=301, seed=1)
    assert result.hands == 306 and np.isfinite(result.ci95) and result.ci95 > 0


def test_different_games_are_refused(one_open, tmp_path):
    deeper = _train("6max.yaml", 10, tmp_path, stack=200.0)
    with pytest.raises(ValueError, match="game.stack differ"):
        table_cross_match(one_open, deeper, hands=6)
