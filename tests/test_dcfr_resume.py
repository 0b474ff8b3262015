"""DCFR sweeps across executors and resumes: a run loop fed by workers applies sweep k once an
iteration past k * dcfr_interval is merged, as an in-process kernel does before iteration
k * dcfr_interval, so a checkpoint holds the same sweeps whichever executor wrote it, and a
resume applies each sweep exactly once (a loop that stopped at an exact multiple of the
interval used to apply that sweep again after resuming)."""

from types import SimpleNamespace

import pytest

from holdem import checkpoint as ckpt
from holdem.cli.train_blueprint import main as train_main
from holdem.solver import solver as solver_mod
from holdem.solver.solver import DcfrSchedule

INTERVAL = 1000
STORE = SimpleNamespace(arrays=None)


def cfg(**over):
    values = dict(weighting="dcfr", schedule_clock="iterations", dcfr_interval=INTERVAL,
                  discount_stop=None, dcfr_alpha=1.5, dcfr_beta=0.0, dcfr_gamma=2.0)
    values.update(over)
    return SimpleNamespace(**values)


@pytest.fixture
def sweeps(monkeypatch):
    """The sweep numbers applied, in order (the store kernel is not run)."""
    applied = []
    monkeypatch.setattr(solver_mod.kernels, "discount_step",
                        lambda arrays, step, *rest: applied.append(int(step)))
    return applied


def kernel_sweeps(merged):
    """Sweeps an in-process kernel has applied after iterations 0 .. merged - 1."""
    return max(0, merged - 1) // INTERVAL


def merge(schedule, ends):
    for n in ends:
        schedule.catch_up_merged(STORE, n, 0.0)
        assert schedule.steps == kernel_sweeps(n), n


def test_the_loop_holds_the_kernels_sweeps_after_every_merge(sweeps):
    schedule = DcfrSchedule(cfg())
    merge(schedule, [700, 1000, 1001, 1999, 2000, 3000, 5500, 6000, 6001])
    assert sweeps == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("stop", [6000, 6001, 5999, 5500])
def test_a_resumed_loop_applies_each_sweep_once(sweeps, stop):
    first = DcfrSchedule(cfg())
    merge(first, [700, 2000, 4000, stop])
    resumed = DcfrSchedule(cfg())
    resumed.resume(first.steps, stop)
    merge(resumed, [stop + 1, 8000, 9500])
    assert sweeps == list(range(1, 10))


def test_a_checkpoint_of_the_old_loop_at_a_multiple_is_not_swept_again(sweeps):
    """Before catch_up_merged the loop applied sweep 6 on reaching 6,000 and saved steps 6."""
    resumed = DcfrSchedule(cfg())
    resumed.resume(6, 6000)
    merge(resumed, [6001, 7500])
    assert sweeps == [7]


def test_an_in_process_checkpoint_resumed_by_the_loop(sweeps):
    """An in-process schedule counts no kernel sweeps (steps 0): the loop derives them."""
    resumed = DcfrSchedule(cfg())
    resumed.resume(0, 6000)
    assert resumed.steps == 5
    merge(resumed, [6000, 6001])
    assert sweeps == [6]


def test_discount_stop_caps_both_rules(sweeps):
    schedule = DcfrSchedule(cfg(discount_stop=3500))
    for n in (1000, 3000, 3501, 9000):
        schedule.catch_up_merged(STORE, n, 0.0)
    assert sweeps == [1, 2, 3]


def test_the_seconds_clock_is_unchanged(sweeps):
    schedule = DcfrSchedule(cfg(schedule_clock="seconds", dcfr_interval=10))
    schedule.catch_up_merged(STORE, 5, 20.0)
    assert sweeps == [1, 2]


def _steps(logdir):
    path = ckpt.list_checkpoints(ckpt.checkpoint_dir(logdir))[-1]
    header = ckpt.load(path).header
    return header["iterations"], header["schedule"]["dcfr_steps"]


def test_a_worker_run_stopped_at_a_multiple_and_resumed_counts_the_kernels_sweeps(tmp_path):
    """Leduc (dcfr_interval 1,000) with 2 workers to exactly 20,000 iterations, then resumed to
    30,000: the checkpoints count 19 and 29 sweeps, as in-process runs do."""
    logdir = tmp_path / "log"
    common = ["--game", "leduc", "--num-workers", "2", "--logdir", str(logdir), "--quiet"]
    assert train_main([*common, "--iters", "20000"]) in (None, 0)
    assert _steps(logdir) == (20_000, kernel_sweeps(20_000))
    assert train_main([*common, "--iters", "30000", "--resume-from", str(logdir)]) in (None, 0)
    assert _steps(logdir) == (30_000, kernel_sweeps(30_000))
