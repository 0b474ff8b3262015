"""Backends: the one place that chooses where a run's iterations run.

``train.num_workers`` picks the executor -- 1 runs batches in this process
(:class:`holdem.runtime.executor.InProcessExecutor`), more on persistent workers
(:class:`holdem.runtime.process.ProcessExecutor`), 0 one worker per core (with Ray, one per CPU
of the cluster less one) -- and ``train.backend`` where those workers run: local processes with
delta rings (:class:`holdem.runtime.pool.ProcessPool`) or Ray actors
(:class:`holdem.runtime.ray_pool.RayPool`, which imports ``ray`` only when used), each a
:class:`holdem.runtime.pool.Pool` that owns its policy (flushes, own-delta weight, transport,
what follows a merge). The executors choose nothing: the process executor is handed
:func:`make_pool` and asks the pool it makes.
"""

from holdem.runtime.executor import InProcessExecutor
from holdem.runtime.pool import ProcessPool
from holdem.runtime.process import ProcessExecutor
from holdem.runtime.ray_pool import RayPool

# train.backend -> the pool class of its workers (holdem.config validates the name).
POOLS = {"process": ProcessPool, "ray": RayPool}


def pool_class(config):
    """The pool class ``train.backend`` names."""
    return POOLS[config.train.backend]


def resolved_workers(config):
    """``train.num_workers``, with 0 resolved by the pool: one worker per core of this machine,
    or with the Ray backend one per CPU of the cluster less one (for the main process)."""
    n = config.train.num_workers
    return pool_class(config).default_workers(config) if n == 0 else n


def make_executor(game, config):
    """The executor ``config.train.num_workers`` asks for: in-process for 1, else workers
    (processes or Ray actors: ``train.backend``)."""
    workers = resolved_workers(config)
    if workers == 1:
        return InProcessExecutor(game, config)
    pool_class(config).check_workers(config, workers)
    return ProcessExecutor(game, config, workers, make_pool=make_pool)


def make_pool(config, num_workers, allocator, store_state, record_bytes=None):
    """The pool of ``num_workers`` workers ``train.backend`` names: Ray actors, or local
    processes each writing its deltas into a ring in shared memory where ``allocator``'s files
    live, sized for records of ``record_bytes`` (None: the default size). ``store_state()``
    gives (store, generation, StoreLog) to Ray's store replicas."""
    return pool_class(config).make(config, num_workers, allocator, store_state,
                                   record_bytes=record_bytes)
