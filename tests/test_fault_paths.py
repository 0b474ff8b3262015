"""Failure paths of a run that no other test reached (issue 26): a worker's bad payloads, the
regret floor and pruning with workers, SIGTERM, a second Ctrl-C, Ctrl-C to the whole process
group, a background checkpoint the machine refuses, a bit-identical resume through
:func:`holdem.training.train` and a refused No-Limit resume.

Worker faults are injected as in ``tests/test_faults.py``: a driver script patches the code
before running the command line, with the ``fork`` start method so that workers run the patched
code; the main process's code is patched the same way where a test needs to hold it at a given
moment (a marker file tells the test it is there). Runs keep their shared-memory files in a
directory of their own, and this process is the subreaper of their processes, so whatever a run
leaves behind is seen.
"""

import errno
import hashlib
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import yaml

from holdem import checkpoint as ckpt
from holdem import config as config_mod
from holdem import training
from holdem.delta import records
from holdem.delta.merge import RowMerger, merge_one
from holdem.delta.split import Group, SplitDelta
from holdem.games import make_game
from holdem.runtime import protocol
from holdem.runtime.executor import Batch, RunView
from holdem.runtime.pool import Pool
from holdem.runtime.process import ProcessExecutor
from holdem.runtime.worker import BatchRunner
from holdem.solver.solver import DcfrSchedule
from holdem.store.store import RegretStore, read_only_view
from test_faults import assert_nothing_left, driver, fault_env, orphans, shm_env  # noqa: F401
from test_runtime import LEDUC_INFOSETS, ROOT, launch, leduc_config, restarts  # noqa: F401

UNKNOWN_KEY = 10 ** 12              # no infoset of Leduc (nor of any game here)


# -- bad payloads from a worker, in the executor (no processes) -----------------------------------
class _ScriptedPool(Pool):
    """A pool whose workers' frames are scripted (:meth:`feed`): :meth:`wait` reads them into
    the inbox as :class:`holdem.runtime.pool.ProcessPool` reads its pipes. Requests are kept
    decoded; a restarted worker's replacement sends its ready message."""

    def __init__(self, num_workers, first_frames=None):
        self.num_workers = num_workers
        self.first_frames = first_frames or {}
        self.frames, self.sent, self.restarted = [], [], []

    def start(self):
        for i in range(self.num_workers):
            self.feed(i, self.first_frames.get(i, protocol.encode_ready(i, 1000 + i)))

    def feed(self, worker, payload):
        self.frames.append((worker, bytes(payload)))

    def submit(self, i, payload):
        self.sent.append((i, protocol.decode_request(payload)))

    def wait(self, timeout, inbox=None, stall=None):
        frames, self.frames = self.frames, []
        events = []
        for i, payload in frames:
            view = inbox.reserve(i, len(payload))
            view[:] = payload
            inbox.received(i, view)
            events.append((i, view))
        return events

    def restart(self, i):
        self.restarted.append(i)
        self.feed(i, protocol.encode_ready(i, 2000 + i))

    def close(self):
        pass


@pytest.fixture
def scripted(tmp_path, monkeypatch):
    """``scripted(first_frames=None)``: (executor, pool, store) of a started two-worker
    ProcessExecutor on Leduc whose pool is a :class:`_ScriptedPool`."""
    monkeypatch.setenv("HOLDEM_SHM_DIR", str(tmp_path))
    config = config_mod.with_overrides(config_mod.default_for_game("leduc"),
                                       train={"iters": 10_000, "num_workers": 2})
    game = make_game(config)
    made = []

    def start(first_frames=None):
        pool = _ScriptedPool(2, first_frames)
        executor = ProcessExecutor(game, config, 2, pool=pool)
        made.append(executor)
        store = RegretStore(game.initial_rows, allocator=executor.allocator)
        view = RunView(store=store, game=game, config=config, dcfr=DcfrSchedule(config.solver),
                       rng_state=None, iterations=lambda: 0, next_batch_id=lambda: 2,
                       train_seconds=lambda: 0.0, elapsed=lambda: 0.0, info=lambda m: None)
        executor.start(view, types.SimpleNamespace(signal=None))
        return executor, pool, store

    yield start
    for executor in made:
        executor.close()
    assert list(tmp_path.iterdir()) == []


def _record(game, store, batch, worker):
    """A worker's valid delta record of all of ``batch`` (one flush) against ``store``."""
    runner = BatchRunner(game, config_mod.default_for_game("leduc"))
    read = read_only_view(store.arrays)
    utility, visits = runner.run(read, batch.t0, batch.n, 0.0)
    return bytes(runner.take_delta(read, batch.id, worker, 0, batch.t0, batch.n, True, utility,
                                   visits, 0.01))


def _with_unknown_key(record):
    """``record`` with one more new row, whose key is no infoset of the game."""
    msg = records.decode_delta(record)
    split = SplitDelta(
        Group(msg["regret_offsets"], msg["regrets"], msg["regret_cuts"]),
        Group(msg["strategy_offsets"], msg["strategy"], msg["strategy_cuts"]),
        np.append(msg["keys"], np.int64(UNKNOWN_KEY)), np.append(msg["num_actions"], np.int8(2)),
        np.append(msg["new_regrets"], np.zeros(2, np.float32)),
        np.append(msg["new_strategy"], np.zeros(2, np.float32)))
    return bytes(records.encode_delta(msg["id"], msg["worker"], msg["generation"], msg["t0"],
                                      msg["iters"], msg["last"], msg["utility_sum"],
                                      msg["visits"], msg["seconds"], split))


def _cut(record):
    return record[:len(record) // 2]


def _snapshot(store):
    return [np.array(a) for a in store.used()]


def _assert_same(store, arrays):
    for got, want in zip(store.used(), arrays):
        np.testing.assert_array_equal(got, want)


def test_a_worker_idle_longer_than_worker_timeout_is_not_restarted_when_it_gets_work(
        scripted, capsys):
    """Issue 40: silence is timed from a worker's last message, and an idle worker sends none;
    ``last_heard`` was not reset when it was handed a batch, so a worker idle past
    ``worker_timeout`` (a pause of the loop: a long evaluation, a checkpoint) was restarted at
    the next merge pass as hung. It counts from the batch; a worker that then stays silent
    past the timeout is still replaced."""
    executor, pool, _ = scripted()
    timeout = executor.tc.worker_timeout
    for w in executor.workers:
        w.last_heard -= timeout + 5               # idle, with nothing outstanding, that long
    executor.results(0.0)
    assert pool.restarted == []                   # idle is not hung
    executor.submit(Batch(0, 0, 400, 0.0))
    assert [i for i, _ in pool.sent] == [0]
    executor.results(0.0)
    assert pool.restarted == [] and "no answer" not in capsys.readouterr().err
    executor.workers[0].last_heard -= timeout + 5     # now silent that long with a batch
    executor.results(0.0)
    assert pool.restarted == [0] and "worker 0: no answer for" in capsys.readouterr().err


BATCHES = [Batch(0, 0, 400, 0.0), Batch(1, 400, 400, 0.0)]
BAD_PAYLOADS = {
    # worker 0's answer to its batch 0, cut in half: not a record
    "garbled": (lambda game, store: _cut(_record(game, store, BATCHES[0], 0)),
                "rejected a malformed payload (its layout does not follow the protocol"),
    # a valid record from worker 0 of batch 1, which worker 1 holds
    "batch-not-given": (lambda game, store: _record(game, store, BATCHES[1], 0),
                        "rejected a malformed payload (an answer to a batch it was not given "
                        "(1))"),
    # worker 0's answer to its batch 0, naming an infoset the game does not have
    "unknown-infoset": (lambda game, store: _with_unknown_key(_record(game, store, BATCHES[0], 0)),
                        "rejected a malformed payload (infosets that are not in the game)"),
}


@pytest.mark.parametrize("kind", sorted(BAD_PAYLOADS))
def test_a_bad_payload_changes_nothing_restarts_its_worker_and_reissues_its_batch(
        scripted, capsys, kind):
    """One merge pass holds worker 0's bad payload and worker 1's good answer: the store gets
    the good one alone, worker 0 is replaced and its batch goes, whole, to the free worker,
    whose answer makes the 800 iterations handed out exactly."""
    executor, pool, store = scripted()
    game = executor.game
    for batch in BATCHES:
        executor.submit(batch)
    assert [(i, r["id"], r["t0"], r["n"]) for i, r in pool.sent] == [(0, 0, 0, 400),
                                                                     (1, 1, 400, 400)]
    make_bad, why = BAD_PAYLOADS[kind]
    bad = make_bad(game, store)
    good = _record(game, store, BATCHES[1], 1)
    if kind == "unknown-infoset":
        assert not game.keys_match(np.array([UNKNOWN_KEY]), np.array([2], np.int8))
    merger = RowMerger(1)
    try:
        expected = RegretStore.copy_of(store.arrays)
        merge_one(expected, merger, good, None, game=game)     # the good record alone
        pool.feed(0, bad)
        pool.feed(1, good)
        results = executor.results(0.0)
        assert [r.iters for r in results] == [400]              # worker 1's batch only
        _assert_same(store, _snapshot(expected))
        assert pool.restarted == [0] and executor.stats["restarts"] == 1
        err = capsys.readouterr().err
        assert f"worker 0: {why}" in err, err
        assert "re-issuing 400 iterations of 1 batch(es)" in err
        # Batch 0 went to worker 1, the one ready with room: the same iterations again.
        assert [(i, r["id"], r["t0"], r["n"]) for i, r in pool.sent[2:]] == [(1, 0, 0, 400)]
        assert executor.in_flight() == 1
        again = _record(game, store, BATCHES[0], 1)
        merge_one(expected, merger, again, None, game=game)
        pool.feed(1, again)
        assert [r.iters for r in executor.results(0.0)] == [400]
        assert executor.in_flight() == 0 and executor.queue == []
        _assert_same(store, _snapshot(expected))
        assert UNKNOWN_KEY not in set(store.used()[0].tolist())
    finally:
        merger.close()


def test_a_garbled_ready_message_restarts_the_worker_before_training(scripted, capsys):
    executor, pool, store = scripted(first_frames={0: b"\x93\xc1 not a ready message"})
    assert pool.restarted == [0] and executor.stats["restarts"] == 1
    assert all(w.ready for w in executor.workers)           # the replacement is ready
    assert "worker 0: rejected a malformed ready message (not valid msgpack" in \
        capsys.readouterr().err
    assert store.num_infosets == 0


# -- bad payloads from a worker, in a run ---------------------------------------------------------
SPOIL_FIRST_RECORD = """
from holdem.delta import records
from holdem.delta import record_kernels as rk
from holdem.delta.split import Group, SplitDelta
import numpy as np
_serve = worker.BatchServer.serve

def garbled(record):
    return record[:len(record) // 2]

def batch_not_given(record):
    out = bytearray(record)
    at = rk.FIELDS_AT + 9 * 1 + 1          # header field 1: the batch id
    batch = int.from_bytes(out[at:at + 8], "big", signed=True)
    out[at:at + 8] = (batch + 1000).to_bytes(8, "big", signed=True)
    return bytes(out)

def unknown_infoset(record):
    msg = records.decode_delta(record)
    split = SplitDelta(
        Group(msg["regret_offsets"], msg["regrets"], msg["regret_cuts"]),
        Group(msg["strategy_offsets"], msg["strategy"], msg["strategy_cuts"]),
        np.append(msg["keys"], np.int64(10 ** 12)), np.append(msg["num_actions"], np.int8(2)),
        np.append(msg["new_regrets"], np.zeros(2, np.float32)),
        np.append(msg["new_strategy"], np.zeros(2, np.float32)))
    return bytes(records.encode_delta(msg["id"], msg["worker"], msg["generation"], msg["t0"],
                                      msg["iters"], msg["last"], msg["utility_sum"],
                                      msg["visits"], msg["seconds"], split))

SPOIL = {"garbled": garbled, "batch-not-given": batch_not_given,
         "unknown-infoset": unknown_infoset}[os.environ["SPOIL"]]

def serve(self, request, emit=None):
    marker = os.path.join(FAULT_DIR, "spoiled")
    if self.worker_index != 0 or os.path.exists(marker):
        return _serve(self, request, emit)
    open(marker, "w").close()
    first = [True]

    def spoil_first(record):
        if first[0]:
            first[0] = False
            record = SPOIL(bytes(record))
        emit(record)
    return _serve(self, request, spoil_first)
worker.BatchServer.serve = serve
"""
RUN_REASONS = {"garbled": "rejected a malformed payload (its layout does not follow the protocol",
               "batch-not-given": "rejected a malformed payload (an answer to a batch it was "
                                  "not given (",
               "unknown-infoset": "rejected a malformed payload (infosets that are not in the "
                                  "game)"}


@pytest.mark.parallel
@pytest.mark.parametrize("kind", sorted(RUN_REASONS))
def test_a_run_replaces_a_worker_that_sends_a_bad_payload_and_its_count_stays_exact(
        launch, tmp_path, orphans, kind):
    """Worker 0's first delta is spoiled, once: it is replaced, nothing of the payload reaches
    the store (no unknown infoset), and the run ends at exactly its iteration total."""
    directory, env = fault_env(tmp_path)
    iters = 300_000
    # worker_timeout 600: on a busy machine a worker silent past the default 10 s would be
    # restarted too, and the count below is of the one planted fault.
    config = leduc_config(tmp_path / "c.yaml", worker_timeout=600)
    run = launch("run", "--config", config, "--iters", iters, "--num-workers", 2,
                 "--start-method", "fork", "--logdir", tmp_path / "log",
                 command=driver(tmp_path, SPOIL_FIRST_RECORD), env={**env, "SPOIL": kind})
    assert run.finish(timeout=180) == 0, run.stderr
    done_iters, infosets, path = run.done()
    assert (done_iters, infosets) == (iters, LEDUC_INFOSETS), run.stderr
    assert ckpt.load(path).iterations == iters
    assert restarts(run.stderr) == 1, run.stderr
    assert f"worker 0: {RUN_REASONS[kind]}" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
    assert_nothing_left(run, directory, orphans)


# -- the regret floor and pruning with workers ----------------------------------------------------
FLOOR = -1.0
FLOOR_ITERS = 200_000
FLOOR_INTERVAL = 50_000
VISITS_RE = re.compile(r"^decision-node visits: [\d,]+/s \(([\d.]+) per iteration\)", re.M)


def _floor_config(path, prune=True):
    """Leduc with linear weighting (weight t // 50,000 + 1: 4 in the last quarter), a regret
    floor of -1 (so -4 by the end, in the store's units) and, with ``prune``, pruning below
    0.9 x the floor from iteration 20,000."""
    data = yaml.safe_load((ROOT / "configs" / "leduc.yaml").read_text())
    data["solver"] = {"sampling": "external", "weighting": "linear",
                      "discount_interval": FLOOR_INTERVAL, "regret_floor": FLOOR}
    if prune:
        data["solver"].update(prune=True, prune_after=20_000, prune_threshold=0.9 * FLOOR)
    Path(path).write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parallel
def test_workers_keep_the_regret_floor_scaled_by_the_iteration_weight_and_prune(launch,
                                                                                tmp_path):
    """Merged worker deltas are clamped at the floor times the weight of the iterations being
    merged, as the in-process kernels clamp: in both runs no regret is below -4 and some sit
    exactly on it (the floor is hit, not merely respected by regrets that never fell). Workers
    prune like the in-process run: fewer decision-node visits per iteration than without
    pruning (measured: 20-21 against 23)."""
    final_floor = np.float32(FLOOR * ((FLOOR_ITERS - 1) // FLOOR_INTERVAL + 1))
    assert final_floor == -4.0
    visits = {}
    for name, workers, prune in (("workers", 2, True), ("in-process", 1, True),
                                 ("workers-unpruned", 2, False)):
        config = _floor_config(tmp_path / f"{name}.yaml", prune)
        run = launch(name, "--config", config, "--iters", FLOOR_ITERS, "--num-workers", workers,
                     "--logdir", tmp_path / name)
        assert run.finish(timeout=180) == 0, run.stderr
        visits[name] = float(VISITS_RE.search(run.stderr)[1])
        regrets = ckpt.load(run.done()[2]).arrays["regrets"]
        assert regrets.min() >= final_floor, (name, regrets.min())
        if prune:
            assert np.count_nonzero(regrets == final_floor) > 0, (name, np.sort(regrets)[:10])
    assert visits["workers"] < 0.96 * visits["workers-unpruned"], visits
    assert visits["in-process"] < 0.96 * visits["workers-unpruned"], visits


# -- SIGTERM --------------------------------------------------------------------------------------
@pytest.mark.parallel
def test_sigterm_while_training_writes_a_final_checkpoint_and_exits_0(launch, tmp_path, orphans):
    """SIGTERM stops a run as the first Ctrl-C does: a final checkpoint that loads, the done
    line, exit 0, no process and no shared-memory file left."""
    directory, env = shm_env(tmp_path)
    logdir = tmp_path / "log"
    config = leduc_config(tmp_path / "c.yaml", progress_interval=0.2)
    run = launch("run", "--config", config, "--iters", 500_000_000, "--num-workers", 2,
                 "--logdir", logdir, env=env)
    # Every Leduc infoset is in the checkpoint only once enough iterations ran: after the
    # first 1,024 (the first progress line), 2 in 12 seeds of in-process training lack one.
    run.wait_training(timeout=180, iterations=20_000)
    os.kill(run.pid, signal.SIGTERM)
    assert run.finish() == 0, run.stderr
    assert "received SIGTERM: writing a final checkpoint, then stopping" in run.stderr
    iterations, infosets, path = run.done()
    assert 0 < iterations < 500_000_000 and infosets == LEDUC_INFOSETS
    assert ckpt.load(path).iterations == iterations
    assert ckpt.resolve(logdir) == path
    assert "Traceback" not in run.stderr
    assert_nothing_left(run, directory, orphans)


# -- a second Ctrl-C ------------------------------------------------------------------------------
# The main process notes each signal its StopFlag handled in a marker file, and holds either the
# final checkpoint write or the shutdown of the workers until the second one was handled.
COUNT_SIGNALS = """
from holdem import training
_handle = training.StopFlag._handle

def handle(self, signum, frame):
    try:
        _handle(self, signum, frame)
    finally:
        open(os.path.join(FAULT_DIR, f"signal-{time.monotonic_ns()}"), "w").close()
training.StopFlag._handle = handle

def hold_until_two_signals(name):
    open(os.path.join(FAULT_DIR, name), "w").close()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len(
            [n for n in os.listdir(FAULT_DIR) if n.startswith("signal-")]) < 2:
        time.sleep(0.02)
"""
HOLD_THE_FINAL_CHECKPOINT = COUNT_SIGNALS + """
from holdem import checkpoint
_save = checkpoint.save

def save(path, header, arrays):
    hold_until_two_signals("saving")
    return _save(path, header, arrays)
checkpoint.save = save
"""
HOLD_THE_SHUTDOWN = COUNT_SIGNALS + """
from holdem.runtime import process
_close = process.ProcessExecutor.close

def close(self):
    hold_until_two_signals("closing")
    _close(self)
process.ProcessExecutor.close = close
"""


def _interrupt_twice(launch, tmp_path, patch, marker):
    directory, env = fault_env(tmp_path)
    config = leduc_config(tmp_path / "c.yaml", progress_interval=0.2)
    run = launch("run", "--config", config, "--iters", 500_000_000, "--num-workers", 2,
                 "--start-method", "fork", "--logdir", tmp_path / "log",
                 command=driver(tmp_path, patch), env=env)
    run.wait_training(timeout=180)
    os.kill(run.pid, signal.SIGINT)
    held = tmp_path / "faults" / marker
    assert run.wait_until(held.exists, 120), run.stderr
    os.kill(run.pid, signal.SIGINT)
    return run, directory


@pytest.mark.parallel
def test_a_second_ctrl_c_during_the_final_checkpoint_stops_at_once(launch, tmp_path, orphans):
    """StopFlag: the first Ctrl-C stops the loop with a final checkpoint; a second one while it
    is written raises KeyboardInterrupt at once (exit 130, no checkpoint), and the workers and
    shared-memory files are still cleaned up."""
    run, directory = _interrupt_twice(launch, tmp_path, HOLD_THE_FINAL_CHECKPOINT, "saving")
    assert run.finish() == 130, run.stderr
    assert run.stderr.count("received SIGINT: writing a final checkpoint") == 1, run.stderr
    assert run.stderr.strip().splitlines()[-1].endswith(": interrupted"), run.stderr
    assert "Traceback" not in run.stderr and run.stdout == ""
    logdir = tmp_path / "log"
    assert not logdir.exists() or ckpt.list_checkpoints(ckpt.checkpoint_dir(logdir)) == []
    assert_nothing_left(run, directory, orphans)


@pytest.mark.parallel
def test_a_second_ctrl_c_during_shutdown_is_only_noted(launch, tmp_path, orphans):
    """A second Ctrl-C while the workers are being stopped (after the final checkpoint) must
    not cut the cleanup short: it is noted, and the run ends as after one."""
    run, directory = _interrupt_twice(launch, tmp_path, HOLD_THE_SHUTDOWN, "closing")
    assert run.finish() == 0, run.stderr
    iterations, _, path = run.done()
    assert iterations > 0 and ckpt.load(path).iterations == iterations
    assert run.stderr.count("received SIGINT") == 1, run.stderr
    assert "Traceback" not in run.stderr and "interrupted" not in run.stderr
    assert_nothing_left(run, directory, orphans)


# -- Ctrl-C to the whole process group ------------------------------------------------------------
@pytest.mark.parallel
def test_ctrl_c_to_the_process_group_stops_the_run_once_and_no_worker(launch, tmp_path,
                                                                      orphans):
    """A terminal's Ctrl-C reaches every process of the group: workers ignore it (none dies,
    none is replaced), the main process stops with one final checkpoint."""
    directory, env = shm_env(tmp_path)
    logdir = tmp_path / "log"
    config = leduc_config(tmp_path / "c.yaml", progress_interval=0.2, worker_timeout=600)
    run = launch("run", "--config", config, "--iters", 500_000_000, "--num-workers", 2,
                 "--logdir", logdir, env=env)
    run.wait_training(timeout=180, iterations=20_000)       # every infoset visited
    assert os.getpgid(run.pid) == run.pid                   # it leads its own group
    os.killpg(run.pid, signal.SIGINT)
    assert run.finish() == 0, run.stderr
    assert run.stderr.count("received SIGINT") == 1, run.stderr
    iterations, infosets, path = run.done()
    assert iterations > 0 and infosets == LEDUC_INFOSETS
    assert ckpt.list_checkpoints(ckpt.checkpoint_dir(logdir)) == [path]
    assert ckpt.load(path).iterations == iterations
    assert restarts(run.stderr) == 0 and "starting a replacement" not in run.stderr
    assert "Traceback" not in run.stderr and "KeyboardInterrupt" not in run.stderr
    assert_nothing_left(run, directory, orphans)


# -- a background checkpoint the machine refuses --------------------------------------------------
def test_a_refused_background_checkpoint_costs_only_itself_and_the_run_goes_on(
        tmp_path, monkeypatch, capsys):
    """The second of a run's checkpoints (one after every batch) meets a full disk: a warning
    names it and the newest one written, that one stays as it was, and the run trains on to its
    total and writes the later checkpoints and the final one."""
    save, calls = ckpt.save, []

    def refuse_the_second(path, header, arrays):
        calls.append(Path(path).name)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return save(path, header, arrays)

    monkeypatch.setattr(ckpt, "save", refuse_the_second)
    iters = 400_000
    config = config_mod.with_overrides(
        config_mod.default_for_game("leduc"),
        train={"iters": iters, "num_workers": 1, "snapshot_interval": 1e-6,
               "keep_checkpoints": 1000})
    result = training.train(config, tmp_path / "log", progress=False)
    assert result.iterations == iters
    assert len(calls) >= 4, calls                  # refused, then at least one more and the final
    err = capsys.readouterr().err
    assert (f"warning: could not write checkpoint {calls[1]}: [Errno 28] No space left on "
            f"device; the newest checkpoint is {calls[0]} and the next snapshot tries again"
            ) in err, err
    assert err.count("warning: could not write checkpoint") == 1, err
    directory = ckpt.checkpoint_dir(tmp_path / "log")
    assert sorted(os.listdir(directory)) == sorted(set(calls) - {calls[1]})   # no temporary file
    for path in ckpt.list_checkpoints(directory):
        assert path.name == ckpt.checkpoint_name(ckpt.load(path).iterations)
    assert ckpt.resolve(tmp_path / "log") == result.checkpoint
    assert ckpt.load(result.checkpoint).iterations == iters


# -- bit-identical resume through train() ---------------------------------------------------------
def _content(path):
    """(header, arrays) of what a checkpoint says about training, as tools/checkpoint_digest.py
    digests it, less the store's allocated bytes (header ``stats.store_bytes``): a store rebuilt
    from a checkpoint is allocated anew, with another capacity for the same rows."""
    spec = importlib.util.spec_from_file_location("checkpoint_digest",
                                                  ROOT / "tools" / "checkpoint_digest.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    loaded = ckpt.load(path)
    header = {k: v for k, v in loaded.header.items() if k not in tool.VARYING}
    header["stats"] = {k: v for k, v in header["stats"].items() if k != "store_bytes"}
    return header, loaded.arrays


def test_train_resumed_halfway_writes_the_checkpoint_of_one_uninterrupted_run(tmp_path):
    """In-process, a fixed seed: N iterations in one call of train() and N/2 + N/2 across a
    resume leave checkpoints with the same content (store, counters, DCFR sweeps, RNG state).
    The halfway point is not on a DCFR interval (Leduc sweeps every 1,000 iterations)."""
    n = 21_000

    def config(iters):
        return config_mod.with_overrides(config_mod.default_for_game("leduc"),
                                         train={"iters": iters, "seed": 7, "num_workers": 1})

    whole = training.train(config(n), tmp_path / "whole", progress=False)
    half = training.train(config(n // 2), tmp_path / "halves", progress=False)
    assert half.iterations == n // 2
    resumed = training.train(config(n), tmp_path / "halves", resume_from=tmp_path / "halves",
                             progress=False)
    assert whole.iterations == resumed.iterations == n
    (header, arrays), (want_header, want_arrays) = _content(resumed.checkpoint), \
        _content(whole.checkpoint)
    assert header == want_header
    assert sorted(arrays) == sorted(want_arrays)
    for name, array in arrays.items():
        assert array.dtype == want_arrays[name].dtype, name
        np.testing.assert_array_equal(array, want_arrays[name], err_msg=name)


# -- a No-Limit resume whose game or actions changed ----------------------------------------------
@pytest.mark.parametrize("section,key,value,stored", [
    ("actions", "flop", [[0.33, 1.0], [1.0]], "[[0.5, 1.0], [1.0]]"),
    ("game", "stack", 200.0, "100.0"),
])
def test_resuming_with_other_bet_sizes_or_game_is_refused_naming_the_change(
        hunl_run, tmp_path, section, key, value, stored):
    """Resuming the hunl_default run (into its own logdir) with a config whose flop bet sizes,
    or stack, differ: one error line naming the key and both values, exit 2, and the logdir's
    checkpoint as it was."""
    logdir = tmp_path / "run"
    shutil.copytree(hunl_run, logdir)
    [path] = ckpt.list_checkpoints(ckpt.checkpoint_dir(logdir))
    before = sorted(os.listdir(path.parent)), hashlib.sha256(path.read_bytes()).hexdigest()
    data = yaml.safe_load((ROOT / "configs" / "hunl_default.yaml").read_text())
    data[section][key] = value
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(data))
    proc = subprocess.run([sys.executable, "-m", "holdem.cli.train_blueprint", "--config",
                           str(changed), "--iters", "40000", "--logdir", str(logdir),
                           "--resume-from", str(logdir), "--quiet"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and proc.stdout == "", proc.stderr
    assert f"{section}.{key}: checkpoint has {stored}, the run {value!r}; a resumed run must " \
           "keep its game and abstraction" in lines[0], lines[0]
    assert (sorted(os.listdir(path.parent)), hashlib.sha256(path.read_bytes()).hexdigest()) == \
        before
