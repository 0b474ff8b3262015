"""End-to-end command-line tests: train -> checkpoint -> evaluate -> export, and bad input."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

DONE_RE = re.compile(r"^done: iterations=(\d+) elapsed=([\d.]+) it/s=([\d.]+) infosets=(\d+) "
                     r"checkpoint=(\S+)$")


def run(module, *args, check=True):
    proc = subprocess.run([sys.executable, "-m", f"holdem.cli.{module}", *map(str, args)],
                          capture_output=True, text=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"{module} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def done_fields(stdout):
    lines = [line for line in stdout.splitlines() if line.startswith("done:")]
    assert len(lines) == 1, stdout
    m = DONE_RE.match(lines[0])
    assert m, lines[0]
    return int(m[1]), float(m[2]), float(m[3]), int(m[4]), Path(m[5])


@pytest.mark.parametrize("module", ["train_blueprint", "eval_blueprint", "export_strategy"])
def test_help(module):
    proc = run(module, "--help")
    assert proc.stdout.startswith("usage:") and "--help" in proc.stdout


def test_kuhn_train_eval_export(tmp_path):
    proc = run("train_blueprint", "--game", "kuhn", "--iters", 300000, "--logdir", tmp_path,
               "--quiet")
    iters, elapsed, rate, infosets, path = done_fields(proc.stdout)
    assert iters == 300000 and infosets == 12
    assert iters / (elapsed + 5e-4) <= rate <= iters / (elapsed - 5e-4)   # elapsed: to 1 ms
    assert path.is_absolute() and path.name == "ckpt-000000300000.ckpt" and path.exists()
    ev = run("eval_blueprint", "--checkpoint", tmp_path, "--exploitability", "--value")
    expl = float(re.search(r"^exploitability: (\S+)$", ev.stdout, re.M)[1])
    assert 0 <= expl < 5e-3
    v0 = float(re.search(r"player0=(\S+)", ev.stdout)[1])
    assert abs(v0 + 1 / 18) < 5e-3
    out = tmp_path / "kuhn.json"
    run("export_strategy", "--checkpoint", path, "--out", out)
    data = json.loads(out.read_text())
    assert data["game"] == "kuhn" and data["iterations"] == 300000
    assert len(data["infosets"]) == 12
    by = {(r["player"], r["private"], r["history"]): r for r in data["infosets"]}
    assert by[(1, "K", "r")]["actions"] == ["f", "c"]
    assert by[(1, "K", "r")]["strategy"][1] > 0.99            # K always calls
    assert by[(0, "Q", "cr")]["actions"] == ["f", "c"]
    for r in data["infosets"]:
        assert abs(sum(r["strategy"]) - 1) < 1e-9 and r["visited"] and r["public"] is None


def test_leduc_export_covers_every_infoset_and_resume_continues(tmp_path):
    run("train_blueprint", "--game", "leduc", "--iters", 20000, "--logdir", tmp_path, "--quiet")
    proc = run("train_blueprint", "--game", "leduc", "--iters", 50000, "--logdir", tmp_path,
               "--resume-from", tmp_path, "--quiet")
    iters, *_ , path = done_fields(proc.stdout)
    assert iters == 50000 and path.name == "ckpt-000000050000.ckpt"
    out = tmp_path / "leduc.json"
    run("export_strategy", "--checkpoint", tmp_path, "--out", out)
    records = json.loads(out.read_text())["infosets"]
    assert len(records) == 288
    histories = {r["history"] for r in records}
    assert "crc/" in histories and "rrc/cr" in histories
    round2 = [r for r in records if "/" in r["history"]]
    assert all(r["public"] in "JQK" for r in round2)
    facing = next(r for r in records if r["history"] == "r")
    assert facing["actions"] == ["f", "c", "r"]


def test_time_budget_stops_training(tmp_path):
    proc = run("train_blueprint", "--game", "leduc", "--time-budget", 1.5, "--logdir", tmp_path,
               "--quiet")
    iters, elapsed, rate, infosets, path = done_fields(proc.stdout)
    # The run stops at the first batch end past the budget (elapsed is training seconds: the
    # batches' own time), so never before it; how far past depends on the machine's load,
    # hence the generous upper bound (a batch is sized to take about 0.2 s).
    assert 1.5 <= elapsed < 1.5 + 20, elapsed
    assert infosets == 288 and rate == pytest.approx(iters / elapsed, rel=1e-3, abs=0.1)
    assert path.name == f"ckpt-{iters:012d}.ckpt" and path.exists()


@pytest.mark.parametrize("args,needle", [
    (["--game", "chess", "--logdir", "x"], "invalid choice"),
    (["--game", "kuhn"], "--logdir"),
    (["--game", "kuhn", "--logdir", "x", "--iters", "-5"], "must not be negative"),
    (["--game", "kuhn", "--logdir", "x"], "stopping point"),
    (["--config", "/nonexistent.yaml", "--logdir", "x", "--iters", "1"], "/nonexistent.yaml"),
])
def test_train_bad_flags_give_one_line_error(args, needle, tmp_path):
    proc = run("train_blueprint", *args, check=False)
    assert proc.returncode != 0
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_config_key_names_the_key(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("game:\n  name: kuhn\nsolver:\n  samplng: external\n")
    proc = run("train_blueprint", "--config", cfg, "--iters", 10, "--logdir", tmp_path,
               check=False)
    assert proc.returncode == 2
    assert "solver.samplng" in proc.stderr and str(cfg) in proc.stderr
    assert "Traceback" not in proc.stderr


def test_eval_bad_checkpoint_is_clear(tmp_path):
    bad = tmp_path / "ckpt-000000000001.ckpt"
    bad.write_bytes(b"garbage")
    proc = run("eval_blueprint", "--checkpoint", bad, "--exploitability", check=False)
    assert proc.returncode == 2 and str(bad) in proc.stderr and "Traceback" not in proc.stderr
    proc = run("export_strategy", "--checkpoint", tmp_path / "nope", "--out",
               tmp_path / "o.json", check=False)
    assert proc.returncode == 2 and "no such file" in proc.stderr


def test_export_csv_and_filters_round_trip(tmp_path):
    from holdem.analysis.export.records import read_export

    run("train_blueprint", "--game", "leduc", "--iters", 20000, "--logdir", tmp_path, "--quiet")
    full = tmp_path / "all.json"
    run("export_strategy", "--checkpoint", tmp_path, "--out", full)
    as_csv = tmp_path / "all.csv"
    run("export_strategy", "--checkpoint", tmp_path, "--out", as_csv)
    a, b = read_export(full), read_export(as_csv)
    assert len(a) == len(b) == 288
    for x, y in zip(a, b):
        assert (x["player"], x["history"], x["actions"]) == (y["player"], y["history"],
                                                           y["actions"])
        assert x["strategy"] == y["strategy"]                 # exactly the same numbers
    part = tmp_path / "p1r2.csv"
    run("export_strategy", "--checkpoint", tmp_path, "--out", part, "--player", 1,
        "--street", "1")
    rows = read_export(part)
    assert rows and all(r["player"] == 1 and "/" in r["history"] for r in rows)
    assert len(rows) == sum(1 for r in a if r["player"] == 1 and "/" in r["history"])


def test_export_filters_that_select_nothing_are_errors_naming_what_exists(tmp_path):
    run("train_blueprint", "--game", "leduc", "--iters", 5000, "--logdir", tmp_path, "--quiet")
    for args, needle in ((("--street", "flop"), "--street flop: no infoset of this checkpoint "
                                                "is on it; its streets are 0, 1"),
                         (("--player", 3), "--player 3: no infoset of this checkpoint belongs "
                                           "to it; its players are 0, 1")):
        out = tmp_path / "empty.json"
        proc = run("export_strategy", "--checkpoint", tmp_path, "--out", out, *args,
                   check=False)
        assert proc.returncode == 2, proc.stderr
        errors = [line for line in proc.stderr.splitlines() if "error:" in line]
        assert len(errors) == 1 and needle in errors[0], proc.stderr
        assert not out.exists()
    # A filter that matches something still exports it.
    some = tmp_path / "some.json"
    run("export_strategy", "--checkpoint", tmp_path, "--out", some, "--street", "flop",
        "--street", "1")
    assert json.loads(some.read_text())["infosets"]


def test_resuming_to_a_total_already_reached_says_so_and_writes_nothing(tmp_path):
    run("train_blueprint", "--game", "leduc", "--iters", 5000, "--logdir", tmp_path, "--quiet")
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.rglob("*.ckpt")}
    assert len(before) == 1
    proc = run("train_blueprint", "--game", "leduc", "--iters", 4000, "--logdir", tmp_path,
               "--resume-from", tmp_path)
    assert "nothing to train" in proc.stderr and "already holds 5,000 iterations" in proc.stderr
    iterations, _, rate, infosets, path = done_fields(proc.stdout)
    assert (iterations, rate, infosets) == (5000, 0.0, 288) and path.name in before
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.rglob("*.ckpt")} == before


def test_smaller_messages_are_one_clear_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("game:\n  name: leduc\n  bad: [1, 2\n")
    proc = run("train_blueprint", "--config", bad, "--iters", 10, "--logdir", tmp_path / "x",
               check=False)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1, proc.stderr           # one line, where it is wrong
    assert proc.stderr.startswith("python -m holdem.cli.train_blueprint: error: ")
    assert "not valid YAML" in proc.stderr and "line 4, column 1" in proc.stderr
    run("train_blueprint", "--game", "kuhn", "--iters", 100, "--logdir", tmp_path / "k",
        "--quiet")
    proc = run("train_blueprint", "--game", "kuhn", "--iters", 100, "--logdir", tmp_path / "k",
               "--overwrite")
    assert "--overwrite: deleted 1 file of the run" in proc.stderr


def test_more_workers_than_cores_is_said(tmp_path):
    import os
    workers = (os.cpu_count() or 1) + 1
    proc = run("train_blueprint", "--game", "kuhn", "--iters", 2000, "--num-workers", workers,
               "--logdir", tmp_path)
    assert f"warning: {workers} worker processes on {os.cpu_count()} cores" in proc.stderr


def test_resume_keeps_the_runs_settings_unless_a_flag_changes_them(tmp_path):
    from holdem import checkpoint as ckpt

    config = tmp_path / "leduc.yaml"                 # settles no train setting itself
    config.write_text("game:\n  name: leduc\n")
    run("train_blueprint", "--config", config, "--iters", 20000, "--num-workers", 2,
        "--tensorboard", "--seed", 7, "--logdir", tmp_path, "--quiet")
    # The README's command: the config file again, the logdir, nothing about workers.
    proc = run("train_blueprint", "--config", config, "--iters", 40000, "--logdir", tmp_path,
               "--resume-from", tmp_path)
    assert ("resuming with the run's settings (num_workers 2, backend process, tensorboard "
            "true, seed 7)") in proc.stderr
    stored = ckpt.read_header(ckpt.resolve(tmp_path))[0]["config"]["train"]
    assert (stored["num_workers"], stored["tensorboard"], stored["seed"]) == (2, True, 7)
    assert len(list(tmp_path.glob(ckpt.EVENTS_GLOB))) == 2      # the curves go on
    # A setting the config file gives explicitly is the file's, and said to have changed.
    config.write_text("game:\n  name: leduc\ntrain:\n  seed: 3\n")
    proc = run("train_blueprint", "--config", config, "--iters", 45000, "--logdir", tmp_path,
               "--resume-from", tmp_path)
    assert f"changed: train.seed 7 -> 3 ({config})" in proc.stderr
    proc = run("train_blueprint", "--config", config, "--iters", 50000, "--logdir", tmp_path,
               "--resume-from", tmp_path, "--num-workers", 1)
    assert "changed: train.num_workers 2 -> 1 (command line)" in proc.stderr
    stored = ckpt.read_header(ckpt.resolve(tmp_path))[0]["config"]["train"]
    assert (stored["num_workers"], stored["tensorboard"]) == (1, True)


def test_eval_matches_the_exploitability_the_training_log_showed(tmp_path):
    """The last eval/exploitability in TensorBoard is what eval_blueprint reports."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run("train_blueprint", "--game", "leduc", "--iters", 200000, "--logdir", tmp_path,
        "--quiet", "--tensorboard")
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    logged = events.Scalars("eval/exploitability")[-1]
    assert logged.step == 200000
    ev = run("eval_blueprint", "--checkpoint", tmp_path, "--exploitability")
    reported = float(re.search(r"^exploitability: (\S+)$", ev.stdout, re.M)[1])
    assert reported == pytest.approx(logged.value, rel=1e-6)      # TensorBoard stores float32


def test_progress_does_not_repeat_a_count_with_zero_rate():
    """The forced line at the end of a run is skipped when that iteration count was just
    printed (it would otherwise show it/s=0)."""
    import io

    from holdem.metrics import Progress

    out = io.StringIO()
    progress = Progress(interval=0.0, stream=out, total_iters=1000)
    progress.update(500, 1.0, 10, 1024)
    progress.update(1000, 2.0, 10, 1024)
    progress.update(1000, 2.0, 10, 1024, force=True)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and "iterations=1,000" in lines[-1] and "it/s=0" not in lines[-1]


def test_progress_gives_the_visits_per_iteration_since_the_previous_line():
    """visits/it divides the visits merged since the previous line by the iterations; a
    resumed run's first line counts from its starting iteration; no visits, no field."""
    import io

    from holdem.metrics import Progress

    out = io.StringIO()
    progress = Progress(interval=0.0, stream=out, start_iters=1000)
    progress.update(1400, 1.0, 10, 1024, visits=2000)        # 2,000 visits / 400 iterations
    progress.update(1600, 2.0, 10, 1024, visits=3500)        # 1,500 / 200
    progress.update(1700, 3.0, 10, 1024)
    found = re.findall(r"visits/it=([\d.,]+)", out.getvalue())
    assert found == ["5.0", "7.5"] and "visits/it" not in out.getvalue().splitlines()[-1]


@pytest.mark.parametrize("text, error", [
    ("game:\n  stack: 200\n", "game.name is required"),               # used to train Leduc
    ("game:\n  name: leduc\n  stack: 200\n", "game.stack: takes effect only with game.name: nlhe"),
    ("game:\n  name: leduc\nsolver:\n  exploration: 0.2\n",
     "solver.exploration: takes effect only with solver.sampling: outcome"),
    ("game:\n  name: kuhn\ntrain:\n  log_interval: 1\n",
     "train.log_interval: takes effect only with TensorBoard"),
    ("game:\n  name: kuhn\n", "the run needs a stopping point"),
])
def test_config_errors_name_the_file_and_key(tmp_path, text, error):
    """Every key takes effect or is rejected, and every config error names the file."""
    cfg = tmp_path / "run.yaml"
    cfg.write_text(text)
    iters = [] if "stopping point" in error else ["--iters", 10]
    proc = run("train_blueprint", "--config", cfg, *iters, "--logdir", tmp_path / "run",
               check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"error: {cfg}: " in proc.stderr and error in proc.stderr, proc.stderr
    assert not (tmp_path / "run").exists()


def test_tensorboard_keys_take_effect_with_the_flag(tmp_path):
    """``train.log_interval`` in the config is accepted when ``--tensorboard`` turns TensorBoard
    on, and sets the interval of the scalars in the event file."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    cfg = tmp_path / "run.yaml"
    cfg.write_text("game:\n  name: kuhn\ntrain:\n  log_interval: 1\n")
    proc = run("train_blueprint", "--config", cfg, "--time-budget", 4.5, "--logdir",
               tmp_path / "run", "--tensorboard", "--quiet")
    iters = done_fields(proc.stdout)[0]
    acc = EventAccumulator(str(tmp_path / "run"), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    started = acc.Tensors("config")[0].wall_time          # written when the monitor starts
    events = acc.Scalars("train/iterations")
    steps = [e.step for e in events]
    assert all(b > a for a, b in zip(steps, steps[1:])), steps
    assert steps[-1] == iters and events[-1].value == iters
    # Scalars every second (the default, 10 s, would give only the final ones), then the final
    # ones when the run stops, whenever that is; a loaded machine only spaces them more.
    times = [started] + [e.wall_time for e in events]
    gaps = np.diff(times[:-1])
    assert len(events) >= 3 and gaps.min() >= 1.0 - 0.01, (len(events), gaps)
    assert len(events) <= (times[-1] - started) / 1.0 + 1, (len(events), times)


def test_after_resume_the_first_progress_line_and_rate_scalar_are_true(tmp_path):
    """They count only the iterations this invocation ran: the done line's it/s. (They used to
    divide the run's cumulative count by this invocation's seconds: a false spike.)"""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run("train_blueprint", "--game", "leduc", "--iters", 200000, "--logdir", tmp_path,
        "--quiet")
    proc = run("train_blueprint", "--game", "leduc", "--iters", 220000, "--logdir", tmp_path,
               "--resume-from", tmp_path, "--tensorboard")
    _, _, rate, _, _ = done_fields(proc.stdout)
    lines = re.findall(r"iterations=([\d,]+) it/s=([\d,]+)", proc.stderr)
    assert lines[0][0] == "220,000"         # a short run: its one line is the final one
    assert int(lines[0][1].replace(",", "")) == pytest.approx(rate, abs=1.0)
    # ... and its visits per iteration are the summary's, over the same 20,000 iterations
    per_iteration = re.search(r"visits/it=([\d.]+)", proc.stderr)[1]
    assert re.search(rf"decision-node visits: [\d,]+/s \({per_iteration} per iteration\)",
                     proc.stderr), proc.stderr
    scalars = EventAccumulator(str(tmp_path))
    scalars.Reload()
    first = scalars.Scalars("train/iters_per_sec")[0]
    assert first.step == 220000 and first.value == pytest.approx(rate, rel=1e-3)


def test_the_final_tick_does_not_write_the_last_step_again(tmp_path):
    """With scalars due at every tick, the loop's last tick (after the last batch) and the
    run's forced final one fall on the same count: one event per step, no rate of 0."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    cfg = tmp_path / "run.yaml"
    cfg.write_text("game:\n  name: kuhn\ntrain:\n  log_interval: 0.001\n")
    proc = run("train_blueprint", "--config", cfg, "--iters", 300000, "--logdir",
               tmp_path / "run", "--tensorboard", "--quiet")
    iters = done_fields(proc.stdout)[0]
    acc = EventAccumulator(str(tmp_path / "run"), size_guidance={"scalars": 0})
    acc.Reload()
    steps = [e.step for e in acc.Scalars("train/iterations")]
    rates = [e.value for e in acc.Scalars("train/iters_per_sec")]
    assert len(steps) >= 2 and steps[-1] == iters == 300000
    assert all(b > a for a, b in zip(steps, steps[1:])), steps
    assert len(rates) == len(steps) and min(rates) > 0, rates
