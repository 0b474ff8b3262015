"""Configuration: YAML round trips, rejection of unknown or invalid keys (the message names the
file and the key), the shipped configs/*.yaml and command-line overrides."""

import dataclasses
from pathlib import Path

import pytest
import yaml

from holdem import config
from holdem.config import Config, ConfigError
from holdem.games import SMALL_GAMES

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def write(tmp_path, text, name="run.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def non_default():
    """A config with a non-default value in many fields, optional ones included."""
    return config.from_dict({
        "game": {"name": "kuhn"},
        "solver": {"sampling": "outcome", "exploration": 0.3, "weighting": "dcfr",
                   "discount_interval": 2.5, "discount_stop": 1000, "schedule_clock": "seconds",
                   "regret_floor": -1.5, "prune": True, "prune_after": 7,
                   "prune_threshold": -3.0, "average_max_street": 0},
        "train": {"iters": 123, "time_budget": 4.5, "num_workers": 2, "batch_size": 64,
                  "seed": 99},
    })


@pytest.mark.parametrize("make", [Config, non_default] + [
    (lambda name=name: config.default_for_game(name)) for name in SMALL_GAMES])
def test_yaml_round_trip(tmp_path, make):
    cfg = make()
    text = config.dump_yaml(cfg)
    assert config.from_dict(yaml.safe_load(text)) == cfg
    assert config.load(write(tmp_path, text)) == cfg
    assert config.to_dict(config.load(write(tmp_path, text))) == config.to_dict(cfg)


def test_missing_keys_take_defaults(tmp_path):
    assert config.load(write(tmp_path, "")) == Config()
    assert config.load(write(tmp_path, "solver:\n  sampling: outcome\n")) == \
        dataclasses.replace(Config(), solver=dataclasses.replace(Config().solver,
                                                                 sampling="outcome"))


def test_config_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Config().solver.sampling = "outcome"


@pytest.mark.parametrize("game_name", SMALL_GAMES)
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
    ("train", "seed", 1.5),
    ("train", "seed", True),
    ("train", "seed", -1),
    ("train", "iters", -5),
    ("train", "num_workers", "two"),
    ("train", "keep_checkpoints", 0),
    ("train", "snapshot_interval", float("inf")),
])
def test_bad_value_names_file_and_key(tmp_path, section, key, value):
    path = write(tmp_path, yaml.safe_dump({section: {key: value}}))
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
    path = write(tmp_path, "solver:\n  sampling: null\n")
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
        config.with_overrides(Config(), bogus={"x": 1})


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_config_loads_and_round_trips(path):
    loaded = config.load(path)
    assert config.from_dict(config.to_dict(loaded)) == loaded
