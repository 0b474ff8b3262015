"""Shared fixtures: seeds, random generators, the small games and their exact evaluators; and
the quick tier's marks.

Seeds come from here so every test is reproducible; games and evaluators are built once per
session (they are immutable). Tests named in ``tests/slow.txt`` are marked ``slow``, so
``pytest -m "not slow"`` (the quick tier, README: Tests) leaves them out.
"""

import functools
from pathlib import Path

import numpy as np
import pytest

from holdem.analysis.exact import ExactEvaluator
from holdem.analysis.strategy import uniform_profile
from holdem.games import make_game

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
SLOW_LIST = Path(__file__).with_name("slow.txt")


def slow_tests():
    """The test functions of ``tests/slow.txt`` (``tests/test_x.py::test_name``: every case of
    a parametrized test), without comments and blank lines."""
    lines = (line.split("#")[0].strip() for line in SLOW_LIST.read_text().splitlines())
    return {line for line in lines if line}


def pytest_collection_modifyitems(config, items):
    slow = slow_tests()
    for item in items:
        if item.nodeid.split("[")[0] in slow:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def seed():
    return 20240607


@pytest.fixture
def rng(seed):
    return np.random.default_rng(seed)


@pytest.fixture(scope="session")
def kuhn():
    return make_game("kuhn")


@pytest.fixture(scope="session")
def leduc():
    return make_game("leduc")


@pytest.fixture(scope="session")
def three_players():
    """``three_players(name)``: (game, exact evaluator) of ``configs/NAME3.yaml`` (``kuhn`` or
    ``leduc`` for three players), each built once."""
    from holdem import config as config_mod

    @functools.cache
    def build(name):
        game = make_game(config_mod.load(CONFIGS / f"{name}3.yaml"))
        return game, ExactEvaluator(game)
    return build


@pytest.fixture(scope="session")
def hunl_run(tmp_path_factory):
    """A logdir holding a checkpoint of 20,000 in-process iterations of
    ``configs/hunl_default.yaml`` (seed 0): a real heads-up blueprint, barely trained. Tests
    read it; none writes into it."""
    from holdem import config as config_mod
    from holdem.solver.solver import Solver, save_solver

    logdir = tmp_path_factory.mktemp("hunl_default")
    cfg = config_mod.load(Path(__file__).resolve().parents[1] / "configs" / "hunl_default.yaml")
    solver = Solver(make_game(cfg), cfg)
    solver.run(20_000)
    save_solver(solver, logdir / "checkpoints" / "ckpt-000000020000.ckpt")
    return logdir


@pytest.fixture(scope="session")
def untrained(tmp_path_factory):
    """A checkpoint of ``configs/hunl_default.yaml`` after 0 iterations: every strategy
    uniform (a second to make)."""
    from holdem import config as config_mod
    from holdem.solver.solver import Solver, save_solver

    cfg = config_mod.load(Path(__file__).resolve().parents[1] / "configs" / "hunl_default.yaml")
    path = tmp_path_factory.mktemp("untrained") / "checkpoints" / "ckpt-000000000000.ckpt"
    save_solver(Solver(make_game(cfg), cfg), path)
    return path


@pytest.fixture(scope="session")
def kuhn_evaluator(kuhn):
    return ExactEvaluator(kuhn)


@pytest.fixture(scope="session")
def leduc_evaluator(leduc):
    return ExactEvaluator(leduc)



@pytest.fixture
def random_profile(rng):
    """``random_profile(game, zero_prob=0.0)``: a random profile float64[num_keys, max_actions];
    with ``zero_prob`` some actions get probability 0 (each row keeps one positive action)."""
    return lambda game, zero_prob=0.0: _random_profile(game, rng, zero_prob)


def _random_profile(game, rng, zero_prob):
    mask = uniform_profile(game) > 0
    profile = rng.random(mask.shape) * mask
    if zero_prob:
        drop = (rng.random(mask.shape) < zero_prob) & mask
        keep = np.argmax(mask * rng.random(mask.shape), axis=1)
        drop[np.arange(mask.shape[0]), keep] = False
        profile[drop] = 0.0
    return profile / profile.sum(axis=1, keepdims=True)
