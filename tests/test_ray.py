"""The Ray backend on a real two-node Ray cluster on this machine (ray.cluster_utils.Cluster):
workers on both nodes, the second node's workers reading its store replica. Needs the ray extra
(pip install -e '.[dev,ray]', as .ci/run installs it); skipped without it."""

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from holdem import checkpoint as ckpt
from holdem import config as config_mod
from holdem.analysis.blueprint import load_profile
from holdem.analysis.exact import ExactEvaluator
from holdem.games import make_game
from holdem.runtime import protocol, shm
from holdem.runtime.backends import make_executor, resolved_workers
from holdem.runtime.pool import WorkerFailure
from holdem.runtime.process import ProcessExecutor
from holdem.runtime.ray_pool import RayPool
from holdem.training import train

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

pytestmark = [pytest.mark.parallel, pytest.mark.ray]

ROOT = Path(__file__).resolve().parents[1]
LEDUC_INFOSETS = 288


@pytest.fixture(scope="module")
def shm_dir(tmp_path_factory):
    """Every node's shared-memory files go here (the nodes inherit it), so a test sees them."""
    path = tmp_path_factory.mktemp("shm")
    old = os.environ.get("HOLDEM_SHM_DIR")
    os.environ["HOLDEM_SHM_DIR"] = str(path)
    yield path
    if old is None:
        del os.environ["HOLDEM_SHM_DIR"]
    else:
        os.environ["HOLDEM_SHM_DIR"] = old


@pytest.fixture(scope="module")
def cluster(shm_dir):
    """Two nodes of two CPUs: the head (the driver's node: one worker, it keeps a CPU for the
    main process) and a second node (two workers, reading its replica)."""
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False})
    second = c.add_node(num_cpus=2)
    ray.init(address=c.address, include_dashboard=False, logging_level="ERROR")
    c.wait_for_nodes()
    c.second = second
    yield c
    ray.shutdown()
    c.shutdown()


def leduc(**train):
    return config_mod.with_overrides(config_mod.default_for_game("leduc"), train=train)


def ray_executor(config, workers):
    config = config_mod.with_overrides(config, train={"backend": "ray", "num_workers": workers})
    return make_executor(make_game(config), config)


def exploitability(logdir, config):
    return ExactEvaluator(make_game(config)).exploitability(load_profile(logdir).average)


def holdem_actors():
    return [a for a in ray.util.list_named_actors(all_namespaces=True)
            if a["name"].startswith("holdem-")]


def wait_for(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


TRAIN_TAGS = {"train/iters_per_sec", "train/iterations", "train/infosets", "train/store_bytes",
              "train/delta_bytes_per_iter", "train/merge_ms", "train/worker_idle_frac",
              "train/visits_per_iter", "train/utility_mean"}
RAY_TAGS = {"ray/replica_lag_batches", "ray/cross_node_bytes_per_iter"}


def scalar_tags(logdir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(logdir), size_guidance={"scalars": 0})
    acc.Reload()
    return set(acc.Tags()["scalars"])


def nodes_of(executor):
    home = executor.pool.home
    return [node == home for node in executor.pool.worker_node]


def test_leduc_on_two_nodes_converges_like_in_process(cluster, shm_dir, tmp_path):
    # One worker per node: the head's reads the main store, the other's its node's replica.
    # Sums over two seeds on both sides (one run's exploitability varies by 10-15%).
    # In-process (exact for a seed): 0.00854 and 0.00982. Ray, the ratio of the sums on the
    # 2-core machine: earlier 1.08x (three runs) and 1.32x (one CI run); 1.37x and 1.47x with
    # a soak and a benchmark beside it (load average 9); 1.52x and 1.53x with two busy loops
    # more (load 11); the worst single seed of 16 such runs 1.64x. 8 M iterations instead of
    # 4 M measured the same (1.56x): the replica's lag costs a factor that more iterations do
    # not shrink, so the bound comes from these measurements: 2.5x, 1.6 times the worst sum
    # measured, while a replica that never applies a delta scores 6.6x (0.0619 and 0.0599;
    # 8.5x once).
    iters = 4_000_000
    serial, parallel = [], []
    for seed in (0, 1):
        config = leduc(iters=iters, seed=seed)
        train(config, tmp_path / f"serial{seed}", progress=False)
        serial.append(exploitability(tmp_path / f"serial{seed}", config))
        # worker_timeout 600: a loaded machine can leave a worker silent past the default 10 s,
        # which restarts it (by design), and this run must have none.
        executor = ray_executor(config_mod.with_overrides(config, train={"worker_timeout": 600}),
                                2)
        result = train(config, tmp_path / f"ray{seed}", progress=False, executor=executor)
        assert (result.iterations, result.infosets) == (iters, LEDUC_INFOSETS)
        assert sorted(nodes_of(executor)) == [False, True]      # a worker on each node
        assert executor.pool.stats["replicas_started"] == 1
        assert executor.pool.stats["broadcast_bytes"] > 0
        assert executor.stats["restarts"] == 0
        line = executor.pool.summary(iters, 10.0)[0]
        assert "1 of 2 workers on other nodes" in line and "1 replica(s)" in line, line
        parallel.append(exploitability(tmp_path / f"ray{seed}", config))
        assert holdem_actors() == [] and list(shm_dir.iterdir()) == []
    assert sum(parallel) < 2.5 * sum(serial), (parallel, serial)


def _kill_during_run(executor, action, min_iters=200_000):
    """Run ``action()`` on a thread once every worker is ready and the run merged
    ``min_iters``; returns the thread (the run itself stays on the main thread: signals)."""
    def go():
        wait_for(lambda: executor.view is not None and executor.workers
                 and all(w.ready for w in executor.workers)
                 and executor.view.iterations() >= min_iters)
        action()

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    return thread


def test_killed_actor_is_replaced_and_count_stays_exact(cluster, shm_dir, tmp_path):
    iters = 2_000_000
    config = leduc(iters=iters)
    executor = ray_executor(config, 3)
    killed = []

    def kill_a_remote_worker():
        i = nodes_of(executor).index(False)
        killed.append(i)
        ray.kill(executor.pool.actors[i], no_restart=True)

    thread = _kill_during_run(executor, kill_a_remote_worker)
    result = train(config, tmp_path / "run", progress=False, executor=executor)
    thread.join(10)
    assert killed and executor.stats["restarts"] >= 1
    assert (result.iterations, result.infosets) == (iters, LEDUC_INFOSETS)
    assert ckpt.load(result.checkpoint).iterations == iters
    assert executor.pool.incarnation[killed[0]] >= 1
    assert exploitability(tmp_path / "run", config) < 0.1
    assert holdem_actors() == [] and list(shm_dir.iterdir()) == []


def test_node_that_leaves_mid_run_has_its_work_moved(cluster, shm_dir, tmp_path):
    third = cluster.add_node(num_cpus=2)
    cluster.wait_for_nodes()
    iters = 2_000_000
    config = leduc(iters=iters)
    executor = ray_executor(config, 5)          # 1 on the head, 2 on each other node
    gone = []

    def remove_third():
        gone.append([i for i, n in enumerate(executor.pool.worker_node)
                     if n == third.node_id])
        cluster.remove_node(third)

    thread = _kill_during_run(executor, remove_third)
    result = train(config, tmp_path / "run", progress=False, executor=executor)
    thread.join(10)
    assert gone and len(gone[0]) == 2, gone
    assert (result.iterations, result.infosets) == (iters, LEDUC_INFOSETS)
    assert executor.stats["restarts"] >= 2
    assert third.node_id not in executor.pool.worker_node       # moved to the other nodes
    assert third.node_id not in executor.pool.nodes             # its replica forgotten
    assert exploitability(tmp_path / "run", config) < 0.1
    assert holdem_actors() == []
    # The removed node's replica was killed with it (its files stay until a later run on that
    # node cleans up); the main process's and the surviving nodes' files are gone.
    assert shm.list_segments(shm_dir, pid=os.getpid()) == []
    for path in shm_dir.iterdir():
        path.unlink()


def test_resume_ray_to_process_and_back_keeps_counts_and_schedule(cluster, shm_dir, tmp_path):
    n = 300_000

    def chain(backends, root):
        headers = []
        for k, backend in enumerate(backends):
            config = leduc(iters=(k + 1) * n, num_workers=2, batch_size=1000, backend=backend,
                           tensorboard=True, log_interval=0.1)
            resume = None if k == 0 else root / str(k - 1)
            result = train(config, root / str(k), resume_from=resume, progress=False)
            assert result.iterations == (k + 1) * n
            headers.append(ckpt.load(result.checkpoint).header)
            # The same TensorBoard tags; Ray runs add their own.
            tags = scalar_tags(root / str(k))
            assert TRAIN_TAGS <= tags, (backend, TRAIN_TAGS - tags)
            assert (RAY_TAGS <= tags) == (backend == "ray"), (backend, tags)
        return headers

    mixed = chain(["ray", "process", "ray"], tmp_path / "mixed")
    plain = chain(["process", "process", "process"], tmp_path / "plain")
    for a, b in zip(mixed, plain):
        assert a["iterations"] == b["iterations"]
        assert a["schedule"] == b["schedule"]
        assert a["schedule"]["next_batch"] == a["iterations"] // 1000
    assert holdem_actors() == [] and list(shm_dir.iterdir()) == []


def test_sigint_on_the_driver_leaves_no_actors_and_no_files(cluster, shm_dir, tmp_path):
    logdir = tmp_path / "run"
    env = {**os.environ, "HOLDEM_SHM_DIR": str(shm_dir)}
    err_path = tmp_path / "stderr.txt"
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "holdem.cli.train_blueprint", "--game", "leduc",
             "--time-budget", "120", "--num-workers", "3", "--backend", "ray",
             "--ray-address", cluster.address, "--logdir", str(logdir)],
            stdout=subprocess.PIPE, stderr=err, cwd=ROOT, env=env, text=True,
            start_new_session=True)
    try:
        assert wait_for(lambda: "iterations=" in err_path.read_text()
                        and len(holdem_actors()) >= 4, 120), err_path.read_text()
        assert any("replica" in a["name"] for a in holdem_actors())
        time.sleep(1.0)
        os.kill(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    stderr = err_path.read_text()
    assert proc.returncode == 0, stderr
    assert "received SIGINT" in stderr
    done = re.findall(r"^done: iterations=(\d+) .* checkpoint=(\S+)$", out, re.M)
    assert len(done) == 1, out
    assert ckpt.load(done[0][1]).iterations == int(done[0][0]) > 0
    assert "workers on other nodes" in stderr
    assert wait_for(lambda: holdem_actors() == [], 30), holdem_actors()
    assert list(shm_dir.iterdir()) == []


def test_unreachable_cluster_is_a_one_line_error_and_leaves_no_logdir(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "holdem.cli.train_blueprint", "--game", "leduc", "--iters",
         "1000", "--num-workers", "2", "--backend", "ray", "--ray-address", "127.0.0.1:1",
         "--logdir", str(tmp_path / "run"), "--quiet"],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].endswith(
        "train.ray_address: 127.0.0.1:1: no Ray head node answers there (start one with "
        "'ray start --head', or give its address)"), proc.stderr
    assert not (tmp_path / "run").exists()


def test_zero_workers_is_one_per_cpu_of_the_cluster_less_one(cluster):
    cpus = sum(n["Resources"].get("CPU", 0) for n in ray.nodes() if n["Alive"])
    assert resolved_workers(leduc(num_workers=0, backend="ray")) == int(cpus) - 1


def _niceness(pid):
    data = Path(f"/proc/{pid}/stat").read_text()
    return int(data[data.rindex(")") + 2:].split()[16])         # field 19


def test_actors_run_at_the_drivers_niceness(cluster, shm_dir, tmp_path):
    """Ray starts its workers at nice 15, so on a shared machine they would get the CPU last;
    holdem's actors (workers and replicas) take the driver's niceness, as worker processes run
    at the main process's."""
    driver = os.getpriority(os.PRIO_PROCESS, 0)
    if driver < 15 and os.geteuid() != 0:
        import resource

        if 20 - resource.getrlimit(resource.RLIMIT_NICE)[0] > driver:
            pytest.skip("raising a process's priority needs root or RLIMIT_NICE")
    config = leduc(iters=1_000_000)
    executor = ray_executor(config, 2)
    seen = {}

    def look():
        pool = executor.pool
        for actor in pool.actors:
            pid = protocol.decode_request_or_ready(ray.get(actor.ready.remote()))["pid"]
            seen[f"worker {pid}"] = _niceness(pid)
        for entry in pool._replicas():
            pid = ray.get(entry.replica.location.remote())["pid"]
            seen[f"replica {pid}"] = _niceness(pid)

    thread = _kill_during_run(executor, look, min_iters=1)
    train(config, tmp_path / "run", progress=False, executor=executor)
    thread.join(30)
    assert len(seen) == 3, seen                 # two workers and the other node's replica
    assert set(seen.values()) == {driver}, (driver, seen)


def test_actors_that_never_start_stop_the_run_within_the_budget(cluster, shm_dir, tmp_path):
    """The restart budget is the executor's, the same for actors as for worker processes:
    here every worker actor fails as it starts (its node lacks the bucket file)."""
    config = leduc(iters=1_000_000, worker_restarts=1, backend="ray", num_workers=2)
    broken = config_mod.to_dict(config_mod.with_overrides(
        config_mod.load(ROOT / "configs" / "hunl_default.yaml"), train={"num_workers": 2},
        game={"buckets": str(tmp_path / "missing.buckets")}))

    def make_pool(config, num_workers, allocator, store_state, record_bytes=None):
        return RayPool(num_workers, broken, store=store_state)

    executor = ProcessExecutor(make_game(config), config, 2, make_pool=make_pool)
    with pytest.raises(WorkerFailure) as info:
        train(config, tmp_path / "run", progress=False, executor=executor)
    message = str(info.value)
    assert message.startswith("worker ") and "failed 2 times in a row, each within 60 s" in message
    assert ("(train.worker_restarts 1, train.worker_restart_window 60); last failure: worker "
            in message)
    assert ("(Ray actor on node " in message and message.endswith(
        "failed as it started: holdem.config.ConfigError: worker config: game.buckets: bucket "
        f"file {tmp_path / 'missing.buckets'}: cannot read: No such file or directory")), message
    assert info.value.checkpoint is None and not (tmp_path / "run").exists()
    assert wait_for(lambda: holdem_actors() == [], 30), holdem_actors()
    assert list(shm_dir.iterdir()) == []
