"""A store that must grow while the machine refuses it (issue 40: a full /dev/shm or
HOLDEM_SHM_DIR, a file size limit, no memory): the run stops with a final checkpoint of what it
merged, one line naming the directory and what to do, and exit 3; the checkpoint loads and the
run resumes from it. Before, the refusal ended the run with exit 1 and no final checkpoint."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from holdem import checkpoint as ckpt
from holdem import config as config_mod
from holdem import training
from holdem.cli import train_blueprint
from holdem.cli.common import STORE_FULL, run_main
from holdem.runtime import shm
from holdem.store import store as store_mod
from holdem.store.store import RegretStore, StoreFull
from test_faults import assert_nothing_left, driver, fault_env, orphans  # noqa: F401
from test_runtime import ROOT, launch  # noqa: F401

LEDUC_FIRST_ROWS = 144              # Leduc's first store: 4 rows per decision node


def refuse_growth(monkeypatch, rows):
    """Private-memory stores (the in-process run's) get no arrays of more than ``rows`` rows:
    a MemoryError, as numpy raises it when memory runs out."""
    real = store_mod._numpy_allocator

    def allocator(specs):
        if specs[1][2] > rows:                  # row_key's length
            raise MemoryError("Unable to allocate the arrays")
        return real(specs)

    monkeypatch.setattr(store_mod, "_numpy_allocator", allocator)


def test_a_refused_growth_leaves_the_store_as_it_was():
    refusing = [True]

    def allocator(specs):
        if refusing[0] and specs[1][2] > 16:
            raise MemoryError("Unable to allocate the arrays")
        return store_mod._numpy_allocator(specs)

    store = RegretStore(row_capacity=16, allocator=allocator)
    keys = np.arange(1, 41, dtype=np.int64)
    with pytest.raises(StoreFull, match=r"^the store could not grow: out of memory for its "
                                        r"next arrays \([\d,]+ bytes\)$") as info:
        store.merge(keys, np.full(40, 2, np.int8), np.ones(80, np.float32), np.ones(80))
    assert info.value.directory is None and store.arrays.row_key.shape == (16,)
    held = store.num_infosets                       # what fitted is there, and stays readable
    assert 0 < held < 40 and store.values_of(1)[0].tolist() == [1.0, 1.0]
    assert store.values_of(40) is None
    refusing[0] = False
    store.merge(keys[held:], np.full(40 - held, 2, np.int8), np.ones(80 - 2 * held, np.float32),
                np.ones(80 - 2 * held))
    assert store.num_infosets == 40 and store.values_of(40)[1].tolist() == [1.0, 1.0]


def test_a_full_shared_memory_directory_is_store_full_naming_it(tmp_path, monkeypatch):
    allocator = shm.SharedAllocator(tmp_path)
    store = RegretStore(row_capacity=16, allocator=allocator)
    monkeypatch.setattr(shm, "_free_bytes", lambda directory: 4096)
    with pytest.raises(StoreFull, match=rf"^the store could not grow: not enough space in "
                                        rf"{re.escape(str(tmp_path))} for the store's next "
                                        r"shared-memory file") as info:
        store.reserve(100, 400)
    assert info.value.directory == tmp_path and info.value.errno is None
    assert len(list(tmp_path.iterdir())) == 1       # generation 0 only
    allocator.close()


def leduc(**train):
    return config_mod.with_overrides(config_mod.default_for_game("leduc"),
                                     train={"seed": 7, **train})


def test_an_in_process_run_whose_store_cannot_grow_stops_with_a_final_checkpoint(
        tmp_path, monkeypatch, capsys):
    """In-process (private memory): the iterations run before the refused growth are counted
    and checkpointed with the solver's RNG state, so resuming from that checkpoint gives
    bit for bit the store of a run that never stopped."""
    refuse_growth(monkeypatch, LEDUC_FIRST_ROWS)
    logdir = tmp_path / "log"
    code = run_main(train_blueprint.main, ["--game", "leduc", "--iters", "100000", "--seed", "7",
                                           "--logdir", str(logdir)])
    err = capsys.readouterr().err
    assert code == STORE_FULL == 3, err
    last = err.strip().splitlines()[-1]
    found = re.fullmatch(r"\S+: error: the store could not grow: out of memory for "
                         r"its next arrays \([\d,]+ bytes\); the run stopped with a final "
                         r"checkpoint of its ([\d,]+) iterations: (\S+)\. To go on: give the run "
                         r"more memory \(or stop it sooner: --max-memory\), then continue with "
                         rf"--resume-from {re.escape(str(logdir))}", last)
    assert found, err
    assert "Traceback" not in err
    iterations, path = int(found[1].replace(",", "")), Path(found[2])
    assert 0 < iterations < 100_000
    assert path == ckpt.resolve(logdir) and path.name == ckpt.checkpoint_name(iterations)
    loaded = ckpt.load(path)
    assert loaded.header["iterations"] == iterations
    assert 0 < loaded.arrays["keys"].size <= LEDUC_FIRST_ROWS

    monkeypatch.undo()
    total = iterations + 3000
    resumed = training.train(leduc(iters=total), logdir, resume_from=logdir, progress=False)
    straight = training.train(leduc(iters=total), tmp_path / "straight", progress=False)
    assert resumed.iterations == straight.iterations == total
    a, b = ckpt.load(resumed.checkpoint).arrays, ckpt.load(straight.checkpoint).arrays
    for name in ("keys", "num_actions", "regrets", "strategy_sum"):
        assert np.array_equal(a[name], b[name]), name


def test_the_python_api_raises_store_full_with_the_checkpoint(tmp_path, monkeypatch):
    refuse_growth(monkeypatch, LEDUC_FIRST_ROWS)
    with pytest.raises(StoreFull) as info:
        training.train(leduc(iters=100_000), tmp_path / "log", progress=False)
    path = info.value.checkpoint
    assert path is not None and ckpt.load(path).header["iterations"] > 0


# -- with worker processes: the shared store's next generation refused ---------------------------
REFUSE_GENERATION = 10      # hunl_default's store makes about 12 generations in its first 2 s

NO_ROOM_FOR_GENERATION = f"""
from errno import ENOSPC
from holdem.runtime import shm
_segment = shm.Segment.__init__
def segment(self, descriptor, create=False, writable=False):
    generation = shm._NAME_RE.match(os.path.basename(descriptor["path"]))
    if create and generation[2] == "g" and int(generation[3]) >= {REFUSE_GENERATION}:
        raise OSError(ENOSPC, os.strerror(ENOSPC))
    _segment(self, descriptor, create, writable)
shm.Segment.__init__ = segment
"""

STOPPED = (r".+?: error: the store could not grow: (.+); the run stopped with a final checkpoint "
           r"of its ([\d,]+) iterations: (\S+)\. To go on: free space in (\S+) or set "
           r"HOLDEM_SHM_DIR to a directory in memory \(tmpfs\) with room, then continue with "
           r"--resume-from (\S+)")


def stopped_for_room(run, logdir, directory):
    """The run ended with exit 3 and one line naming ``directory``; (its cause, the final
    checkpoint's iterations and path), the checkpoint loaded and checked."""
    assert run.finish() == STORE_FULL, run.stderr
    assert "Traceback" not in run.stderr
    found = re.fullmatch(STOPPED, run.stderr.strip().splitlines()[-1])
    assert found, run.stderr
    cause, iterations, path = found[1], int(found[2].replace(",", "")), Path(found[3])
    assert Path(found[4]) == directory and Path(found[5]) == logdir
    assert iterations > 0, run.stderr
    assert path == ckpt.resolve(logdir) and path.name == ckpt.checkpoint_name(iterations)
    loaded = ckpt.load(path)
    assert loaded.header["iterations"] == iterations and loaded.arrays["keys"].size > 0
    return cause, iterations, path


def resumes(logdir, iterations):
    """Continuing the run from its logdir (in-process) starts at ``iterations`` and trains on."""
    proc = subprocess.run([sys.executable, "-m", "holdem.cli.train_blueprint", "--resume-from",
                           str(logdir), "--logdir", str(logdir), "--num-workers", "1", "--iters",
                           str(iterations + 2000)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert f"at iteration {iterations:,}" in proc.stderr
    assert f"done: iterations={iterations + 2000} " in proc.stdout


def test_workers_whose_shared_store_cannot_grow_stop_with_a_final_checkpoint(
        launch, tmp_path, orphans):
    """The soak's failure: a new generation refused (ENOSPC where the file is made) stopped a
    run with exit 1 and nothing of what it merged since its last checkpoint."""
    directory, env = fault_env(tmp_path)
    logdir = tmp_path / "log"
    run = launch("run", "--config", ROOT / "configs" / "hunl_default.yaml", "--iters",
                 100_000_000, "--num-workers", 2, "--start-method", "fork", "--logdir", logdir,
                 env=env, command=driver(tmp_path, NO_ROOM_FOR_GENERATION))
    cause, iterations, _ = stopped_for_room(run, logdir, directory)
    assert re.fullmatch(rf"could not make the store's shared-memory file "
                        rf"{re.escape(str(directory))}/holdem-\d+-[0-9a-f]+-"
                        rf"g{REFUSE_GENERATION}\.store: \[Errno 28\] No space left on device",
                        cause), cause
    assert_nothing_left(run, directory, orphans)
    resumes(logdir, iterations)


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 50 MiB tmpfs (root only, where mounting is allowed), unmounted after."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=50m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield mount
    finally:
        if subprocess.run(["umount", str(mount)]).returncode != 0:
            subprocess.run(["umount", "-l", str(mount)])


def test_workers_whose_small_tmpfs_fills_stop_with_a_final_checkpoint(
        launch, tmp_path, small_tmpfs, orphans):
    """HOLDEM_SHM_DIR on a 50 MiB tmpfs: the delta rings (34 MiB for two workers on
    ``hunl_default``: each sized from its largest record) and the first generations fit, a
    later one does not."""
    logdir = tmp_path / "log"
    run = launch("run", "--config", ROOT / "configs" / "hunl_default.yaml", "--iters",
                 100_000_000, "--num-workers", 2, "--logdir", logdir,
                 env={"HOLDEM_SHM_DIR": str(small_tmpfs)})
    cause, iterations, _ = stopped_for_room(run, logdir, small_tmpfs)
    assert re.fullmatch(rf"not enough space in {re.escape(str(small_tmpfs))} for the store's "
                        r"next shared-memory file holdem-\d+-[0-9a-f]+-g\d+\.store: [\d,]+ "
                        r"bytes needed, [\d,]+ free", cause), cause
    assert_nothing_left(run, small_tmpfs, orphans)
    resumes(logdir, iterations)
