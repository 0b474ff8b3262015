"""The runs of a chaos soak (:mod:`soak`): one ``train_blueprint`` process per *segment*, its
output read on threads (progress, the ``resuming from`` line), the children it started, and
the signals the soak sends them.

A segment's child processes die with the soak however it dies (:func:`die_with_parent`), and
its workers are given a grace to exit after it: ``CLEAN_EXIT_GRACE`` after a clean exit,
``KILLED_GRACE`` after a SIGKILL, which they notice by polling their parent.
"""

import ctypes
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import benchlib

from holdem.runtime import shm

CLEAN_EXIT_GRACE = 1.0          # seconds a worker may outlive a main process that exited
KILLED_GRACE = 10.0             # ... one that was SIGKILLed (workers poll their parent each 1 s)
VISITS_RE = re.compile(r" visits/it=([\d.,]+)")
RESUME_RE = re.compile(r"^resuming from (\S+) at iteration ([\d,]+)$")
_LIBC = ctypes.CDLL(None, use_errno=True)


class Segment:
    """One train_blueprint process of the soak: its output, progress and children."""

    def __init__(self, number, cmd, log_path, soak_start):
        self.number = number
        self.log_file = open(log_path, "w")
        self.t0 = soak_start
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, cwd=benchlib.ROOT, preexec_fn=die_with_parent)
        self.pid = self.proc.pid
        self.progress = []          # (soak seconds, iterations, visits per iteration or None)
        self.stdout, self.stderr = [], []
        self.resumed = None         # (path, iterations) from its "resuming from" line
        self.seen = {}              # child pid -> (start time, is the resource tracker)
        self.went_back = []
        self.ended_at = None
        self._lock = threading.Lock()
        self._readers = [threading.Thread(target=self._read, args=(s, into), daemon=True)
                         for s, into in ((self.proc.stdout, self.stdout),
                                         (self.proc.stderr, self.stderr))]
        for reader in self._readers:
            reader.start()

    def _read(self, stream, into):
        for line in stream:
            line = line.rstrip("\n")
            now = time.monotonic() - self.t0
            with self._lock:
                into.append(line)
                if not self.log_file.closed:    # a reader that outlived finish()
                    self.log_file.write(line + "\n")
                m = benchlib.PROGRESS_RE.search(line)
                if m:
                    n = int(m[1].replace(",", ""))
                    if self.progress and n < self.progress[-1][1]:
                        self.went_back.append((self.progress[-1][1], n))
                    v = VISITS_RE.search(line)
                    self.progress.append((now, n, float(v[1].replace(",", "")) if v else None))
                m = RESUME_RE.match(line)
                if m:
                    self.resumed = (Path(m[1]), int(m[2].replace(",", "")))

    @property
    def iterations(self):
        with self._lock:
            return self.progress[-1][1] if self.progress else None

    @property
    def ready(self):
        return self.iterations is not None

    def alive(self):
        return self.proc.poll() is None

    def finish(self, timeout=None):
        """Wait for the process and its output; returns its exit code."""
        code = self.proc.wait(timeout)
        self.ended_at = self.ended_at or time.monotonic()
        for reader in self._readers:       # until its children close the inherited pipes
            reader.join(KILLED_GRACE)
        self.log_file.close()
        return code

    def look(self, table):
        """Record the live children of the main process (from :func:`benchlib.proc_table`)."""
        for pid, (ppid, state, start) in table.items():
            if ppid == self.pid and state != "Z" and pid not in self.seen:
                try:
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
                except OSError:
                    continue
                self.seen[pid] = (start, b"resource_tracker" in cmd)

    def survivors(self, trackers=True):
        """Children seen during the run that are still alive."""
        return [pid for pid, (start, tracker) in self.seen.items()
                if (trackers or not tracker) and benchlib.is_alive(pid, start)]

    def shm_files(self):
        return shm.list_segments(pid=self.pid)

    def last_error(self):
        with self._lock:
            lines = [line for line in self.stderr if line.strip()
                     and not benchlib.PROGRESS_RE.search(line)]
        return lines[-1] if lines else "(no output)"

    def has_traceback(self):
        with self._lock:
            return any(line.startswith("Traceback") for line in self.stderr)


def kill(pid, sig):
    """Send ``sig`` to ``pid`` unless it is gone."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def die_with_parent():
    """In a child before exec: SIGKILL when the soak dies, however it dies (a soak killed by a
    test's timeout must not leave a run training for an hour)."""
    _LIBC.prctl(1, signal.SIGKILL)      # PR_SET_PDEATHSIG; nothing imported after fork

