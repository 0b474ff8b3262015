"""The faults of a chaos soak (:mod:`soak`; the kinds are described in its docstring): the
seeded schedule that draws them, and the injectors, one method per kind, each recording in its
:class:`Fault` what it did, whether the run recovered and what went wrong.

:class:`FaultInjector` is a mixin of :class:`soak.Soak`: the injectors drive the run through
its methods (``now``, ``seg``, ``workers``, ``wait_for``, ``advanced``, ``interrupt``,
``resume``) and check it with :class:`soak_checks.SoakChecks`'s (``check_checkpoints``,
``check_exit``, ``newest_iterations``).
"""

import os
import random
import re
import resource
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import benchlib

from holdem.cli.common import STORE_FULL
from holdem.runtime import shm
from soak_segment import die_with_parent, kill

KINDS = ("worker-kill", "worker-stop", "main-kill", "main-stop", "disk-full", "slow-disk",
         "cpu-load")
WORKER_KINDS = ("worker-kill", "worker-stop")
LOAD_KINDS = ("slow-disk", "cpu-load")     # run in the background for their duration
FSIZE_LIMIT = 1024              # bytes: smaller than any checkpoint (Kuhn's is about 3 KB)
# The one line of a run whose store could not grow and that kept a final checkpoint.
KEPT_RE = re.compile(r"the store could not grow: .*; the run stopped with a final checkpoint of "
                     r"its ([\d,]+) iterations: (\S+)\. To go on")

_BUSY = "import sys, time\nend = time.time() + float(sys.argv[1])\nwhile time.time() < end: pass"
_WRITER = """import os, sys, time
end, path, block = time.time() + float(sys.argv[1]), sys.argv[2], os.urandom(1 << 20)
try:
    with open(path, "wb") as f:
        while time.time() < end:
            f.seek(0)
            for _ in range(8):
                f.write(block)
            f.flush()
            os.fsync(f.fileno())
finally:
    os.unlink(path)
"""


@dataclass
class Fault:
    """One drawn fault: kind and parameters, then what happened."""

    kind: str
    gap: float              # seconds after the previous fault recovered
    index: int              # which worker (modulo the live ones)
    seconds: float          # stop or load duration
    busy: int               # busy loops of cpu-load
    at: float = 0.0         # soak seconds when injected
    until: float = 0.0      # soak seconds when its effect ended (recovered; a load's end)
    target: str = ""
    recovered: bool = False
    detail: str = ""
    problems: list = field(default_factory=list)


class Schedule:
    """The seeded fault schedule: kinds in shuffled rounds, every draw in a fixed order."""

    def __init__(self, seed, kinds, gap, worker_timeout, workers):
        self.rng = random.Random(seed)
        self.kinds, self.gap = list(kinds), gap
        self.worker_timeout, self.workers = worker_timeout, workers
        self.bag = []

    def next(self):
        if not self.bag:
            self.bag = self.rng.sample(self.kinds, len(self.kinds))
        kind = self.bag.pop()
        gap = self.rng.uniform(*self.gap)
        index = self.rng.randrange(max(self.workers, 2))     # a worker, or SIGINT/SIGTERM
        long_stop = self.rng.random() < 0.5
        stop = self.worker_timeout * (self.rng.uniform(2.0, 3.0) if long_stop
                                      else self.rng.uniform(0.2, 0.6))
        load = self.rng.uniform(*self.gap)
        busy = self.rng.randint(1, os.cpu_count() or 1)
        return Fault(kind, gap, index, stop if kind == "worker-stop" else load, busy)


def start_script(script, *args):
    """A background Python process running ``script`` with ``args``, quiet, dying with the
    soak."""
    return subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)


class FaultInjector:
    """Injects one fault at a time into the run (a mixin of :class:`soak.Soak`)."""

    def inject(self, fault):
        fault.at = self.now()
        before = self.seg.iterations
        handler = getattr(self, "_" + fault.kind.replace("-", "_"))
        handler(fault, before)
        fault.until = max(self.now(), fault.at + fault.seconds if fault.kind in LOAD_KINDS
                          else 0.0)
        fault.problems += self.check_checkpoints()
        self.faults.append(fault)
        took = self.now() - fault.at
        verdict = "recovered" if fault.recovered else "NOT RECOVERED"
        checks = "checks ok" if not fault.problems else "FAILED: " + "; ".join(fault.problems)
        print(f"{fault.at:8.1f} s  {fault.kind:<11} {fault.target:<28} {verdict} in "
              f"{took:.1f} s ({fault.detail.lstrip('; ')}); {checks}", flush=True)

    def _pick_worker(self, fault):
        self.wait_for(lambda: len(self.workers()) == self.args.workers or not self.seg.alive(),
                      self.args.recover_timeout)
        pids = self.workers()
        if not pids:
            return None
        pid = pids[fault.index % len(pids)]
        fault.target = f"worker pid {pid}"
        return pid

    def _replaced(self, pid, fault, before):
        """Wait for a full set of workers without ``pid``, then for iterations to advance."""
        full = self.wait_for(lambda: pid not in self.workers()
                             and len(self.workers()) == self.args.workers,
                             self.args.recover_timeout, run=True)
        mark = self.seg.iterations or 0
        fault.recovered = full and self.wait_for(lambda: self.advanced(mark),
                                                 self.args.recover_timeout, run=True)
        fault.detail = (f"iterations {before or 0:,} -> {self.seg.iterations or 0:,}; workers "
                        f"{self.workers()}")

    def _worker_kill(self, fault, before):
        pid = self._pick_worker(fault)
        if pid is None:
            fault.problems.append("no worker to kill")
            return
        kill(pid, signal.SIGKILL)
        self._replaced(pid, fault, before)

    def _worker_stop(self, fault, before):
        pid = self._pick_worker(fault)
        if pid is None:
            fault.problems.append("no worker to stop")
            return
        start = benchlib.proc_table().get(pid, (0, "", 0))[2]
        kill(pid, signal.SIGSTOP)
        self.stopped.add((pid, start))
        self.wait_for(lambda: False, fault.seconds)
        long_stop = fault.seconds >= 2 * self.args.worker_timeout
        if long_stop:       # hung that long, it must be replaced: a little more time for that
            self.wait_for(lambda: not benchlib.is_alive(pid, start),
                          self.args.worker_timeout + 5, run=True)
        self.stopped.discard((pid, start))
        replaced = not benchlib.is_alive(pid, start)
        if not replaced:
            kill(pid, signal.SIGCONT)
        fault.target += f" {fault.seconds:.1f} s"
        if long_stop and not replaced and self.seg.alive():
            fault.problems.append(f"a worker hung for {self.now() - fault.at:.1f} s was not "
                                  f"replaced (worker_timeout {self.args.worker_timeout:g} s)")
        if replaced:
            self._replaced(pid, fault, before)
        else:
            mark = self.seg.iterations or 0
            fault.recovered = self.wait_for(lambda: self.advanced(mark),
                                            self.args.recover_timeout, run=True)
            fault.detail = (f"iterations {before or 0:,} -> {self.seg.iterations or 0:,}")
        fault.detail = (f"{'replaced' if replaced else 'went on'} (worker_timeout "
                        f"{self.args.worker_timeout:g} s); " + fault.detail)

    def _main_kill(self, fault, before):
        dead = self.seg
        fault.target = f"main (pid {dead.pid})"
        self.tick()
        dead.look(benchlib.proc_table())
        kill(dead.pid, signal.SIGKILL)
        dead.finish(60)
        fault.detail = f"lost {max(0, (before or 0) - (self.newest_iterations() or 0)):,} " \
                       "iterations since the last checkpoint"
        fault.problems += self.check_exit(dead, killed=True, fault=fault)
        fault.recovered = self.resume(fault, dead)

    def _main_stop(self, fault, before):
        seg = self.seg
        sig = signal.SIGTERM if fault.index % 2 else signal.SIGINT
        fault.target = f"main (pid {seg.pid}) {sig.name}"
        done = self.interrupt(seg, sig, fault.problems)
        fault.detail = f"stopped at {done['iterations']:,} iterations" if done else "no done: line"
        fault.problems += self.check_exit(seg, killed=False, fault=fault)
        fault.recovered = self.resume(fault, seg)

    def _generation_bytes(self, seg):
        """The size of the run's newest store generation file (None: none seen)."""
        newest = None
        for path in seg.shm_files():
            m = shm._NAME_RE.match(path.name)
            if m and m.group(2) == "g" and (newest is None or int(m.group(3)) > newest[0]):
                newest = (int(m.group(3)), path)
        try:
            return newest[1].stat().st_size if newest else None
        except OSError:                     # released meanwhile
            return None

    def _final_checkpoint_kept(self, error, room):
        """Problems with how a run whose store could not grow (exit 3) stopped: with room for
        a checkpoint (``room``) its line must name a final checkpoint, which must be the
        newest that loads and hold the iterations it says; without, the line must say the
        final checkpoint was refused too."""
        kept = KEPT_RE.search(error)
        if kept is None:
            if room or "final checkpoint was refused too" not in error:
                return [f"the store could not grow and no final checkpoint was kept: {error}"]
            return []
        iterations, path = int(kept.group(1).replace(",", "")), Path(kept.group(2))
        newest = self.newest_valid()
        if newest is None or newest[0].name != path.name or newest[1] != iterations:
            return [f"the final checkpoint {path.name} ({iterations:,} iterations) is not the "
                    f"newest that loads ({newest})"]
        return []

    def _disk_full(self, fault, before):
        seg = self.seg
        # Odd index: room for checkpoints but not for the store's next shared-memory
        # generation (the limit is the newest generation's size, a checkpoint holds less);
        # even: every write refused.
        limit = self._generation_bytes(seg) if fault.index % 2 else None
        room = limit is not None
        limit = limit or FSIZE_LIMIT
        fault.target = f"main (pid {seg.pid}) fsize {limit:,} B"
        try:
            old = resource.prlimit(seg.pid, resource.RLIMIT_FSIZE)
            resource.prlimit(seg.pid, resource.RLIMIT_FSIZE, (limit, old[1]))
        except ProcessLookupError:
            return                          # the run ended: the main loop sees it
        newest = self.newest_iterations() or 0
        window = 2.5 * self.args.snapshot_interval + 10
        self.wait_for(lambda: not seg.alive(), window)
        if seg.alive():
            try:
                resource.prlimit(seg.pid, resource.RLIMIT_FSIZE, old)
            except ProcessLookupError:
                pass
        if seg.alive():
            fault.recovered = self.wait_for(
                lambda: (self.newest_iterations() or 0) > newest,
                3 * self.args.snapshot_interval + self.args.recover_timeout)
            fault.detail = (f"the run went on; newest checkpoint "
                            f"{self.newest_iterations() or 0:,} iterations")
            return
        code = seg.finish(60)
        error = seg.last_error()
        fault.detail = f"the run stopped (exit {code}: {error[:120]})"
        if seg.has_traceback():
            fault.problems.append("the run stopped with a traceback: a refused write must end "
                                  "in one error line")
        if code == 0:
            fault.problems.append("the run exited 0 after a failed checkpoint write")
        elif code == STORE_FULL:
            fault.problems += self._final_checkpoint_kept(error, room)
        fault.problems += self.check_exit(seg, killed=False, fault=fault)
        fault.recovered = self.resume(fault, seg)

    def _slow_disk(self, fault, before):
        path = self.logdir.parent / f".{self.logdir.name}-soak-{os.getpid()}.io"
        fault.target = f"fsync writer {fault.seconds:.0f} s"
        self.loads.append(start_script(_WRITER, f"{fault.seconds:.1f}", str(path)))
        newest = self.newest_iterations() or 0
        fault.recovered = self.wait_for(
            lambda: (self.newest_iterations() or 0) > newest,
            fault.seconds + 3 * self.args.snapshot_interval + self.args.recover_timeout, run=True)
        fault.detail = f"newest checkpoint {newest:,} -> {self.newest_iterations() or 0:,}"

    def _cpu_load(self, fault, before):
        fault.target = f"{fault.busy} busy loop(s) {fault.seconds:.0f} s"
        for _ in range(fault.busy):
            self.loads.append(start_script(_BUSY, f"{fault.seconds:.1f}"))
        mark = before or 0
        fault.recovered = self.wait_for(lambda: self.advanced(mark) and self.now() - fault.at > 1,
                                        self.args.recover_timeout, run=True)
        fault.detail = f"iterations {mark:,} -> {self.seg.iterations or 0:,}"

    def unexpected_exit(self):
        """The run ended without a fault: record it, check what it left, resume."""
        seg = self.seg
        code = seg.finish(60)
        fault = Fault("run-exit", 0, 0, 0, 0, at=self.now(), target=f"run {seg.number}")
        fault.problems.append(f"the run exited by itself (exit {code}): {seg.last_error()}")
        fault.problems += self.check_exit(seg, killed=False)
        fault.recovered = self.resume(fault, seg)
        fault.until = self.now()
        self.faults.append(fault)
        print(f"{fault.at:8.1f} s  run-exit    {fault.target:<28} "
              f"{'recovered' if fault.recovered else 'NOT RECOVERED'}; FAILED: "
              f"{'; '.join(fault.problems)}", flush=True)
        return fault.recovered
