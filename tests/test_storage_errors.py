"""Storage that refuses a write (issue 26's soak: a full disk, a file size limit, a full
/dev/shm) and a closed terminal. A background checkpoint the machine refuses costs only that
checkpoint; a final one, or a shared-memory file for the store, stops the run with one line
naming the file and the cause (exit 1), never a traceback, and leaves no file behind."""

import errno
import os
import signal
import sys

import numpy as np
import pytest

from holdem import checkpoint as ckpt
from holdem.checkpoint_writer import CheckpointWriter
from holdem.fileio import StorageError
from holdem.runtime import shm
from test_runtime import launch  # noqa: F401 (a fixture)

HEADER = {"iterations": 5, "game": "kuhn", "config": {}}


def arrays():
    return {"x": np.arange(10, dtype=np.int64)}


def refuse(monkeypatch, err=errno.ENOSPC, times=None):
    """ckpt.save raises OSError(err) (``times`` calls, or every call)."""
    save, calls = ckpt.save, []

    def failing(path, header, data):
        calls.append(path)
        if times is None or len(calls) <= times:
            raise OSError(err, os.strerror(err), str(path))
        return save(path, header, data)

    monkeypatch.setattr(ckpt, "save", failing)
    return calls


def test_a_refused_background_write_is_reported_and_the_next_one_tries_again(
        tmp_path, monkeypatch, capsys):
    writer = CheckpointWriter(tmp_path, keep=3)
    first = writer.submit(10, HEADER, arrays())
    writer.wait()
    assert writer.last_path == first and writer.failed == 0
    refuse(monkeypatch, times=2)
    writer.submit(20, HEADER, arrays())
    writer.submit(30, HEADER, arrays())         # waits for the refused one: no exception
    writer.wait()
    err = capsys.readouterr().err
    assert (f"warning: could not write checkpoint {ckpt.checkpoint_name(20)}: [Errno 28] No "
            f"space left on device; the newest checkpoint is {first.name}") in err
    assert "(2 failed in a row)" in err
    assert writer.failed == 2 and writer.last_path == first
    assert [p.name for p in ckpt.list_checkpoints(tmp_path)] == [first.name]
    third = writer.submit(40, HEADER, arrays())
    writer.wait()
    assert writer.failed == 0 and writer.last_path == third
    assert ckpt.load(third).header["iterations"] == 5


def test_a_refused_final_write_raises_storage_error_naming_the_file(tmp_path, monkeypatch):
    writer = CheckpointWriter(tmp_path, keep=3)
    refuse(monkeypatch, err=errno.EFBIG)
    with pytest.raises(StorageError) as info:
        writer.submit(50, HEADER, arrays(), background=False)
    message = str(info.value)
    assert str(tmp_path / ckpt.checkpoint_name(50)) in message
    assert "[Errno 27] File too large" in message and "none written yet" in message
    assert list(tmp_path.iterdir()) == []       # no temporary file either


def test_a_refused_final_write_of_a_resumed_run_names_the_checkpoint_that_holds_it(
        tmp_path, monkeypatch):
    """A resumed invocation that writes nothing: the checkpoint it resumed from holds the run,
    in its own logdir or another one; never "none written yet"."""
    first = CheckpointWriter(tmp_path, keep=3).submit(10, HEADER, arrays(), background=False)
    other = tmp_path / "other"
    refuse(monkeypatch)
    for writer, named in [(CheckpointWriter(tmp_path, keep=3), first.name),
                          (CheckpointWriter(other, keep=3, previous=first), str(first))]:
        with pytest.raises(StorageError) as info:
            writer.submit(20, HEADER, arrays(), background=False)
        assert f"(newest checkpoint: {named}" in str(info.value)
        assert "none written yet" not in str(info.value)


def test_an_error_that_is_not_the_machines_is_still_raised(tmp_path, monkeypatch):
    writer = CheckpointWriter(tmp_path, keep=3)

    def broken(path, header, data):
        raise ValueError("a bug")

    monkeypatch.setattr(ckpt, "save", broken)
    writer.submit(60, HEADER, arrays())
    with pytest.raises(ValueError, match="a bug"):
        writer.wait()


SPECS = [("a", np.float64, 1000)]


def test_a_full_shared_memory_directory_is_named_before_a_file_is_made(tmp_path, monkeypatch):
    allocator = shm.SharedAllocator(tmp_path)
    monkeypatch.setattr(shm, "_free_bytes", lambda directory: 4096)
    with pytest.raises(StorageError, match=r"not enough space in .* 8,000 bytes needed, "
                                           r"4,096 free"):
        allocator(SPECS)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    allocator(SPECS)                            # space again: the next generation is made
    assert len(list(tmp_path.iterdir())) == 1
    allocator.close()
    assert list(tmp_path.iterdir()) == []


def test_a_refused_shared_memory_file_raises_storage_error_and_leaves_none(tmp_path,
                                                                          monkeypatch):
    allocator = shm.SharedAllocator(tmp_path)

    def too_large(fd, size):
        raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))

    monkeypatch.setattr(os, "ftruncate", too_large)
    with pytest.raises(StorageError, match=r"could not make the store's shared-memory file "
                                           r".*\[Errno 27\] File too large"):
        allocator(SPECS)
    assert list(tmp_path.iterdir()) == []
    allocator.close()


def limited(limit):
    """A train_blueprint command line whose process may write no file past ``limit`` bytes
    (RLIMIT_FSIZE; Python ignores SIGXFSZ, so a write past it fails with EFBIG).

    The limit is set in a child of a small relay, and the child's stdout and stderr are pipes
    the relay copies out: the launcher's log files are files too, and a run that prints past
    ``limit`` bytes (a slow machine takes more background checkpoints) must not lose its
    last lines to the limit the test puts on checkpoints."""
    run = ("import runpy, sys; sys.argv[0] = 'train_blueprint'; "
           "runpy.run_module('holdem.cli.train_blueprint', run_name='__main__')")
    code = ("import resource, subprocess, sys; "
            "child = subprocess.run([sys.executable, '-c', sys.argv[1], *sys.argv[2:]], "
            "capture_output=True, preexec_fn=lambda: resource.setrlimit("
            f"resource.RLIMIT_FSIZE, ({limit}, resource.RLIM_INFINITY))); "
            "sys.stdout.buffer.write(child.stdout); sys.stderr.buffer.write(child.stderr); "
            "sys.exit(child.returncode)")
    return [sys.executable, "-c", code, run]


def test_a_run_whose_checkpoints_cannot_be_written_trains_on_then_exits_1(launch, tmp_path):
    """RLIMIT_FSIZE below a checkpoint's size (the soak's disk-full fault, for the whole run):
    each background checkpoint is reported, training goes on, the final one ends the run with
    one error line and exit 1, and no temporary file is left."""
    logdir = tmp_path / "log"
    run = launch("run", "--game", "leduc", "--iters", 2_000_000, "--num-workers", 1,
                 "--snapshot-interval", 0.2, "--logdir", logdir, command=limited(8 << 10))
    assert run.finish() == 1, run.stderr
    lines = run.stderr.strip().splitlines()
    assert lines[-1].startswith("train_blueprint: error: could not write "
                                "checkpoint ")
    assert "ckpt-000002000000.ckpt: [Errno 27] File too large" in lines[-1]
    assert "Traceback" not in run.stderr
    assert "warning: could not write checkpoint" in run.stderr     # the background ones
    assert "iterations=2,000,000" in run.stderr                    # training went on to the end
    assert not logdir.exists() or not list(ckpt.checkpoint_dir(logdir).glob("*"))


def test_a_run_whose_shared_memory_is_refused_exits_1_and_leaves_no_file(launch, tmp_path):
    directory = tmp_path / "shm"
    directory.mkdir()
    run = launch("run", "--game", "leduc", "--iters", 1_000_000, "--num-workers", 2,
                 "--logdir", tmp_path / "log", env={"HOLDEM_SHM_DIR": str(directory)},
                 command=limited(4 << 10))
    assert run.finish() == 1, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert "error: could not make the store's shared-memory file" in last, run.stderr
    assert "[Errno 27] File too large" in last and "Traceback" not in run.stderr
    assert list(directory.iterdir()) == []


def test_sighup_stops_a_run_with_a_final_checkpoint(launch, tmp_path):
    """A closed terminal: SIGHUP to the run's process group is a stop like SIGTERM (workers
    ignore it: the main process stops them after its final checkpoint)."""
    run = launch("run", "--game", "leduc", "--iters", 500_000_000, "--num-workers", 2,
                 "--logdir", tmp_path / "log")
    run.wait_training(timeout=180)
    os.killpg(run.pid, signal.SIGHUP)           # the run leads its own process group
    assert run.finish() == 0, run.stderr
    assert "received SIGHUP: writing a final checkpoint, then stopping" in run.stderr
    iterations, _, path = run.done()
    assert 0 < iterations < 500_000_000
    assert ckpt.load(path).header["iterations"] == iterations


def test_an_oserror_reaching_a_cli_is_one_line_and_exit_1(capsys):
    """Any other refusal of the machine (a full disk where some file is written, a permission)
    ends a command with one line, not a traceback."""
    from holdem.cli.common import run_main

    def main(argv):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/data/run/x")

    assert run_main(main, []) == 1
    err = capsys.readouterr().err
    assert err.endswith(": error: [Errno 28] No space left on device: '/data/run/x'\n")
    assert err.count("\n") == 1
