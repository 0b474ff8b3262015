"""Exact evaluation (holdem.analysis.exact) against known answers and a reference best response.

Known answers: the uniform profile's exploitability (Kuhn 11/24, Leduc 2.373611; with three
players NashConv 2.0625 and 12.6112, OpenSpiel's figures for ``kuhn_poker`` and ``leduc_poker``
with ``players=3``), Kuhn's
equilibrium family (exploitability 0, value -1/18 for player 0) and a pure always-bet/always-call
profile worked out by hand. Random profiles are compared with the reference best response and a
brute force over every pure strategy (Kuhn).
"""

import numpy as np
import pytest

from holdem.analysis.strategy import average_profile, current_profile, uniform_profile
from holdem.store.store import RegretStore
from tests.reference import best_response as reference
from tests.reference.vanilla_cfr import vanilla_cfr

# Kuhn: decision histories in BFS order are '' (P0), 'c' (P1), 'r' (P1), 'cr' (P0); buckets are
# card ranks J=0, Q=1, K=2; actions are [check, bet] when not facing a bet, [fold, call] when
# facing one.
KUHN_ROOT, KUHN_CHECKED, KUHN_BET, KUHN_CHECK_BET = range(4)
J, Q, K = range(3)


def kuhn_key(history, card):
    return history * 3 + card


def kuhn_profile(p0, p1):
    """A Kuhn profile from P(bet or call) per (history, card): ``p0[(history, card)]`` etc."""
    profile = np.zeros((12, 2))
    for (history, card), p in {**p0, **p1}.items():
        profile[kuhn_key(history, card)] = (1.0 - p, p)
    return profile


def kuhn_equilibrium(alpha):
    """The equilibrium family of Kuhn poker (Kuhn 1950), alpha in [0, 1/3]."""
    p0 = {(KUHN_ROOT, J): alpha, (KUHN_ROOT, Q): 0.0, (KUHN_ROOT, K): 3 * alpha,
          (KUHN_CHECK_BET, J): 0.0, (KUHN_CHECK_BET, Q): alpha + 1 / 3, (KUHN_CHECK_BET, K): 1.0}
    p1 = {(KUHN_CHECKED, J): 1 / 3, (KUHN_CHECKED, Q): 0.0, (KUHN_CHECKED, K): 1.0,
          (KUHN_BET, J): 0.0, (KUHN_BET, Q): 1 / 3, (KUHN_BET, K): 1.0}
    return kuhn_profile(p0, p1)


def always_bet_or_call():
    return kuhn_profile({(h, c): 1.0 for h in (KUHN_ROOT, KUHN_CHECK_BET) for c in (J, Q, K)},
                        {(h, c): 1.0 for h in (KUHN_CHECKED, KUHN_BET) for c in (J, Q, K)})


def test_kuhn_layout_matches_the_documented_keys(kuhn):
    tree = kuhn.tree
    assert kuhn.bucket_stride == 3
    assert [int(tree.history[n]) for n in (0, 1, 2, 4)] == [0, 1, 2, 3]
    assert [int(tree.player[n]) for n in (0, 1, 2, 4)] == [0, 1, 1, 0]


def test_uniform_exploitability_kuhn(kuhn_evaluator, kuhn):
    assert kuhn_evaluator.exploitability(uniform_profile(kuhn)) == pytest.approx(11 / 24, abs=1e-12)


def test_uniform_exploitability_leduc(leduc_evaluator, leduc):
    profile = uniform_profile(leduc)
    assert leduc_evaluator.nash_conv(profile) == pytest.approx(4.747222, abs=1e-6)
    assert leduc_evaluator.exploitability(profile) == pytest.approx(2.373611, abs=1e-6)


@pytest.mark.parametrize("game_name,nash_conv", [("kuhn", 2.0625), ("leduc", 12.6112)])
def test_uniform_nash_conv_with_three_players(three_players, game_name, nash_conv):
    game, evaluator = three_players(game_name)
    profile = uniform_profile(game)
    assert evaluator.nash_conv(profile) == pytest.approx(nash_conv, abs=1e-4)
    assert evaluator.exploitability(profile) == pytest.approx(nash_conv / 3, abs=1e-4)
    assert sum(evaluator.expected_values(profile)) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("alpha", [0.0, 0.1, 1 / 6, 1 / 3])
def test_kuhn_equilibrium_family(kuhn_evaluator, kuhn, alpha):
    profile = kuhn_equilibrium(alpha)
    assert kuhn_evaluator.exploitability(profile) < 1e-12
    v0, v1 = kuhn_evaluator.expected_values(profile)
    assert v0 == pytest.approx(-1 / 18, abs=1e-12)
    assert v1 == pytest.approx(1 / 18, abs=1e-12)
    assert reference.expected_value(kuhn, profile, 0) == pytest.approx(-1 / 18, abs=1e-12)
    # Against an equilibrium, nothing beats the game value.
    assert reference.best_response_value(kuhn, profile, 0) == pytest.approx(-1 / 18, abs=1e-12)
    assert reference.best_response_value(kuhn, profile, 1) == pytest.approx(1 / 18, abs=1e-12)


def test_kuhn_outside_the_family_is_exploitable(kuhn_evaluator):
    profile = kuhn_equilibrium(0.2)
    profile[kuhn_key(KUHN_ROOT, K)] = (0.0, 1.0)     # K bets with 1 instead of 3 * alpha = 0.6
    assert kuhn_evaluator.exploitability(profile) > 1e-3


def test_always_bet_or_call_by_hand(kuhn_evaluator, kuhn):
    # Every hand goes to a 2-chip showdown, so the profile is worth 0. P1's best response folds J,
    # calls with Q (worth 0 against J or K) and K (+2): (-1 + 0 + 2) / 3. P0's best response bets
    # or checks-calls K (+2), plays Q to a showdown (0), checks and folds J (-1): the same 1/3.
    profile = always_bet_or_call()
    assert kuhn_evaluator.expected_values(profile) == pytest.approx((0.0, 0.0), abs=1e-15)
    assert kuhn_evaluator.best_response_value(profile, 0) == pytest.approx(1 / 3, abs=1e-12)
    assert kuhn_evaluator.best_response_value(profile, 1) == pytest.approx(1 / 3, abs=1e-12)
    assert kuhn_evaluator.exploitability(profile) == pytest.approx(1 / 3, abs=1e-12)
    for player in (0, 1):
        assert reference.brute_force_best_response_value(kuhn, profile, player) == \
            pytest.approx(1 / 3, abs=1e-12)


@pytest.mark.parametrize("zero_prob", [0.0, 0.5])
def test_kuhn_against_brute_force(kuhn_evaluator, kuhn, random_profile, zero_prob):
    for _ in range(5):
        profile = random_profile(kuhn, zero_prob)
        for player in (0, 1):
            brute = reference.brute_force_best_response_value(kuhn, profile, player)
            assert reference.best_response_value(kuhn, profile, player) == \
                pytest.approx(brute, abs=1e-12)
            assert kuhn_evaluator.best_response_value(profile, player) == \
                pytest.approx(brute, abs=1e-12)


@pytest.mark.parametrize("game_name", ["kuhn", "leduc"])
@pytest.mark.parametrize("zero_prob", [0.0, 0.5])
def test_random_profiles_against_reference(request, random_profile, game_name, zero_prob):
    game = request.getfixturevalue(game_name)
    evaluator = request.getfixturevalue(f"{game_name}_evaluator")
    for _ in range(3):
        profile = random_profile(game, zero_prob)
        v0, v1 = evaluator.expected_values(profile)
        assert v0 == pytest.approx(reference.expected_value(game, profile, 0), abs=1e-12)
        assert v1 == pytest.approx(-v0, abs=1e-12)
        nash_conv = 0.0
        for player in (0, 1):
            expected = reference.best_response_value(game, profile, player)
            assert evaluator.best_response_value(profile, player) == \
                pytest.approx(expected, abs=1e-12)
            nash_conv += expected
        assert nash_conv > 0.0
        assert evaluator.exploitability(profile) == pytest.approx(nash_conv / 2, abs=1e-12)


@pytest.mark.parametrize("game_name,profiles,zero_prob", [
    ("kuhn", 5, 0.0), ("kuhn", 5, 0.5),
    pytest.param("leduc", 1, 0.5, marks=pytest.mark.slow),     # the reference takes a minute
])
def test_three_player_profiles_against_reference(three_players, random_profile, game_name,
                                                 profiles, zero_prob):
    game, evaluator = three_players(game_name)
    for _ in range(profiles):
        profile = random_profile(game, zero_prob)
        values = evaluator.expected_values(profile)
        nash_conv = 0.0
        for player in range(3):
            assert values[player] == pytest.approx(
                reference.expected_value(game, profile, player), abs=1e-12)
            expected = reference.best_response_value(game, profile, player)
            assert evaluator.best_response_value(profile, player) == \
                pytest.approx(expected, abs=1e-12)
            assert expected >= values[player] - 1e-12
            nash_conv += expected
        assert evaluator.nash_conv(profile) == pytest.approx(nash_conv, abs=1e-12)
        assert evaluator.exploitability(profile) == pytest.approx(nash_conv / 3, abs=1e-12)


def test_vanilla_cfr_reference_converges_on_kuhn(kuhn_evaluator, kuhn):
    profile = vanilla_cfr(kuhn, 1000)
    assert kuhn_evaluator.exploitability(profile) < 0.01
    assert kuhn_evaluator.expected_values(profile)[0] == pytest.approx(-1 / 18, abs=2e-3)
    exploitability = 0.5 * sum(reference.best_response_value(kuhn, profile, p) for p in (0, 1))
    assert exploitability == pytest.approx(kuhn_evaluator.exploitability(profile), abs=1e-12)


def test_uniform_profile_rows(leduc):
    profile = uniform_profile(leduc)
    na = leduc.num_actions_of_keys(np.arange(profile.shape[0]))
    assert np.allclose(profile.sum(axis=1), 1.0)
    for key in range(profile.shape[0]):
        assert np.all(profile[key, :na[key]] == 1.0 / na[key])
        assert np.all(profile[key, na[key]:] == 0.0)


def test_profiles_read_from_a_store(kuhn):
    store = RegretStore()
    # Root with Q: strategy sums (1, 3), regrets (-1, 2); 'cr' with K: all-zero sums stay uniform.
    store.merge([kuhn_key(KUHN_ROOT, Q), kuhn_key(KUHN_CHECK_BET, K)], [2, 2],
                [-1.0, 2.0, -1.0, -1.0], [1.0, 3.0, 0.0, 0.0])
    average, visited = average_profile(kuhn, store.used())
    current, _ = current_profile(kuhn, store.used())
    assert visited.sum() == 2
    assert visited[kuhn_key(KUHN_ROOT, Q)] and visited[kuhn_key(KUHN_CHECK_BET, K)]
    assert average[kuhn_key(KUHN_ROOT, Q)] == pytest.approx([0.25, 0.75])
    assert average[kuhn_key(KUHN_CHECK_BET, K)] == pytest.approx([0.5, 0.5])
    assert current[kuhn_key(KUHN_ROOT, Q)] == pytest.approx([0.0, 1.0])
    assert current[kuhn_key(KUHN_CHECK_BET, K)] == pytest.approx([0.5, 0.5])
    untouched = ~visited
    assert np.array_equal(average[untouched], uniform_profile(kuhn)[untouched])
