"""Every game holdem can train, by name: what a config and the command line need to know about
each before it is built.

A :class:`GameSpec` names the game and carries the few facts config validation needs: its
streets, its seats, from how many seats its nodes are computed instead of enumerated, the
defaults of ``--game NAME``, and the config it brings: its own ``game`` section (a frozen
dataclass with ``name`` and ``num_players`` and the game's own keys), its own sections (e.g.
No-Limit's ``actions``), and which keys of the shared sections take effect for it, on what
condition. :mod:`holdem.config` knows sections and validates each config against its game's
spec; it names no key of any game. Everything else about a game is on the built
:class:`holdem.games.Game`.

How a game is built: ``build``, a callable (Config or None -> Game), for a game registered at
run time (tests register toy games this way); the shipped games' builders are bound at the
games floor (:func:`holdem.games.make_game`), so that this module, which the config imports,
stays data: it imports only the shipped games' config declarations
(:mod:`holdem.game_sections`), never a game module, and loads neither numpy nor numba.

Adding a game: a module in ``holdem/games/`` whose builder returns a ``Game`` (and, for a new
kind of game, implements the node hooks of :mod:`holdem.games.node_kernels`), plus one
``register(GameSpec(...))`` (a shipped game: below, with its builder in
:data:`holdem.games._BUILDERS`).
"""

import types
from dataclasses import dataclass, field

from holdem import game_sections


class UnknownGameError(ValueError):
    """A game name that is not registered."""


@dataclass(frozen=True)
class GameSpec:
    name: str
    build: object = None        # a callable: Config (or None) -> Game; None: a shipped game,
                                #   built by holdem.games.make_game
    streets: int = 1            # betting rounds (1..4)
    max_players: int = 2        # game.num_players applies when this is above 2
    implicit_from: int = 0      # from this many seats nodes are computed during traversal
                                #   (external sampling only, no periodic evaluation); 0: never
    defaults: dict = field(default=None, compare=False)   # the config of ``--game NAME``;
                                #   a game with defaults also builds from its name alone
                                #   (make_game("kuhn"): ``build(None)``)
    summary: str = ""
    game_section: type = None   # its ``game`` section (a frozen dataclass with ``name`` and
                                #   ``num_players``); None: the config's plain GameConfig
    sections: tuple = ()        # ((name, frozen dataclass), ...): sections of its own
    uses: dict = field(default=None, compare=False)     # "section.key" of a shared section
                                #   -> None or a condition (config -> None, or why the key does
                                #   not take effect): keys that apply to the games using them
    checks: dict = field(default=None, compare=False)   # "section.key" or "section" -> check
                                #   (where, value) -> value, raising ValueError: values that
                                #   type hints do not check
    stored_when_set: frozenset = frozenset({"game.num_players"})   # keys a checkpoint stores
                                #   only when they differ from their default

    def implicit(self, num_players):
        """Whether the game with ``num_players`` seats computes its nodes during traversal."""
        return bool(self.implicit_from) and num_players >= self.implicit_from


_GAMES = {}


def _frozen(mapping):
    return types.MappingProxyType(dict(mapping or {}))


def register(spec, replace=False):
    """Add ``spec`` to the registry (``replace``: over a game of the same name)."""
    if not isinstance(spec, GameSpec):
        raise TypeError(f"register() takes a GameSpec, not {type(spec).__name__}")
    if spec.name in _GAMES and not replace:
        raise ValueError(f"game {spec.name!r} is already registered")
    if spec.build is not None and not callable(spec.build):
        raise TypeError(f"GameSpec {spec.name!r}: build must be a callable")
    frozen = {"uses": _frozen(spec.uses), "checks": _frozen(spec.checks),
              "sections": tuple(spec.sections)}
    if spec.defaults is not None:
        frozen["defaults"] = types.MappingProxyType(spec.defaults)
    spec = GameSpec(**{**spec.__dict__, **frozen})
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


def specs():
    """Every registered :class:`GameSpec`, in registration order."""
    return tuple(_GAMES.values())


_SMALL_SOLVER = {"sampling": "external", "weighting": "dcfr", "dcfr_interval": 1000}

register(GameSpec(
    name="kuhn", streets=1, max_players=3,
    defaults={"game": {"name": "kuhn"}, "solver": dict(_SMALL_SOLVER), "train": {"seed": 0}},
    summary="Kuhn poker: one card from N + 1 ranks each, one bet (2 or 3 players)"))
register(GameSpec(
    name="leduc", streets=2, max_players=3,
    defaults={"game": {"name": "leduc"}, "solver": dict(_SMALL_SOLVER), "train": {"seed": 0}},
    summary="Leduc hold'em: N + 1 ranks in two suits, two rounds (2 or 3 players)"))
register(GameSpec(
    name="nlhe", streets=4, max_players=6, implicit_from=3,
    game_section=game_sections.NoLimitGame, sections=(("actions", game_sections.ActionsConfig),),
    uses=game_sections.NO_LIMIT_USES, checks=game_sections.NO_LIMIT_CHECKS,
    stored_when_set=frozenset(),
    summary="No-Limit Texas Hold'em with an action and a card abstraction (2-6 players)"))
