"""Worker pools: the seam between the process executor and where workers run.

:class:`holdem.runtime.process.ProcessExecutor` only uses a pool's methods (``start``,
``submit``, ``wait``, ``restart``, ``close``) and raw bytes-like payloads (see
:mod:`holdem.runtime.protocol`), so :class:`holdem.runtime.ray_pool.RayPool` (Ray actors
returning the same bytes) replaces :class:`ProcessPool` without touching the executor or the run
loop. A pool whose ``replicates_store`` is true keeps copies of the store on other machines: the
executor then logs the store's changes (:class:`holdem.runtime.replica.StoreLog`) and calls its
``sync()`` after each merge pass. Optional: ``scalars(iters)``, ``reset_window()`` and
``summary(iters)`` add the pool's own TensorBoard scalars and end-of-run lines.

:class:`ProcessPool` runs persistent local processes (``fork`` or ``spawn``), one duplex pipe each.
``wait`` blocks in ``multiprocessing.connection.wait`` on the pipes and the process sentinels
with a timeout: no polling, and a worker that dies is reported at once (its sentinel fires).
Workers answer in :mod:`holdem.runtime.frames`, read into reusable buffers (no copy per delta
beyond the kernel's).
"""

import multiprocessing as mp
import os
import time
from multiprocessing.connection import wait as mp_wait

from holdem.metrics import log
from holdem.runtime import frames, protocol
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


class ProcessPool:
    """Persistent worker processes on this machine."""

    def __init__(self, num_workers, config_dict, start_method=None, rings=None):
        self.num_workers = int(num_workers)
        self.config_dict = config_dict
        self.ctx = mp.get_context(start_method) if start_method else mp.get_context()
        self.procs = [None] * self.num_workers
        self.conns = [None] * self.num_workers
        self.receiver = frames.Receiver()
        self.rings = rings              # holdem.runtime.ring.Rings: worker i writes ring i

    def _spawn(self, i):
        parent_conn, child_conn = self.ctx.Pipe(duplex=True)
        ring = None if self.rings is None else self.rings.descriptor
        proc = self.ctx.Process(target=worker_main, name=f"holdem-worker-{i}",
                                args=(child_conn, i, self.config_dict, os.getpid(), ring),
                                daemon=True)
        proc.start()
        child_conn.close()
        self.procs[i], self.conns[i] = proc, parent_conn

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
        :class:`holdem.runtime.ring.Inbox`) every frame a worker has sent so far (at most
        MAX_FRAMES a worker) is read into it, tagged with the worker's index. ``stall``
        (seconds; the run's worker_timeout): a worker that stops sending in the middle of a
        frame for that long is reported as a WorkerDied (it is alive but hung, and its stream
        cannot be resumed); without it this call would wait for as long as the worker hangs,
        and with it the whole run."""
        lookup = {}
        for i, (proc, conn) in enumerate(zip(self.procs, self.conns)):
            lookup[conn] = (i, "conn")
            lookup[proc.sentinel] = (i, "proc")
        ready = mp_wait(list(lookup), timeout)
        events = []
        seen = set()
        for obj in ready:
            i, kind = lookup[obj]
            if i in seen:
                continue
            conn = self.conns[i]
            try:
                if kind == "conn" or conn.poll(0):
                    if inbox is None:
                        events.append((i, self.receiver.read(conn.fileno(), slot=len(events),
                                                             stall=stall)))
                        continue
                    for _ in range(MAX_FRAMES):
                        view = frames.read_into(conn.fileno(),
                                                lambda n, i=i: inbox.reserve(i, n), stall)
                        inbox.received(i, view)
                        events.append((i, view))
                        if not conn.poll(0):
                            break
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

    def restart(self, i):
        """Kill worker ``i`` if still running and start a fresh one in its place (with an
        empty ring)."""
        self._terminate(i)
        if self.rings is not None:
            self.rings.reset(i)
        self._spawn(i)

    def _terminate(self, i):
        proc, conn = self.procs[i], self.conns[i]
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
        for i in range(self.num_workers):
            self._terminate(i)
        stop_resource_tracker()


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
