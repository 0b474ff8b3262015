"""Games the solver can train: a betting tree (or, multi-way, an implicit game) plus a deal.

:func:`make_game` builds the game a config names through the registry
(:mod:`holdem.registry`) and returns a :class:`Game` (:mod:`holdem.games.interface`), the one
object the solver, the runtime, checkpoints, evaluation and export know about a game: Kuhn poker,
Leduc hold'em, heads-up No-Limit Hold'em with an action abstraction (the config's ``actions``) and
a card abstraction (a bucket file) as an enumerated tree, or 3-6 player No-Limit Hold'em as an
implicit game (:mod:`holdem.games.nlhe.multiway`): its betting tree is far too large to
enumerate, so nodes are computed during traversal and infoset keys hash the betting history.

Importing this package loads only the registry (:mod:`holdem.registry`, ground floor: the
config validates game names through it, and loads neither numpy nor numba); the interface and
each game's modules load when used: the shipped games' builders (:data:`_BUILDERS`) import them
when a game is built.
"""

from holdem import registry

__all__ = ["CARDS", "EXACT", "LINES", "ROTATIONS", "Game", "make_game", "registry"]
_INTERFACE = ("CARDS", "EXACT", "LINES", "ROTATIONS", "Game")


def _build_kuhn(config):
    from holdem.games.small import build_kuhn

    return build_kuhn(config)


def _build_leduc(config):
    from holdem.games.small import build_leduc

    return build_leduc(config)


def _build_nlhe(config):
    from holdem.games.nlhe.game import build

    return build(config)


_BUILDERS = {"kuhn": _build_kuhn, "leduc": _build_leduc, "nlhe": _build_nlhe}
"""The shipped games' builders, by registered name (:mod:`holdem.registry` is data and imports
no game: the builders are bound here, on the games floor, each importing its game's module when
called). A game registered at run time brings its own (``GameSpec.build``)."""


def builder(spec):
    """The function that builds the game of ``spec`` (a :class:`holdem.registry.GameSpec`)
    from a Config (or None)."""
    if spec.build is not None:
        return spec.build
    try:
        return _BUILDERS[spec.name]
    except KeyError:
        raise ValueError(f"game {spec.name!r} is registered without a builder") from None


def make_game(config):
    """Build the game a :class:`holdem.config.Config` names; a game with ``--game`` defaults
    (Kuhn, Leduc) also by name (its builder is then called with ``None``)."""
    if isinstance(config, str):
        spec = registry.spec(config)
        if spec.defaults is None:
            raise ValueError(f"game {config!r} needs a config (by name: "
                             f"{', '.join(registry.names_with_defaults())})")
        return builder(spec)(None)
    return builder(registry.spec(config.game.name))(config)


def __getattr__(name):
    if name in _INTERFACE:
        from holdem.games import interface

        return getattr(interface, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
