"""Run configuration: YAML files load into frozen dataclasses, one per section.

A config names its game (``game.name``). Unknown sections and keys are rejected with the file and
the key's name; values are type-checked; and a key that cannot take effect -- a key of another
game, ``dcfr_alpha`` without ``weighting: dcfr`` -- is rejected too (:data:`KEYS`), so nothing
a user writes is silently ignored.

This module knows sections, not games: the shared sections (``solver``, ``train``, and the
``game`` section's ``name`` and ``num_players``) are here; what a game brings -- its own ``game``
section, sections of its own (No-Limit's bet menus), the shared keys that apply only to it and
the checks of its values -- is on its :class:`holdem.registry.GameSpec`. A key that some game
brings or uses takes effect only for the games that do. Command-line flags override the file through
:func:`with_overrides`; keys that only work with TensorBoard or worker processes, which flags
switch on, are checked on the final config by :func:`check_effective`. Every :class:`Config`
remembers where it came from (``source``) and where each key it was given came from
(``origin``), so errors found later (building the game, starting the run) name the file too.

The resolved config is stored in every checkpoint header (:func:`to_dict`: the keys that apply to
its game and variants) and read back with :func:`from_stored`.
"""

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from holdem import registry
from holdem.config_values import CHOICES as _CHOICES
from holdem.config_values import NON_NEGATIVE as _NON_NEGATIVE
from holdem.config_values import POSITIVE as _POSITIVE
from holdem.config_values import PROBABILITY as _PROBABILITY
from holdem.config_values import RANGE as _RANGE


class ConfigError(ValueError):
    """A config file or value is invalid; the message names the file and the key."""


@dataclass(frozen=True)
class GameConfig:
    """The ``game`` section of a game that brings none of its own (``GameSpec.game_section``,
    which has these two keys too)."""

    name: str                   # required: a config must say which game it is
    num_players: int = 2


@dataclass(frozen=True)
class SolverConfig:
    sampling: str = "external"
    exploration: float = 0.6
    opponent_exploration: float = 0.0
    opponent_exploration_stop: typing.Optional[float] = None
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
    strategy_interval: int = 1


@dataclass(frozen=True)
class TrainConfig:
    iters: typing.Optional[int] = None
    time_budget: typing.Optional[float] = None
    num_workers: int = 1
    batch_size: int = 0
    merge_threads: int = 0
    flush_iters: int = 0
    hold_cold_rows: typing.Optional[bool] = False
    hold_strategy_seconds: float = 10.0
    max_unmerged_iters: int = 0
    own_delta_weight: typing.Optional[float] = None
    seed: int = 0
    snapshot_interval: float = 600.0
    keep_checkpoints: int = 3
    progress_interval: float = 5.0
    tensorboard: bool = False
    log_interval: float = 10.0
    eval_interval: float = 60.0
    eval_baseline: typing.Optional[str] = "equity"
    eval_baseline_interval: float = 300.0
    eval_hands: int = 20_000
    eval_lbr: typing.Optional[str] = "fcpa:3-4"
    eval_lbr_interval: float = 300.0
    eval_lbr_hands: int = 10_000
    utility_window: int = 10_000
    start_method: str = "spawn"
    backend: str = "process"
    ray_address: typing.Optional[str] = None
    worker_timeout: float = 10.0
    worker_restarts: int = 5
    worker_restart_window: float = 60.0
    max_memory_gb: typing.Optional[float] = None


@dataclass(frozen=True)
class Config:
    game: GameConfig            # or the game's own section (GameSpec.game_section)
    solver: SolverConfig = field(default_factory=SolverConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    # The sections the game brings, ((name, section), ...) in its spec's order: read as
    # attributes (config.NAME).
    sections: tuple = ()
    # Where the config came from (a file, "--game leduc", "checkpoint PATH"), and where each key
    # given explicitly came from ("section.key" -> source): for error messages only.
    source: str = field(default="<config>", compare=False)
    origin: typing.Mapping = field(default_factory=lambda: types.MappingProxyType({}),
                                   compare=False, repr=False)

    def __getattr__(self, name):
        for section, values in self.__dict__.get("sections", ()):
            if section == name:
                return values
        raise AttributeError(f"a config has no section or field {name!r}")


def _yaml(value):
    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()


def _when(path, *values):
    """The condition "``path`` (section.key) has one of ``values``" for :data:`KEYS`."""
    section, name = path.split(".")

    def check(config):
        value = getattr(getattr(config, section), name)
        if value in values:
            return None
        wanted = " or ".join(_yaml(v) for v in values)
        return f"takes effect only with {path}: {wanted} (this config: {_yaml(value)})"
    return check


def _schedule_used(config):
    s = config.solver
    if s.weighting in ("linear", "dcfr") or s.prune:
        return None
    return ("takes effect only with solver.weighting: linear or dcfr, or solver.prune: true "
            f"(this config: weighting {s.weighting}, prune false)")


def _seats(config):
    """``game.num_players`` applies to the games dealt to more than two players."""
    return _when("game.name", *[name for name in registry.names()
                                if registry.spec(name).max_players > 2])(config)


def _brought_by(section, name):
    """The games whose specs bring key ``section.name`` (their game section or a section of
    their own) or use it (a shared key), in registration order; None: every game."""
    games = []
    for spec in registry.specs():
        if section == "game":
            cls = spec.game_section or GameConfig
            brings = name in {f.name for f in dataclasses.fields(cls)}
        elif section in _SHARED:
            brings = f"{section}.{name}" in spec.uses
        else:
            brings = section in dict(spec.sections)
        if brings:
            games.append(spec.name)
    if section in _SHARED and not games:
        return None
    if section == "game" and name in ("name", "num_players"):
        return None
    return games


def _game_rule(config, section, name):
    """Why key ``section.name`` does not take effect for this config's game (None: it does):
    the games that bring or use it, then the condition its game's spec puts on it."""
    games = _brought_by(section, name)
    if games is None:
        return None
    if config.game.name not in games:
        return _when("game.name", *games)(config)
    check = registry.spec(config.game.name).uses.get(f"{section}.{name}")
    return None if check is None else check(config)


def _cheap_eval(config):
    g = config.game
    spec = registry.spec(g.name)
    if not spec.implicit(g.num_players):
        return None
    return (f"takes effect only with {g.name} for fewer than {spec.implicit_from} players "
            f"(this config: {g.num_players} players)")
@dataclass(frozen=True)
class KeyRule:
    """Where a key of a shared section takes effect: one row of :data:`KEYS`."""

    applies: object = None      # config -> None, or why the key does not take effect there;
                                #   checked when the config is built
    run: str = None             # "tensorboard" or "workers": only when the run has them, which
                                #   flags switch on; checked on the final config
                                #   (:func:`check_effective`)
    backend: str = None         # with workers: only on this train.backend
    stored_when_set: bool = False   # a checkpoint stores it only when it differs from its
                                #   default: keys added after runs had stored their configs
                                #   leave the header of a run that does not set them as it was
                                #   (an in-process checkpoint stays bit-for-bit the same:
                                #   tools/checkpoint_digest.py)


def _rules(names, **rule):
    return {("train", name): KeyRule(**rule) for name in names}


# Every key of a shared section that does not always take effect, and where it does (the keys
# that games bring or use are decided by their specs: _game_rule). A key given explicitly
# outside its condition is rejected; one that only comes along from defaults or a stored config
# is left out of to_dict. The "tensorboard" keys come before the "workers" ones: the order in
# which check_effective names the first key a run would ignore.
KEYS = {
    ("game", "num_players"): KeyRule(applies=_seats),
    ("solver", "exploration"): KeyRule(applies=_when("solver.sampling", "outcome")),
    **{("solver", name): KeyRule(applies=_when("solver.sampling", "external"),
                                 stored_when_set=True)
       for name in ("opponent_exploration", "opponent_exploration_stop")},
    ("solver", "discount_interval"): KeyRule(applies=_when("solver.weighting", "linear")),
    ("solver", "discount_stop"): KeyRule(applies=_when("solver.weighting", "linear", "dcfr")),
    **{("solver", name): KeyRule(applies=_when("solver.weighting", "dcfr"))
       for name in ("dcfr_interval", "dcfr_alpha", "dcfr_beta", "dcfr_gamma")},
    ("solver", "schedule_clock"): KeyRule(applies=_schedule_used),
    **{("solver", name): KeyRule(applies=_when("solver.prune", True))
       for name in ("prune_after", "prune_prob", "prune_threshold")},
    ("train", "eval_interval"): KeyRule(applies=_cheap_eval),
    **_rules(("eval_lbr", "eval_lbr_interval", "eval_lbr_hands"), stored_when_set=True),
    **_rules(("log_interval", "utility_window"), run="tensorboard"),
    **_rules(("batch_size", "merge_threads", "flush_iters", "hold_cold_rows"), run="workers"),
    **_rules(("max_unmerged_iters", "hold_strategy_seconds"), run="workers", backend="process",
             stored_when_set=True),
    **_rules(("own_delta_weight",), run="workers"),
    **_rules(("start_method",), run="workers", backend="process"),
    **_rules(("backend",), run="workers"),
    **_rules(("ray_address",), run="workers", backend="ray"),
    **_rules(("worker_timeout",), run="workers"),
    **_rules(("worker_restarts", "worker_restart_window"), run="workers", stored_when_set=True),
}
_NO_RULE = KeyRule()
WORKER_KEYS = tuple(name for (_, name), rule in KEYS.items() if rule.run == "workers")
"""The ``train`` keys that take effect only with worker processes."""


def _stored_when_set(config, section, name):
    """Whether key ``section.name`` is stored only when set (:data:`KEYS`, and the game's
    ``GameSpec.stored_when_set``: e.g. ``game.num_players`` of the limit games, which took
    seats after their runs were stored)."""
    return (KEYS.get((section, name), _NO_RULE).stored_when_set
            or f"{section}.{name}" in registry.spec(config.game.name).stored_when_set)


def _reason_unused(config, section, name):
    reason = _game_rule(config, section, name)
    if reason is not None:
        return reason
    check = KEYS.get((section, name), _NO_RULE).applies
    return None if check is None else check(config)


def _game_check(key):
    """The check a game's spec puts on ``key`` ("section.key", or "section": a whole section
    whose values type hints do not check), or None."""
    for spec in registry.specs():
        check = spec.checks.get(key)
        if check is not None:
            return check
    return None


def _checked(check, where, value):
    try:
        return check(where, value)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _check_value(source, section, name, tp, value):
    where = f"{source}: {section}.{name}"
    whole = _game_check(section)
    if whole is not None:
        return _checked(whole, where, value)
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
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not math.isfinite(value)):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        value = float(value)
    elif base is str and not isinstance(value, str):
        raise ConfigError(f"{where}: expected a string, got {value!r}")
    key = (section, name)
    choices = _CHOICES.get(key)
    choices = choices() if callable(choices) else choices
    if choices is not None and value not in choices:
        raise ConfigError(f"{where}: {value!r} is not one of {', '.join(choices)}")
    if key in _POSITIVE and value <= 0:
        raise ConfigError(f"{where}: must be positive, got {value!r}")
    if key in _NON_NEGATIVE and value < 0:
        raise ConfigError(f"{where}: must not be negative, got {value!r}")
    if key in _PROBABILITY and not 0 <= value <= 1:
        raise ConfigError(f"{where}: must lie in [0, 1], got {value!r}")
    if key in _RANGE and not _RANGE[key][0] <= value <= _RANGE[key][1]:
        raise ConfigError(f"{where}: must lie in {_RANGE[key][0]}..{_RANGE[key][1]}, "
                          f"got {value!r}")
    check = _game_check(f"{section}.{name}")
    if check is not None:
        value = _checked(check, where, value)
    return value


_SHARED = {"solver": SolverConfig, "train": TrainConfig}


def _section_names():
    """Every section a config may have: ``game``, those the registered games bring, in
    registration order, and the shared ones."""
    own = []
    for spec in registry.specs():
        own += [name for name, _ in spec.sections if name not in own]
    return ["game", *own, *_SHARED]


def _section_fields(section):
    """{key: (type hint, default)} of every key that some game or the shared config puts in
    ``section``, in declaration order (the shared keys first)."""
    if section in _SHARED:
        classes = [_SHARED[section]]
    elif section == "game":
        classes = [GameConfig] + [s.game_section for s in registry.specs() if s.game_section]
    else:
        classes = [cls for s in registry.specs() for name, cls in s.sections if name == section]
    out = {}
    for cls in classes:
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            out.setdefault(f.name, (hints[f.name], f.default))
    return out


def _section_values(origin, source, section, values):
    """The checked values of one section (a mapping of the keys given)."""
    if values is None:
        values = {}
    if not isinstance(values, dict):
        raise ConfigError(f"{source}: section {section!r} must be a mapping")
    fields = _section_fields(section)
    for name in values:
        if name not in fields:
            raise ConfigError(f"{origin.get(f'{section}.{name}', source)}: unknown key "
                              f"{section}.{name} (known: {', '.join(sorted(fields))})")
    return {name: _check_value(origin.get(f"{section}.{name}", source), section, name,
                               fields[name][0], v)
            for name, v in values.items()}


def _defaults(section):
    return {name: default for name, (_, default) in _section_fields(section).items()
            if default is not dataclasses.MISSING}


def _classes(spec):
    """{section: dataclass} of a config of the game ``spec``, in the order they are stored."""
    return {"game": spec.game_section or GameConfig, **dict(spec.sections), **_SHARED}


def _assemble(spec, sections, **fields):
    """A :class:`Config` of the game ``spec`` from its sections by name."""
    return Config(game=sections["game"], solver=sections["solver"], train=sections["train"],
                  sections=tuple((name, sections[name]) for name, _ in spec.sections),
                  **fields)


def _build(data, source, origin, drop=()):
    """A validated :class:`Config` from a nested mapping. ``origin`` maps the keys given
    explicitly ("section.key") to where they came from; such a key that cannot take effect is
    rejected, unless it is in ``drop`` (it falls away). Every key that cannot take effect gets
    its default (or, not being a key of this game's sections, is left out), so equal configs
    compare equal however they were written."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping of sections")
    names = _section_names()
    for section in data:
        if section not in names:
            raise ConfigError(f"{source}: unknown section {section!r} "
                              f"(known: {', '.join(names)})")
    values = {name: _section_values(origin, source, name, data.get(name)) for name in names}
    if "name" not in values["game"]:
        raise ConfigError(f"{source}: game.name is required ({', '.join(registry.names())}): "
                          "a config must say which game it is")
    spec = registry.spec(values["game"]["name"])
    classes = _classes(spec)
    fields = {section: {f.name for f in dataclasses.fields(cls)}
              for section, cls in classes.items()}
    sections = {section: cls(**{k: v for k, v in values[section].items()
                                if k in fields[section]})
                for section, cls in classes.items()}
    config = _assemble(spec, sections, source=source)
    origin = dict(origin)
    unused = {}
    for section in names:
        for name in _section_fields(section):
            reason = _reason_unused(config, section, name)
            if reason is None:
                continue
            key = f"{section}.{name}"
            if key in origin and key not in drop:
                raise ConfigError(f"{origin[key]}: {key}: {reason}")
            origin.pop(key, None)
            if name in fields.get(section, ()):
                unused.setdefault(section, {})[name] = _defaults(section)[name]
    _check_combinations(config, origin)
    for section, reset in unused.items():
        sections[section] = dataclasses.replace(sections[section], **reset)
    return _assemble(spec, sections, source=source, origin=types.MappingProxyType(origin))


def _check_combinations(config, origin):
    """Values that are valid alone but not together."""
    street = config.solver.average_max_street
    spec = registry.spec(config.game.name)
    streets = spec.streets
    if street is not None and street >= streets:
        where = origin.get("solver.average_max_street", config.source)
        raise ConfigError(f"{where}: solver.average_max_street: {config.game.name} has "
                          f"{streets} street{'s' if streets > 1 else ''} (0..{streets - 1}), "
                          f"got {street}")
    players = config.game.num_players
    if players > spec.max_players:
        where = origin.get("game.num_players", config.source)
        raise ConfigError(f"{where}: game.num_players: {config.game.name} is for 2.."
                          f"{spec.max_players} players, got {players}")
    if spec.implicit(config.game.num_players) and config.solver.sampling != "external":
        where = origin.get("solver.sampling", config.source)
        raise ConfigError(f"{where}: solver.sampling: {config.solver.sampling} is not available "
                          f"with game.num_players {config.game.num_players} (external only)")


def _keys(data):
    return [f"{section}.{name}" for section, values in data.items() if isinstance(values, dict)
            for name in values]


def from_dict(data, source="<config>"):
    """A validated :class:`Config` from a nested mapping (every key in it counts as given by
    ``source``); missing keys take their defaults, ``game.name`` is required."""
    origin = {key: source for key in _keys(data)} if isinstance(data, dict) else {}
    return _build(data, source, origin)


def from_stored(data, source):
    """The config a checkpoint stored (:func:`to_dict`). Keys that do not apply to its game
    (older versions stored them all) are left at their defaults instead of rejected."""
    return _build(data, source, {})


def check_effective(config, workers=True):
    """Reject keys given explicitly that this run would ignore: TensorBoard keys without
    ``train.tensorboard``, and (with ``workers``: the run picks its executor from
    ``num_workers``) worker keys in-process. Called on the final config, after flags."""
    tc = config.train
    for (section, name), rule in KEYS.items():
        key = f"{section}.{name}"
        if rule.run is None or (rule.run == "workers" and not workers) or key not in config.origin:
            continue
        if rule.run == "tensorboard" and not tc.tensorboard:
            raise ConfigError(f"{config.origin[key]}: {key}: takes effect only with TensorBoard "
                              "(train.tensorboard: true or --tensorboard)")
        if rule.run == "workers" and tc.num_workers == 1:
            raise ConfigError(f"{config.origin[key]}: {key}: takes effect only with worker "
                              "processes (train.num_workers other than 1, or --num-workers); "
                              "this run trains in-process")
        if rule.backend is not None and tc.backend != rule.backend:
            raise ConfigError(f"{config.origin[key]}: {key}: takes effect only with "
                              f"train.backend: {rule.backend} (--backend {rule.backend}); this "
                              f"run's backend is {tc.backend}")


def _yaml_problem(exc):
    """One line for a YAML error: what is wrong and where (line and column, 1-based)."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem is None:
        return " ".join(str(exc).split())
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    context = getattr(exc, "context", None)
    return f"{problem}{where}" + (f" ({context})" if context else "")


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
        raise ConfigError(f"{path}: not valid YAML: {_yaml_problem(exc)}") from None
    return from_dict(data, source=str(path))


def default_for_game(name):
    """The config ``--game NAME`` uses: identical to ``configs/NAME.yaml``."""
    names = registry.names_with_defaults()
    if name not in names:
        raise ConfigError(f"--game: {name!r} is not one of {', '.join(names)} "
                          "(No-Limit Hold'em needs a config file, e.g. configs/hunl_default.yaml)")
    return from_dict(_plain_dict(registry.spec(name).defaults), source=f"--game {name}")


def _plain_dict(mapping):
    return {k: _plain_dict(v) if isinstance(v, typing.Mapping) else v for k, v in mapping.items()}


def _plain(value):
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def to_dict(config):
    """Plain nested dicts and lists (YAML- and msgpack-friendly) of the keys that take effect
    for this config's game and variants (a Leduc config has none of No-Limit's keys)."""
    out = {}
    for section in _classes(registry.spec(config.game.name)):
        defaults = _defaults(section)
        values = {k: _plain(v) for k, v in dataclasses.asdict(getattr(config, section)).items()
                  if _reason_unused(config, section, k) is None
                  and not (_stored_when_set(config, section, k) and v == defaults[k])}
        if values:
            out[section] = values
    return out


# What a resumed run takes from its checkpoint unless given explicitly: every train setting
# but the stopping point, which each invocation gives anew (iters is the run's total).
PER_INVOCATION_KEYS = ("iters", "time_budget")


def continued(config, stored):
    """``config`` with each train setting that it does not give explicitly (a default, not a
    key of its file or of the command line) taken from ``stored``, the config of the run it
    resumes, so that a resumed run keeps its workers, backend, TensorBoard, evaluation and seed
    (:data:`PER_INVOCATION_KEYS` excepted)."""
    data = to_dict(config)
    kept = to_dict(stored).get("train", {})
    for name, value in kept.items():
        if name not in PER_INVOCATION_KEYS and f"train.{name}" not in config.origin:
            data.setdefault("train", {})[name] = value
    return _build(data, config.source, dict(config.origin))


def changed_settings(before, after):
    """[(key, old value, new value)] of the train settings that differ between ``before`` (a
    resumed run's config) and ``after`` (this invocation's), stopping point excepted."""
    old, new = dataclasses.asdict(before.train), dataclasses.asdict(after.train)
    return [(f"train.{k}", old[k], new[k]) for k in new
            if k not in PER_INVOCATION_KEYS and old[k] != new[k]]


def with_overrides(config, source="command line", **sections):
    """A copy with ``sections={'train': {'iters': 10}, ...}`` applied (None values skipped).
    Errors in the overrides name ``source``. Keys the config had that the overrides make
    inapplicable (``dcfr_alpha`` after ``weighting: linear``) fall away."""
    data = to_dict(config)
    origin = dict(config.origin)
    given = set()
    for section, values in sections.items():
        for name, value in values.items():
            if value is not None:
                data.setdefault(section, {})[name] = value
                origin[f"{section}.{name}"] = source
                given.add(f"{section}.{name}")
    return _build(data, config.source, origin, drop=set(config.origin) - given)


def dump_yaml(config):
    return yaml.safe_dump(to_dict(config), sort_keys=False)
