"""Configuration: YAML round trips, rejection of unknown or invalid keys (the message names the
file and the key), the shipped configs/*.yaml and command-line overrides."""

import dataclasses
from pathlib import Path

import pytest
import yaml

from holdem import config
from holdem.config import Config, ConfigError, GameConfig
from holdem import registry

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def write(tmp_path, text, name="run.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def non_default():
    """A config with a non-default value in many fields, optional ones included."""
    return config.from_dict({
        "game": {"name": "kuhn"},
        "solver": {"sampling": "outcome", "exploration": 0.3, "weighting": "linear",
                   "discount_interval": 2.5, "discount_stop": 1000, "schedule_clock": "seconds",
                   "regret_floor": -1.5, "prune": True, "prune_after": 7,
                   "prune_threshold": -3.0, "average_max_street": 0},
        "train": {"iters": 123, "time_budget": 4.5, "num_workers": 2, "batch_size": 64,
                  "seed": 99},
    })


def leduc():
    return Config(game=GameConfig(name="leduc"))


@pytest.mark.parametrize("make", [leduc, non_default] + [
    (lambda name=name: config.default_for_game(name)) for name in registry.names_with_defaults()])
def test_yaml_round_trip(tmp_path, make):
    cfg = make()
    text = config.dump_yaml(cfg)
    assert config.from_dict(yaml.safe_load(text)) == cfg
    assert config.load(write(tmp_path, text)) == cfg
    assert config.to_dict(config.load(write(tmp_path, text))) == config.to_dict(cfg)


def test_missing_keys_take_defaults(tmp_path):
    assert config.load(write(tmp_path, "game:\n  name: leduc\n")) == leduc()
    assert config.load(write(tmp_path, "game: {name: leduc}\nsolver:\n  sampling: outcome\n")) \
        == dataclasses.replace(leduc(), solver=dataclasses.replace(leduc().solver,
                                                                   sampling="outcome"))


def test_config_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        leduc().solver.sampling = "outcome"


@pytest.mark.parametrize("game_name", registry.names_with_defaults())
def test_shipped_config_matches_game_defaults(game_name):
    path = CONFIGS / f"{game_name}.yaml"
    assert path.is_file(), f"{path} is missing"
    assert config.load(path) == config.default_for_game(game_name)


def test_unknown_section_names_file_and_section(tmp_path):
    path = write(tmp_path, "game:\n  name: kuhn\nsolvr:\n  sampling: external\n")
    with pytest.raises(ConfigError, match="solvr") as info:
        config.load(path)
    assert str(path) in str(info.value)


def test_unknown_key_names_file_and_key(tmp_path):
    path = write(tmp_path, "solver:\n  samplng: external\n")
    with pytest.raises(ConfigError) as info:
        config.load(path)
    assert str(path) in str(info.value)
    assert "solver.samplng" in str(info.value)


@pytest.mark.parametrize("section, key, value", [
    ("game", "name", "chess"),
    ("game", "name", 3),
    ("solver", "sampling", "full"),
    ("solver", "weighting", "quadratic"),
    ("solver", "schedule_clock", "days"),
    ("solver", "exploration", "high"),
    ("solver", "exploration", 1.5),
    ("solver", "exploration", -0.1),
    ("solver", "exploration", float("nan")),
    ("solver", "prune_prob", 2),
    ("solver", "discount_interval", 0),
    ("solver", "discount_stop", -1),
    ("solver", "prune", "maybe"),
    ("solver", "prune", 1),
    ("solver", "regret_floor", [1, 2]),
    ("solver", "average_max_street", 1.5),
    ("solver", "strategy_interval", 0),
    ("solver", "strategy_interval", 2.5),
    ("train", "seed", 1.5),
    ("train", "seed", True),
    ("train", "seed", -1),
    ("train", "iters", -5),
    ("train", "num_workers", "two"),
    ("train", "keep_checkpoints", 0),
    ("train", "snapshot_interval", float("inf")),
    ("game", "num_players", 7),
    ("game", "num_players", 1),
    ("train", "worker_restarts", 0),
    ("train", "worker_restarts", 2.5),
    ("train", "worker_restart_window", 0),
    ("train", "worker_restart_window", -60),
    ("train", "worker_restart_window", "1m"),
])
def test_bad_value_names_file_and_key(tmp_path, section, key, value):
    data = {"game": {"name": "leduc"}}
    data.setdefault(section, {})[key] = value
    path = write(tmp_path, yaml.safe_dump(data))
    with pytest.raises(ConfigError) as info:
        config.load(path)
    message = str(info.value)
    assert str(path) in message
    assert f"{section}.{key}" in message


@pytest.mark.parametrize("text", ["- a\n- b\n", "solver: 3\n", "solver: [sampling]\n"])
def test_bad_structure(tmp_path, text):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        config.load(path)
    assert str(path) in str(info.value)


def test_required_value(tmp_path):
    path = write(tmp_path, "game: {name: kuhn}\nsolver:\n  sampling: null\n")
    with pytest.raises(ConfigError, match="solver.sampling"):
        config.load(path)


def test_unreadable_or_invalid_yaml(tmp_path):
    missing = tmp_path / "missing.yaml"
    with pytest.raises(ConfigError, match="missing.yaml"):
        config.load(missing)
    broken = write(tmp_path, "solver: {sampling: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        config.load(broken)


def test_default_for_unknown_game():
    with pytest.raises(ConfigError, match="chess"):
        config.default_for_game("chess")


def test_overrides():
    base = config.default_for_game("leduc")
    cfg = config.with_overrides(base, solver={"sampling": "outcome", "weighting": None},
                                train={"seed": 5})
    assert cfg.solver.sampling == "outcome"
    assert cfg.solver.weighting == base.solver.weighting          # None: not overridden
    assert cfg.train.seed == 5
    assert base.solver.sampling == "external"                     # the original is untouched
    with pytest.raises(ConfigError, match="command line: solver.exploration"):
        config.with_overrides(base, solver={"exploration": 7})
    with pytest.raises(ConfigError, match="solver.bogus"):
        config.with_overrides(base, solver={"bogus": 1})


def test_override_of_unknown_section():
    with pytest.raises(ConfigError, match="bogus"):
        config.with_overrides(leduc(), bogus={"x": 1})


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_config_loads_and_round_trips(path):
    loaded = config.load(path)
    assert config.from_dict(config.to_dict(loaded)) == loaded


# -- a config says which game it is, and every key it sets takes effect -----------------------
def test_game_name_is_required(tmp_path):
    """A game section with No-Limit keys but no name used to train Leduc."""
    for text in ("", "game:\n  stack: 200\n", "train:\n  seed: 3\n"):
        path = write(tmp_path, text)
        with pytest.raises(ConfigError, match="game.name is required") as info:
            config.load(path)
        assert str(path) in str(info.value)


@pytest.mark.parametrize("text, key", [
    ("game: {name: leduc, stack: 200}", "game.stack"),
    ("game: {name: kuhn, buckets: x.buckets}", "game.buckets"),
    ("game: {name: leduc}\nactions: {flop: [[0.5]]}", "actions.flop"),
    ("game: {name: leduc}\ntrain: {eval_baseline: call}", "train.eval_baseline"),
    ("game: {name: nlhe, num_players: 3}\ntrain: {eval_interval: 5}", "train.eval_interval"),
    ("game: {name: nlhe}\ntrain: {eval_baseline: null, eval_hands: 500}", "train.eval_hands"),
    ("game: {name: nlhe, num_players: 6}\ntrain: {eval_lbr: fc:1-4}", "train.eval_lbr"),
    ("game: {name: nlhe}\ntrain: {eval_lbr: null, eval_lbr_hands: 500}", "train.eval_lbr_hands"),
    ("game: {name: leduc}\nsolver: {exploration: 0.3}", "solver.exploration"),
    ("game: {name: leduc}\nsolver: {weighting: none, dcfr_alpha: 2}", "solver.dcfr_alpha"),
    ("game: {name: leduc}\nsolver: {weighting: dcfr, discount_interval: 10}",
     "solver.discount_interval"),
    ("game: {name: leduc}\nsolver: {discount_stop: 10}", "solver.discount_stop"),
    ("game: {name: leduc}\nsolver: {prune_after: 10}", "solver.prune_after"),
    ("game: {name: leduc}\nsolver: {schedule_clock: seconds}", "solver.schedule_clock"),
    ("game: {name: kuhn}\nsolver: {average_max_street: 1}", "solver.average_max_street"),
    ("game: {name: nlhe, num_players: 3}\nsolver: {sampling: outcome}", "solver.sampling"),
])
def test_key_that_cannot_take_effect_is_rejected(tmp_path, text, key):
    path = write(tmp_path, text + "\n")
    with pytest.raises(ConfigError) as info:
        config.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {key}:"), message


@pytest.mark.parametrize("key", sorted(f"{s}.{n}" for (s, n), rule in config.KEYS.items()
                                        if rule.applies))
def test_every_conditional_key_is_rejected_outside_its_condition(tmp_path, key):
    """Kuhn with default solver settings meets none of the conditions but eval_interval's and
    num_players' (a two-player-only game stands in: every registered small game seats 3)."""
    section, name = key.split(".")
    game = {"train.eval_interval": "nlhe",                       # (6-max: no cheap eval)
            "game.num_players": "heads_up_toy"}.get(key, "kuhn")
    value = config._defaults(section)[name]
    if value is None:
        value = {"train.eval_baseline": "call", "game.buckets": "x.buckets"}.get(key, 10)
    data = {"game": {"name": game, **({"num_players": 6} if game == "nlhe" else {})}}
    data.setdefault(section, {})[name] = 3 if key == "game.num_players" else value
    if key.startswith("solver.opponent_exploration"):   # the keys external sampling takes
        data["solver"]["sampling"] = "outcome"
    path = write(tmp_path, yaml.safe_dump(data))
    registry.register(registry.GameSpec(name="heads_up_toy", build=lambda config: None,
                                        streets=1))
    try:
        with pytest.raises(ConfigError, match=f"{key}: takes effect only with"):
            config.load(path)
    finally:
        registry.unregister("heads_up_toy")


def test_eval_lbr_takes_the_lbr_settings(tmp_path):
    from holdem.analysis.lbr.sampled import ACTION_SETS, ROUNDS, LbrSetting

    assert set(config._CHOICES[("train", "eval_lbr")]) == {
        str(LbrSetting(a, r)) for a in ACTION_SETS for r in ROUNDS}
    path = write(tmp_path, "game: {name: nlhe}\ntrain: {eval_lbr: fcpa:2-4}\n")
    with pytest.raises(ConfigError, match="train.eval_lbr") as info:
        config.load(path)
    assert "fcpa:3-4" in str(info.value)
    assert config.load(CONFIGS / "hunl_default.yaml").train.eval_lbr == "fcpa:3-4"


def test_keys_that_take_effect_are_accepted():
    cfg = config.from_dict({
        "game": {"name": "leduc"},
        "solver": {"sampling": "outcome", "exploration": 0.3, "weighting": "dcfr",
                   "dcfr_alpha": 2.0, "discount_stop": 50, "schedule_clock": "seconds",
                   "prune": True, "prune_after": 5, "average_max_street": 1},
        "train": {"eval_interval": 5.0}})
    assert (cfg.solver.exploration, cfg.solver.dcfr_alpha, cfg.solver.prune_after) == (0.3, 2, 5)
    assert config.load(CONFIGS / "hunl_default.yaml").game.buckets.endswith("default_hu.buckets")


def test_to_dict_keeps_only_keys_that_apply():
    data = config.to_dict(config.default_for_game("leduc"))
    assert data["game"] == {"name": "leduc"} and "actions" not in data
    assert "exploration" not in data["solver"] and "dcfr_alpha" in data["solver"]
    assert "eval_baseline" not in data["train"] and "eval_interval" in data["train"]


def test_stored_config_of_an_older_version_loads():
    """Checkpoints used to store every key, No-Limit ones for Leduc too: from_stored reads
    them; those keys take their defaults."""
    full = {name: dict(config._defaults(name)) for name in config._section_names()}
    full["game"].update(name="leduc", stack=50.0)
    full["actions"] = {k: config._plain(v) for k, v in full["actions"].items()}
    stored = config.from_stored(full, source="checkpoint x.ckpt")
    assert stored == leduc() and not hasattr(stored.game, "stack")   # Leduc's has no table
    with pytest.raises(ConfigError, match="^x: game.stack: takes effect only with"):
        config.from_dict(full, source="x")


def test_overrides_drop_what_they_make_inapplicable():
    base = config.default_for_game("leduc")                 # dcfr, with dcfr_interval set
    linear = config.with_overrides(base, solver={"weighting": "linear"})
    assert "dcfr_interval" not in config.to_dict(linear)["solver"]
    with pytest.raises(ConfigError, match="command line: solver.exploration: takes effect"):
        config.with_overrides(base, solver={"exploration": 0.2})


def test_flag_dependent_keys_are_checked_on_the_final_config(tmp_path):
    path = write(tmp_path, "game: {name: leduc}\ntrain: {log_interval: 1, merge_threads: 2}\n")
    loaded = config.load(path)                      # --tensorboard and --num-workers may follow
    with pytest.raises(ConfigError) as info:
        config.check_effective(loaded)
    assert str(info.value).startswith(f"{path}: train.log_interval: takes effect only with "
                                      "TensorBoard")
    with_tb = config.with_overrides(loaded, train={"tensorboard": True})
    with pytest.raises(ConfigError, match=f"^{path}: train.merge_threads: .*worker"):
        config.check_effective(with_tb)
    config.check_effective(with_tb, workers=False)          # an executor passed in
    config.check_effective(config.with_overrides(with_tb, train={"num_workers": 2}))
    with pytest.raises(ConfigError, match="^command line: train.start_method"):
        config.check_effective(config.with_overrides(config.default_for_game("kuhn"),
                                                     train={"start_method": "fork"}))


def test_errors_building_the_game_name_the_file(tmp_path):
    from holdem.games import make_game

    path = write(tmp_path, "game: {name: nlhe, buckets: missing.buckets}\n"
                 "actions: {preflop_open: [2.5], flop: [[1.0]], turn: [[1.0]], river: [[1.0]]}\n")
    with pytest.raises(ConfigError, match=f"^{path}: game.buckets: .*missing.buckets"):
        make_game(config.load(path))


@pytest.mark.parametrize("config_file", ["kuhn", "leduc", "hunl_default", "6max"])
def test_game_facts_the_config_checks_agree_with_the_games(config_file):
    """config validates through the registry (it loads no numba): the registry's facts about a
    game are those of the game it builds."""
    from holdem.games import make_game
    from holdem.games.nlhe.multiway import MultiwayGame
    from holdem.games.nlhe.multiway_kernels import MAX_PLAYERS

    cfg = config.load(CONFIGS / f"{config_file}.yaml")
    spec = registry.spec(cfg.game.name)
    game = make_game(cfg)
    assert spec.streets == game.num_streets
    assert game.num_players <= spec.max_players
    assert spec.implicit(game.num_players) == isinstance(game, MultiwayGame)
    assert config._RANGE[("game", "num_players")] == (2, MAX_PLAYERS)


def test_ray_keys_need_the_ray_backend_and_workers():
    leduc = config.default_for_game("leduc")

    def with_train(**train):
        return config.with_overrides(leduc, train=train)

    with pytest.raises(config.ConfigError, match="train.ray_address: takes effect only "
                                                      "with train.backend: ray"):
        config.check_effective(with_train(num_workers=2, ray_address="auto"))
    with pytest.raises(config.ConfigError, match="train.backend: takes effect only with "
                                                      "worker processes"):
        config.check_effective(with_train(backend="ray"))
    with pytest.raises(config.ConfigError, match="train.start_method: takes effect only "
                                                      "with train.backend: process"):
        config.check_effective(with_train(num_workers=2, backend="ray", start_method="fork"))
    with pytest.raises(config.ConfigError, match="'dask' is not one of process, ray"):
        with_train(backend="dask")
    config.check_effective(with_train(num_workers=2, backend="ray", ray_address="auto"))


def test_restart_budget_keys_are_worker_keys_stored_only_when_set(tmp_path):
    """The restart budget applies where workers run, so in-process it is rejected like the other
    worker keys; a checkpoint stores it only when set, so runs that leave it at its default
    write the header they wrote before it existed."""
    leduc = config.default_for_game("leduc")
    assert {"worker_restarts", "worker_restart_window"} <= set(config.WORKER_KEYS)
    assert (leduc.train.worker_restarts, leduc.train.worker_restart_window) == (5, 60.0)
    assert not {"worker_restarts", "worker_restart_window"} & set(config.to_dict(leduc)["train"])
    path = write(tmp_path, "game: {name: leduc}\ntrain: {worker_restarts: 2, "
                 "worker_restart_window: 30}\n")
    loaded = config.load(path)
    with pytest.raises(ConfigError, match=f"^{path}: train.worker_restarts: takes effect only "
                                          "with worker processes"):
        config.check_effective(loaded)
    workers = config.with_overrides(loaded, train={"num_workers": 2})
    config.check_effective(workers)
    stored = config.to_dict(workers)["train"]
    assert (stored["worker_restarts"], stored["worker_restart_window"]) == (2, 30.0)
    assert config.from_stored(config.to_dict(workers), source="checkpoint") == workers
