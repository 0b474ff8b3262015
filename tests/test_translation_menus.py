"""Ordinary bets are read between two sizes that are not all-in (issue 52, point 3).

A player who finds that the bot reads a 3 bb open as an all-in some of the time, and then folds
everything, opens 3 bb every hand. ``configs/hunl_opens.yaml`` holds sizes around every ordinary
bet: 2-4 bb opens, 3-bets of three to four times the open, and bets of a third of the pot to the
pot on the flop, turn and river. ``configs/hunl_default.yaml``, the small benchmark tree, does
not (one open size, then all-in), and the test says so too. (The main job's
``configs/hunl_blueprint.yaml`` reads every line here between two sizes except 3-bets above the
pot, 3.5x and 4x the open, which it reads between a pot 3-bet and all-in: its 3-bets are 0.5,
0.75 and 1 pot.)
"""

from pathlib import Path

import numpy as np

from holdem import config as config_mod
from holdem.analysis.blueprint import Blueprint
from holdem.games import make_game
from holdem.solver.solver import Solver, save_solver

ROOT = Path(__file__).resolve().parents[1]
BB = 100                                         # chips per big blind in these lines
OPENS = [200, 250, 300, 350, 400]
CALLED = [("raise", 250), ("call", None)]        # a called 2.5 bb open: a pot of 500
CHECKS = {"flop": [], "turn": [("check", None)] * 2, "river": [("check", None)] * 4}


def _lines():
    """(name, line): every ordinary bet's line, the bet last."""
    for chips in OPENS:
        yield f"open {chips / BB:g} bb", [("raise", chips)]
    for opened in (250, 300):
        for times in (3, 3.5, 4):
            yield (f"3-bet {times:g}x a {opened / BB:g} bb open",
                   [("raise", opened), ("raise", int(times * opened))])
    for street, checks in CHECKS.items():
        for fraction in (1 / 3, 1 / 2, 2 / 3, 3 / 4, 1):
            yield (f"{street} bet {fraction:.2f} pot",
                   CALLED + checks + [("bet", round(fraction * 500))])


def _blueprint(name, tmp):
    """The menu's tree: a blueprint of one iteration (translation reads only the tree)."""
    cfg = config_mod.load(ROOT / "configs" / name)
    solver = Solver(make_game(cfg), cfg)
    solver.run(1)
    save_solver(solver, tmp / "checkpoints" / "ckpt-000000000001.ckpt")
    return Blueprint.load(tmp)


def _readings(bp, line):
    """The labels the bet at the end of ``line`` may be read as."""
    _, notes = bp.translate_line(line, BB, rng=np.random.default_rng(0))
    return [label for label, _, _ in notes[-1].options]


def test_ordinary_bets_are_read_between_sizes_that_are_not_all_in(tmp_path):
    bp = _blueprint("hunl_opens.yaml", tmp_path)
    for what, line in _lines():
        readings = _readings(bp, line)
        assert "a" not in readings and 1 <= len(readings) <= 2, (what, readings)


def test_the_benchmark_tree_reads_a_3bb_open_as_all_in_at_times(tmp_path):
    bp = _blueprint("hunl_default.yaml", tmp_path)
    for chips in (300, 350, 400):
        assert _readings(bp, [("raise", chips)]) == ["r2.5b", "a"]
    assert "a" not in _readings(bp, CALLED + [("bet", 250)])
