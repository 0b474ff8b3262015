"""Every game holdem can train, by name: what a config and the command line need to know about
each before it is built.

A :class:`GameSpec` names the game, how to build it (a ``"module:function"`` imported only when
the game is built, or a callable), and the few facts config validation needs: its streets, whether
the No-Limit table keys (seats, stacks, blinds, buckets, the ``actions`` section) apply, from how
many seats its nodes are computed instead of enumerated, and the defaults of ``--game NAME``.
Everything else about a game is on the built :class:`holdem.games.Game`.

Adding a game: a module in ``holdem/games/`` whose builder returns a ``Game`` (and, for a new
kind of game, implements the node hooks of :mod:`holdem.games.node_kernels`), plus one
``register(GameSpec(...))`` call below, or at run time (tests register toy games this way).

This module is data: it imports nothing from holdem, so the config (ground floor) can validate
game names through it without loading numba.
"""

import importlib
import types
from dataclasses import dataclass, field


class UnknownGameError(ValueError):
    """A game name that is not registered."""


@dataclass(frozen=True)
class GameSpec:
    name: str
    build: object               # "module:function" or a callable: Config (or None) -> Game
    streets: int                # betting rounds (1..4)
    no_limit: bool = False      # game.stack/small_blind/big_blind/ante/buckets and the
                                #   actions section apply
    max_players: int = 2        # game.num_players applies when this is above 2
    implicit_from: int = 0      # from this many seats nodes are computed during traversal
                                #   (external sampling only, no periodic evaluation); 0: never
    defaults: dict = field(default=None, compare=False)   # the config of ``--game NAME``;
                                #   a game with defaults also builds from its name alone
                                #   (make_game("kuhn"): ``build(None)``)
    summary: str = ""

    def builder(self):
        """The function that builds the game from a Config."""
        if callable(self.build):
            return self.build
        module, _, name = self.build.partition(":")
        return getattr(importlib.import_module(module), name)

    def implicit(self, num_players):
        """Whether the game with ``num_players`` seats computes its nodes during traversal."""
        return bool(self.implicit_from) and num_players >= self.implicit_from


_GAMES = {}


def register(spec, replace=False):
    """Add ``spec`` to the registry (``replace``: over a game of the same name)."""
    if not isinstance(spec, GameSpec):
        raise TypeError(f"register() takes a GameSpec, not {type(spec).__name__}")
    if spec.name in _GAMES and not replace:
        raise ValueError(f"game {spec.name!r} is already registered")
    if spec.defaults is not None:
        spec = GameSpec(**{**spec.__dict__, "defaults": types.MappingProxyType(spec.defaults)})
    _GAMES[spec.name] = spec
    return spec


def unregister(name):
    """Remove a game (tests that register a toy game remove it afterwards)."""
    _GAMES.pop(name, None)


def names():
    """Registered game names, in registration order."""
    return tuple(_GAMES)


def names_with_defaults():
    """Games that train without a config file (``--game NAME``)."""
    return tuple(name for name, spec in _GAMES.items() if spec.defaults is not None)


def spec(name):
    """The :class:`GameSpec` of ``name`` (UnknownGameError naming the registered games)."""
    try:
        return _GAMES[name]
    except (KeyError, TypeError):
        raise UnknownGameError(f"unknown game {name!r}; choose one of "
                               f"{', '.join(_GAMES)}") from None


_SMALL_SOLVER = {"sampling": "external", "weighting": "dcfr", "dcfr_interval": 1000}

register(GameSpec(
    name="kuhn", build="holdem.games.small:build_kuhn", streets=1, max_players=3,
    defaults={"game": {"name": "kuhn"}, "solver": dict(_SMALL_SOLVER), "train": {"seed": 0}},
    summary="Kuhn poker: one card from N + 1 ranks each, one bet (2 or 3 players)"))
register(GameSpec(
    name="leduc", build="holdem.games.small:build_leduc", streets=2, max_players=3,
    defaults={"game": {"name": "leduc"}, "solver": dict(_SMALL_SOLVER), "train": {"seed": 0}},
    summary="Leduc hold'em: N + 1 ranks in two suits, two rounds (2 or 3 players)"))
register(GameSpec(
    name="nlhe", build="holdem.games.nlhe.game:build", streets=4, no_limit=True, max_players=6,
    implicit_from=3,
    summary="No-Limit Texas Hold'em with an action and a card abstraction (2-6 players)"))
