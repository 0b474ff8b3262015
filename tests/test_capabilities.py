"""A game's capabilities are declared by its builder (``exact=``, ``cards=``, ``lines=``,
``rotations=``) and read through the typed protocols of :mod:`holdem.games.interface`."""

from pathlib import Path

import pytest

from holdem import config as config_mod
from holdem.games import CARDS, EXACT, LINES, ROTATIONS, make_game
from holdem.games.interface import Cards, Exact, HandEngine, Lines, Rotations, Units

ROOT = Path(__file__).resolve().parents[1]


def _members(protocol):
    """The attributes and methods a protocol names (its annotations and its own functions)."""
    own = {name for name, value in vars(protocol).items()
           if callable(value) and not name.startswith("_")}
    return set(protocol.__annotations__) | own


def _implements(obj, protocol):
    return all(hasattr(obj, name) for name in _members(protocol))


@pytest.fixture(scope="module")
def heads_up():
    return make_game(config_mod.load(ROOT / "configs" / "hunl_default.yaml"))


def test_a_small_game_declares_exact_only(kuhn):
    assert kuhn.capabilities == frozenset({EXACT})
    assert kuhn.exact is kuhn.rules and _implements(kuhn.exact, Exact)
    assert kuhn.cards is None and kuhn.lines is None
    assert kuhn.tree is not None                      # declared on Game, set by the tree kind


def test_heads_up_nlhe_declares_cards_and_lines(heads_up):
    assert heads_up.capabilities == frozenset({CARDS, LINES})
    assert heads_up.exact is None
    assert _implements(heads_up.cards, Cards) and _implements(heads_up.lines, Lines)
    assert _implements(heads_up.cards.table, Units) and _implements(heads_up.cards.engine,
                                                                    HandEngine)
    assert heads_up.lines.tree is heads_up.tree
    assert heads_up.cards.street_names == ("preflop", "flop", "turn", "river")
    assert heads_up.lines.history_string(0) == ""
    assert heads_up.cards.engine.seat_name(1, 2) == "big blind"


def test_multiway_nlhe_declares_cards_and_rotations():
    game = make_game(config_mod.load(ROOT / "configs" / "6max.yaml"))
    assert game.capabilities == frozenset({CARDS, ROTATIONS})
    assert game.tree is None and game.lines is None
    assert _implements(game.cards, Cards) and _implements(game.rotations, Rotations)
    with pytest.raises(ValueError, match="enumerated betting tree"):
        game.require(LINES, "a range chart")


def test_a_match_without_a_tree_needs_rotations():
    from dataclasses import replace

    from holdem.analysis.matches.headtohead import match_samples

    game = replace(make_game(config_mod.load(ROOT / "configs" / "6max.yaml")), rotations=None)
    with pytest.raises(ValueError, match="plays a hand from every seat"):
        match_samples(game, None, "call", hands=6)


def test_capabilities_are_what_was_declared(kuhn):
    from dataclasses import replace

    with_cards = replace(kuhn, cards=object())
    assert with_cards.capabilities == frozenset({EXACT, CARDS}) and with_cards.supports(CARDS)
    without = replace(kuhn, exact=None)
    assert without.capabilities == frozenset()
    with pytest.raises(ValueError, match="exact evaluation"):
        without.require(EXACT, "exact evaluation")


def test_legal_actions_name_and_make_the_engine_s_actions(heads_up):
    from holdem.games.nlhe.records import Action

    engine = heads_up.cards.engine
    state = engine.HandState(engine.TableConfig(stacks=(200, 200), small_blind=1, big_blind=2),
                             hole_cards=("As Kd", "2c 3d"), board="4h 5s 6c 7d 8h")
    legal = state.legal_actions()
    assert legal.names() == {"fold", "call", "raise", "all_in"}
    assert legal.action("fold") == Action.fold() and legal.action("call") == Action.call()
    assert legal.action("raise", 6) == Action.raise_to(6)
