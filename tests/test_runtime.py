"""The parallel runtime under normal runs and failures: killed workers, signals, a main process
killed mid-checkpoint, resume across worker counts, TensorBoard output, the msgpack delta
protocol and the shared-memory store files.

Training runs are subprocesses of ``python -m holdem.cli.train_blueprint`` in their own session.
Worker processes are found through /proc (children of the main pid) while a run is live; every
process a test saw is killed by pid at teardown if it is still there, so a failing test leaves
nothing behind.
"""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgpack
import numpy as np
import pytest
import yaml

from holdem import checkpoint as ckpt
from holdem.delta import records
from holdem.runtime import frames, protocol, shm
from holdem.runtime.pool import Pool, WorkerDied
from holdem.store.store import RegretStore

pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parents[1]
DONE_RE = re.compile(r"^done: iterations=(\d+) elapsed=([\d.]+) it/s=([\d.]+) infosets=(\d+) "
                     r"checkpoint=(\S+)$", re.M)
PROGRESS_RE = re.compile(r"iterations=([\d,]+) it/s=")
RESTARTS_RE = re.compile(r"^merge: .*worker restarts (\d+)(?:; unmerged [^\n]*)?$", re.M)
LEDUC_INFOSETS = 288
SCALAR_TAGS = ("train/iters_per_sec", "train/iterations", "train/infosets", "train/store_bytes",
               "train/delta_bytes_per_iter", "train/merge_ms", "train/worker_idle_frac",
               "train/utility_mean", "eval/exploitability")


# -- processes via /proc ----------------------------------------------------------------------
def _stat(pid):
    """(state, ppid, starttime) of ``pid`` from /proc, or None if it does not exist."""
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = data[data.rindex(")") + 2:].split()     # fields 3.. (comm may contain spaces)
    return rest[0], int(rest[1]), int(rest[19])


def _cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _children(ppid):
    """{pid: starttime} of the live processes whose parent is ``ppid``."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st is not None and st[1] == ppid and st[0] != "Z":
                out[int(entry)] = st[2]
    return out


def _wait_stopped(pid, timeout=10.0):
    """Wait until every thread of ``pid`` is stopped (SIGSTOP delivered): True, or False."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = []
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                data = Path(f"/proc/{pid}/task/{task}/stat").read_text()
            except OSError:
                continue                # a thread that just ended
            states.append(data[data.rindex(")") + 2])
        if states and all(state in "tT" for state in states):
            return True
        time.sleep(0.001)
    return False


def _alive(pid, starttime):
    """True while the process seen as (pid, starttime) runs (a zombie counts as gone)."""
    st = _stat(pid)
    return st is not None and st[0] != "Z" and st[2] == starttime


class Run:
    """One ``train_blueprint`` subprocess (or ``command``: another program taking its
    arguments); stdout and stderr go to files (no pipe deadlock)."""

    def __init__(self, directory, args, command=None, env=None):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.out_path = self.directory / "stdout.txt"
        self.err_path = self.directory / "stderr.txt"
        command = command or [sys.executable, "-m", "holdem.cli.train_blueprint"]
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [*map(str, command), *map(str, args)],
                stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=ROOT,
                start_new_session=True, env=None if env is None else {**os.environ, **env})
        self.pid = self.proc.pid
        self.cmdline = None
        # spawned workers and the resource tracker run a new command line; a child still
        # showing the main's command line is between fork and exec (unless workers fork)
        self.fork = "fork" in map(str, args)
        self.seen = {}          # every child ever seen: pid -> starttime
        self.worker_pids = {}   # the workers among them

    def poll_children(self):
        """Record the main process's children; return {pid: starttime} of live workers."""
        if self.cmdline is None:
            self.cmdline = _cmdline(self.pid)
        live = {}
        for pid, start in _children(self.pid).items():
            self.seen[pid] = start
            cmd = _cmdline(pid)
            if "resource_tracker" in cmd or (not self.fork and cmd == self.cmdline):
                continue
            self.worker_pids[pid] = start
            live[pid] = start
        return live

    def wait_until(self, predicate, timeout):
        """Poll ``predicate`` (and the children) until true; False on timeout or exit."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.poll_children()
            if predicate():
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.02)
        return False

    def iterations_so_far(self):
        found = PROGRESS_RE.findall(self.stderr)
        return int(found[-1].replace(",", "")) if found else 0

    def wait_training(self, timeout=60, workers=2, iterations=1):
        """Wait until ``workers`` workers run and progress shows ``iterations`` merged."""
        ok = self.wait_until(lambda: len(self.poll_children()) >= workers
                             and self.iterations_so_far() >= iterations, timeout)
        assert ok, f"training did not start (exit {self.proc.poll()}):\n{self.stderr}"

    def finish(self, timeout=120):
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"run did not finish in {timeout} s:\n{self.stderr}") from None
        return self.proc.returncode

    @property
    def stdout(self):
        return self.out_path.read_text()

    @property
    def stderr(self):
        return self.err_path.read_text()

    def done(self):
        """(iterations, infosets, checkpoint path) from the single ``done:`` line."""
        found = DONE_RE.findall(self.stdout)
        assert len(found) == 1, f"stdout:\n{self.stdout}\nstderr:\n{self.stderr}"
        iterations, _, _, infosets, path = found[0]
        return int(iterations), int(infosets), Path(path)

    def cleanup(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        for pid, start in self.seen.items():
            if _alive(pid, start):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


@pytest.fixture
def launch(tmp_path):
    """``launch(name, *args, command=None, env=None)`` starts a run in ``tmp_path/name`` (see
    :class:`Run`); all are cleaned up after."""
    runs = []

    def start(name, *args, command=None, env=None):
        run = Run(tmp_path / name, args, command, env)
        runs.append(run)
        return run

    try:
        yield start
    finally:
        for run in runs:
            run.cleanup()


def leduc_config(path, **train):
    """configs/leduc.yaml with ``train`` overrides, written to ``path``."""
    data = yaml.safe_load((ROOT / "configs" / "leduc.yaml").read_text())
    data.setdefault("train", {}).update(train)
    Path(path).write_text(yaml.safe_dump(data))
    return path


def exploitability(logdir):
    proc = subprocess.run([sys.executable, "-m", "holdem.cli.eval_blueprint", "--checkpoint",
                           str(logdir), "--exploitability"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return float(re.search(r"^exploitability: (\S+)$", proc.stdout, re.M)[1])


def assert_no_leftovers(run, timeout=5.0):
    """No shared-memory file of the run's main pid, and every worker it had has exited."""
    assert run.worker_pids, "never saw a worker process"
    deadline = time.monotonic() + timeout
    while (any(_alive(p, s) for p, s in run.worker_pids.items())
           and time.monotonic() < deadline):
        time.sleep(0.05)
    left = [p for p, s in run.worker_pids.items() if _alive(p, s)]
    assert not left, f"worker processes still running: {left}"
    assert shm.list_segments(pid=run.pid) == []


def restarts(stderr):
    found = RESTARTS_RE.findall(stderr)
    assert found, stderr
    return int(found[-1])


# -- end-to-end runs --------------------------------------------------------------------------
def test_two_workers_reach_exact_count_and_converge(launch, tmp_path):
    iters = 2_000_000
    # No worker may be replaced: a busy machine can leave one silent past the default
    # worker_timeout (10 s), which restarts it by design; no answer in 600 s is a real hang.
    config = leduc_config(tmp_path / "c.yaml", worker_timeout=600)
    run = launch("run", "--config", config, "--iters", iters, "--num-workers", 2,
                 "--logdir", tmp_path / "run")                  # not --quiet: the summary
    assert run.wait_until(lambda: len(run.poll_children()) >= 2, 60), run.stderr
    assert run.finish() == 0, run.stderr
    done_iters, infosets, path = run.done()
    assert (done_iters, infosets) == (iters, LEDUC_INFOSETS)
    assert ckpt.load(path).iterations == iters
    assert restarts(run.stderr) == 0
    assert exploitability(path) < 0.1
    assert_no_leftovers(run)


def test_killed_worker_is_replaced_and_count_stays_exact(launch, tmp_path):
    iters = 12_000_000
    config = leduc_config(tmp_path / "c.yaml", progress_interval=0.2)
    run = launch("run", "--config", config, "--iters", iters, "--num-workers", 2,
                 "--logdir", tmp_path / "run")
    run.wait_training()
    victim = min(run.poll_children())
    os.kill(victim, signal.SIGKILL)
    run.wait_until(lambda: len(run.worker_pids) >= 3, 30)      # the replacement
    assert run.finish() == 0, run.stderr
    done_iters, infosets, path = run.done()
    assert (done_iters, infosets) == (iters, LEDUC_INFOSETS)
    assert ckpt.load(path).iterations == iters
    assert restarts(run.stderr) >= 1 and f"(pid {victim}) exited" in run.stderr, run.stderr
    assert len(run.worker_pids) >= 3, (run.worker_pids, run.stderr)
    assert_no_leftovers(run)


def test_sigint_writes_final_checkpoint_and_exits_cleanly(launch, tmp_path):
    config = leduc_config(tmp_path / "c.yaml", progress_interval=0.2)
    run = launch("run", "--config", config, "--time-budget", 60, "--num-workers", 2,
                 "--logdir", tmp_path / "run")
    run.wait_training()
    time.sleep(1.0)
    os.kill(run.pid, signal.SIGINT)
    assert run.finish(timeout=30) == 0, run.stderr
    done_iters, infosets, path = run.done()
    assert "received SIGINT" in run.stderr
    assert 0 < done_iters and infosets == LEDUC_INFOSETS
    loaded = ckpt.load(path)
    # Stopped by the signal, not by its 60 s budget (however slowly a loaded machine got
    # there: the signal came a second after the first merged iterations).
    assert loaded.iterations == done_iters and loaded.header["elapsed"] < 60
    assert_no_leftovers(run)


def test_main_killed_during_checkpoint_write(launch, tmp_path):
    logdir = tmp_path / "run"
    config = leduc_config(tmp_path / "c.yaml", progress_interval=0.2, snapshot_interval=0.01,
                          keep_checkpoints=3)
    run = launch("run", "--config", config, "--time-budget", 60, "--num-workers", 2,
                 "--logdir", logdir)
    run.wait_training()
    directory = ckpt.checkpoint_dir(logdir)
    assert run.wait_until(lambda: len(ckpt.list_checkpoints(directory)) >= 2, 30), run.stderr
    # Kill in the middle of a write: when a temporary file shows up, stop the main process
    # (every thread, the writer's too) and look again; a file still there while it is stopped
    # is there when the SIGKILL lands. Otherwise the write just ended: go on and try again.
    def temporaries():
        return {name for name in os.listdir(directory) if name.endswith(".tmp")}

    caught = set()
    deadline = time.monotonic() + 60.0
    while not caught and time.monotonic() < deadline and run.proc.poll() is None:
        if temporaries():
            os.kill(run.pid, signal.SIGSTOP)
            assert _wait_stopped(run.pid), "the main process did not stop"
            caught = temporaries()
            if not caught:
                os.kill(run.pid, signal.SIGCONT)
        time.sleep(0.001)
    workers = run.poll_children()
    os.kill(run.pid, signal.SIGKILL)
    run.finish(timeout=10)
    assert caught, f"no checkpoint write was caught in progress:\n{run.stderr}"
    assert len(workers) == 2
    assert caught <= temporaries()          # the killed write's file: nothing finished it

    # Workers notice the dead parent on their own.
    deadline = time.monotonic() + 5.0
    while any(_alive(p, s) for p, s in workers.items()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p, s in workers.items() if _alive(p, s)], "workers outlived the main"

    # Every file under a checkpoint name is complete; temporary files (the killed write's, and
    # one named to sort last) are never chosen.
    (directory / ".ckpt-zzzzzzzz.tmp").write_bytes(b"HOLDEMCK partial")
    names = sorted(os.listdir(directory))
    finals = [n for n in names if ckpt.NAME_RE.match(n)]
    assert finals, names
    for name in finals:
        loaded = ckpt.load(directory / name)
        assert loaded.header["game"] == "leduc"
        assert name == ckpt.checkpoint_name(loaded.iterations) and loaded.iterations > 0
    latest = ckpt.resolve(logdir)
    assert latest.name == finals[-1]

    # The dead main's shared-memory files (left behind by the kill) are removed by the next run.
    other = launch("other", "--game", "kuhn", "--iters", 100_000, "--num-workers", 2,
                   "--logdir", tmp_path / "other", "--quiet")
    assert other.finish() == 0, other.stderr
    assert shm.list_segments(pid=run.pid) == []


@pytest.mark.parametrize("first,second", [(2, 1), (1, 2)])
def test_resume_across_worker_counts(launch, tmp_path, first, second):
    n = 1_000_000
    a = launch("a", "--game", "leduc", "--iters", n, "--num-workers", first,
               "--logdir", tmp_path / "a", "--quiet")
    assert a.finish() == 0, a.stderr
    assert a.done()[0] == n
    b = launch("b", "--game", "leduc", "--iters", 2 * n, "--num-workers", second,
               "--logdir", tmp_path / "b", "--resume-from", tmp_path / "a")
    assert b.finish() == 0, b.stderr
    done_iters, infosets, path = b.done()
    assert (done_iters, infosets) == (2 * n, LEDUC_INFOSETS)
    assert path.name == ckpt.checkpoint_name(2 * n)
    assert ckpt.load(path).iterations == 2 * n
    assert f"at iteration {n:,}" in b.stderr


def test_resume_after_a_run_merging_on_several_threads(launch, tmp_path):
    # Threads merge block ranges of each delta; offsets stay valid in the checkpoint, so the
    # run resumes in-process and then with workers again, the counts exact and converging.
    n = 1_000_000
    a = launch("a", "--game", "leduc", "--iters", n, "--num-workers", 2, "--merge-threads", 3,
               "--batch-size", 500, "--logdir", tmp_path / "run", "--quiet")
    assert a.finish() == 0, a.stderr
    assert a.done()[:2] == (n, LEDUC_INFOSETS)
    b = launch("b", "--game", "leduc", "--iters", 2 * n, "--num-workers", 1,
               "--logdir", tmp_path / "run", "--resume-from", tmp_path / "run", "--quiet")
    assert b.finish() == 0, b.stderr
    c = launch("c", "--config", leduc_config(tmp_path / "c.yaml", worker_timeout=600),
               "--iters", 3 * n, "--num-workers", 2, "--merge-threads", 2,
               "--logdir", tmp_path / "run", "--resume-from", tmp_path / "run")
    assert c.finish() == 0, c.stderr
    assert c.done()[:2] == (3 * n, LEDUC_INFOSETS)
    assert ckpt.load(ckpt.resolve(tmp_path / "run")).iterations == 3 * n
    # No delta was rejected (and with worker_timeout 600 no worker of a loaded machine was
    # taken for hung: the only other cause of a restart).
    assert restarts(c.stderr) == 0
    assert exploitability(tmp_path / "run") < 0.05


@pytest.mark.parametrize("workers", [1, 2])
def test_resume_with_another_game_fails_in_one_line(launch, tmp_path, workers):
    a = launch("a", "--game", "leduc", "--iters", 10_000, "--logdir", tmp_path / "a", "--quiet")
    assert a.finish() == 0, a.stderr
    b = launch("b", "--game", "kuhn", "--iters", 20_000, "--num-workers", workers,
               "--logdir", tmp_path / "b", "--resume-from", tmp_path / "a", "--quiet")
    assert b.finish() == 2
    lines = b.stderr.strip().splitlines()
    assert len(lines) == 1, b.stderr
    assert "error" in lines[0] and "'leduc'" in lines[0] and "'kuhn'" in lines[0]
    assert b.stdout == ""
    assert shm.list_segments(pid=b.pid) == []


def test_fork_start_method_completes(launch, tmp_path):
    iters = 2_000_000
    run = launch("run", "--game", "leduc", "--iters", iters, "--num-workers", 2,
                 "--start-method", "fork", "--logdir", tmp_path / "run")
    assert run.wait_until(lambda: len(run.poll_children()) >= 2, 60), run.stderr
    assert run.finish() == 0, run.stderr
    assert run.done()[:2] == (iters, LEDUC_INFOSETS)
    assert "(fork)" in run.stderr
    assert_no_leftovers(run)


# -- TensorBoard ------------------------------------------------------------------------------
def _event_files(logdir):
    return sorted(Path(logdir).glob("events.out.tfevents.*"))


def _scalars(path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(path), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    return {tag: acc.Scalars(tag) for tag in tags["scalars"]}, tags


def test_tensorboard_scalars_and_resumed_steps(launch, tmp_path):
    logdir = tmp_path / "run"
    config = leduc_config(tmp_path / "c.yaml", tensorboard=True, log_interval=0.2,
                          eval_interval=0.5)
    first = launch("first", "--config", config, "--iters", 6_000_000, "--num-workers", 2,
                   "--logdir", logdir, "--quiet")
    assert first.finish() == 0, first.stderr
    second = launch("second", "--config", config, "--iters", 9_000_000, "--num-workers", 2,
                    "--logdir", logdir, "--resume-from", logdir, "--quiet")
    assert second.finish() == 0, second.stderr
    files = _event_files(logdir)
    assert len(files) == 2, files

    last_step = 0
    for path, final in zip(files, (6_000_000, 9_000_000)):
        scalars, tags = _scalars(path)
        assert "config" in tags["tensors"]
        missing = [t for t in SCALAR_TAGS if t not in scalars]
        assert not missing, f"{path.name}: missing {missing}; has {sorted(scalars)}"
        steps = [e.step for e in scalars["train/iterations"]]
        assert steps == sorted(steps) and steps[-1] == final
        assert steps[0] >= last_step          # the resumed run continues the curves
        for tag in SCALAR_TAGS:
            tag_steps = [e.step for e in scalars[tag]]
            assert tag_steps == sorted(tag_steps) and tag_steps[-1] <= final
        assert [e.value for e in scalars["train/iterations"]] == steps
        assert all(e.value == LEDUC_INFOSETS for e in scalars["train/infosets"][-1:])
        expl = [e.value for e in scalars["eval/exploitability"]]
        assert all(0 < x < 3 for x in expl), expl
        last_step = steps[-1]
    assert expl[-1] < 0.1


# -- the process executor's handling of a worker that dies mid-submit (no processes) ---------
class _DeadPool(Pool):
    """A pool whose worker 0 has exited: sending fails, restarts are recorded."""

    def __init__(self):
        self.restarted = []
        self.died = []                  # what the next wait() reports

    def submit(self, i, payload):
        raise WorkerDied(f"worker {i}: cannot send ([Errno 32] Broken pipe)")

    def wait(self, timeout, inbox=None, stall=None):
        events, self.died = self.died, []
        return events

    def restart(self, i):
        self.restarted.append(i)

    def close(self):
        pass


def test_batch_sent_to_a_dead_worker_is_reissued():
    from holdem import config as config_mod
    from holdem.games import make_game
    from holdem.runtime.executor import Batch
    from holdem.runtime.process import ProcessExecutor

    config = config_mod.with_overrides(config_mod.default_for_game("leduc"),
                                       train={"iters": 10_000, "num_workers": 2})
    pool = _DeadPool()
    executor = ProcessExecutor(make_game(config), config, 2, pool=pool)
    try:
        RegretStore(16, allocator=executor.allocator)           # generation 0 exists
        executor.workers[0].ready = True
        assert executor.capacity() == 2                         # worker 1 is not ready yet
        batches = [Batch(0, 0, 100, 0.0), Batch(1, 100, 100, 0.0)]
        executor.submit(batches[0])                             # must not raise
        sent = executor.workers[0].outstanding
        assert list(sent) == [0] and sent[0].batch == batches[0] and pool.restarted == []
        assert executor.in_flight() == 1
        sent[0].merged = 40                                     # its first flush was merged
        pool.died = [(0, WorkerDied("worker 0 exited with code -9"))]
        assert executor.results(0.0) == []
        assert pool.restarted == [0] and executor.stats["restarts"] == 1
        rest = Batch(0, 40, 60, 0.0)                            # the rest of it is re-issued
        assert executor.queue == [rest] and executor.in_flight() == 1
        executor.submit(batches[1])                             # no worker ready: queued
        assert executor.queue == [rest, batches[1]] and executor.capacity() == 0
    finally:
        executor.close()


def test_one_factory_chooses_executor_and_pool(monkeypatch):
    import sys

    from holdem import config as config_mod
    from holdem.games import make_game
    from holdem.runtime import backends
    from holdem.runtime.executor import InProcessExecutor
    from holdem.runtime.pool import ProcessPool
    from holdem.runtime.process import ProcessExecutor
    from holdem.runtime.ray_pool import RayPool

    def config(**train):
        return config_mod.with_overrides(config_mod.default_for_game("leduc"), train=train)

    one = config(num_workers=1)
    assert isinstance(backends.make_executor(make_game(one), one), InProcessExecutor)
    two = config(num_workers=2)
    executor = backends.make_executor(make_game(two), two)
    try:
        assert isinstance(executor, ProcessExecutor) and executor.pool is None
        assert executor.make_pool is backends.make_pool
        pool = backends.make_pool(two, 2, executor.allocator, None)
        assert isinstance(pool, ProcessPool) and pool.rings is not None
        pool.rings.close()
        monkeypatch.setitem(sys.modules, "ray", None)       # a Ray pool imports ray when started
        ray = config(num_workers=2, backend="ray")
        assert isinstance(backends.make_pool(ray, 2, executor.allocator, None), RayPool)
    finally:
        executor.close()
    with pytest.raises(ValueError, match="needs a pool or make_pool"):
        ProcessExecutor(make_game(two), two, 2)


def _runtime_imports():
    """{runtime module: the holdem modules it imports anywhere in it (functions included)}."""
    import ast

    root = ROOT / "holdem" / "runtime"
    found = {}
    for path in sorted(root.glob("*.py")):
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                targets |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        found[f"holdem.runtime.{path.stem}"] = targets
    return found


def test_runtime_modules_import_each_other_one_way_only():
    """No loop among runtime modules, deferred imports included; ``ray`` only in ray_pool and
    ray_cluster."""
    imports = _runtime_imports()
    graph = {m: {t for t in targets if t in imports} for m, targets in imports.items()}

    def reaches(start, goal, seen=()):
        return any(t == goal or (t not in seen and reaches(t, goal, (*seen, t)))
                   for t in graph[start])

    assert [m for m in graph if reaches(m, m)] == []
    assert sorted(m for m, targets in imports.items()
                  if any(t == "ray" or t.startswith("ray.") for t in targets)) == [
        "holdem.runtime.ray_cluster", "holdem.runtime.ray_pool"]
    assert [m for m, targets in imports.items()
            if any(t.startswith("holdem.training") for t in targets)] == []


# -- frames (no processes) --------------------------------------------------------------------
def _pipe_with(*chunks):
    """A pipe whose read end holds ``chunks`` (written, then the write end closed)."""
    import threading

    r, w = os.pipe()

    def write():
        try:
            for chunk in chunks:
                os.write(w, chunk) if isinstance(chunk, bytes) else frames.send(w, chunk[0])
        finally:
            os.close(w)

    thread = threading.Thread(target=write)
    thread.start()
    return r, thread


def test_frames_round_trip_into_reused_growing_buffers():
    big = np.arange(300_000, dtype=np.int64).tobytes()            # beyond the pipe's buffer
    r, thread = _pipe_with((b"first",), (big,), (b"",), (b"last",))
    receiver = frames.Receiver()
    try:
        assert bytes(receiver.read(r)) == b"first"
        view = receiver.read(r, slot=1)
        assert view.nbytes == len(big) and bytes(view) == big
        assert bytes(receiver.read(r)) == b""
        assert bytes(receiver.read(r, slot=1)) == b"last"           # slot 1 reused
        with pytest.raises(EOFError):
            receiver.read(r)
    finally:
        thread.join()
        os.close(r)


@pytest.mark.parametrize("chunks", [
    pytest.param((b"\x05\x00\x00",), id="cut-header"),
    pytest.param((b"\x09" + bytes(7) + b"1234",), id="cut-payload"),
])
def test_frames_cut_by_a_dying_worker_raise_eoferror(chunks):
    r, thread = _pipe_with(*chunks)
    try:
        with pytest.raises(EOFError):
            frames.Receiver().read(r)
    finally:
        thread.join()
        os.close(r)


def test_a_frame_whose_writer_stops_halfway_raises_framestalled_after_the_limit():
    """A writer that sent a header and 10 of 1,000 bytes and then stays silent (open, like a
    SIGSTOPped worker): the reader gives up after ``stall`` seconds without a byte, for the
    payload and for a cut header alike, instead of waiting as long as the writer does."""
    import struct

    for start in (struct.pack("<Q", 1000) + b"x" * 10, b"\x05\x00"):
        r, w = os.pipe()
        try:
            os.write(w, start)
            began = time.monotonic()
            with pytest.raises(frames.FrameStalled, match="no byte for 0.3 s"):
                frames.read_into(r, lambda n: memoryview(bytearray(n)), stall=0.3)
            assert time.monotonic() - began >= 0.29
            os.write(w, start)
            with pytest.raises(frames.FrameStalled):
                frames.Receiver().read(r, stall=0.3)
        finally:
            os.close(r)
            os.close(w)


def _stop_halfway_through_a_frame(conn):
    os.write(conn.fileno(), np.int64(1 << 20).tobytes() + bytes(4096))
    os.kill(os.getpid(), signal.SIGSTOP)


def test_the_pool_reports_a_worker_stopped_in_the_middle_of_a_frame():
    """A worker process that stops (SIGSTOP) after 4 KiB of a 1 MiB frame: ``wait`` reports it
    as a WorkerDied naming the hang within the stall limit, so the executor restarts it (it
    used to block the main process until the worker was continued: found by the CI soak), and
    the pool's restart kills the stopped process."""
    import multiprocessing as mp

    from holdem.runtime.pool import ProcessPool

    ctx = mp.get_context("fork")
    pool = ProcessPool(1, {}, start_method="fork")
    ours, theirs = ctx.Pipe(duplex=True)
    proc = ctx.Process(target=_stop_halfway_through_a_frame, args=(theirs,), daemon=True)
    proc.start()
    theirs.close()
    pool.procs[0], pool.conns[0] = proc, ours
    try:
        began = time.monotonic()
        events = pool.wait(10.0, stall=0.5)
        assert time.monotonic() - began < 5.0
        assert len(events) == 1 and events[0][0] == 0
        assert isinstance(events[0][1], WorkerDied), events
        assert "hung in the middle of a message" in str(events[0][1])
        assert proc.is_alive()              # stopped, not dead
    finally:
        pool._terminate(0)
    assert not proc.is_alive()


def test_frames_reject_a_corrupt_length():
    r, thread = _pipe_with(b"\xff" * 8)
    try:
        with pytest.raises(OSError, match="corrupt"):
            frames.Receiver().read(r)
    finally:
        thread.join()
        os.close(r)


# -- protocol (no processes) ------------------------------------------------------------------
def _split(offsets=(0, 4096), regrets=None, strategy=None, keys=(5, 11, 260),
           num_actions=(2, 3, 2), new_regrets=None, new_strategy=None):
    from holdem.delta.split import Group, SplitDelta
    from holdem.delta.shard_kernels import SHARDS

    m = 5 if regrets is None else len(regrets)
    n = int(np.sum(num_actions)) if new_regrets is None else len(new_regrets)
    cuts = np.zeros((2, SHARDS + 1), np.int64)
    cuts[0, 1:], cuts[1, 1:] = len(offsets), m         # every row "in shard 0"
    strategy_cuts = np.zeros((2, SHARDS + 1), np.int64)
    strategy_cuts[0, 1:], strategy_cuts[1, 1:] = min(1, len(offsets)), 2 if strategy is None \
        else len(strategy)
    return SplitDelta(
        regret=Group(np.asarray(offsets, np.uint32),
                     np.arange(m, dtype=np.float32) if regrets is None else regrets, cuts),
        strategy=Group(np.asarray(offsets[:1], np.uint32),
                       np.linspace(0.0, 1.0, 2, dtype=np.float32) if strategy is None
                       else strategy, strategy_cuts),
        keys=np.asarray(keys, np.int64), num_actions=np.asarray(num_actions, np.int8),
        new_regrets=np.arange(n, dtype=np.float32) - 3.0 if new_regrets is None else new_regrets,
        new_strategy=np.linspace(0.0, 1.0, n, dtype=np.float32) if new_strategy is None
        else new_strategy)


def _delta(**overrides):
    return bytes(records.encode_delta(7, 1, 3, 400, 500, True, -1.5, 9000, 0.01,
                                       _split(**overrides)))


def _patched(payload, field, value):
    """The record with header field number ``field`` set to int ``value``, raw (no checks)."""
    from holdem.delta import record_kernels as rk

    out = bytearray(payload)
    pos = rk.FIELDS_AT + 9 * field + 1
    out[pos:pos + 8] = int(value).to_bytes(8, "big", signed=True)
    return bytes(out)


def test_delta_round_trip_preserves_arrays():
    split = _split()
    payload = records.encode_delta(7, 1, 3, 400, 500, True, -1.5, 9000, 0.01, split)
    msg = records.decode_delta(bytes(payload))
    for prefix, group in (("regret", split.regret), ("strategy", split.strategy)):
        np.testing.assert_array_equal(msg[f"{prefix}_offsets"], group.offsets)
        np.testing.assert_array_equal(msg[f"{prefix}_cuts"], group.cuts)
        assert msg[f"{prefix}_offsets"].dtype == np.dtype("<u4")
    np.testing.assert_array_equal(msg["regrets"], split.regret.values)
    np.testing.assert_array_equal(msg["strategy"], split.strategy.values)
    for name in ("keys", "num_actions", "new_regrets", "new_strategy"):
        np.testing.assert_array_equal(msg[name], getattr(split, name))
    for name in records.ARRAYS:           # aligned read-only views
        assert not msg[name].flags.writeable and msg[name].ctypes.data % 8 == 0
    assert (msg["id"], msg["worker"], msg["generation"], msg["t0"], msg["iters"]) == (
        7, 1, 3, 400, 500)
    assert msg["last"] is True
    assert (msg["utility_sum"], msg["visits"], msg["seconds"]) == (-1.5, 9000, 0.01)
    assert abs(msg["sent_ns"] - time.monotonic_ns()) < 60e9
    empty = records.decode_delta(_delta(offsets=(), regrets=np.zeros(0, np.float32),
                                         strategy=np.zeros(0, np.float32), keys=(),
                                         num_actions=()))
    assert empty["keys"].size == 0 and empty["regret_offsets"].size == 0
    assert empty["regrets"].size == 0 and empty["new_regrets"].size == 0


def test_a_record_is_msgpack():
    """Any msgpack reader decodes a record: [header fields, a pad of zeros, the arrays'
    bytes]."""
    split = _split()
    payload = bytes(records.encode_delta(7, 1, 3, 400, 500, False, -1.5, 9000, 0.01, split,
                                         sweeps=12))
    fields, pad, data = msgpack.unpackb(payload, raw=False)
    assert fields[:8] == [records.VERSION, 7, 1, 3, 400, 500, 0, 9000]
    assert fields[9:12] == [-1.5, 0.01, 12]
    assert fields[12] == len(split.regret.offsets) and pad == bytes(7)
    assert len(data) == len(payload) - 216
    assert records.decode_delta(payload)["sweeps"] == 12
    assert np.frombuffer(data, "<u4", len(split.regret.offsets)).tolist() == [0, 4096]


def test_an_arena_indexes_many_records_at_once():
    arena = records.RecordArena(capacity=64)           # grows
    payloads = [_delta(), _delta(keys=(), num_actions=(), new_regrets=np.zeros(0, np.float32),
                                 new_strategy=np.zeros(0, np.float32)), _delta()[:-8]]
    for k, p in enumerate(payloads):
        arena.add(p, source=k)
    arena.drop(0)
    table = arena.index()
    from holdem.delta import record_kernels as rk
    assert table[:, rk.T_STATUS].tolist() == [records.SKIPPED, rk.OK, rk.BAD_LAYOUT]
    assert records.header(table[1])["iters"] == 500
    assert arena.arrays(1)["keys"].size == 0
    assert bytes(arena.record(1)) == payloads[1]
    arena.clear()
    assert arena.count == 0 and arena.index().shape[0] == 0


@pytest.mark.parametrize("payload", [
    pytest.param(_delta()[:-5], id="truncated"),
    pytest.param(_delta()[:1], id="truncated-to-1-byte"),
    pytest.param(_delta()[:20], id="truncated-header"),
    pytest.param(b"", id="empty"),
    pytest.param(b"\xc1\x00garbage", id="garbage"),
    pytest.param(bytes(range(256)) * 4, id="noise"),
    pytest.param(_delta() + b"\x00" * 8, id="trailing-bytes"),
    pytest.param(msgpack.packb([1, 2, 3]), id="short-array"),
    pytest.param(msgpack.packb({"v": 4, "iters": 5}, use_bin_type=True), id="a-map"),
    pytest.param(msgpack.packb([list(range(21)), b"", b""], use_bin_type=True),
                 id="variable-width-fields"),
    pytest.param(_patched(_delta(), 0, 99), id="unknown-version"),
    pytest.param(_patched(_delta(), 0, 3), id="version-3"),
    pytest.param(_patched(_delta(), 11 + 6, 4), id="counts-beyond-data"),
    pytest.param(_patched(_delta(), 11 + 6, -1), id="negative-count"),
    pytest.param(_patched(_delta(), 11 + 2, 4), id="cuts-count"),
    pytest.param(_patched(_delta(), 5, -1), id="negative-iters"),
    pytest.param(_patched(_delta(), 6, 2), id="last-not-a-flag"),
    pytest.param(_delta(num_actions=(2, 5)), id="keys-vs-num_actions"),
    pytest.param(_delta(num_actions=(2, 3, 3), new_regrets=np.zeros(7, np.float32),
                        new_strategy=np.zeros(7, np.float32)), id="sum-num_actions"),
    pytest.param(_delta(new_strategy=np.zeros(6, np.float32)), id="new-regrets-vs-strategy"),
    pytest.param(_delta(new_regrets=np.full(7, np.nan, np.float32)), id="nan-regrets"),
    pytest.param(_delta(new_strategy=np.full(7, np.inf, np.float32)), id="inf-strategy"),
])
def test_decode_delta_rejects_malformed_payloads(payload):
    with pytest.raises(records.RecordError):
        records.decode_delta(payload)


def test_ready_and_request_messages():
    assert protocol.decode_request_or_ready(protocol.encode_ready(1, 1234))["pid"] == 1234
    with pytest.raises(protocol.ProtocolError):
        protocol.decode_request_or_ready(_delta())
    req = protocol.decode_request(protocol.encode_request(4, 100, 50, 1.5, None))
    assert (req["op"], req["id"], req["t0"], req["n"], req["flush"]) == ("batch", 4, 100, 50, 50)
    req = protocol.decode_request(protocol.encode_request(4, 100, 50, 1.5, None, flush=16))
    assert req["flush"] == 16
    assert protocol.decode_request(protocol.encode_stop())["op"] == "stop"


# -- shared memory (no processes) -------------------------------------------------------------
def _dead_pid():
    pid = 999_999
    while Path(f"/proc/{pid}").exists():
        pid += 1
    return pid


def test_shared_store_generations_release_and_close(tmp_path):
    allocator = shm.SharedAllocator(directory=tmp_path)
    store = RegretStore(row_capacity=16, allocator=allocator)

    def files():
        return sorted(p.name for p in shm.list_segments(tmp_path, pid=os.getpid()))

    assert files() == [f"holdem-{os.getpid()}-{allocator.run_id}-g0.store"]

    keys = np.arange(10, dtype=np.int64)
    num_actions = np.full(10, 2, np.int8)
    store.merge(keys, num_actions, np.ones(20, np.float32), np.full(20, 0.5))
    generation, descriptor = allocator.descriptor
    reader = shm.Segment(descriptor)              # what a worker maps: same bytes, read-only
    assert not reader.arrays.regrets.flags.writeable
    np.testing.assert_array_equal(reader.arrays.row_key[:10], keys)

    more = np.arange(10, 1000, dtype=np.int64)
    store.merge(more, np.full(more.size, 3, np.int8), np.ones(3 * more.size, np.float32),
                np.zeros(3 * more.size))
    assert allocator.generation > generation
    assert len(files()) == allocator.generation + 1
    assert store.num_infosets == 1000
    np.testing.assert_array_equal(store.values_of(5)[0], [1.0, 1.0])

    allocator.release_before(allocator.generation)
    assert files() == [f"holdem-{os.getpid()}-{allocator.run_id}-g{allocator.generation}.store"]
    np.testing.assert_array_equal(reader.arrays.row_key[:10], keys)  # unlinked, still mapped
    reader.close()

    newest = shm.Segment(allocator.descriptor[1])
    np.testing.assert_array_equal(newest.arrays.row_key[:1000], np.arange(1000))
    newest.close()
    allocator.close()
    assert files() == [] and list(tmp_path.iterdir()) == []


def test_clean_stale_removes_only_dead_pids_files(tmp_path):
    dead = tmp_path / f"holdem-{_dead_pid()}-0123456789ab-g0.store"
    live = tmp_path / f"holdem-{os.getpid()}-0123456789ab-g2.store"
    other = tmp_path / f"notholdem-{_dead_pid()}-0123456789ab-g0.store"
    for path in (dead, live, other):
        path.write_bytes(b"\0" * 64)
    assert shm.clean_stale(tmp_path) == [dead]
    assert not dead.exists() and live.exists() and other.exists()
