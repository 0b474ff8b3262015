"""Worker pools: the seam between the process executor and where workers run.

:class:`holdem.runtime.process.ProcessExecutor` knows where its workers run only through the
methods of :class:`Pool`, and exchanges raw bytes-like payloads with them (see
:mod:`holdem.runtime.protocol`), so :class:`holdem.runtime.ray_pool.RayPool` (Ray actors
returning the same bytes) replaces :class:`ProcessPool` without touching the executor or the run
loop. Besides moving batches (``start``, ``submit``, ``wait``, ``restart``, ``close``) a pool
owns the policy that depends on where workers run, and the executor asks it:

- **flushes** -- ``flush_policy``: how many iterations a worker runs between two deltas, the
  cap on a worker's unmerged iterations before it waits, and how the run's messages say it, as
  one :class:`holdem.runtime.flush.FlushPolicy`: workers that read the live store flush often
  and are capped; Ray's send one delta per batch (:class:`~holdem.runtime.flush.OneDeltaPerBatch`);
- **own-delta weight** -- the default of ``train.own_delta_weight`` in the workers' config
  (``worker_config``);
- **transport** -- the :class:`holdem.runtime.ring.Inbox` frames are read into (``inbox``:
  with the delta rings of local processes, or without);
- **after a merge** -- ``store_log`` (a pool that keeps copies of the store elsewhere gets a
  :class:`holdem.runtime.replica.StoreLog` of the store's changes), ``merged`` (publish how
  many of a worker's iterations are merged) and ``sync`` (called after each merge pass: send
  them);
- **reporting** -- ``describe``, ``scalars(iters)``, ``reset_window()``, ``summary(iters,
  seconds)``.

:class:`Pool` gives the defaults, those of workers on this machine; a pool overrides what it
does differently. Which pool a run gets is :func:`holdem.runtime.backends.make_pool`'s choice
(``Pool.make``).

:class:`ProcessPool` runs persistent local processes (``fork`` or ``spawn``), one duplex pipe each.
``wait`` blocks in ``multiprocessing.connection.wait`` on the pipes and the process sentinels
with a timeout: no polling, and a worker that dies is reported at once (its sentinel fires).
Workers answer in :mod:`holdem.runtime.frames`, read into reusable buffers (no copy per delta
beyond the kernel's).
"""

import math
import multiprocessing as mp
import os
import select
import time
from multiprocessing.connection import wait as mp_wait

from holdem import config as config_mod
from holdem.metrics import log
from holdem.runtime import frames, protocol
from holdem.runtime.flush import FlushPolicy
from holdem.runtime.ring import Inbox, Rings, ring_bytes_for
from holdem.runtime.worker import worker_main


MAX_FRAMES = 64                 # frames read from one worker in one wait (the others' turn)
KILL_WAIT = 30.0                # seconds to wait for a killed worker to end
EXIT_WAIT = 1.0                 # seconds to wait for the exit status of a worker that ended


class WorkerDied(Exception):
    """A worker process ended or stopped answering."""


class WorkerFailure(RuntimeError):
    """Workers fail faster than the restart budget allows (:class:`RestartBudget`), or no
    replacement could be started: the run stops (``checkpoint``: the final checkpoint the run
    wrote of what it merged, set by the run loop, or None)."""

    checkpoint = None


class RestartBudget:
    """How often a worker may fail before the run stops, for every pool alike (the executor
    asks it before each restart): the failures of one worker count in a row while each comes
    within ``window`` seconds of the one before; one more than ``restarts`` stops the run. A
    worker that cannot start, or dies soon after every start, so stops the run however long a
    start takes, while a worker killed now and then (each time after running ``window``
    seconds) is always replaced."""

    def __init__(self, restarts, window, clock=time.monotonic):
        self.restarts = int(restarts)
        self.window = float(window)
        self.clock = clock
        self._streaks = {}              # worker -> (failures in a row, time of the last)

    def failed(self, worker, why):
        """Count a failure of ``worker`` (``why``: what happened); raises
        :class:`WorkerFailure` when it is one too many."""
        now = self.clock()
        count, last = self._streaks.get(worker, (0, None))
        count = count + 1 if last is not None and now - last <= self.window else 1
        self._streaks[worker] = (count, now)
        if count > self.restarts:
            raise WorkerFailure(
                f"worker {worker} failed {count} times in a row, each within "
                f"{self.window:g} s of the one before (train.worker_restarts {self.restarts}, "
                f"train.worker_restart_window {self.window:g}); last failure: {why}")


class Pool:
    """What :class:`holdem.runtime.process.ProcessExecutor` asks of where its workers run (see
    the module docstring). The policy methods give the defaults of workers that read the run's
    store live on this machine; a subclass moves batches (``start``, ``submit``, ``wait``,
    ``restart``, ``close``) and overrides the policy it does differently."""

    @classmethod
    def default_workers(cls, config):
        """Workers for ``train.num_workers: 0``: one per core of this machine."""
        return os.cpu_count() or 1

    @classmethod
    def check_workers(cls, config, num_workers):
        """Warn about a worker count that will not run well (nothing by default)."""

    @classmethod
    def own_delta_default(cls, num_workers):
        """``train.own_delta_weight`` where the run leaves it null: 1, a worker's own unmerged
        updates counted as a serial run counts them (:func:`holdem.runtime.worker.own_delta_weight`;
        workers that flush often only add their sampling noise with more)."""
        return 1.0

    @classmethod
    def worker_config(cls, config, num_workers):
        """The config dict the pool's workers get: the resolved worker count and, where the run
        leaves it null, this pool's own-delta weight (:meth:`own_delta_default`)."""
        train = {"num_workers": int(num_workers)}
        if config.train.own_delta_weight is None:
            train["own_delta_weight"] = cls.own_delta_default(num_workers)
        return config_mod.to_dict(config_mod.with_overrides(config, train=train))

    def describe(self):
        """Where the workers run, for the run's start message."""
        return "workers"

    def flush_policy(self, config, num_workers):
        """How these workers flush and how many unmerged iterations they may have before they
        wait for the main process (:class:`holdem.runtime.worker.UnmergedGate`): a
        :class:`holdem.runtime.flush.FlushPolicy`, asked once for the run."""
        return FlushPolicy(config, num_workers)

    def inbox(self):
        """The :class:`holdem.runtime.ring.Inbox` ``wait`` reads the workers' frames into."""
        return Inbox()

    def merged(self, i, iterations):
        """After a merge pass: ``iterations`` of worker ``i``'s are merged since it started
        (nothing by default: its go messages tell a waiting worker)."""

    def sweeps(self, steps):
        """Before a merge pass: the store has had ``steps`` DCFR discount sweeps (nothing by
        default: the workers do not learn it, their records say -1 and are never scaled)."""

    def store_grew(self, generation, capacities):
        """After a merge pass that grew the store: its newest generation is ``generation``, of
        ``capacities`` (rows, entries, table rows). Nothing by default: a worker maps it with
        its next batch, whose request names it."""

    def store_log(self, steps):
        """A :class:`holdem.runtime.replica.StoreLog` of the store's changes (``steps``: the
        DCFR sweeps applied so far) for a pool that keeps copies of the store, which the
        executor fills and :meth:`sync` sends; None: the workers read the store itself."""
        return None

    def sync(self):
        """After each merge pass: bring the workers' view of the store up to date (nothing:
        they read it live)."""

    def scalars(self, iters):
        """The pool's own TensorBoard scalars for a window of ``iters`` merged iterations."""
        return {}

    def reset_window(self):
        """Start a new window for :meth:`scalars`."""

    def summary(self, iters, seconds):
        """The pool's own end-of-run lines."""
        return []


class ProcessPool(Pool):
    """Persistent worker processes on this machine."""

    @classmethod
    def check_workers(cls, config, num_workers):
        cores = os.cpu_count() or 1
        if num_workers > cores:
            log(f"warning: {num_workers} worker processes on {cores} cores: they share the "
                "cores with each other and with the main process")

    @classmethod
    def make(cls, config, num_workers, allocator, store_state=None, record_bytes=None):
        """A pool of ``num_workers`` local processes for ``config``'s run, each writing its
        deltas into a ring in shared memory where ``allocator``'s files live, sized to take a
        few of its largest records (``record_bytes``: :func:`holdem.runtime.ring.ring_bytes_for`;
        ``store_state``: for Ray's replicas; unused)."""
        rings = Rings(num_workers, ring_bytes_for(record_bytes), allocator=allocator)
        try:
            return cls(num_workers, cls.worker_config(config, num_workers),
                       config.train.start_method, rings=rings)
        except BaseException:
            rings.close()
            raise

    def __init__(self, num_workers, config_dict, start_method=None, rings=None):
        self.num_workers = int(num_workers)
        self.config_dict = config_dict
        self.ctx = mp.get_context(start_method) if start_method else mp.get_context()
        self.procs = [None] * self.num_workers
        self.conns = [None] * self.num_workers
        self.start_method = start_method
        self.receiver = frames.Receiver()
        self.rings = rings              # holdem.runtime.ring.Rings: worker i writes ring i
        self._poller = None             # (select.poll, fd -> (worker, kind)) of the live pipes

    def describe(self):
        return self.start_method or self.ctx.get_start_method()

    def flush_policy(self, config, num_workers):
        into = None if self.rings is None else f"rings of {self.rings.ring_bytes >> 20} MiB"
        return FlushPolicy(config, num_workers, into=into)

    def inbox(self):
        return Inbox(self.rings)

    def merged(self, i, iterations):
        if self.rings is not None:
            self.rings.merged(i, iterations)

    def sweeps(self, steps):
        if self.rings is not None:
            self.rings.sweeps(steps)

    def store_grew(self, generation, capacities):
        # In the rings, which a worker reads between two flushes (BatchServer._follow).
        if self.rings is not None:
            self.rings.store(generation, capacities)

    def _spawn(self, i):
        parent_conn, child_conn = self.ctx.Pipe(duplex=True)
        ring = None if self.rings is None else self.rings.descriptor
        proc = self.ctx.Process(target=worker_main, name=f"holdem-worker-{i}",
                                args=(child_conn, i, self.config_dict, os.getpid(), ring),
                                daemon=True)
        proc.start()
        child_conn.close()
        self.procs[i], self.conns[i] = proc, parent_conn
        self._poller = None

    def start(self):
        for i in range(self.num_workers):
            self._spawn(i)

    def pids(self):
        return [p.pid for p in self.procs if p is not None]

    def submit(self, i, payload):
        try:
            self.conns[i].send_bytes(payload)
        except (BrokenPipeError, OSError) as exc:
            raise WorkerDied(f"worker {i}: cannot send ({exc})") from None

    def wait(self, timeout, inbox=None, stall=None):
        """Block up to ``timeout`` seconds; return [(worker, payload or WorkerDied)]. Payloads
        are memoryviews of reusable buffers, valid until the next call; with ``inbox`` (a
        :class:`holdem.runtime.ring.Inbox`) every frame a worker has sent so far (MAX_FRAMES a
        worker, or a few more) is read into it, tagged with the worker's index, and its
        payload is the number of frames read. ``stall``
        (seconds; the run's worker_timeout): a worker that stops sending in the middle of a
        frame for that long is reported as a WorkerDied (it is alive but hung, and its stream
        cannot be resumed); without it this call would wait for as long as the worker hangs,
        and with it the whole run."""
        events = []
        seen = set()
        for i, kind in self._ready(timeout):
            if i in seen:
                continue
            conn = self.conns[i]
            try:
                if kind == "conn" or self._has_data(i):
                    if inbox is None:
                        events.append((i, self.receiver.read(conn.fileno(), slot=len(events),
                                                             stall=stall)))
                        continue
                    read = 0
                    while True:             # every frame in the pipe per system call
                        read += inbox.drain(i, conn.fileno(), stall)
                        # A read that did not fill its buffer emptied the pipe: asking the
                        # pipe again (a system call a worker a pass) would find nothing, or
                        # what came since, which the next wait sees.
                        if (read >= MAX_FRAMES or not inbox.filled
                                or not self._has_data(i)):
                            break
                    events.append((i, read))
                    continue
            except frames.FrameStalled as exc:
                seen.add(i)
                events.append((i, WorkerDied(f"worker {i} (pid {self.procs[i].pid}) hung in "
                                             f"the middle of a message: {exc}")))
                continue
            except (EOFError, OSError):
                pass
            seen.add(i)
            # Its sentinel fires as it closes its files, a moment before its exit status can be
            # read: wait for that, so that the reason names the status (the restart budget's
            # message quotes the last reason).
            self.procs[i].join(EXIT_WAIT)
            code = self.procs[i].exitcode
            events.append((i, WorkerDied(f"worker {i} (pid {self.procs[i].pid}) exited"
                                         + (f" with code {code}" if code is not None else ""))))
        return events

    def _ready(self, timeout):
        """[(worker, "conn" or "proc")] of the pipes with something to read and the workers
        that ended, after blocking up to ``timeout`` seconds (None: until one is). One
        ``select.poll`` kept while the workers are the same: building the selector each call,
        as ``multiprocessing.connection.wait`` does, cost the main process ~30 us a merge
        pass. (``mp_wait`` where the platform has no poll.)"""
        if not hasattr(select, "poll"):
            lookup = {}
            for i, (proc, conn) in enumerate(zip(self.procs, self.conns)):
                lookup[conn] = (i, "conn")
                lookup[proc.sentinel] = (i, "proc")
            return [lookup[obj] for obj in mp_wait(list(lookup), timeout)]
        poller, fds, _ = self._pollers()
        ms = None if timeout is None else max(0, math.ceil(timeout * 1000))
        return [fds[fd] for fd, _ in poller.poll(ms)]

    def _pollers(self):
        """(one poll over every pipe and sentinel, fd -> (worker, kind), one poll per worker's
        pipe), made once while the workers are the same."""
        if self._poller is None:
            poller, fds, pipes = select.poll(), {}, []
            for i, (proc, conn) in enumerate(zip(self.procs, self.conns)):
                for fd, kind in ((conn.fileno(), "conn"), (proc.sentinel, "proc")):
                    poller.register(fd, select.POLLIN)
                    fds[fd] = (i, kind)
                pipes.append(select.poll())
                pipes[-1].register(conn.fileno(), select.POLLIN)
            self._poller = (poller, fds, pipes)
        return self._poller

    def _has_data(self, i):
        """Whether worker ``i``'s pipe can be read without blocking: ``conn.poll(0)``, which
        builds a selector per call (``multiprocessing.connection.wait``) -- once per frame
        read, 16% of the main process's time in a 2-worker Leduc run."""
        if not hasattr(select, "poll"):
            return self.conns[i].poll(0)
        return bool(self._pollers()[2][i].poll(0))

    def restart(self, i):
        """Kill worker ``i`` if still running and start a fresh one in its place (with an
        empty ring)."""
        self._terminate(i)
        if self.rings is not None:
            self.rings.reset(i)
        self._spawn(i)

    def _terminate(self, i):
        proc, conn = self.procs[i], self.conns[i]
        self._poller = None
        if conn is not None:
            conn.close()
        if proc is not None:
            if proc.is_alive():
                proc.kill()
            # Reaped before going on: a killed process is gone in milliseconds, but on a busy
            # machine it may take seconds to be scheduled and tear down its memory.
            proc.join(KILL_WAIT)
            if proc.is_alive():
                log(f"warning: worker {i} (pid {proc.pid}) did not end within {KILL_WAIT:.0f} s "
                    "of SIGKILL")

    def close(self, timeout=5.0):
        """Ask every worker to stop, wait, then kill what is left and reap every one. Leaves no
        process behind: nor the resource tracker multiprocessing started for them
        (:func:`stop_resource_tracker`)."""
        stop = protocol.encode_stop()
        for conn in self.conns:
            try:
                if conn is not None:
                    conn.send_bytes(stop)
            except (BrokenPipeError, OSError):
                pass
        deadline = time.monotonic() + timeout
        for proc in self.procs:
            if proc is not None:
                proc.join(max(0.0, deadline - time.monotonic()))
        try:
            for i in range(self.num_workers):
                self._terminate(i)
            stop_resource_tracker()
        finally:
            if self.rings is not None:          # the workers are gone: their rings go too
                rings, self.rings = self.rings, None
                rings.close()


def stop_resource_tracker():
    """Stop the resource tracker that multiprocessing starts with the first spawned process,
    once this process has no child left: it would otherwise outlive this process by as long
    as it takes to notice (seconds on a busy machine). Multiprocessing starts a new one when
    needed. (``_stop`` is private; where it is missing the tracker ends on its own.)"""
    if mp.active_children():
        return                          # another pool's workers still hold its pipe
    from multiprocessing import resource_tracker

    tracker = getattr(resource_tracker, "_resource_tracker", None)
    stop = getattr(tracker, "_stop", None)
    if stop is None or getattr(tracker, "_pid", None) is None:
        return
    try:
        stop()
    except (OSError, RuntimeError):     # already gone
        pass
