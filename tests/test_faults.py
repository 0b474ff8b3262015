"""Faults a long run meets, alone and together (issue 26): signals at any moment, workers that
die or never start, a killed main process, a busy machine. After each: no shared-memory file of
the run is left, no process of it outlives its main process, and a worker that keeps failing
stops the run within its restart budget, with a checkpoint of what was merged.

Runs are subprocesses (``tests/test_runtime.py``'s :class:`Run`) with their shared-memory files
in a directory of their own (``HOLDEM_SHM_DIR``), so other runs on the machine do not count.
Worker faults are injected by a driver script that patches the worker before running the
command line, with the ``fork`` start method (forked workers run the patched code). While a
test runs, this process is the *subreaper* of the runs' processes: whatever is still alive when
a main process exits is handed to it instead of to init, so an orphan is seen however quickly
it ends afterwards.
"""

import ctypes
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from holdem import checkpoint as ckpt
from holdem.runtime import shm
from holdem.runtime.pool import RestartBudget, WorkerFailure
from holdem.store.store import RegretStore
from test_runtime import ROOT, launch, leduc_config, restarts  # noqa: F401 (launch: a fixture)

PR_SET_CHILD_SUBREAPER = 36


# -- shared memory: interrupted at the worst moments (no processes) -----------------------------
SPECS = [("a", np.float64, 100), ("b", np.int64, 10)]


def files(directory):
    return sorted(p.name for p in Path(directory).iterdir())


def test_generation_interrupted_while_created_leaves_no_file(tmp_path, monkeypatch):
    allocator = shm.SharedAllocator(tmp_path)
    allocator(SPECS)

    def interrupted(fd, size):
        raise KeyboardInterrupt             # a second Ctrl-C, after the file was created

    monkeypatch.setattr(os, "ftruncate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        allocator(SPECS)
    monkeypatch.undo()
    allocator.close()
    assert files(tmp_path) == []


def test_release_and_close_interrupted_then_finished_leave_no_file(tmp_path, monkeypatch):
    """An exception in the middle of unlinking a generation, then in the middle of closing:
    the allocator forgets a file only once it is gone, so closing again removes the rest."""
    allocator = shm.SharedAllocator(tmp_path)
    store = RegretStore(row_capacity=16, allocator=allocator)
    keys = np.arange(100, dtype=np.int64)
    store.merge(keys, np.full(100, 2, np.int8), np.ones(200, np.float32), np.zeros(200))
    assert allocator.generation >= 2
    unlink = Path.unlink
    calls = []

    def interrupted_once(path, missing_ok=False):
        calls.append(path)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return unlink(path, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", interrupted_once)
    with pytest.raises(KeyboardInterrupt):
        allocator.release_before(allocator.generation)
    calls.clear()
    with pytest.raises(KeyboardInterrupt):
        allocator.close()
    allocator.close()
    monkeypatch.undo()
    assert files(tmp_path) == []


def test_closed_allocator_makes_no_generation(tmp_path):
    allocator = shm.SharedAllocator(tmp_path)
    allocator(SPECS)
    allocator.close()
    with pytest.raises(RuntimeError, match="is closed"):
        allocator(SPECS)
    assert files(tmp_path) == []


def test_a_process_ending_in_an_exception_leaves_no_file(tmp_path):
    """Nothing closed the allocator: its finalizer removes the files at interpreter exit."""
    code = textwrap.dedent(f"""
        import numpy as np
        from holdem.runtime import shm, ring
        allocator = shm.SharedAllocator({str(tmp_path)!r})
        allocator([("a", np.float64, 100)])
        ring.Rings(2, ring_bytes=4096, allocator=allocator)
        assert len(shm.list_segments({str(tmp_path)!r})) == 2
        raise RuntimeError("boom")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 1 and "boom" in proc.stderr, proc.stderr
    assert files(tmp_path) == []


# -- clean_stale: files of killed runs ----------------------------------------------------------
def test_clean_stale_removes_the_files_of_a_zombie_and_of_a_reused_pid(tmp_path, monkeypatch):
    child = subprocess.Popen(["sleep", "60"])
    try:
        zombie = tmp_path / f"holdem-{child.pid}-0123456789ab-g3.store"
        zombie.write_bytes(b"\0" * 64)
        child.kill()
        deadline = time.monotonic() + 10
        while _alive(child.pid) and time.monotonic() < deadline:
            time.sleep(0.01)                # killed, not reaped: a zombie, still a pid
        assert Path(f"/proc/{child.pid}").exists()
        assert shm.clean_stale(tmp_path) == [zombie]
    finally:
        child.wait()

    mine = tmp_path / f"holdem-{os.getpid()}-0123456789ab-g0.store"
    mine.write_bytes(b"\0" * 64)
    assert shm.clean_stale(tmp_path) == []          # this process made it: kept
    state, started = shm._process_start(os.getpid())
    assert state in "RS" and started <= mine.stat().st_ctime + 1
    # The same pid, now a process started after the file was last changed: another process.
    later = mine.stat().st_ctime + 10
    monkeypatch.setattr(shm, "_process_start", lambda pid: ("S", later))
    assert shm.clean_stale(tmp_path) == [mine]


# -- the restart budget -------------------------------------------------------------------------
def test_restart_budget_counts_failures_in_a_row_within_the_window():
    now = [0.0]
    budget = RestartBudget(restarts=2, window=60, clock=lambda: now[0])
    budget.failed(0, "a")
    now[0] = 50.0
    budget.failed(0, "b")                   # 2 in a row
    budget.failed(1, "x")                   # other workers count apart
    now[0] = 200.0                          # ran 150 s: the count starts again
    budget.failed(0, "c")
    now[0] = 230.0
    budget.failed(0, "d")
    now[0] = 289.0
    with pytest.raises(WorkerFailure) as info:
        budget.failed(0, "worker 0 (pid 7) exited with code 3")
    assert str(info.value) == (
        "worker 0 failed 3 times in a row, each within 60 s of the one before "
        "(train.worker_restarts 2, train.worker_restart_window 60); last failure: worker 0 "
        "(pid 7) exited with code 3")


# -- processes ----------------------------------------------------------------------------------
@pytest.fixture
def orphans():
    """``orphans()``: the pids (live or zombie) handed to this process because their parent
    ended before them. This process is a subreaper meanwhile; they are killed and reaped after."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        pytest.skip("no PR_SET_CHILD_SUBREAPER here")
    known = _children(os.getpid())

    def adopted():
        return sorted(set(_children(os.getpid())) - known - _popen_pids())

    try:
        yield adopted
    finally:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
        for pid in adopted():
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass


def _children(ppid):
    """Pids whose parent is ``ppid`` (zombies included)."""
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                data = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(data[data.rindex(")") + 2:].split()[1]) == ppid:
                out.add(int(entry))
    return out


def _popen_pids():
    """The processes this test process started itself (the runs, busy loops)."""
    return {p.pid for p in subprocess._active} | _STARTED


_STARTED = set()


def shm_env(tmp_path):
    directory = tmp_path / "shm"
    directory.mkdir(exist_ok=True)
    return directory, {"HOLDEM_SHM_DIR": str(directory)}


def driver(tmp_path, patch):
    """``python driver.py ARGS``: the train_blueprint command line, after ``patch`` (code run
    with ``worker`` = holdem.runtime.worker and ``_init`` = BatchServer.__init__, which it may
    replace; FAULT_DIR: a directory for markers)."""
    path = tmp_path / "driver.py"
    path.write_text(textwrap.dedent(f"""
        import os, sys, time
        sys.path.insert(0, {str(ROOT)!r})     # this checkout, wherever the script is
        from holdem.runtime import worker
        _init = worker.BatchServer.__init__
        FAULT_DIR = os.environ["FAULT_DIR"]
    """) + textwrap.dedent(patch) + textwrap.dedent("""
        from holdem.cli.common import run_main
        from holdem.cli.train_blueprint import main
        sys.exit(run_main(main, sys.argv[1:]))
    """))
    return [sys.executable, str(path)]


def fault_env(tmp_path):
    directory, env = shm_env(tmp_path)
    (tmp_path / "faults").mkdir(exist_ok=True)
    return directory, {**env, "FAULT_DIR": str(tmp_path / "faults")}


WORKER_0_NEVER_STARTS = """
def init(self, config, worker_index, relocate=None):
    if worker_index == 0:
        os._exit(3)
    _init(self, config, worker_index, relocate)
worker.BatchServer.__init__ = init
"""
WORKER_0_STARTS_ONCE = """
def init(self, config, worker_index, relocate=None):
    marker = os.path.join(FAULT_DIR, "started")
    if worker_index == 0:
        if os.path.exists(marker):
            os._exit(3)
        open(marker, "w").close()
    _init(self, config, worker_index, relocate)
worker.BatchServer.__init__ = init
"""
WORKER_0_FAILS_ITS_FIRST_START = """
def init(self, config, worker_index, relocate=None):
    marker = os.path.join(FAULT_DIR, "failed")
    if worker_index == 0 and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(3)
    _init(self, config, worker_index, relocate)
worker.BatchServer.__init__ = init
"""
WORKERS_START_SLOWLY = """
def init(self, config, worker_index, relocate=None):
    time.sleep(60)
    _init(self, config, worker_index, relocate)
worker.BatchServer.__init__ = init
"""


def assert_nothing_left(run, directory, orphans):
    """No file in the run's shared-memory directory; no process of the run outlived it."""
    assert run.proc.poll() is not None
    left = orphans()
    assert not left, f"processes outlived the main process: {left}\n{run.stderr}"
    assert files(directory) == [], run.stderr


def test_sigterm_while_the_run_starts_stops_it_cleanly(launch, tmp_path, orphans):
    """Before the loop a signal used to end the process (SIGTERM) or to raise anywhere; the
    store's first generation already exists then."""
    directory, env = shm_env(tmp_path)
    run = launch("run", "--game", "leduc", "--iters", 10_000_000, "--num-workers", 2,
                 "--logdir", tmp_path / "log", env=env)
    deadline = time.monotonic() + 120
    while not files(directory) and run.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    assert files(directory), run.stderr
    os.kill(run.pid, signal.SIGTERM)        # while it compiles or loads its kernels
    assert run.finish() == 130, run.stderr
    assert "received SIGTERM before training started: stopping" in run.stderr
    assert run.stderr.strip().splitlines()[-1].endswith("interrupted"), run.stderr
    assert not (tmp_path / "log").exists()          # no checkpoint, nothing left of the logdir
    assert_nothing_left(run, directory, orphans)


def test_killed_worker_then_sigint_under_load_leaves_nothing(launch, tmp_path, orphans):
    """The soak's case: a worker SIGKILLed, then SIGINT to the main process, with two busy
    loops competing for the cores."""
    directory, env = shm_env(tmp_path)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        config = leduc_config(tmp_path / "c.yaml", progress_interval=0.2)
        run = launch("run", "--config", config, "--time-budget", 120, "--num-workers", 2,
                     "--logdir", tmp_path / "run", env=env)
        run.wait_training(timeout=120)
        os.kill(min(run.poll_children()), signal.SIGKILL)
        assert run.wait_until(lambda: "starting a replacement" in run.stderr, 30), run.stderr
        os.kill(run.pid, signal.SIGINT)
        assert run.finish() == 0, run.stderr
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert "received SIGINT" in run.stderr and restarts(run.stderr) >= 1
    iterations, _, path = run.done()
    assert iterations > 0 and ckpt.load(path).iterations == iterations   # the final checkpoint
    assert_nothing_left(run, directory, orphans)


def test_workers_die_with_a_killed_main_process(launch, tmp_path, orphans):
    """Workers still starting (here: for a minute) when the main process is killed end with
    it, not when they next look at their pipe."""
    directory, env = fault_env(tmp_path)
    run = launch("run", "--game", "leduc", "--iters", 10_000_000, "--num-workers", 2,
                 "--start-method", "fork", "--logdir", tmp_path / "run",
                 command=driver(tmp_path, WORKERS_START_SLOWLY), env=env)
    assert run.wait_until(lambda: len(run.poll_children()) >= 2, 120), run.stderr
    os.kill(run.pid, signal.SIGKILL)
    run.finish()
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in orphans()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [pid for pid in orphans() if _alive(pid)], "workers outlived the main process"
    # The killed run's files are the next run's to remove.
    assert len(shm.list_segments(directory, pid=run.pid)) == 2
    assert shm.clean_stale(directory) != [] and files(directory) == []


def _alive(pid):
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return data[data.rindex(")") + 2] != "Z"


def test_a_worker_that_never_starts_stops_the_run_within_its_budget(launch, tmp_path,
                                                                     orphans):
    directory, env = fault_env(tmp_path)
    config = leduc_config(tmp_path / "c.yaml", worker_restarts=2, worker_restart_window=60)
    run = launch("run", "--config", config, "--iters", 1_000_000, "--num-workers", 2,
                 "--start-method", "fork", "--logdir", tmp_path / "log",
                 command=driver(tmp_path, WORKER_0_NEVER_STARTS), env=env)
    assert run.finish() == 1, run.stderr
    assert ("stopping: worker 0 failed 3 times in a row, each within 60 s of the one before "
            "(train.worker_restarts 2, train.worker_restart_window 60); last failure: worker 0 "
            "(pid ") in run.stderr
    assert "exited with code 3" in run.stderr.split("stopping: ")[1]
    assert "Traceback" not in run.stderr and "error: " in run.stderr
    assert run.stderr.count("starting a replacement") == 2
    assert run.stdout == ""                         # no done: line
    assert not (tmp_path / "log").exists()          # it merged nothing: no checkpoint
    assert_nothing_left(run, directory, orphans)


def test_a_worker_that_keeps_dying_stops_the_run_with_a_checkpoint(launch, tmp_path, orphans):
    """Worker 0 trains, is killed, and no replacement starts: the run stops with a final
    checkpoint of the iterations merged."""
    directory, env = fault_env(tmp_path)
    config = leduc_config(tmp_path / "c.yaml", worker_restarts=2, progress_interval=0.2)
    run = launch("run", "--config", config, "--iters", 100_000_000, "--num-workers", 2,
                 "--start-method", "fork", "--logdir", tmp_path / "run",
                 command=driver(tmp_path, WORKER_0_STARTS_ONCE), env=env)
    run.wait_training(timeout=120)
    for pid in run.poll_children():
        os.kill(pid, signal.SIGKILL)
    assert run.finish() == 1, run.stderr
    assert "stopping: worker 0 failed 3 times in a row" in run.stderr
    found = [line for line in run.stderr.splitlines()
             if line.startswith("final checkpoint of the ")]
    assert len(found) == 1, run.stderr
    path = Path(found[0].split(": ", 1)[1])
    iterations = int(found[0].split()[4].replace(",", ""))
    assert iterations > 0 and ckpt.load(path).iterations == iterations
    assert ckpt.resolve(tmp_path / "run") == path
    assert_nothing_left(run, directory, orphans)


def test_a_worker_that_fails_once_is_replaced_and_the_count_stays_exact(launch, tmp_path,
                                                                         orphans):
    directory, env = fault_env(tmp_path)
    iters = 1_000_000
    # worker_timeout 600: on a busy machine a worker silent past the default 10 s would be
    # restarted too, and the count below is of the one planted failure.
    config = leduc_config(tmp_path / "c.yaml", worker_timeout=600)
    run = launch("run", "--config", config, "--iters", iters, "--num-workers", 2,
                 "--start-method", "fork", "--logdir", tmp_path / "run",
                 command=driver(tmp_path, WORKER_0_FAILS_ITS_FIRST_START), env=env)
    assert run.finish() == 0, run.stderr
    assert run.done()[0] == iters
    assert restarts(run.stderr) == 1 and "exited with code 3" in run.stderr
    assert_nothing_left(run, directory, orphans)
