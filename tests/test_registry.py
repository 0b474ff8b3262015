"""A game added through the registry alone trains like a shipped one.

The toy game here is Kuhn poker with four cards (J, Q, K, A): built from the limit-game rules of
``holdem.games.small`` and registered at run time, with no edit outside this test. It trains
in-process and with the lag simulator (8 simulated workers), reloads from its checkpoint, and
its exact exploitability falls as it trains.
"""

import pytest

from holdem import config as config_mod
from holdem.analysis.blueprint import load_profile
from holdem.analysis.exact import ExactEvaluator
from holdem.config import ConfigError
from holdem.games import EXACT, make_game, registry
from holdem.games.small import LimitRules, limit_game
from holdem.runtime.lagged import LaggedExecutor
from holdem.training import train

KUHN4 = LimitRules("kuhn4", deck_ranks=(0, 1, 2, 3), num_ranks=4, ante=1.0, bet_sizes=(1.0,),
                   max_bets=1)


@pytest.fixture
def kuhn4():
    defaults = {"game": {"name": "kuhn4"}, "train": {"seed": 0},
                "solver": {"sampling": "external", "weighting": "dcfr", "dcfr_interval": 1000}}
    registry.register(registry.GameSpec(name="kuhn4", build=lambda config: limit_game(KUHN4),
                                        streets=1, defaults=defaults))
    yield config_mod.default_for_game("kuhn4")
    registry.unregister("kuhn4")


def _exploitability(logdir):
    loaded = load_profile(logdir)
    return ExactEvaluator(loaded.game).exploitability(loaded.average)


def test_a_registered_toy_game_trains_in_process_and_lagged(tmp_path, kuhn4):
    game = make_game(kuhn4)
    assert game.name == "kuhn4" and game.supports(EXACT) and game.deck_size == 4
    one = train(config_mod.with_overrides(kuhn4, train={"iters": 1}), tmp_path / "one",
                progress=False)
    start = _exploitability(one.checkpoint)                   # 0.448 chips per game

    config = config_mod.with_overrides(kuhn4, train={"iters": 200_000})
    serial = train(config, tmp_path / "serial", progress=False)
    # Each player: a card (J..A) at the first decision and facing a bet.
    assert serial.iterations == 200_000 and serial.infosets == 2 * 4 * 2
    # A fixed flush-to-merge delay (32 iterations per worker): this checks that a registered
    # game runs through the simulated workers, not what the modelled main process makes of a
    # game whose iterations take a microsecond (it falls behind them).
    lagged = train(config, tmp_path / "lagged", progress=False,
                   executor=LaggedExecutor(game, config, 8, delay=256))
    assert lagged.iterations == 200_000 and lagged.infosets == 16
    # Measured: 0.0024 in-process, 0.0093 with 8 simulated workers (16 infosets: every delta
    # touches most of them).
    assert _exploitability(tmp_path / "serial") < 0.005 < 0.1 * start
    assert _exploitability(tmp_path / "lagged") < 0.02


def test_an_unregistered_game_is_refused_by_name(tmp_path, kuhn4):
    registry.unregister("kuhn4")
    with pytest.raises(ConfigError, match="'kuhn4' is not one of kuhn, leduc, nlhe"):
        config_mod.from_dict({"game": {"name": "kuhn4"}})
    with pytest.raises(registry.UnknownGameError, match="kuhn4"):
        registry.spec("kuhn4")
