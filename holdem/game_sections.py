"""The config the shipped games bring beyond the shared sections: No-Limit Hold'em's ``game``
section (the table: stakes, stacks, the bucket file), its ``actions`` section (bet menus), the
shared keys that take effect only for it, and the checks of its values.

Data for :mod:`holdem.registry`, which puts them on No-Limit's
:class:`~holdem.registry.GameSpec`; :mod:`holdem.config` validates a config against its game's
spec and knows none of these names. Like the config, this module imports nothing that loads
numpy or numba. Checks raise ``ValueError`` with the whole message (the config turns it into a
:class:`holdem.config.ConfigError`); conditions return why a key does not take effect, or None.
"""

import math
import typing
from dataclasses import dataclass


@dataclass(frozen=True)
class NoLimitGame:
    """No-Limit Hold'em's ``game`` section: the table, in big blinds, and the card abstraction."""

    name: str
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


def _baseline_set(config):
    if config.train.eval_baseline is None:
        return "takes effect only with train.eval_baseline set (this config: null)"
    return None


def _heads_up(config):
    if config.game.num_players != 2:
        return (f"takes effect only with game.num_players: 2 (this config: "
                f"{config.game.num_players})")
    return None


def _lbr_set(config):
    reason = _heads_up(config)
    if reason is None and config.train.eval_lbr is None:
        return "takes effect only with train.eval_lbr set (this config: null)"
    return reason


NO_LIMIT_USES = {
    "train.eval_baseline": None,                # matches against baseline bots
    "train.eval_baseline_interval": _baseline_set,
    "train.eval_hands": _baseline_set,
    "train.eval_lbr": _heads_up,                # local best response, heads-up
    "train.eval_lbr_interval": _lbr_set,
    "train.eval_lbr_hands": _lbr_set,
}
"""Keys of the shared ``train`` section that take effect for No-Limit (and for no game that
does not use them), with the condition on the config they need."""


def _bound(test, text):
    def check(where, value):
        if not test(value):
            raise ValueError(f"{where}: must {text}, got {value!r}")
        return value
    return check


def _number_list(where, value, positive=True, integer=False):
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{where}: expected a list of numbers, got {value!r}")
    out = []
    for x in value:
        ok = isinstance(x, int) if integer else isinstance(x, (int, float))
        if isinstance(x, bool) or not ok or not math.isfinite(x) or (positive and x <= 0):
            kind = "positive integers" if integer else "positive numbers"
            raise ValueError(f"{where}: expected a list of {kind}, got {value!r}")
        out.append(int(x) if integer else float(x))
    return tuple(out)


def _check_actions(where, value):
    name = where.rsplit(".", 1)[-1]
    if name == "all_in":
        if not isinstance(value, bool):
            raise ValueError(f"{where}: expected true or false, got {value!r}")
        return value
    if name == "preflop_open":
        return _number_list(where, value)
    if name == "max_raises":
        out = _number_list(where, value, integer=True)
        if len(out) != 4:
            raise ValueError(f"{where}: expected 4 caps (preflop, flop, turn, river)")
        return out
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"{where}: expected a list of size lists, one per raise depth")
    return tuple(_number_list(f"{where}[{i}]", v) for i, v in enumerate(value))


_positive = _bound(lambda v: v > 0, "be positive")
NO_LIMIT_CHECKS = {
    "game.stack": _positive,
    "game.small_blind": _positive,
    "game.big_blind": _positive,
    "game.ante": _bound(lambda v: v >= 0, "not be negative"),
    "actions": _check_actions,                  # the whole section: its values are lists
}
"""Checks beyond the type of each value: a key's (after its type is checked) or a whole
section's (instead of type hints)."""
