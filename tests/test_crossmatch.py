"""Head-to-head on the real game between blueprints of different bet menus
(:mod:`holdem.analysis.matches.crossmatch`): checked against the abstract-tree match where both can
play, and across two menus."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from holdem import config as config_mod
from holdem.analysis.blueprint import Blueprint
from holdem.analysis.matches.crossmatch import cross_match
from holdem.analysis.matches.headtohead import head_to_head
from holdem.games import make_game
from holdem.solver.solver import Solver, save_solver

ROOT = Path(__file__).resolve().parents[1]


def _with_actions(cfg, **changes):
    """``cfg`` with its ``actions`` section changed."""
    sections = tuple((name, dataclasses.replace(section, **changes) if name == "actions"
                      else section) for name, section in cfg.sections)
    return dataclasses.replace(cfg, sections=sections)


def _train(cfg, iterations, tmp):
    solver = Solver(make_game(cfg), cfg)
    solver.run(iterations)
    save_solver(solver, tmp / "checkpoints" / f"ckpt-{iterations:012d}.ckpt")
    return Blueprint.load(tmp)


@pytest.fixture(scope="module")
def default_cfg():
    return config_mod.load(ROOT / "configs" / "hunl_default.yaml")


@pytest.fixture(scope="module")
def weak_and_strong(default_cfg, tmp_path_factory):
    return (_train(default_cfg, 2_000, tmp_path_factory.mktemp("weak")),
            _train(default_cfg, 60_000, tmp_path_factory.mktemp("strong")))


def test_on_one_menu_it_agrees_with_the_abstract_match(weak_and_strong):
    """Two blueprints of one menu: every size either bot makes is on both trees (fractions of
    the real pot, which is the tree's pot while nobody leaves it), so the real-game match
    plays the abstract one and the two estimates agree within their intervals; swapping the
    blueprints flips the sign."""
    weak, strong = weak_and_strong
    tree = head_to_head(strong, weak, hands=100_000, seed=3)
    real = cross_match(strong, weak, hands=100_000, seed=4)
    assert tree.mbb_per_hand > 3 * tree.ci95                # a clear edge to agree on
    assert abs(real.mbb_per_hand - tree.mbb_per_hand) < 1.2 * (real.ci95 + tree.ci95)
    back = cross_match(weak, strong, hands=100_000, seed=4)
    assert back.mbb_per_hand == pytest.approx(-real.mbb_per_hand, abs=1.2 * 2 * real.ci95)


def test_a_blueprint_against_itself_ties_and_runs_reproduce(weak_and_strong):
    _, strong = weak_and_strong
    one = cross_match(strong, strong, hands=40_000, seed=9)
    assert abs(one.mbb_per_hand) < one.ci95 * 1.5 and one.hands == 40_000
    again = cross_match(strong, strong, hands=40_000, seed=9)
    assert again.mbb_per_hand == one.mbb_per_hand
    threaded = cross_match(strong, strong, hands=40_001, seed=9, threads=2)
    assert threaded.hands == 40_002 and np.isfinite(threaded.mbb_per_hand)


def test_two_menus_meet_on_the_real_game(default_cfg, weak_and_strong, tmp_path):
    """A blueprint with a second open size (4 bb) and a second 3-bet size plays the default
    menu (its 4 bb opens are off the default tree, read on the real pot), and what one wins
    the other loses; the abstract match refuses the pair."""
    cfg = _with_actions(default_cfg, preflop_open=(2.5, 4.0), preflop=((1.0, 2.0), (1.0,)))
    other = _train(cfg, 2_000, tmp_path)
    weak, _ = weak_and_strong
    result = cross_match(other, weak, hands=40_000, seed=1)
    back = cross_match(weak, other, hands=40_000, seed=2)
    assert np.isfinite(result.ci95) and result.hands == 40_000
    assert abs(result.mbb_per_hand + back.mbb_per_hand) < 1.2 * (result.ci95 + back.ci95)
    with pytest.raises(ValueError, match="head_to_head|same game and action"):
        head_to_head(other, weak, hands=10)


def test_different_games_are_refused(default_cfg, weak_and_strong, tmp_path):
    game = dataclasses.replace(default_cfg.game, stack=200.0)
    deep = _train(dataclasses.replace(default_cfg, game=game), 100, tmp_path)
    weak, _ = weak_and_strong
    with pytest.raises(ValueError, match=r"different games \(game.stack differ\)"):
        cross_match(deep, weak, hands=10)


def test_eval_blueprint_plays_other_menus_on_the_real_game(default_cfg, weak_and_strong,
                                                           tmp_path, capsys):
    from holdem.cli.eval_blueprint import main

    cfg = _with_actions(default_cfg, preflop_open=(2.5, 4.0))
    other = _train(cfg, 500, tmp_path / "other")
    weak, _ = weak_and_strong
    args = ["--checkpoint", str(weak.checkpoint.path), "--vs-checkpoint",
            str(other.checkpoint.path), "--hands", "2000", "--seed", "5"]
    assert main(args) == 0
    out = capsys.readouterr().out
    expected = cross_match(weak, other, hands=2000, seed=5)
    assert f"mbb/hand: {expected.mbb_per_hand:.1f} ± {expected.ci95:.1f}" in out
    assert "bet menus differ: played on the real game" in out
    from holdem.config import ConfigError

    with pytest.raises(ConfigError, match="--history: not available for --vs-checkpoint"):
        main(args + ["--history", str(tmp_path / "h.txt")])
