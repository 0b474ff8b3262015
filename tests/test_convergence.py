"""Parallel iterations must be worth about as much as serial ones: Leduc trained by 8 simulated
workers (the lagged executor: the exact order of reads and merges of 8 workers whose main process
keeps up, run on one core, deterministic for a seed) against in-process training, at equal
iterations, by exact exploitability."""

import pytest

from holdem import config as config_mod
from holdem.analysis.blueprint import load_profile
from holdem.analysis.exact import ExactEvaluator
from holdem.games import make_game
from holdem.runtime.lagged import LaggedExecutor
from holdem.training import train

ITERATIONS = 3_000_000
WORKERS = 8
BATCH = 2_880                   # the process executor's cap for Leduc (10 per infoset)


def _exploitability(tmp_path, name, workers=None, **train_overrides):
    config = config_mod.with_overrides(config_mod.default_for_game("leduc"),
                                       train={"iters": ITERATIONS, **train_overrides})
    game = make_game(config)
    executor = None if workers is None else LaggedExecutor(game, config, workers, BATCH)
    result = train(config, tmp_path / name, progress=False, executor=executor)
    assert result.iterations == ITERATIONS
    return ExactEvaluator(game).exploitability(load_profile(tmp_path / name).average)


@pytest.mark.slow
def test_many_workers_iterations_are_worth_nearly_as_much_as_serial_ones(tmp_path):
    serial = _exploitability(tmp_path, "serial")
    parallel = _exploitability(tmp_path, "parallel", WORKERS)
    # Measured: 1.49x (the workers count their own unmerged updates 8 times, standing in for
    # the others' unfinished batches); before that 3.56x.
    assert parallel < 2.0 * serial, (parallel, serial)
    plain = _exploitability(tmp_path, "plain", WORKERS, own_delta_weight=1.0)
    assert plain > 1.5 * parallel, (plain, parallel)     # the lag the weight corrects


def test_lagged_executor_reaches_exact_counts_and_resumes(tmp_path):
    config = config_mod.with_overrides(config_mod.default_for_game("leduc"),
                                       train={"iters": 50_000})
    game = make_game(config)
    first = train(config, tmp_path / "run", progress=False,
                  executor=LaggedExecutor(game, config, 3, 1000))
    assert first.iterations == 50_000
    more = config_mod.with_overrides(config, train={"iters": 80_000})
    second = train(more, tmp_path / "run", resume_from=tmp_path / "run", progress=False)
    assert second.iterations == 80_000 and second.infosets == 288
