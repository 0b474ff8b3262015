"""MCCFR kernels and the in-process Solver: regret matching against the reference, the RNG,
iteration weights, bit-for-bit determinism, and convergence on Kuhn and Leduc.

Convergence bounds were measured with the fixed seeds used here and given a margin of about 2x
(exploitability of the average strategy, chips per game; uniform play is 0.458 on Kuhn and 2.374
on Leduc).
"""

import dataclasses

import numba
import numpy as np
import pytest

from holdem import config
from holdem import rng as rng_mod
from holdem.analysis.strategy import average_profile
from holdem.solver import kernels
from holdem.solver import solver as solver_mod
from holdem.solver.solver import Solver, make_params
from tests.reference.vanilla_cfr import regret_matching as reference_regret_matching


def make_config(game_name, seed=0, **solver):
    return config.with_overrides(config.default_for_game(game_name), solver=solver,
                                 train={"seed": seed})


def train(game, iterations, seed=0, **solver):
    solver = Solver(game, make_config(game.name, seed, **solver))
    solver.run(iterations)
    return solver


def exploitability(game, evaluator, solver):
    profile, _ = average_profile(game, solver.store.used())
    return evaluator.exploitability(profile)


@numba.njit
def _uniforms(state, n):
    out = np.empty(n)
    for i in range(n):
        out[i] = rng_mod.uniform(state)
    return out


@numba.njit
def _below(state, bound, n):
    out = np.empty(n, np.int64)
    for i in range(n):
        out[i] = rng_mod.below(state, bound)
    return out


# -- regret matching -------------------------------------------------------------------------

def test_regret_matching_against_reference(rng):
    lengths = rng.integers(1, 9, size=200)
    regrets = (rng.standard_normal(int(lengths.sum())) * 5).astype(np.float32)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    regrets[offsets[3]:offsets[3] + lengths[3]] = 0.0            # no positive regret: uniform
    regrets[offsets[4]:offsets[4] + lengths[4]] = -1.0
    out = np.zeros(8)
    for offset, n in zip(offsets, lengths):
        kernels.regret_matching(regrets, offset, n, out)
        expected = reference_regret_matching(regrets[offset:offset + n])
        np.testing.assert_allclose(out[:n], expected, rtol=1e-12, atol=0)
        assert out[:n].sum() == pytest.approx(1.0)


def test_regret_matching_cases():
    out = np.zeros(3)
    kernels.regret_matching(np.array([2.0, -1.0, 6.0], np.float32), 0, 3, out)
    assert out.tolist() == [0.25, 0.0, 0.75]
    kernels.regret_matching(np.array([-2.0, 0.0, -6.0], np.float32), 0, 3, out)
    assert out == pytest.approx([1 / 3] * 3)
    kernels.regret_matching(np.array([9.0, 0.0, 5.0], np.float32), 1, 1, out)
    assert out[0] == 1.0


# -- random numbers ---------------------------------------------------------------------------

def test_make_states_reproducible_and_distinct(seed):
    a = rng_mod.make_states(seed, 4)
    assert a.dtype == np.uint64 and a.shape == (4, 4)
    assert np.array_equal(a, rng_mod.make_states(seed, 4))
    assert len({tuple(row) for row in a}) == 4
    assert not np.array_equal(a, rng_mod.make_states(seed + 1, 4))
    streams = [_uniforms(state.copy(), 1000) for state in a]
    for i in range(4):
        for j in range(i):
            assert not np.array_equal(streams[i], streams[j])
            assert abs(np.corrcoef(streams[i], streams[j])[0, 1]) < 0.15


@pytest.mark.parametrize("values", [
    (0, 0), (0, 1), (1, 0), (7, 2_500_000), (2**32 - 1, 2**32), (2**40 + 3, 2**63 - 1),
    (2**64 - 1, 2**70), (5,), (1, 2, 3, 4, 5, 6), ()])
def test_seed_sequence_is_numpys(values):
    # Workers seed each flush with it (batch_rng_state): numpy's bits exactly, so runs and
    # the lag simulator's figures stay what SeedSequence gave.
    expect = np.random.SeedSequence(list(values)).generate_state(4, dtype=np.uint64)
    assert np.array_equal(rng_mod.seed_sequence(values), expect)
    rs = np.random.default_rng(5)
    for a, b in zip(rs.integers(0, 2**63, 200), rs.integers(0, 2**40, 200)):
        expect = np.random.SeedSequence([int(a), int(b)]).generate_state(4, dtype=np.uint64)
        assert np.array_equal(rng_mod.seed_sequence((a, b)), expect)
    with pytest.raises(ValueError, match="non-negative"):
        rng_mod.seed_sequence((1, -2))


def test_uniform_range_and_mean(seed):
    state = rng_mod.make_states(seed, 1)[0]
    x = _uniforms(state, 200_000)
    assert x.min() >= 0.0 and x.max() < 1.0
    assert x.mean() == pytest.approx(0.5, abs=0.005)           # sd of the mean: 0.00065
    assert x.var() == pytest.approx(1 / 12, abs=0.002)
    assert np.histogram(x, bins=10, range=(0, 1))[0].min() > 19_000
    again = rng_mod.make_states(seed, 1)[0]
    assert np.array_equal(_uniforms(again, 200_000), x)       # the state is the whole RNG


def test_below_range_and_counts(seed):
    state = rng_mod.make_states(seed, 1)[0]
    x = _below(state, 6, 60_000)
    assert x.min() == 0 and x.max() == 5
    assert np.bincount(x).min() > 9_500


@numba.njit
def _keyed(keys, indices):
    out = np.empty((keys.size, indices.size))
    for i in range(keys.size):
        for j in range(indices.size):
            out[i, j] = rng_mod.keyed_uniform(keys[i], indices[j])
    return out


def test_keyed_uniform_depends_on_key_and_index_alone():
    """Common random numbers: the same (key, index) gives the same draw wherever it comes up;
    over keys from the generator the draws are uniform, and neighbouring indices (the nodes of
    one deal) are uncorrelated."""
    state = rng_mod.make_states(3, 1)[0]
    keys = np.array([rng_mod.next_u64(state) for _ in range(20_000)], dtype=np.uint64)
    x = _keyed(keys, np.arange(10, dtype=np.int64))
    assert x.min() >= 0.0 and x.max() < 1.0
    assert x.mean() == pytest.approx(0.5, abs=0.005)
    assert np.histogram(x, bins=10, range=(0, 1))[0].min() > 19_000
    assert np.abs(np.corrcoef(x.T) - np.eye(10)).max() < 0.05
    assert np.array_equal(_keyed(keys[::-1].copy(), np.arange(10))[::-1], x)
    assert _keyed(keys[:1], np.array([4]))[0, 0] == x[0, 4]


# -- iteration weights ------------------------------------------------------------------------

def params(game, elapsed=0.0, **solver):
    return make_params(make_config(game.name, **solver).solver, game.num_streets,
                       elapsed=elapsed)


def test_iteration_weight_constant(leduc):
    p = params(leduc)
    assert [kernels.iteration_weight(p, t) for t in (0, 1, 10**9)] == [1.0, 1.0, 1.0]


def test_iteration_weight_linear(leduc):
    p = params(leduc, weighting="linear", discount_interval=10)
    weights = [kernels.iteration_weight(p, t) for t in (0, 9, 10, 19, 20, 1234)]
    assert weights == [1.0, 1.0, 2.0, 2.0, 3.0, 124.0]
    p = params(leduc, weighting="linear", discount_interval=10, discount_stop=100)
    assert kernels.iteration_weight(p, 99) == 10.0
    assert kernels.iteration_weight(p, 100) == kernels.iteration_weight(p, 10**12) == 11.0


def test_iteration_weight_linear_by_seconds(leduc):
    p = params(leduc, elapsed=25.0, weighting="linear", discount_interval=10,
               schedule_clock="seconds")
    assert kernels.iteration_weight(p, 0) == kernels.iteration_weight(p, 10**6) == 3.0


@pytest.mark.parametrize("options", [
    {}, {"weighting": "linear", "discount_interval": 10},
    {"weighting": "linear", "discount_interval": 7, "discount_stop": 100},
    {"weighting": "linear", "discount_interval": 10, "schedule_clock": "seconds"},
])
def test_python_iteration_weight_is_the_kernels(leduc, options):
    # The main process's regret floor uses the Python twin; a drift would clamp merged
    # deltas at another floor than the traversal's.
    for elapsed in (0.0, 25.0):
        p = params(leduc, elapsed=elapsed, **options)
        for t in (0, 1, 6, 7, 9, 10, 99, 100, 101, 1234, 10**12):
            assert solver_mod.iteration_weight(p, t) == kernels.iteration_weight(p, t)


# -- determinism ------------------------------------------------------------------------------

@pytest.mark.parametrize("solver_options", [
    {}, {"sampling": "outcome"}, {"weighting": "dcfr", "dcfr_interval": 50},
    {"weighting": "linear", "discount_interval": 7, "prune": True, "prune_after": 100,
     "prune_threshold": -1.0, "regret_floor": -2.0},
])
def test_same_seed_is_bit_for_bit_identical(leduc, seed, solver_options):
    a = train(leduc, 3_000, seed, **solver_options)
    b = train(leduc, 3_000, seed, **solver_options)
    pieces = Solver(leduc, make_config("leduc", seed, **solver_options))
    for n in (1, 499, 1_000, 1_500):                 # resumed in pieces = one run
        pieces.run(n)
    for other in (b, pieces):
        for x, y in zip(a.store.used(), other.store.used()):
            assert x.tobytes() == y.tobytes()
        assert np.array_equal(a.rng_state, other.rng_state)
        assert a.workspace.visits[0] == other.workspace.visits[0]
    c = train(leduc, 3_000, seed + 1, **solver_options)
    assert a.store.used()[3].tobytes() != c.store.used()[3].tobytes()


# -- convergence ------------------------------------------------------------------------------

def test_kuhn_external_sampling(kuhn, kuhn_evaluator, seed):
    solver = train(kuhn, 200_000, seed)
    assert exploitability(kuhn, kuhn_evaluator, solver) < 0.005      # measured 0.001-0.002
    profile, visited = average_profile(kuhn, solver.store.used())
    assert visited.sum() == 12                                        # 4 histories x 3 cards
    assert kuhn_evaluator.expected_values(profile)[0] == pytest.approx(-1 / 18, abs=2e-3)


def test_kuhn_outcome_sampling(kuhn, kuhn_evaluator, seed):
    solver = train(kuhn, 1_000_000, seed, sampling="outcome")
    assert exploitability(kuhn, kuhn_evaluator, solver) < 0.01       # measured 0.0015-0.0025
    profile, _ = average_profile(kuhn, solver.store.used())
    assert kuhn_evaluator.expected_values(profile)[0] == pytest.approx(-1 / 18, abs=2e-3)


def test_leduc_external_sampling(leduc, leduc_evaluator, seed):
    solver = train(leduc, 1_000_000, seed)
    assert exploitability(leduc, leduc_evaluator, solver) < 0.02      # measured ~0.009
    profile, visited = average_profile(leduc, solver.store.used())
    assert visited.sum() == 6 * 3 + 30 * 9           # every reachable infoset was visited
    # Leduc's game value for the first player is about -0.0856.
    assert leduc_evaluator.expected_values(profile)[0] == pytest.approx(-0.0856, abs=0.005)


def test_leduc_outcome_sampling(leduc, leduc_evaluator, seed):
    solver = train(leduc, 1_000_000, seed, sampling="outcome")
    assert exploitability(leduc, leduc_evaluator, solver) < 0.12      # measured 0.05-0.06


@pytest.mark.parametrize("solver_options, bound", [
    ({"weighting": "linear", "discount_interval": 1000}, 0.04),          # measured 0.011-0.018
    ({"weighting": "dcfr", "dcfr_interval": 1000}, 0.04),            # measured 0.014-0.016
    ({"regret_floor": -2.0}, 0.05),                                      # measured 0.025
    # Pluribus-style: prune 95% of iterations, floor just below the threshold.
    ({"prune": True, "prune_threshold": -1.0, "prune_after": 10_000, "regret_floor": -2.0},
     0.05),                                                              # measured 0.023-0.025
    ({"prune": True, "prune_threshold": -1.0, "prune_after": 10_000, "prune_prob": 0.5},
     0.04),                                                              # measured 0.013-0.019
    ({"strategy_interval": 10}, 0.04),           # measured 0.015-0.016 (0.014-0.016 every it.)
])
def test_leduc_variants_converge(leduc, leduc_evaluator, seed, solver_options, bound):
    solver = train(leduc, 1_000_000, seed, **solver_options)
    assert exploitability(leduc, leduc_evaluator, solver) < bound


def test_strategy_interval_samples_strategy_sums_and_leaves_regrets_alone(leduc, seed):
    """With ``strategy_interval: k`` only iterations 0, k, 2k, .. add to the strategy sums, k
    times as heavily; regrets never read the strategy sums, so they are the same bit for bit."""
    every = train(leduc, 10, seed)
    tenth = train(leduc, 10, seed, strategy_interval=10)
    first = train(leduc, 1, seed)                      # iteration 0 alone
    keys, _, offsets, regrets, sums = tenth.store.used()
    assert regrets.tobytes() == every.store.used()[3].tobytes()
    assert keys.tobytes() == every.store.used()[0].tobytes()
    assert sums.tobytes() != every.store.used()[4].tobytes()
    k0, na0, off0, _, sums0 = first.store.used()
    row = {int(k): int(o) for k, o in zip(keys, offsets)}
    seen = np.zeros(sums.shape[0], bool)
    for key, na, off in zip(k0.tolist(), na0.tolist(), off0.tolist()):
        np.testing.assert_allclose(sums[row[key]:row[key] + na], 10 * sums0[off:off + na],
                                   rtol=1e-12)
        seen[row[key]:row[key] + na] = True
    assert seen.any() and not sums[~seen].any()        # iterations 1..9 added nothing
    long_every, long_tenth = train(leduc, 20_000, seed), train(leduc, 20_000, seed,
                                                               strategy_interval=10)
    assert long_tenth.store.used()[3].tobytes() == long_every.store.used()[3].tobytes()
    ratio = long_tenth.store.used()[4].sum() / long_every.store.used()[4].sum()
    assert 0.9 < ratio < 1.1                           # an unbiased sum of the same updates


def test_pruning_skips_work(leduc, seed):
    options = {"prune": True, "prune_threshold": -1.0, "prune_after": 10_000}
    plain = train(leduc, 200_000, seed)
    pruned = train(leduc, 200_000, seed, **options)
    assert pruned.workspace.visits[0] < 0.8 * plain.workspace.visits[0]
    not_yet = train(leduc, 10_000, seed, **options)          # before prune_after: no pruning
    assert not_yet.store.used()[3].tobytes() == train(leduc, 10_000, seed).store.used()[3].tobytes()


def test_regret_floor_holds(leduc, seed):
    solver = train(leduc, 100_000, seed, regret_floor=-2.0)
    regrets = solver.store.used()[3]
    assert regrets.min() == pytest.approx(-2.0)
    assert np.all(regrets >= np.float32(-2.0))


@pytest.mark.parametrize("clock", ["iterations", "seconds"])
def test_the_merge_floor_is_the_traversals_floor_on_either_clock(clock):
    """regret_floor_at (what merges clamp worker deltas at, once a pass; it reuses the
    iteration clock's Params) gives the floor the in-process kernels use: the Params' floor
    times the iteration's weight, the weight stepped by iterations or by elapsed seconds."""
    base = config.load("configs/hunl_default.yaml").solver
    solver_cfg = dataclasses.replace(base, schedule_clock=clock, regret_floor=-1000.0,
                                     weighting="linear", discount_interval=10, discount_stop=100)
    for iterations, elapsed in [(0, 0.0), (5, 3.0), (50, 55.0), (10_000, 500.0), (7, 55.0)]:
        params = make_params(solver_cfg, 4, elapsed=elapsed)
        expected = params.regret_floor * solver_mod.iteration_weight(params, iterations)
        assert solver_mod.regret_floor_at(solver_cfg, 4, iterations, elapsed) == expected
    stepped = [solver_mod.regret_floor_at(solver_cfg, 4, 7, e) for e in (3.0, 55.0)]
    assert (stepped[0] == stepped[1]) == (clock == "iterations")
    assert solver_mod.regret_floor_at(dataclasses.replace(solver_cfg, regret_floor=None),
                                      4, 7, 55.0) is None
