"""Run configuration: YAML files load into frozen dataclasses, one per section.

Unknown sections and keys are rejected with the file and the key's name; values are type-checked.
Command-line flags override the file through :func:`with_overrides`. The resolved config is stored
in every checkpoint header (:func:`to_dict`).
"""

import dataclasses
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path

import yaml

GAME_NAMES = ("kuhn", "leduc", "nlhe")
SAMPLINGS = ("external", "outcome")
WEIGHTINGS = ("none", "linear", "dcfr")
CLOCKS = ("iterations", "seconds")
START_METHODS = ("spawn", "fork", "forkserver")


class ConfigError(ValueError):
    """A config file or value is invalid; the message names the file and the key."""


@dataclass(frozen=True)
class GameConfig:
    name: str = "leduc"
    num_players: int = 2
    stack: float = 100.0
    small_blind: float = 0.5
    big_blind: float = 1.0
    ante: float = 0.0
    buckets: typing.Optional[str] = None


@dataclass(frozen=True)
class ActionsConfig:
    """No-Limit Hold'em bet/raise menus (see :mod:`holdem.abstraction.actions`)."""

    preflop_open: tuple = (2.5,)
    preflop: tuple = ((1.0,),)
    flop: tuple = ((0.5, 1.0), (1.0,))
    turn: tuple = ((0.5, 1.0), (1.0,))
    river: tuple = ((0.5, 1.0), (1.0,))
    all_in: bool = True
    max_raises: tuple = (3, 2, 2, 2)


@dataclass(frozen=True)
class SolverConfig:
    sampling: str = "external"
    exploration: float = 0.6
    weighting: str = "none"
    discount_interval: float = 1
    discount_stop: typing.Optional[float] = None
    schedule_clock: str = "iterations"
    dcfr_interval: float = 1000
    dcfr_alpha: float = 1.5
    dcfr_beta: float = 0.0
    dcfr_gamma: float = 2.0
    regret_floor: typing.Optional[float] = None
    prune: bool = False
    prune_after: float = 0
    prune_prob: float = 0.95
    prune_threshold: float = -300_000_000.0
    average_max_street: typing.Optional[int] = None


@dataclass(frozen=True)
class TrainConfig:
    iters: typing.Optional[int] = None
    time_budget: typing.Optional[float] = None
    num_workers: int = 1
    batch_size: int = 0
    merge_threads: int = 0
    own_delta_weight: float = 0.0
    seed: int = 0
    snapshot_interval: float = 600.0
    keep_checkpoints: int = 3
    progress_interval: float = 5.0
    tensorboard: bool = False
    log_interval: float = 10.0
    eval_interval: float = 60.0
    eval_baseline: typing.Optional[str] = None
    eval_baseline_interval: float = 600.0
    eval_hands: int = 20_000
    utility_window: int = 10_000
    start_method: str = "spawn"
    worker_timeout: float = 10.0
    max_memory_gb: typing.Optional[float] = None


@dataclass(frozen=True)
class Config:
    game: GameConfig = field(default_factory=GameConfig)
    actions: ActionsConfig = field(default_factory=ActionsConfig)
    solver: SolverConfig = field(default_factory=SolverConfig)
    train: TrainConfig = field(default_factory=TrainConfig)


_CHOICES = {
    ("game", "name"): GAME_NAMES,
    ("solver", "sampling"): SAMPLINGS,
    ("solver", "weighting"): WEIGHTINGS,
    ("solver", "schedule_clock"): CLOCKS,
    ("train", "start_method"): START_METHODS,
    ("train", "eval_baseline"): ("fold", "call", "pot", "random", "equity"),
}
_POSITIVE = {("game", "stack"), ("game", "small_blind"), ("game", "big_blind"),
             ("game", "num_players"),
             ("solver", "discount_interval"), ("solver", "dcfr_interval"), ("train", "snapshot_interval"),
             ("train", "progress_interval"), ("train", "keep_checkpoints"),
             ("train", "log_interval"), ("train", "eval_interval"), ("train", "utility_window"),
             ("train", "worker_timeout"), ("train", "max_memory_gb"),
             ("train", "eval_baseline_interval"), ("train", "eval_hands")}
_NON_NEGATIVE = {("game", "ante"), ("solver", "prune_after"), ("train", "iters"), ("train", "time_budget"),
                 ("train", "num_workers"), ("train", "batch_size"), ("train", "seed"),
                 ("train", "merge_threads"), ("train", "own_delta_weight"),
                 ("solver", "average_max_street"), ("solver", "discount_stop")}
_PROBABILITY = {("solver", "exploration"), ("solver", "prune_prob")}


def _number_list(where, value, positive=True, integer=False):
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"{where}: expected a list of numbers, got {value!r}")
    out = []
    for x in value:
        ok = isinstance(x, int) if integer else isinstance(x, (int, float))
        if isinstance(x, bool) or not ok or not math.isfinite(x) or (positive and x <= 0):
            kind = "positive integers" if integer else "positive numbers"
            raise ConfigError(f"{where}: expected a list of {kind}, got {value!r}")
        out.append(int(x) if integer else float(x))
    return tuple(out)


def _check_actions(where, name, value):
    if name == "all_in":
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {value!r}")
        return value
    if name == "preflop_open":
        return _number_list(where, value)
    if name == "max_raises":
        out = _number_list(where, value, integer=True)
        if len(out) != 4:
            raise ConfigError(f"{where}: expected 4 caps (preflop, flop, turn, river)")
        return out
    if not isinstance(value, (list, tuple)) or not value:
        raise ConfigError(f"{where}: expected a list of size lists, one per raise depth")
    return tuple(_number_list(f"{where}[{i}]", v) for i, v in enumerate(value))


def _check_value(source, section, name, tp, value):
    where = f"{source}: {section}.{name}"
    if section == "actions":
        return _check_actions(where, name, value)
    optional = typing.get_origin(tp) is typing.Union
    base = typing.get_args(tp)[0] if optional else tp
    if value is None:
        if optional:
            return None
        raise ConfigError(f"{where}: a value is required")
    if base is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {value!r}")
    elif base is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
    elif base is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        value = float(value)
    elif base is str and not isinstance(value, str):
        raise ConfigError(f"{where}: expected a string, got {value!r}")
    key = (section, name)
    if key in _CHOICES and value not in _CHOICES[key]:
        raise ConfigError(f"{where}: {value!r} is not one of {', '.join(_CHOICES[key])}")
    if key in _POSITIVE and value <= 0:
        raise ConfigError(f"{where}: must be positive, got {value!r}")
    if key in _NON_NEGATIVE and value < 0:
        raise ConfigError(f"{where}: must not be negative, got {value!r}")
    if key in _PROBABILITY and not 0 <= value <= 1:
        raise ConfigError(f"{where}: must lie in [0, 1], got {value!r}")
    return value


def _build_section(source, section, cls, values):
    if values is None:
        values = {}
    if not isinstance(values, dict):
        raise ConfigError(f"{source}: section {section!r} must be a mapping")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    for name in values:
        if name not in fields:
            raise ConfigError(f"{source}: unknown key {section}.{name} "
                              f"(known: {', '.join(sorted(fields))})")
    kwargs = {name: _check_value(source, section, name, hints[name], v)
              for name, v in values.items()}
    return cls(**kwargs)


_SECTIONS = {"game": GameConfig, "actions": ActionsConfig, "solver": SolverConfig,
             "train": TrainConfig}


def from_dict(data, source="<config>"):
    """A validated :class:`Config` from a nested mapping; missing keys take their defaults."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping of sections")
    for section in data:
        if section not in _SECTIONS:
            raise ConfigError(f"{source}: unknown section {section!r} "
                              f"(known: {', '.join(_SECTIONS)})")
    return Config(**{name: _build_section(source, name, cls, data.get(name))
                     for name, cls in _SECTIONS.items()})


def load(path):
    """Load and validate a YAML config file."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    return from_dict(data, source=str(path))


def default_for_game(name):
    """The config ``--game NAME`` uses: identical to ``configs/NAME.yaml``."""
    if name not in GAME_DEFAULTS:
        raise ConfigError(f"--game: {name!r} is not one of {', '.join(GAME_DEFAULTS)} "
                          "(No-Limit Hold'em needs a config file, e.g. configs/hunl_default.yaml)")
    return from_dict(GAME_DEFAULTS[name], source=f"defaults for {name}")


def _plain(value):
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def to_dict(config):
    """Plain nested dicts and lists (YAML- and msgpack-friendly)."""
    return {name: {k: _plain(v) for k, v in dataclasses.asdict(getattr(config, name)).items()}
            for name in _SECTIONS}


def with_overrides(config, source="command line", **sections):
    """A copy with ``sections={'train': {'iters': 10}, ...}`` applied (None values skipped)."""
    data = to_dict(config)
    for section, values in sections.items():
        for name, value in values.items():
            if value is not None:
                data.setdefault(section, {})[name] = value
    return from_dict(data, source=source)


def dump_yaml(config):
    return yaml.safe_dump(to_dict(config), sort_keys=False)


# The defaults of ``--game NAME``. configs/NAME.yaml holds the same values (a test checks).
GAME_DEFAULTS = {
    "kuhn": {"game": {"name": "kuhn"},
             "solver": {"sampling": "external", "weighting": "dcfr", "dcfr_interval": 1000},
             "train": {"seed": 0}},
    "leduc": {"game": {"name": "leduc"},
              "solver": {"sampling": "external", "weighting": "dcfr", "dcfr_interval": 1000},
              "train": {"seed": 0}},
}
