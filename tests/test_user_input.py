"""What a new user trips on (issue 54): messages that speak of the flag and the person at hand,
and paths decided one way across the commands -- a file's directory must exist, a logdir is
made, a run needs a reachable stopping point, a format and a file name agree. Each bad input is
one line and exit status 2, before any work."""

import importlib
import os
from pathlib import Path

import pytest

from holdem import config as config_mod
from holdem.cli.common import run_main
from holdem.games import make_game
from holdem.solver.solver import Solver, save_solver
from holdem.training import train

ROOT = Path(__file__).resolve().parents[1]

def call(module, argv, capsys):
    """(exit status, stdout, stderr) of ``python -m holdem.cli.MODULE`` run in this process."""
    main = importlib.import_module(f"holdem.cli.{module}").main
    try:
        code = run_main(main, [str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def one_error(code, err, *needles):
    assert code == 2, err
    error = err.strip().splitlines()[-1]
    assert ": error: " in error, err        # the program's name: argv[0] when in process
    assert "Traceback" not in err
    for needle in needles:
        assert needle in error, error
    return error


@pytest.fixture(scope="module")
def leduc(tmp_path_factory):
    config = config_mod.with_overrides(config_mod.default_for_game("leduc"),
                                       train={"iters": 1000})
    return train(config, tmp_path_factory.mktemp("leduc"), progress=False).checkpoint


def _untrained(directory, name):
    cfg = config_mod.load(ROOT / "configs" / f"{name}.yaml")
    path = directory / name / "checkpoints" / "ckpt-000000000000.ckpt"
    save_solver(Solver(make_game(cfg), cfg), path)
    return path


# -- item 7: wording --------------------------------------------------------------------------
@pytest.mark.parametrize("view", [["--spot", "c | Kd | "], ["--range", "c | "]])
def test_inspect_views_on_leduc_point_to_a_command_not_a_python_call(leduc, capsys, view):
    code, out, err = call("inspect_blueprint", ["--checkpoint", leduc, *view], capsys)
    error = one_error(code, err, f"{view[0]} is for No-Limit Hold'em",
                      "is leduc with 2 players", "python -m holdem.cli.export_strategy")
    assert "strategy(key" not in error and out == ""


def test_a_vs_checkpoint_of_another_game_names_the_flag_vs_checkpoint(untrained, tmp_path,
                                                                        capsys):
    other = _untrained(tmp_path, "hunl_200bb")
    code, out, err = call("eval_blueprint", ["--checkpoint", untrained, "--vs-checkpoint", other,
                                             "--hands", 100], capsys)
    one_error(code, err, f"--vs-checkpoint {other}: both blueprints must use "
              "the same game")


# -- item 8: paths ----------------------------------------------------------------------------
def test_an_empty_logdir_is_refused_not_trained_into_the_working_directory(tmp_path, monkeypatch,
                                                                           capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = call("train_blueprint", ["--game", "kuhn", "--iters", 100, "--logdir", ""],
                          capsys)
    one_error(code, err, "argument --logdir: expected a directory, got ''")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("flag", ["--iters", "--time-budget"])
def test_a_run_with_nothing_to_train_is_refused_by_either_limit(tmp_path, capsys, flag):
    code, out, err = call("train_blueprint", ["--game", "kuhn", flag, 0, "--logdir",
                                              tmp_path / "run"], capsys)
    one_error(code, err, f"argument {flag}: must be positive, got '0'")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("name, fmt", [("x.json", "csv"), ("x.CSV", "json")])
def test_export_format_and_a_json_or_csv_name_must_agree(leduc, tmp_path, capsys, name, fmt):
    out = tmp_path / name
    code, _, err = call("export_strategy", ["--checkpoint", leduc, "--out", out, "--format",
                                            fmt], capsys)
    one_error(code, err, f"argument --format: {fmt}, but --out {out} is "
              f"named .{name.split('.')[1].lower()}", f"name it {out.with_suffix('.' + fmt)}")
    assert not out.exists()


def test_export_format_decides_for_any_other_name(leduc, tmp_path, capsys):
    out = tmp_path / "strategy.txt"
    code, _, err = call("export_strategy", ["--checkpoint", leduc, "--out", out, "--format",
                                            "csv"], capsys)
    assert code == 0, err
    assert out.read_text().startswith("player,")


OUTPUTS = [
    ("export_strategy", ["--checkpoint", "{leduc}"], "--out", "x.json"),
    ("inspect_blueprint", ["--checkpoint", "{hunl}", "--range", "r2.5b c | 2c 7h 9d"], "--out",
     "x.csv"),
    ("charts", ["--checkpoint", "{hunl}"], "--html", "x.html"),
    ("charts", ["--checkpoint", "{hunl}"], "--png", "x.png"),
    ("solve_spot", ["--oop", "QQ", "--ip", "JJ", "--board", "Td 9d 6h Qc", "--pot", 10,
                    "--stack", 45], "--out", "x.csv"),
    ("solve_spot", ["--oop", "QQ", "--ip", "JJ", "--board", "Td 9d 6h Qc", "--pot", 10,
                    "--stack", 45], "--html", "x.html"),
    ("solve_spot", ["--oop", "QQ", "--ip", "JJ", "--board", "Td 9d 6h Qc", "--pot", 10,
                    "--stack", 45], "--png", "x.png"),
    ("eval_blueprint", ["--checkpoint", "{hunl}", "--vs", "call"], "--history", "x.phhs"),
    ("play", ["--checkpoint", "{hunl}"], "--history", "x.phhs"),
    ("build_buckets", [], "--out", "x.buckets"),
]


@pytest.mark.parametrize("module, args, flag, name", OUTPUTS,
                         ids=[f"{m} {f}" for m, _, f, _ in OUTPUTS])
@pytest.mark.parametrize("where", ["missing", "empty", "directory"])
def test_an_output_into_a_missing_directory_is_refused_before_any_work(
        leduc, untrained, tmp_path, capsys, module, args, flag, name, where):
    paths = {"{leduc}": leduc, "{hunl}": untrained}
    argv = [paths.get(a, a) for a in args]
    target = {"missing": tmp_path / "nowhere" / name, "empty": "", "directory": tmp_path}[where]
    code, out, err = call(module, [*argv, flag, target], capsys)
    message = {"missing": f"the directory {tmp_path / 'nowhere'} does not exist (make it first: "
                          f"mkdir -p {tmp_path / 'nowhere'})",
               "empty": "expected a file name, got ''",
               "directory": f"{tmp_path} is a directory"}[where]
    one_error(code, err, f"argument {flag}: {message}")
    assert not (tmp_path / "nowhere").exists() and out == ""
    assert sorted(os.listdir(tmp_path)) == []
