"""LBR against the re-solving bot (holdem.subgame.lbr) weighs every reading of its off-tree sizes
by its translation probability, as the numba LBR does, and never the reading the bot happened to
draw: on the turn the blueprint plays (it draws), on the river the re-solving bot solves from the
range its turn reading gives."""

import copy

import numpy as np
import pytest

import holdem
from holdem.analysis.bot import real_table
from holdem.analysis.lbr.sampled import ROUNDS, LbrSetting
from holdem.cards import parse
from holdem.games.nlhe.records import Action, ActionKind
from holdem.games.nlhe.rules import HandState
from holdem.subgame.lbr import equity_vector, lbr_hand
from holdem.subgame.resolving import ResolvingBot

BET = 150           # 0.75 pot into the turn's 200: between the tree's half pot and pot


@pytest.fixture(scope="module")
def bp(hunl_run):
    return holdem.Blueprint.load(hunl_run)


def _turn_state(bp):
    """Limped and checked to the turn; seat 1 (LBR below) to act first there."""
    state = HandState(real_table(bp, 10_000, 100), hole_cards=[parse("Jd Td"), parse("Ah Kd")],
                      board=parse("Ks 8s 2d 7h 3c"))
    for action in (Action.call(), Action.check(), Action.check(), Action.check()):
        state.apply(action)                 # preflop limp and check, flop checked through
    assert int(state.street) == 2 and state.to_act == 1 and state.pot_total == 200
    return state


def _bet(state):
    after = copy.deepcopy(state)
    after.apply(Action(ActionKind.BET, BET))
    return after


def _bots_by_reading(bp, state, street, **kw):
    """{0: a bot whose own draw reads BET as the smaller size, 1: one that reads it as the
    larger}, and the two readings' (label, pot fraction, probability)."""
    after, bots = _bet(state), {}
    for seed in range(64):
        bot = ResolvingBot(bp, 100, np.random.default_rng(seed), street=street, **kw)
        labels, notes = bot.blueprint.translate(after, state)
        options = notes[-1].options
        bots.setdefault([o[0] for o in options].index(labels[-1]), bot)
        if len(bots) == 2:
            return bots, options
    raise AssertionError("64 seeds and one reading only")


def _fold_mass(weights, policy):
    _, actions, probs = policy
    return sum(float(weights @ p) for a, p in zip(actions, probs) if a.kind == ActionKind.FOLD)


def test_lbrs_fold_probability_for_an_off_tree_bet_is_the_mix_of_the_bots_readings(bp):
    """The fold probability and the value LBR predicts for a 0.75-pot turn bet are the
    pseudo-harmonic mix of the bot's answers at its two readings, the same whichever reading the
    bot's own draw made (LBR read the drawn one: its prediction was one reading's)."""
    from holdem.subgame.lbr import Readings, raise_value

    state = _turn_state(bp)
    after = _bet(state)
    bots, options = _bots_by_reading(bp, state, street=5)
    assert 0 < options[0][2] < 1 and options[0][1] < 0.75 < options[1][1]
    weights = Readings(bots[0], state, 1).total()
    mass = weights.sum()
    drawn = {k: bot.policy(after, state) for k, bot in bots.items()}
    fold = {k: _fold_mass(weights, drawn[k]) / mass for k in drawn}
    assert abs(fold[0] - fold[1]) > 0.01               # the readings answer differently
    equity = equity_vector(state.hole_cards[1], state.board)
    mixed = raise_value(after, 1, [(weights * options[k][2], drawn[k]) for k in (0, 1)], equity)
    assert mixed[1] == pytest.approx(options[0][2] * fold[0] + options[1][2] * fold[1], abs=1e-12)
    for bot in bots.values():
        predicted = raise_value(after, 1, Readings(bot, state, 1).answers(after, state), equity)
        assert predicted == pytest.approx(mixed, abs=1e-9)
    for k in (0, 1):                        # what the drawn reading alone predicted
        assert raise_value(after, 1, [(weights, drawn[k])], equity)[1] == pytest.approx(fold[k])
        assert fold[k] != pytest.approx(mixed[1], abs=1e-3)


@pytest.mark.parametrize("street", [5, "river"])
def test_lbrs_turn_decision_does_not_depend_on_the_bots_draw(bp, street):
    """LBR's first turn decision is made before the bot does anything on the turn, so it cannot
    depend on the bot's seed; with LBR looking ahead through the bot's own draw it did (the bet
    chosen changed with the seed: 56 sizes, some read either way)."""
    s = LbrSetting.parse("56:3-4")
    chosen = set()
    for seed in range(6):
        state = _turn_state(bp)
        bot = ResolvingBot(bp, 100, np.random.default_rng(seed), street=street, target=2.0,
                           max_iterations=30)
        before = len(state.actions)
        stats = {"decisions": 0, "raises": 0}
        lbr_hand(state, 1, bot, s.fractions, s.bet_allin, ROUNDS[s.rounds], stats)
        first = state.actions[before]
        chosen.add((first.kind, first.amount))
        assert stats.get("empty", 0) == 0             # no bot action left the belief empty
    assert len(chosen) == 1


def test_the_belief_splits_by_reading_and_each_reading_is_updated_by_its_own_answer(bp):
    """After LBR's 0.75-pot bet and the bot's call, LBR's belief is two branches: the range times
    each reading's probability times the probability that reading calls, combo by combo."""
    from holdem.subgame.lbr import Readings

    state = _turn_state(bp)
    bots, options = _bots_by_reading(bp, state, street=5)
    after = _bet(state)
    call = {}
    for k, bot in bots.items():
        _, actions, probs = bot.policy(after, state)
        call[k] = sum(p for a, p in zip(actions, probs) if a == Action.call())
    readings = Readings(bots[0], state, 1)
    start = readings.total()
    readings.act(state, Action(ActionKind.BET, BET))
    state.apply(Action(ActionKind.BET, BET))
    readings.observe(state, Action.call())
    assert sorted(readings.branches) == [(0,), (1,)]
    for k in (0, 1):
        np.testing.assert_allclose(readings.branches[(k,)], start * options[k][2] * call[k],
                                   rtol=1e-12, atol=0)
    assert not np.array_equal(call[0], call[1])


def test_on_a_re_solved_river_each_reading_solves_from_the_range_its_turn_reading_gives(bp):
    """The river re-solving bot holds LBR's river sizes, but starts its solve from the blueprint's
    range at its reading of the turn: LBR's copy for each reading answers the river as a bot that
    drew that reading does, and LBR's river bets are not split (the subgame holds the real
    size)."""
    from holdem.subgame.lbr import Readings

    kw = dict(target=2.0, max_iterations=30)
    state = _turn_state(bp)
    bots, _ = _bots_by_reading(bp, state, street="river", **kw)
    readings = Readings(ResolvingBot(bp, 100, np.random.default_rng(0), street="river", **kw),
                        state, 1)
    readings.act(state, Action(ActionKind.BET, BET))
    state.apply(Action(ActionKind.BET, BET))
    state.apply(Action.call())
    assert int(state.street) == 3 and state.to_act == 1
    river = {k: bot.policy(state) for k, bot in bots.items()}
    assert not np.array_equal(bots[0]._ranges[3][0], bots[1]._ranges[3][0])
    for k in (0, 1):
        mine = readings.copy_of((k,)).policy(state)
        assert mine[0] == river[k][0]
        np.testing.assert_array_equal(mine[2], river[k][2])
    after = copy.deepcopy(state)
    after.apply(Action(ActionKind.BET, 333))            # off the river menu
    answers = readings.answers(after, state)
    assert len(answers) == 2                            # one per reading: no new split
    for (weights, policy), k in zip(answers, (0, 1)):
        np.testing.assert_array_equal(weights, readings.branches[(k,)])
        drawn = bots[k].policy(after, state)            # re-solved with the real size
        assert policy[0] == drawn[0] and policy[0][:2] == ["f", "c"]
        np.testing.assert_array_equal(policy[2], drawn[2])
