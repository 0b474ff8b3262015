"""Backends: the one place that chooses where a run's iterations run.

``train.num_workers`` picks the executor -- 1 runs batches in this process
(:class:`holdem.runtime.executor.InProcessExecutor`), more on persistent workers
(:class:`holdem.runtime.process.ProcessExecutor`), 0 one worker per core (with Ray, one per CPU
of the cluster less one) -- and ``train.backend`` where those workers run: local processes with
delta rings (:class:`holdem.runtime.pool.ProcessPool`) or Ray actors
(:class:`holdem.runtime.ray_pool.RayPool`, which imports ``ray`` only when used). The executors
and pools choose nothing: the process executor is handed :func:`make_pool`.
"""

import os

from holdem import config as config_mod
from holdem.metrics import log
from holdem.runtime.executor import InProcessExecutor
from holdem.runtime.pool import ProcessPool
from holdem.runtime.process import ProcessExecutor
from holdem.runtime.ray_pool import RayPool, cluster_workers
from holdem.runtime.ring import Rings


def resolved_workers(config):
    """``train.num_workers``, with 0 resolved: one worker per core of this machine, or with the
    Ray backend one per CPU of the cluster less one (for the main process)."""
    n = config.train.num_workers
    if n == 0 and config.train.backend == "ray":
        return cluster_workers(config.train.ray_address)
    return os.cpu_count() or 1 if n == 0 else n


def make_executor(game, config):
    """The executor ``config.train.num_workers`` asks for: in-process for 1, else workers
    (processes or Ray actors: ``train.backend``)."""
    workers = resolved_workers(config)
    if workers == 1:
        return InProcessExecutor(game, config)
    cores = os.cpu_count() or 1
    if config.train.backend != "ray" and workers > cores:
        log(f"warning: {workers} worker processes on {cores} cores: they share the cores with "
            "each other and with the main process")
    return ProcessExecutor(game, config, workers, make_pool=make_pool)


def make_pool(config, num_workers, allocator, store_state):
    """The pool of ``num_workers`` workers ``train.backend`` names: Ray actors, or local
    processes each writing its deltas into a ring in shared memory where ``allocator``'s files
    live. ``store_state()`` gives (store, generation, StoreLog) to Ray's store replicas."""
    # Workers get the resolved worker count (their own-delta weight depends on it).
    resolved = config_mod.to_dict(config_mod.with_overrides(
        config, train={"num_workers": num_workers}))
    tc = config.train
    if tc.backend == "ray":
        return RayPool(num_workers, resolved, tc.ray_address, store=store_state)
    rings = Rings(num_workers, allocator=allocator)
    try:
        return ProcessPool(num_workers, resolved, tc.start_method, rings=rings)
    except BaseException:
        rings.close()
        raise
