"""What a run reports while it trains: the preflop-strategy-change scalar of No-Limit Hold'em
(its values, and that TensorBoard's own reader finds it in a real run's event file)."""

from pathlib import Path

import numpy as np
import pytest

from holdem import config as config_mod
from holdem.games import make_game
from holdem.monitor import PreflopChange
from holdem.solver.solver import Solver
from tests.test_cli import run

ROOT = Path(__file__).resolve().parents[1]


def _tv_by_hand(game, before, after):
    """The mean total variation distance over the preflop rows of both stores, the slow way."""
    from holdem.games.tree import NodeKind

    decision = np.flatnonzero(game.tree.kind == NodeKind.DECISION)

    def rows(store):
        keys, num_actions, offsets, _, strategy_sum = store
        out = {}
        for key, na, off in zip(keys.tolist(), num_actions.tolist(), offsets.tolist()):
            if game.tree.street[decision[key // game.bucket_stride]] == 0:
                s = np.asarray(strategy_sum[off:off + na], np.float64)
                out[key] = s / s.sum() if s.sum() > 0 else np.full(na, 1.0 / na)
        return out
    a, b = rows(before), rows(after)
    common = [k for k in b if k in a and a[k].shape == b[k].shape]
    return float(np.mean([0.5 * np.abs(b[k] - a[k]).sum() for k in common]))


def test_preflop_change_is_the_mean_total_variation_between_two_calls():
    cfg = config_mod.load(ROOT / "configs" / "hunl_default.yaml")
    game = make_game(cfg)
    solver = Solver(game, cfg)
    change = PreflopChange(game)
    solver.run(2000)
    assert change(solver.store) is None                          # nothing to compare yet
    before = tuple(np.array(x, copy=True) for x in solver.store.used())
    solver.run(2000)
    after = solver.store.used()
    moved = change(solver.store)
    assert 0 < moved < 1
    assert moved == pytest.approx(_tv_by_hand(game, before, after), rel=1e-9)
    assert change(solver.store) == 0.0                            # no training in between


def test_nlhe_training_writes_the_preflop_change_to_tensorboard(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config = tmp_path / "hunl.yaml"
    text = (ROOT / "configs" / "hunl_default.yaml").read_text()
    text = text.replace(
        "buckets: assets/abstraction/default_hu.buckets",
        f"buckets: {ROOT / 'assets' / 'abstraction' / 'default_hu.buckets'}")
    config.write_text(text + "  log_interval: 0.5\n")
    run("train_blueprint", "--config", config, "--time-budget", 4, "--logdir", tmp_path / "run",
        "--quiet", "--tensorboard")
    events = EventAccumulator(str(tmp_path / "run"))
    events.Reload()
    values = [e.value for e in events.Scalars("eval/preflop_strategy_change")]
    assert len(values) >= 2 and all(0 <= v <= 1 for v in values)
