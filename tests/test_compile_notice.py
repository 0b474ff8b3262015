"""First-use compilation is announced: ``compiling kernels (first run, about N s)...`` on stderr
when numba has to compile (its cache is cold), never when every kernel loads from the cache, and
never with ``--quiet``.

The command-line tests run the real commands on a copy of this session's numba cache from which
one cheap kernel the command compiles is removed, so the cold start costs about a second, not
the minute a whole empty cache would.
"""

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numba
import pytest

from holdem._jit import cache_dir
from holdem import training
from holdem.cli import eval_blueprint, play
from holdem.metrics import compile_notice

NOTICE = "compiling kernels (first run, about {} s)...\n"


def test_notice_prints_once_when_numba_compiles_and_never_from_memory_or_when_quiet():
    @numba.njit                                  # not cached: compiles on its first call
    def double(x):
        return 2 * x

    out = io.StringIO()
    with compile_notice(7, stream=out) as notice:
        double(1)
        double(2.5)                              # a second signature: a second compilation
    assert out.getvalue() == NOTICE.format(7) and notice.announced
    again = io.StringIO()
    with compile_notice(7, stream=again) as notice:
        double(3)
    assert again.getvalue() == "" and not notice.announced

    @numba.njit
    def triple(x):
        return 3 * x

    quiet = io.StringIO()
    with compile_notice(7, enabled=False, stream=quiet):
        triple(1)
    assert quiet.getvalue() == ""


def _cache_dir_of(tree, numba_cache_dir):
    """The numba cache directory the package in ``tree`` selects under ``numba_cache_dir``."""
    code = "from holdem._jit import cache_dir; print(cache_dir())"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(numba_cache_dir), PYTHONPATH=str(tree))
    return Path(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                               text=True, check=True, cwd=tree).stdout.strip())


def test_a_numba_cache_dir_kept_from_another_tree_is_never_loaded(tmp_path):
    """Issue 40: a ``NUMBA_CACHE_DIR`` kept from an older tree crashed numba's cache loader:
    numba checks only the cached function's own file, so kernels inlined from files that had
    changed came back stale. Under ``NUMBA_CACHE_DIR`` too, each tree's kernels select a
    directory named after their digest: a tree whose kernels differ (here one constant of
    one kernel module) never reads another's cache; the same kernels share one."""
    root = Path(__file__).resolve().parents[1]
    shared = tmp_path / "numba-cache"
    older = tmp_path / "older"
    shutil.copytree(root / "holdem", older / "holdem",
                    ignore=shutil.ignore_patterns("__pycache__"))
    kernels = older / "holdem" / "store" / "kernels.py"
    kernels.write_text(kernels.read_text() + "\nOLDER_TREE = 1\n")
    here = _cache_dir_of(root, shared)
    there = _cache_dir_of(older, shared)
    assert here.parent == there.parent == shared
    assert here != there and here.name.startswith("numba-")
    assert here.name == Path(cache_dir()).name               # this process's kernels' digest
    same = tmp_path / "same"
    shutil.copytree(root / "holdem", same / "holdem",
                    ignore=shutil.ignore_patterns("__pycache__"))
    assert _cache_dir_of(same, shared) == here                # same kernels, same cache


def test_small_games_announce_their_own_compile_time(kuhn, leduc):
    """Issue 40: the notice for Leduc quoted the No-Limit Hold'em figure. Each kind of game has
    its own, in-process and with workers; NLHE's stays the one measured with hunl_default."""
    from holdem import config as config_mod
    from holdem.games import make_game

    nlhe = make_game(config_mod.load(Path(__file__).resolve().parents[1] / "configs" /
                                     "hunl_default.yaml"))
    for workers in (False, True):
        assert training.compile_estimate(nlhe, workers) == (12, 16)[workers]
        for game in (kuhn, leduc):
            assert training.compile_estimate(game, workers) == (16, 18)[workers]


def _run(module, *args, cache=None, stdin=None):
    env = dict(os.environ)
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    proc = subprocess.run([sys.executable, "-m", f"holdem.cli.{module}", *map(str, args)],
                          input=stdin, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc


def _cold_copy(tmp_path, kernel):
    """A ``NUMBA_CACHE_DIR`` holding a copy of this session's numba cache (which the caller has
    warmed; in the directory this tree's kernels select there) without ``kernel``'s index:
    that kernel compiles again, the rest loads."""
    copy = tmp_path / f"numba-{kernel}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(cache_dir(), copy / Path(cache_dir()).name)
    _forget(copy, kernel)
    return copy


def _forget(cache, kernel):
    indexes = list(Path(cache).rglob(f"*.{kernel}-*.nbi"))
    assert indexes, f"{kernel} is not in {cache}"
    for index in indexes:
        index.unlink()


@pytest.mark.parametrize("module, args, stdin, kernel, seconds", [
    ("eval_blueprint", ["--vs", "call", "--hands", 200, "--lbr"], None, "merge_delta",
     sum(eval_blueprint.COMPILE_SECONDS.values())),
    ("play", ["--seed", 1], "q\n", "rank_cards_kernel", play.COMPILE_SECONDS),
])
def test_analysis_commands_announce_a_cold_cache_only(hunl_run, tmp_path, module, args, stdin,
                                                      kernel, seconds):
    args = ["--checkpoint", hunl_run, *args]
    _run(module, *args, stdin=stdin)                   # warms this session's cache
    cache = _cold_copy(tmp_path, kernel)
    cold = _run(module, *args, cache=cache, stdin=stdin)
    # After the line that names the checkpoint a logdir resolved to, the notice comes first.
    notes = [line for line in cold.stderr.splitlines() if ": loading " not in line]
    assert "".join(line + "\n" for line in notes).startswith(NOTICE.format(seconds)), cold.stderr
    assert cold.stderr.count("compiling kernels") == 1
    warm = _run(module, *args, cache=cache, stdin=stdin)
    assert "compiling kernels" not in warm.stderr

    def results(proc):
        return [line for line in proc.stdout.splitlines() if "hands/s" not in line]
    assert results(warm) == results(cold)


@pytest.mark.parallel
def _own(stderr):
    """The run's stderr lines, less the note that it removed shared-memory files a killed run
    left (other tests and processes on the machine kill runs; what is in /dev/shm is not this
    test's business)."""
    return [line for line in stderr.splitlines()
            if not re.fullmatch(r"removed \d+ shared-memory file\(s\) left by a killed run", line)]


def test_training_announces_a_cold_cache_and_quiet_is_quiet(tmp_path):
    def train(name, *flags):
        return _run("train_blueprint", "--game", "kuhn", "--iters", 20_000, "--num-workers", 2,
                    "--logdir", tmp_path / name, *flags, cache=cache)

    cache = None
    train("warm-up")
    cache = _cold_copy(tmp_path, "merge_delta")           # compiled before workers start
    quiet = train("quiet", "--quiet")
    assert _own(quiet.stderr) == [] and quiet.stdout.startswith("done: iterations=20000")
    _forget(cache, "merge_delta")
    cold = train("cold")
    lines = _own(cold.stderr)
    # Kuhn's own figure (it quoted No-Limit Hold'em's, issue 40)
    assert lines[0] == NOTICE.format(training.COMPILE_SECONDS["small"][True]).strip()
    assert lines[1].startswith("kernels ready in")
    warm = train("warm")
    assert "compiling kernels" not in warm.stderr and "kernels ready in" in warm.stderr
