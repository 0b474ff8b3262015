"""What a run reports while it trains: the preflop-strategy-change scalar of No-Limit Hold'em
(its values, and that TensorBoard's own reader finds it in a real run's event file)."""

import re
from pathlib import Path

import numpy as np
import pytest

from holdem import config as config_mod
from holdem.games import make_game
from holdem.analysis import evaluation
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
    change = evaluation.make("preflop_change", game).change
    solver.run(2000)
    assert change(solver.store) is None                          # nothing to compare yet
    before = tuple(np.array(x, copy=True) for x in solver.store.used())
    solver.run(2000)
    after = solver.store.used()
    moved = change(solver.store)
    assert 0 < moved < 1
    assert moved == pytest.approx(_tv_by_hand(game, before, after), rel=1e-9)
    assert change(solver.store) == 0.0                            # no training in between


def _hunl_config(tmp_path, extra):
    config = tmp_path / "hunl.yaml"
    text = (ROOT / "configs" / "hunl_default.yaml").read_text()
    text = text.replace(
        "buckets: assets/abstraction/default_hu.buckets",
        f"buckets: {ROOT / 'assets' / 'abstraction' / 'default_hu.buckets'}")
    config.write_text(text + extra)
    return config


def test_nlhe_training_writes_its_learning_curves_to_tensorboard(tmp_path):
    """By default (no eval key in the config but the intervals, shortened for the test) an
    NLHE run writes the preflop change and the match against the equity bot."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config = _hunl_config(tmp_path, "  log_interval: 0.5\n  eval_interval: 0.5\n"
                                    "  eval_baseline_interval: 1.5\n  eval_hands: 2000\n")
    run("train_blueprint", "--config", config, "--time-budget", 5, "--logdir", tmp_path / "run",
        "--quiet", "--tensorboard")
    events = EventAccumulator(str(tmp_path / "run"))
    events.Reload()
    values = [e.value for e in events.Scalars("eval/preflop_strategy_change")]
    assert len(values) >= 2 and all(0 <= v <= 1 for v in values)
    mbb = [e.value for e in events.Scalars("eval/mbb_vs_equity")]
    ci = [e.value for e in events.Scalars("eval/mbb_vs_equity_ci95")]
    assert len(mbb) >= 2 and len(ci) == len(mbb) and all(c > 0 for c in ci)
    assert "train/iters_per_sec" in events.Tags()["scalars"]


def test_learning_curves_reach_the_progress_output_without_tensorboard(tmp_path):
    config = _hunl_config(tmp_path, "  eval_interval: 0.5\n  eval_baseline_interval: 1.5\n"
                                    "  eval_hands: 2000\n")
    proc = run("train_blueprint", "--config", config, "--time-budget", 4, "--logdir",
               tmp_path / "run")
    lines = [line for line in proc.stderr.splitlines() if line.startswith("eval: ")]
    assert any("preflop_change=" in line for line in lines), proc.stderr
    assert any("vs_equity=" in line and "mbb/hand" in line for line in lines), proc.stderr
    assert not (tmp_path / "run" / "events").exists() and not list(
        (tmp_path / "run").glob("events.out.tfevents*"))
    quiet = run("train_blueprint", "--config", config, "--time-budget", 2, "--logdir",
                tmp_path / "quiet", "--quiet")
    assert "eval: " not in quiet.stderr


def test_leduc_prints_its_exploitability_as_it_trains(tmp_path):
    config = tmp_path / "leduc.yaml"
    config.write_text("game: {name: leduc}\ntrain: {eval_interval: 0.5}\n")
    proc = run("train_blueprint", "--config", config, "--time-budget", 2, "--logdir",
               tmp_path / "run")
    values = [float(line.split("exploitability=")[1].split()[0])
              for line in proc.stderr.splitlines() if line.startswith("eval: ")]
    assert len(values) >= 2 and all(0 < v < 2 for v in values), proc.stderr


def test_lbr_learning_curve_on_its_interval(tmp_path):
    """Heads-up NLHE runs local best response in the ``eval_lbr`` setting (fcpa on the turn
    and river by default) every ``eval_lbr_interval`` s, as an eval: line and an
    eval/lbr_<actions>_<rounds> scalar with its interval; not at the forced end of a run."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config = _hunl_config(tmp_path, "  log_interval: 0.5\n  eval_baseline: null\n"
                                    "  eval_interval: 1000\n  eval_lbr_interval: 1.0\n"
                                    "  eval_lbr_hands: 400\n")
    proc = run("train_blueprint", "--config", config, "--time-budget", 6, "--logdir",
               tmp_path / "run", "--tensorboard")
    lines = [line for line in proc.stderr.splitlines() if "lbr fcpa:3-4=" in line]
    assert len(lines) >= 2 and all(line.startswith("eval: ") and "mbb/hand" in line
                                   for line in lines), proc.stderr
    events = EventAccumulator(str(tmp_path / "run"))
    events.Reload()
    values = [e.value for e in events.Scalars("eval/lbr_fcpa_3-4")]
    ci = [e.value for e in events.Scalars("eval/lbr_fcpa_3-4_ci95")]
    assert len(values) == len(lines) and len(ci) == len(values) and all(c > 0 for c in ci)
    once = _hunl_config(tmp_path, "  eval_baseline: null\n  eval_interval: 1000\n"
                                  "  eval_lbr: fc:1-4\n  eval_lbr_interval: 1000\n")
    proc = run("train_blueprint", "--config", once, "--iters", 3000, "--logdir", tmp_path / "o")
    assert "lbr" not in proc.stderr.replace("--lbr", "")      # not forced at the end


def test_evaluation_can_be_switched_off(tmp_path):
    config = _hunl_config(tmp_path, "  eval_baseline: null\n  eval_interval: 1000\n")
    proc = run("train_blueprint", "--config", config, "--iters", 3000, "--logdir", tmp_path / "r")
    lines = [line for line in proc.stderr.splitlines() if line.startswith("eval: ")]
    # The run's last tick evaluates whatever is on: the preflop change only.
    assert all("vs_" not in line for line in lines), proc.stderr


def test_preflop_change_of_a_store_without_preflop_rows_is_none():
    """A first snapshot taken before any preflop infoset was stored (the lag simulator's
    workers have not merged yet) compares with nothing: None, not an IndexError."""
    cfg = config_mod.load(ROOT / "configs" / "hunl_default.yaml")
    game = make_game(cfg)
    solver = Solver(game, cfg)
    change = evaluation.make("preflop_change", game).change
    assert change(solver.store) is None                          # empty store
    solver.run(500)
    assert change(solver.store) is None                          # nothing to compare with
    assert change(solver.store) == 0.0


def _kuhn_monitor(logdir):
    """(RunMonitor writing TensorBoard scalars at every tick into ``logdir``, a Kuhn store)."""
    from holdem.monitor import RunMonitor

    config = config_mod.with_overrides(config_mod.load(ROOT / "configs" / "kuhn.yaml"),
                                       train={"iters": 1000, "tensorboard": True,
                                              "log_interval": 0.001})
    game = make_game(config)
    return RunMonitor(config, logdir, game, progress=False), Solver(game, config).store


def test_a_refused_evaluation_or_tensorboard_write_is_reported_and_training_goes_on(
        tmp_path, monkeypatch, capsys):
    """The hunl_blueprint soak's disk-full fault: a baseline match compiled its kernel for the
    first time, numba's cache write failed with EFBIG and the OSError ended the run. A failure
    of the machine in what a tick reports is a warning (once a minute for each kind); the
    tick's other work goes on."""
    import errno

    monitor, store = _kuhn_monitor(tmp_path)
    full = OSError(errno.EFBIG, "File too large")

    def refuse(*args, **kwargs):
        raise full

    monkeypatch.setattr(monitor, "_evaluate", refuse)
    written = []
    monkeypatch.setattr(monitor.tb, "scalars", lambda step, values: written.append(step))
    for n in (10, 20):
        monitor.tick(n, 1.0, store, force=True)
    assert written == [10, 20]          # the scalars of the tick still written
    monkeypatch.setattr(monitor.tb, "scalars", refuse)
    for n in (30, 40):
        monitor.tick(n, 1.0, store, force=True)
    err = capsys.readouterr().err.splitlines()
    assert err == ["warning: an evaluation failed at this tick: [Errno 27] File too large; "
                   "training goes on",
                   "warning: writing TensorBoard scalars failed at this tick: [Errno 27] File "
                   "too large; training goes on"]
    monitor.close()


def _scalars(logdir, tag):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(logdir), size_guidance={"scalars": 0})
    events.Reload()
    return [(e.step, e.value) for e in events.Scalars(tag)]


def test_a_rate_point_measures_training_not_the_evaluation_in_its_interval(tmp_path,
                                                                          monkeypatch):
    """Issue 40: a run's last train/iters_per_sec point was 2,188 where the rest were 18-23 k:
    the end-of-run evaluation was counted in its interval. Rates are measured over the
    training clock the run passes (here 10,000 iterations in 0.5 s each time), whatever the
    wall time an evaluation took."""
    import time

    monitor, store = _kuhn_monitor(tmp_path)

    def slow_evaluation(iterations, store, force):
        if force:
            time.sleep(0.4)                 # the end-of-run evaluation
        return {}

    monkeypatch.setattr(monitor, "_evaluate", slow_evaluation)
    written = []
    monkeypatch.setattr(monitor.tb, "scalars", lambda step, values: written.append(values))
    monitor.tick(10_000, 0.5, store)
    time.sleep(0.5)                         # training
    monitor.tick(20_000, 1.0, store, force=True)
    monitor.close()
    rates = [values["train/iters_per_sec"] for values in written]
    assert rates == [pytest.approx(20_000), pytest.approx(20_000)]
    assert monitor.eval_seconds >= 0.4


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.parallel)])
def test_the_last_rate_point_of_a_run_is_not_dragged_down_by_its_final_evaluation(
        tmp_path, monkeypatch, workers):
    """Through train(): every forced evaluation of the run takes three extra seconds (a slow
    baseline match); the rate points, the last one included, stay those of training. Counted
    in a last interval of 0.125-0.25 s, those seconds would cut its rate below a twelfth;
    the bound is a quarter of the median, so that another job starting on a shared machine
    during that short interval (CI: a heavy test on the other core) does not fail it."""
    import time

    from holdem.monitor import RunMonitor
    from holdem.training import train

    evaluate = RunMonitor._evaluate

    def slow(self, iterations, store, force):
        values = evaluate(self, iterations, store, force)
        if force:
            time.sleep(3.0)
        return values

    monkeypatch.setattr(RunMonitor, "_evaluate", slow)
    monkeypatch.setenv("HOLDEM_SHM_DIR", str(tmp_path))
    train_keys = {"time_budget": 2.0, "tensorboard": True, "log_interval": 0.25,
                  "num_workers": workers}
    if workers > 1:
        train_keys["worker_timeout"] = 600      # a loaded machine: no restarts
    config = config_mod.with_overrides(config_mod.default_for_game("leduc"), train=train_keys)
    train(config, tmp_path / "run", progress=False)
    rates = [value for _, value in _scalars(tmp_path / "run", "train/iters_per_sec")]
    assert len(rates) >= 4, rates
    assert rates[-1] >= 0.25 * float(np.median(rates[1:-1])), rates


def test_store_bytes_means_the_same_before_and_after_a_resume(tmp_path):
    """Issue 40: after a resume train/store_bytes fell (25.5 -> 18.4 MB) with the infoset count
    unchanged: it was the allocated capacity, which a resumed store starts without. It is now
    the bytes the stored infosets take (RegretStore.used_bytes: rows, hash slots and entries,
    packed), and train/store_allocated_bytes is the memory."""
    from holdem import checkpoint as ckpt
    from holdem.store.store import RegretStore

    logdir = tmp_path / "run"
    run("train_blueprint", "--game", "leduc", "--iters", 20_000, "--logdir", logdir,
        "--tensorboard", "--quiet")
    before = _scalars(logdir, "train/store_bytes")
    proc = run("train_blueprint", "--iters", 40_000, "--logdir", logdir, "--resume-from",
               logdir)
    after = _scalars(logdir, "train/store_bytes")[len(before):]
    infosets = _scalars(logdir, "train/infosets")
    assert infosets[len(before) - 1][1] == infosets[-1][1] == 288          # Leduc: all of them
    assert before[-1][1] == after[0][1] == after[-1][1]
    latest = ckpt.load(ckpt.resolve(logdir))
    store = ckpt.store_from_checkpoint(latest)
    assert after[-1][1] == store.used_bytes and isinstance(store, RegretStore)
    allocated = _scalars(logdir, "train/store_allocated_bytes")
    assert allocated and all(value >= after[0][1] for _, value in allocated)
    # The progress line says the same store size on both sides of the resume.
    size = re.findall(r"store=([\d.]+ [KMG]?B)", proc.stderr)
    assert size and len(set(size)) == 1, proc.stderr


@pytest.mark.parametrize("start", [0, 1_000_000])
def test_rate_points_over_short_intervals_are_left_out_and_measured_with_the_next(tmp_path,
                                                                                  monkeypatch,
                                                                                  start):
    """Issue 54: the first tick of an invocation (right after its workers start; a resumed
    run's too) and the short last interval gave rates far from the rest. A rate over less than
    half of log_interval is not written; the next one covers its iterations, from where this
    invocation started."""
    from holdem.monitor import RunMonitor

    config = config_mod.with_overrides(config_mod.load(ROOT / "configs" / "kuhn.yaml"),
                                       train={"iters": 10 ** 7, "tensorboard": True,
                                              "log_interval": 1.0})
    game = make_game(config)
    monitor = RunMonitor(config, tmp_path, game, progress=False, start_iterations=start)
    store = Solver(game, config).store
    written = []
    monkeypatch.setattr(monitor.tb, "scalars", lambda step, values: written.append((step, values)))
    monkeypatch.setattr(monitor, "scalars_due", lambda force=False: True)   # every tick
    for iterations, seconds in [(500, 0.01), (50_000, 1.0), (120_000, 2.0)]:
        monitor.tick(start + iterations, seconds, store)
    monitor.tick(start + 121_000, 2.1, store, force=True)          # the short last interval
    monitor.close()
    assert [step - start for step, _ in written] == [500, 50_000, 120_000, 121_000]
    rates = [values.get("train/iters_per_sec") for _, values in written]
    assert rates == [None, pytest.approx(50_000), pytest.approx(70_000), None]
    assert all(values["train/iterations"] == step for step, values in written)

    # An invocation shorter than half an interval: its one rate, at the end, is over all of it.
    short = RunMonitor(config, tmp_path / "short", game, progress=False,
                       start_iterations=start)
    written.clear()
    monkeypatch.setattr(short.tb, "scalars", lambda step, values: written.append((step, values)))
    short.tick(start + 20_000, 0.04, store, force=True)
    short.close()
    assert [values.get("train/iters_per_sec") for _, values in written] == [
        pytest.approx(500_000)]
