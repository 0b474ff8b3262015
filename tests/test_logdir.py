"""One run per logdir, end to end through the real commands: training refuses a logdir that
holds another run (unless it continues it or --overwrite replaces it), commands given a logdir
load its newest checkpoint and say which, failed runs leave nothing behind, and files get the
umask's permissions."""

import contextlib
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from holdem import checkpoint as ckpt
from holdem import config as config_mod
from holdem.runtime.executor import InProcessExecutor
from holdem.training import train
from tests.test_cli import done_fields, run


def names(logdir):
    return [p.name for p in ckpt.list_checkpoints(ckpt.checkpoint_dir(logdir))]


def contents(logdir):
    return {p.name: p.read_bytes() for p in ckpt.list_checkpoints(ckpt.checkpoint_dir(logdir))}


def events(logdir):
    return sorted(Path(logdir).glob(ckpt.EVENTS_GLOB))


def refused(proc, *needles):
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def test_a_logdir_that_holds_a_run_is_continued_or_overwritten_never_mixed(tmp_path):
    logdir = tmp_path / "run"
    run("train_blueprint", "--game", "kuhn", "--iters", 20000, "--logdir", logdir, "--quiet",
        "--tensorboard")
    before, old_events = contents(logdir), events(logdir)
    assert list(before) == [ckpt.checkpoint_name(20000)] and len(old_events) == 1

    # A new run from scratch is refused, and the old run is untouched.
    proc = run("train_blueprint", "--game", "kuhn", "--iters", 10000, "--logdir", logdir,
               check=False)
    refused(proc, f"logdir {logdir}: already holds a run", f"--resume-from {logdir}",
            "--overwrite")
    assert contents(logdir) == before and events(logdir) == old_events

    # Continuing it is fine (and keeps its TensorBoard curves: a second event file).
    proc = run("train_blueprint", "--game", "kuhn", "--iters", 30000, "--logdir", logdir,
               "--resume-from", logdir, "--quiet")
    assert done_fields(proc.stdout)[0] == 30000
    assert names(logdir) == [ckpt.checkpoint_name(20000), ckpt.checkpoint_name(30000)]
    assert len(events(logdir)) == 2

    # --overwrite starts over: the old run's checkpoints and TensorBoard file are gone.
    proc = run("train_blueprint", "--game", "kuhn", "--iters", 10000, "--logdir", logdir,
               "--overwrite", "--tensorboard")
    assert done_fields(proc.stdout)[0] == 10000
    assert "--overwrite: deleted 4 files" in proc.stderr
    assert names(logdir) == [ckpt.checkpoint_name(10000)]
    assert len(events(logdir)) == 1 and events(logdir) != old_events


def test_resuming_from_another_run_into_a_run_is_refused(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for logdir, iters in ((a, 10000), (b, 10000), (b, 20000)):
        resume = ["--resume-from", b] if logdir == b and iters == 20000 else []
        run("train_blueprint", "--game", "kuhn", "--iters", iters, "--logdir", logdir,
            "--quiet", *resume)
    older = ckpt.checkpoint_dir(b) / ckpt.checkpoint_name(10000)
    before = contents(b)

    proc = run("train_blueprint", "--game", "kuhn", "--iters", 30000, "--logdir", b,
               "--resume-from", a, check=False)
    refused(proc, f"logdir {b}: already holds a run", ckpt.checkpoint_name(20000))
    assert contents(b) == before

    # Branching from the older checkpoint with --overwrite keeps that checkpoint, drops the
    # later one, so the logdir holds one history again.
    proc = run("train_blueprint", "--game", "kuhn", "--iters", 15000, "--logdir", b,
               "--resume-from", older, "--overwrite", "--quiet")
    assert done_fields(proc.stdout)[0] == 15000
    assert names(b) == [ckpt.checkpoint_name(10000), ckpt.checkpoint_name(15000)]


def test_resuming_from_an_older_checkpoint_of_the_run_sets_the_later_ones_aside(tmp_path):
    logdir = tmp_path / "run"
    run("train_blueprint", "--game", "kuhn", "--iters", 10000, "--logdir", logdir, "--quiet")
    run("train_blueprint", "--game", "kuhn", "--iters", 20000, "--logdir", logdir, "--quiet",
        "--resume-from", logdir)
    directory = ckpt.checkpoint_dir(logdir)
    later = (directory / ckpt.checkpoint_name(20000)).read_bytes()
    proc = run("train_blueprint", "--game", "kuhn", "--iters", 15000, "--logdir", logdir,
               "--resume-from", directory / ckpt.checkpoint_name(10000))
    assert done_fields(proc.stdout)[0] == 15000
    assert (f"set 1 later checkpoint aside as *.superseded ({ckpt.checkpoint_name(20000)})"
            in proc.stderr)
    assert names(logdir) == [ckpt.checkpoint_name(10000), ckpt.checkpoint_name(15000)]
    kept = directory / (ckpt.checkpoint_name(20000) + ".superseded")
    assert kept.read_bytes() == later                      # renamed, never deleted
    # The logdir holds one history again: it continues from its newest.
    proc = run("train_blueprint", "--game", "kuhn", "--iters", 16000, "--logdir", logdir,
               "--resume-from", logdir, "--quiet")
    assert done_fields(proc.stdout)[0] == 16000


def test_a_damaged_newest_checkpoint_is_set_aside_and_the_run_resumes_from_the_one_before(
        tmp_path):
    logdir = tmp_path / "run"
    run("train_blueprint", "--game", "kuhn", "--iters", 10000, "--logdir", logdir, "--quiet")
    run("train_blueprint", "--game", "kuhn", "--iters", 20000, "--logdir", logdir, "--quiet",
        "--resume-from", logdir)
    directory = ckpt.checkpoint_dir(logdir)
    newest = directory / ckpt.checkpoint_name(20000)
    data = newest.read_bytes()
    newest.write_bytes(data[:len(data) - 100])              # truncated (a full disk, a crash)
    proc = run("train_blueprint", "--game", "kuhn", "--iters", 30000, "--logdir", logdir,
               "--resume-from", logdir)
    assert done_fields(proc.stdout)[0] == 30000
    assert "passing over a damaged checkpoint" in proc.stderr and "truncated" in proc.stderr
    assert f"resuming from {directory / ckpt.checkpoint_name(10000)}" in proc.stderr
    aside = directory / (ckpt.checkpoint_name(20000) + ".damaged")
    assert aside.read_bytes() == data[:len(data) - 100]     # kept, under another name
    assert names(logdir) == [ckpt.checkpoint_name(10000), ckpt.checkpoint_name(30000)]
    # A damaged file named explicitly is still an error.
    proc = run("train_blueprint", "--game", "kuhn", "--iters", 40000, "--logdir",
               tmp_path / "other", "--resume-from", aside, check=False)
    assert proc.returncode == 2 and "truncated" in proc.stderr


def test_commands_given_a_logdir_load_its_newest_run_and_say_which(tmp_path):
    """A logdir that an older version let two runs share: the newer run's checkpoint (fewer
    iterations) is the one every command loads, and training will not mix a third."""
    old, mixed = tmp_path / "old", tmp_path / "mixed"
    run("train_blueprint", "--game", "kuhn", "--iters", 50000, "--logdir", old, "--quiet")
    run("train_blueprint", "--game", "kuhn", "--iters", 20000, "--logdir", mixed, "--quiet")
    shutil.copy2(ckpt.checkpoint_dir(old) / ckpt.checkpoint_name(50000),
                 ckpt.checkpoint_dir(mixed))
    newest = (ckpt.checkpoint_dir(mixed) / ckpt.checkpoint_name(20000)).resolve()

    ev = run("eval_blueprint", "--checkpoint", mixed, "--exploitability")
    assert re.search(r"^iterations: 20000$", ev.stdout, re.M)
    assert f"{mixed}: loading {newest} (the newest of 2 checkpoints)" in ev.stderr
    out = tmp_path / "kuhn.json"
    ex = run("export_strategy", "--checkpoint", mixed, "--out", out)
    assert '"iterations": 20000' in out.read_text() and str(newest) in ex.stderr

    resumed = run("train_blueprint", "--game", "kuhn", "--iters", 25000, "--logdir",
                  tmp_path / "next", "--resume-from", mixed)
    assert "at iteration 20,000" in resumed.stderr
    proc = run("train_blueprint", "--game", "kuhn", "--iters", 25000, "--logdir", mixed,
               "--resume-from", mixed, check=False)
    refused(proc, "a later checkpoint of another run")


def test_two_processes_cannot_train_into_one_logdir(tmp_path):
    logdir = tmp_path / "run"
    err = tmp_path / "first.stderr"
    with open(err, "w") as stream:
        first = subprocess.Popen(
            [sys.executable, "-m", "holdem.cli.train_blueprint", "--game", "leduc",
             "--time-budget", "120", "--logdir", str(logdir)],
            stdout=subprocess.DEVNULL, stderr=stream)
    try:
        deadline = time.monotonic() + 120
        while "kernels ready" not in err.read_text():
            assert first.poll() is None and time.monotonic() < deadline, err.read_text()
            time.sleep(0.05)
        proc = run("train_blueprint", "--game", "leduc", "--iters", 1000, "--logdir", logdir,
                   "--overwrite", check=False)
        refused(proc, f"logdir {logdir}: another process is training into it")
    finally:
        first.send_signal(signal.SIGINT)        # a final checkpoint, then exit
        first.wait(60)
    assert first.returncode == 0 and len(names(logdir)) == 1


# -- failed runs leave nothing behind ---------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["--config", "/nonexistent.yaml", "--iters", 10],
    ["--game", "kuhn", "--iters", 10, "--merge-threads", 2],         # no workers to merge for
    ["--game", "kuhn", "--iters", 10, "--resume-from", "/nonexistent"],
])
def test_a_refused_run_creates_no_logdir(tmp_path, args):
    logdir = tmp_path / "new" / "run"
    proc = run("train_blueprint", *args, "--logdir", logdir, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert not (tmp_path / "new").exists()


class FailingExecutor(InProcessExecutor):
    """An in-process executor that fails at ``stage``: "prepare", "start" or once its first
    batch was accounted ("results")."""

    def __init__(self, game, config, stage):
        super().__init__(game, config)
        self.stage = stage
        self.returned = 0

    def prepare(self, view):
        seconds = super().prepare(view)
        if self.stage == "prepare":
            raise RuntimeError("compile failed")
        return seconds

    def start(self, view, stop):
        if self.stage == "start":
            raise RuntimeError("workers did not start")
        return super().start(view, stop)

    def results(self, timeout):
        if self.stage == "results" and self.returned:
            raise RuntimeError("a worker died")
        done = super().results(timeout)
        self.returned += len(done)
        return done


@pytest.mark.parametrize("stage", ["prepare", "start", "results"])
def test_a_run_that_fails_before_its_first_checkpoint_leaves_no_empty_logdir(tmp_path, stage,
                                                                            kuhn):
    config = config_mod.with_overrides(config_mod.default_for_game("kuhn"),
                                       train={"iters": 100000, "tensorboard": True})
    logdir = tmp_path / "new" / "run"
    with pytest.raises(RuntimeError):
        train(config, logdir, progress=False, executor=FailingExecutor(kuhn, config, stage))
    if stage == "results":          # it trained: its TensorBoard curves stay, nothing else
        assert [p.parent for p in events(logdir)] == [logdir]
        assert sorted(logdir.iterdir()) == events(logdir)
    else:
        assert not (tmp_path / "new").exists()


def test_a_failed_run_in_an_existing_logdir_keeps_what_was_there(tmp_path, kuhn):
    config = config_mod.with_overrides(config_mod.default_for_game("kuhn"),
                                       train={"iters": 1000})
    train(config, tmp_path, progress=False)
    before = contents(tmp_path)
    more = config_mod.with_overrides(config, train={"iters": 2000})
    with pytest.raises(RuntimeError):
        train(more, tmp_path, resume_from=tmp_path, progress=False,
              executor=FailingExecutor(kuhn, more, "prepare"))
    assert contents(tmp_path) == before


def test_exported_and_checkpoint_files_get_the_umask_permissions(tmp_path):
    old = os.umask(0o027)
    try:
        proc = run("train_blueprint", "--game", "kuhn", "--iters", 1000, "--logdir", tmp_path,
                   "--quiet")
        out = tmp_path / "kuhn.csv"
        run("export_strategy", "--checkpoint", tmp_path, "--out", out)
    finally:
        os.umask(old)
    for path in (done_fields(proc.stdout)[-1], out):
        assert stat.S_IMODE(path.stat().st_mode) == 0o640, path


# -- a logdir the run cannot write is refused before it trains --------------------------------
@contextlib.contextmanager
def unwritable(directory):
    """``directory`` made unwritable for this process (mode 0o555, or immutable for root, whom
    modes do not stop); the test is skipped where neither takes hold."""
    directory = Path(directory)
    mode = directory.stat().st_mode
    immutable = os.geteuid() == 0
    if immutable:
        made = subprocess.run(["chattr", "+i", str(directory)], capture_output=True)
        if made.returncode != 0:
            pytest.skip("cannot make a directory unwritable here (chattr +i refused)")
    else:
        directory.chmod(0o555)
    try:
        yield directory
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(directory)], check=True)
        else:
            directory.chmod(mode)


def test_resuming_into_an_unwritable_logdir_is_refused_before_training_naming_it(tmp_path):
    logdir = tmp_path / "run"
    run("train_blueprint", "--game", "kuhn", "--iters", 2000, "--logdir", logdir, "--quiet")
    before = contents(logdir)
    directory = ckpt.checkpoint_dir(logdir)
    with unwritable(directory):
        proc = run("train_blueprint", "--iters", 4000, "--logdir", logdir, "--resume-from",
                   logdir, check=False)
    refused(proc, f"logdir {logdir}: cannot write checkpoints in {directory}: [Errno",
            "nothing was trained")
    assert contents(logdir) == before


class SpyExecutor(InProcessExecutor):
    """Records whether the run got as far as compiling."""

    prepared = False

    def prepare(self, view):
        SpyExecutor.prepared = True
        return super().prepare(view)


def test_tensorboard_into_an_unwritable_logdir_is_refused_before_compiling(tmp_path, kuhn):
    config = config_mod.with_overrides(config_mod.default_for_game("kuhn"),
                                       train={"iters": 1000, "tensorboard": True})
    logdir = tmp_path / "run"
    ckpt.checkpoint_dir(logdir).mkdir(parents=True)     # checkpoints writable, logdir not
    with unwritable(logdir):
        with pytest.raises(ckpt.LogdirError, match=f"cannot write TensorBoard events in "
                           f"{logdir}"):
            train(config, logdir, progress=False, executor=SpyExecutor(kuhn, config))
    assert not SpyExecutor.prepared and not events(logdir)
