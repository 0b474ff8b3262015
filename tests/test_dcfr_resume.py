"""DCFR sweeps across resumes. A run loop fed by workers applies sweep k on reaching
k * dcfr_interval merged iterations (every update of an earlier iteration is in, none of a
later one); an in-process kernel applies it just before running iteration k * dcfr_interval
and counts nothing. A resume applies each sweep exactly once: a loop that stopped at an exact
multiple of the interval used to apply that sweep again (its count was re-derived from the
iterations as the kernel's, one fewer)."""

from types import SimpleNamespace

import pytest

from holdem.cli.train_blueprint import main as train_main
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
    """The sweep numbers applied, in order (the store is not touched). The schedule's own
    ``apply`` is replaced, not the numba kernel it calls: compiled kernels that call it would
    fail to compile around a Python function on a cold cache."""
    applied = []

    def apply(self, store, count):
        for _ in range(count):
            self.steps += 1
            applied.append(self.steps)

    monkeypatch.setattr(DcfrSchedule, "apply", apply)
    return applied


def merge(schedule, ends):
    for n in ends:
        schedule.catch_up(STORE, n, 0.0)
        assert schedule.steps == n // INTERVAL, n


def test_the_loop_sweeps_on_reaching_each_multiple(sweeps):
    schedule = DcfrSchedule(cfg())
    merge(schedule, [700, 999, 1000, 1001, 1999, 2000, 3000, 5500, 6000, 6001])
    assert sweeps == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("stop", [6000, 6001, 5999, 5500])
def test_a_resumed_loop_applies_each_sweep_once(sweeps, stop):
    first = DcfrSchedule(cfg())
    merge(first, [700, 2000, 4000, stop])
    resumed = DcfrSchedule(cfg())
    resumed.resume(first.steps, stop)
    merge(resumed, [stop, stop + 1, 8000, 9500])
    assert sweeps == list(range(1, 10))


@pytest.mark.parametrize("stop,owed", [(6000, [6]), (6001, []), (5999, [])])
def test_an_in_process_checkpoint_resumed_by_the_loop(sweeps, stop, owed):
    """An in-process schedule counts no kernel sweeps (steps 0): the loop derives them from the
    iterations -- the kernel had not yet applied the sweep of an exact multiple."""
    resumed = DcfrSchedule(cfg())
    resumed.resume(0, stop)
    assert resumed.steps == (stop - 1) // INTERVAL
    resumed.catch_up(STORE, stop, 0.0)
    assert sweeps == owed


def test_discount_stop_caps_the_count(sweeps):
    schedule = DcfrSchedule(cfg(discount_stop=3500))
    for n in (1000, 3000, 3501, 9000):
        schedule.catch_up(STORE, n, 0.0)
    assert sweeps == [1, 2, 3]
    resumed = DcfrSchedule(cfg(discount_stop=3500))
    resumed.resume(3, 9000)
    resumed.catch_up(STORE, 9500, 0.0)
    assert sweeps == [1, 2, 3]


def test_a_worker_run_stopped_at_a_multiple_and_resumed_sweeps_each_step_once(tmp_path,
                                                                              sweeps):
    """Leduc (dcfr_interval 1,000) with 2 workers to exactly 20,000 iterations, then resumed to
    30,000 -- the usual way to extend a run. The main process applies every sweep (workers
    never discount): 1 to 30, each once."""
    logdir = tmp_path / "log"
    common = ["--game", "leduc", "--num-workers", "2", "--logdir", str(logdir), "--quiet"]
    assert train_main([*common, "--iters", "20000"]) in (None, 0)
    assert sweeps == list(range(1, 21))
    assert train_main([*common, "--iters", "30000", "--resume-from", str(logdir)]) in (None, 0)
    assert sweeps == list(range(1, 31))
