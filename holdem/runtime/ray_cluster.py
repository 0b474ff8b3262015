"""Connecting to Ray and reading its cluster, for :mod:`holdem.runtime.ray_pool`: start a local
instance or join a running cluster (with a clear error when no head node answers), the workers
a cluster's CPUs give, the driver's niceness for Ray's workers, and Ray's errors cut to one
line. ``ray`` is imported only when called (it is an optional extra)."""

import logging
import os
import re
import socket
from pathlib import Path

from holdem.config import ConfigError
from holdem.metrics import log

_started_here = False           # this process started a local Ray instance (shut it down)


def _ray():
    try:
        import ray
    except ImportError:
        raise ConfigError("train.backend: ray needs Ray, an optional extra: "
                          "pip install -e '.[ray]'") from None
    return ray


def _reachable(address, timeout=5.0):
    """False when ``address`` is HOST:PORT and nothing accepts a connection there (Ray itself
    retries an unreachable head node for minutes)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return True                     # "auto", ray://..., or not ours to judge
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError:
        return False
    return True


def connect(address=None):
    """Connect to Ray: ``address`` None starts a local instance (unless this process is
    connected already), "auto" or "HOST:PORT" joins a running cluster."""
    global _started_here
    ray = _ray()
    if ray.is_initialized():
        return ray
    if address is not None and not _reachable(address):
        raise ConfigError(f"train.ray_address: {address}: no Ray head node answers there "
                          "(start one with 'ray start --head', or give its address)")
    try:
        ray.init(address=address, include_dashboard=False, logging_level=logging.WARNING,
                 configure_logging=True, log_to_driver=True)
    except ConnectionError as exc:
        raise ConfigError(f"train.ray_address: {address}: cannot connect to a Ray cluster "
                          f"({first_line(exc)})") from None
    _started_here = address is None
    return ray


def disconnect():
    """Shut down the local Ray instance this process started, if any."""
    global _started_here
    if _started_here:
        _ray().shutdown()
        _started_here = False


def alive_nodes(ray):
    """{node id: CPUs} of the cluster's alive nodes with CPUs."""
    return {n["NodeID"]: int(n["Resources"].get("CPU", 0)) for n in ray.nodes()
            if n["Alive"] and n["Resources"].get("CPU", 0) >= 1}


def cluster_workers(address=None):
    """Workers for ``num_workers: 0`` with Ray: one per CPU of the cluster, less one for the
    main process."""
    ray = connect(address)
    return max(1, sum(alive_nodes(ray).values()) - 1)


def match_niceness(niceness):
    """Run every thread of this process at ``niceness``, the driver's: Ray starts its workers
    at nice 15 (they would get the CPU last on a shared machine), worker processes run at the
    main process's. Raising the priority needs root (or RLIMIT_NICE); where it is refused a
    warning says what the actor runs at."""
    tasks = Path("/proc/self/task")
    threads = [int(t) for t in os.listdir(tasks)] if tasks.is_dir() else [0]
    try:
        for tid in threads:
            os.setpriority(os.PRIO_PROCESS, tid, niceness)
    except ProcessLookupError:          # a thread that just ended
        pass
    except OSError as exc:
        log(f"warning: Ray worker pid {os.getpid()}: cannot run at the driver's niceness "
            f"{niceness} ({exc.strerror}); it runs at {os.getpriority(os.PRIO_PROCESS, 0)}")


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def first_line(exc):
    """The first line of an exception's message, colour codes removed (its type's name when
    the message is empty)."""
    text = _ANSI.sub("", str(exc)).strip().splitlines()
    return text[0] if text else type(exc).__name__


def actor_failure(exc):
    """Why an actor died, in one line: the exception its constructor raised (the last line of
    Ray's message, after the traceback), else the first line of the message."""
    lines = [line.strip() for line in _ANSI.sub("", str(exc)).splitlines() if line.strip()]
    if getattr(exc, "actor_init_failed", False) and lines:
        return f"failed as it started: {lines[-1]}"
    return first_line(exc)
