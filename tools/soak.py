"""Chaos soak: train a config for a given time while injecting random faults, and check after
every fault and at the end that nothing was lost and nothing leaked.

    python tools/soak.py --config configs/hunl_default.yaml --workers 2 --minutes 120 \\
        --fault-every 60-180 --logdir runs/soak
    python tools/soak.py --game leduc --workers 2 --minutes 10 --fault-every 20-60 \\
        --logdir runs/soak-leduc --reference
    python tools/soak.py --game leduc --minutes 0.5 --fault-every 3-5 --seed 1 \\
        --faults main-kill,disk-full --logdir /tmp/soak --overwrite

The run is ``python -m holdem.cli.train_blueprint`` as a child process (one *segment* per
process: the first, then one per resume), with a short ``snapshot_interval`` so checkpoints are
written often. Faults come one at a time, a gap drawn from ``--fault-every`` after the previous
one recovered; a seeded RNG draws each fault's kind (every kind once per round, in a shuffled
order), target and durations in a fixed order, so a seed gives the same schedule whatever the
timing. Load faults (cpu-load, slow-disk) keep running for their duration in the background, so
they overlap the faults that follow.

Fault kinds:
  worker-kill   SIGKILL a worker; recovered when a replacement runs and iterations advance.
  worker-stop   SIGSTOP a worker, SIGCONT it later: for under worker_timeout (it must carry on)
                or for 2-3x worker_timeout (the hung-worker path: it must be replaced).
  main-kill     SIGKILL the main process; its workers must exit by themselves, then the run
                resumes (--resume-from the logdir) from the newest checkpoint that loads, and
                the new run removes the killed one's /dev/shm files.
  main-stop     SIGINT or SIGTERM to the main process: it writes a final checkpoint and exits 0
                with its done: line, leaving no process and no /dev/shm file; then it resumes.
  disk-full     RLIMIT_FSIZE of the main process set to 1 KiB (prlimit on the running process)
                until a checkpoint write fails with EFBIG: the run stops with one error line
                (a traceback fails the check) and is resumed, or carries on and writes the
                next checkpoint once the limit is lifted.
  slow-disk     a competing process writes and fsyncs 8 MiB blocks on the logdir's file
                system; a checkpoint must still be written and load.
  cpu-load      busy-loop processes (1 to one per core) compete for the CPU; iterations must
                still advance.

After every fault: each checkpoint in the logdir loads and verifies (holdem.checkpoint.load),
checkpoint iterations never go back (by the time each was written), no checkpoint was set
aside as damaged or superseded, iterations in a run's progress lines never go back, and a
resumed run starts at the newest valid checkpoint's iterations. A run that ended must leave no
process (its workers: within 1 s of a clean exit, within 10 s of a SIGKILL, which they notice
by polling their parent) and no /dev/shm file (a killed run's files: once the next run
started). At the end: a clean stop (SIGINT: final checkpoint, exit 0, its ``done:`` line),
memory flat (total PSS of the main process and workers, median of the first 20% of samples
against the last 20%), the rate flat (decision-node visits per CPU second of the run's
processes, away from faults, first 20 minutes or 20% against the last: within --max-slowdown,
judged when the windows last 5 minutes or more), and for a game with exact evaluation (Kuhn,
Leduc) the final exploitability within --max-ratio of an in-process run of the same iterations
(--reference).

Rates count only the stretches between progress lines that overlap no fault (a fault lasts
from its injection to 10 s after its effect ended: recovery, or a load's end). Per wall second
is what the machine gave the run, other load on it included (the window's mean load average
is printed beside it); per CPU second is the run's own speed. Visits, not iterations, are
judged because an iteration's work changes as the strategy learns (in hunl_blueprint it doubles
in the first minutes); the progress lines give the visits per iteration.

Output (stdout): one line per fault (time, kind, target, what the checks found) and a summary
table (per kind: count, recovered, failures; the rates, PSS, leftover files and processes).
Exits 1 if any check failed. Logs of each run go to DIR/soak/.
"""

import bisect
import ctypes
import os
import random
import re
import resource
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import benchlib
from benchlib import log

from holdem import checkpoint as ckpt
from holdem.runtime import shm

KINDS = ("worker-kill", "worker-stop", "main-kill", "main-stop", "disk-full", "slow-disk",
         "cpu-load")
WORKER_KINDS = ("worker-kill", "worker-stop")
LOAD_KINDS = ("slow-disk", "cpu-load")     # run in the background for their duration
SETTLE = 10.0                   # seconds after a fault's effect ended still counted as its own
FSIZE_LIMIT = 1024              # bytes: smaller than any checkpoint (Kuhn's is about 3 KB)
CLEAN_EXIT_GRACE = 1.0          # seconds a worker may outlive a main process that exited
KILLED_GRACE = 10.0             # ... one that was SIGKILLed (workers poll their parent each 1 s)
TICK = 0.25                     # seconds between looks at the run
VISITS_RE = re.compile(r" visits/it=([\d.,]+)")
RESUME_RE = re.compile(r"^resuming from (\S+) at iteration ([\d,]+)$")
EXPLOIT_RE = re.compile(r"^exploitability: ([\d.eE+-]+)", re.M)
_LIBC = ctypes.CDLL(None, use_errno=True)
MIN_RATE_WINDOW = 300.0         # seconds: shorter first/last windows are too noisy to judge

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


@dataclass
class Rate:
    """Training in one window of the soak, away from faults."""

    trained: float          # iterations
    seconds: float          # wall seconds of the stretches counted
    cpu: float              # CPU seconds the run's processes used in them
    window: float           # wall seconds of the window
    load: float             # mean 1-minute load average in the window
    visits: float = 0.0     # decision-node visits in the stretches (0: not on progress lines)

    @property
    def per_second(self):
        return self.trained / self.seconds if self.seconds > 0 else 0.0

    @property
    def per_cpu(self):
        return self.trained / self.cpu if self.cpu > 0 else 0.0

    @property
    def visits_per_cpu(self):
        return self.visits / self.cpu if self.cpu > 0 else 0.0

    @property
    def visits_per_iteration(self):
        return self.visits / self.trained if self.trained > 0 else 0.0

    @property
    def share(self):
        return self.seconds / self.window if self.window > 0 else 0.0


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


class Segment:
    """One train_blueprint process of the soak: its output, progress and children."""

    def __init__(self, number, cmd, log_path, soak_start):
        self.number = number
        self.log_file = open(log_path, "w")
        self.t0 = soak_start
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, cwd=benchlib.ROOT, preexec_fn=_die_with_parent)
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


class Soak:
    def __init__(self, args):
        self.args = args
        self.logdir = Path(args.logdir)
        self.soak_dir = self.logdir / "soak"
        self.soak_dir.mkdir(parents=True, exist_ok=True)
        self.config_path = self.soak_dir / "config.yaml"
        self.source = benchlib.config_source(args.config, args.game)
        extra = {} if args.worker_restarts is None else {"worker_restarts": args.worker_restarts}
        benchlib.write_config(self.source, self.config_path, seed=args.seed,
                              progress_interval=0.5, snapshot_interval=args.snapshot_interval,
                              worker_timeout=args.worker_timeout, **extra)
        kinds = args.faults
        if args.workers < 2:
            kinds = [k for k in kinds if k not in WORKER_KINDS]
        self.schedule = Schedule(args.seed, kinds, args.fault_every, args.worker_timeout,
                                 args.workers)
        self.duration = args.minutes * 60
        self.start = time.monotonic()
        self.segments = []
        self.faults = []
        self.problems = []          # of the run as a whole (not of one fault)
        self.loads = []             # background load processes
        self.verified = {}          # checkpoint name -> (created, iterations)
        self.memory = []            # (soak seconds, PSS bytes of main + workers)
        self.cpu = [(0.0, 0.0)]     # (soak seconds, CPU seconds the runs used so far)
        self.loadavg = []           # (soak seconds, 1-minute load average)
        self._cpu_seen = {}         # (pid, start) -> CPU seconds at the last look
        self.stopped = set()        # (pid, start) of workers under SIGSTOP
        self._next_look = self._next_sample = 0.0
        self.stop_at = self.end_iterations = None
        self.sample_every = max(2.0, self.duration / 300)

    # -- time and the run ------------------------------------------------------------------
    def now(self):
        return time.monotonic() - self.start

    @property
    def seg(self):
        return self.segments[-1]

    def start_segment(self, resume):
        number = len(self.segments)
        cmd = [sys.executable, "-m", "holdem.cli.train_blueprint", "--config",
               str(self.config_path), "--num-workers", str(self.args.workers), "--logdir",
               str(self.logdir), "--time-budget", str(self.duration + 3600)]
        if resume:
            cmd += ["--resume-from", str(self.logdir)]
        elif self.args.overwrite:
            cmd += ["--overwrite"]
        log(f"soak: run {number} {'resumes' if resume else 'starts'}: {' '.join(cmd[1:])}")
        self.segments.append(Segment(number, cmd, self.soak_dir / f"run-{number:03d}.log",
                                     self.start))

    def tick(self):
        """One look at the run: children, memory, ended loads."""
        now = self.now()
        if now >= self._next_look:
            self._next_look = now + 1.0
            table = benchlib.proc_table()
            for seg in self.segments:
                if seg.alive():
                    seg.look(table)
            self._sample_cpu(now, table)
        if now >= self._next_sample and self.seg.ready and self.seg.alive():
            self._next_sample = now + self.sample_every
            sample = benchlib.sample_pss(self.seg.pid, self.args.workers)
            if sample is not None:
                self.memory.append((now, sum(total for _, total, _ in sample.values())))
        self.loads = [p for p in self.loads if p.poll() is None]

    def _sample_cpu(self, now, table):
        """Add the CPU seconds the current run's processes (main, workers) used since the last
        look; and the load average, to tell the run's own slowdown from the machine's."""
        seg = self.seg
        pids = [seg.pid] + [pid for pid, (ppid, state, _) in table.items()
                            if ppid == seg.pid and state != "Z"]
        used = 0.0
        for pid in pids:
            got = benchlib.cpu_seconds(pid)
            if got is not None:
                key = (pid, table.get(pid, (0, "", 0))[2])
                used += got - self._cpu_seen.get(key, 0.0)
                self._cpu_seen[key] = got
        self.cpu.append((now, self.cpu[-1][1] + max(used, 0.0)))
        try:
            self.loadavg.append((now, float(Path("/proc/loadavg").read_text().split()[0])))
        except (OSError, ValueError, IndexError):
            pass

    def wait_for(self, condition, timeout, run=False):
        """Tick until ``condition()`` holds (True) or ``timeout`` seconds pass (False); with
        ``run``, also False as soon as the run ended."""
        deadline = time.monotonic() + timeout
        while True:
            self.tick()
            if condition():
                return True
            if time.monotonic() > deadline or (run and not self.seg.alive()):
                return False
            time.sleep(TICK)

    def workers(self):
        """Live worker pids of the current run (its children but the resource tracker)."""
        seg = self.seg
        if not seg.alive():
            return []
        table = benchlib.proc_table()
        seg.look(table)
        live = {pid for pid, (ppid, state, _) in table.items()
                if ppid == seg.pid and state != "Z"}
        return sorted(pid for pid, (start, tracker) in seg.seen.items()
                      if pid in live and not tracker and table[pid][2] == start)

    def advanced(self, since):
        """Whether the current run's progress passed ``since`` iterations."""
        n = self.seg.iterations
        return n is not None and n > since

    # -- checks ----------------------------------------------------------------------------
    def check_checkpoints(self):
        """Problems with the logdir's checkpoints: one that fails to load, iterations going
        back between checkpoints in the order they were written, files set aside."""
        problems = []
        directory = ckpt.checkpoint_dir(self.logdir)
        for path in ckpt.list_checkpoints(directory):
            if path.name in self.verified:
                continue
            try:
                loaded = ckpt.load(path, mmap=True)
            except (ckpt.CheckpointError, OSError) as exc:
                if path.exists():           # not pruned meanwhile
                    problems.append(f"{path.name} does not load: {exc}")
                continue
            self.verified[path.name] = (float(loaded.header.get("created", 0.0)),
                                        loaded.iterations)
        history = sorted(self.verified.values())
        for (_, a), (_, b) in zip(history, history[1:]):
            if b < a:
                problems.append(f"checkpoint iterations went back: {a:,} then {b:,}")
                break
        aside = sorted(p.name for p in directory.glob("ckpt-*.ckpt.*"))
        if aside:
            problems.append(f"checkpoints set aside: {', '.join(aside)}")
        for seg in self.segments:
            if seg.went_back:
                a, b = seg.went_back[0]
                problems.append(f"run {seg.number}: progress went back from {a:,} to {b:,}")
                seg.went_back = []
        return problems

    def newest_valid(self):
        """(path, iterations) of the checkpoint a resume should start from: the one written
        last that loads, or None."""
        self.check_checkpoints()
        directory = ckpt.checkpoint_dir(self.logdir)
        found = [(self.verified[p.name], p) for p in ckpt.list_checkpoints(directory)
                 if p.name in self.verified]
        if not found:
            return None
        (_, iterations), path = max(found, key=lambda f: f[0])
        return path, iterations

    def check_exit(self, seg, killed, fault=None):
        """Problems with what a run that ended left: processes (after the grace), and unless
        it was killed, /dev/shm files. Says in ``fault.detail`` how long its children took."""
        problems = []
        grace = KILLED_GRACE if killed else CLEAN_EXIT_GRACE
        self.wait_for(lambda: not seg.survivors(trackers=killed),
                      grace - (time.monotonic() - seg.ended_at))
        left = seg.survivors(trackers=killed)
        if fault is not None and not left:
            fault.detail += (f"; its children ({len(seg.seen)} seen) gone "
                             f"{time.monotonic() - seg.ended_at:.1f} s after it")
        if left:
            problems.append(f"run {seg.number} (pid {seg.pid}): processes {left} alive "
                            f"{grace:.0f} s after it ended")
            for pid in left:            # so that the soak goes on
                _kill(pid, signal.SIGKILL)
        if not killed:
            files = seg.shm_files()
            if files:
                problems.append(f"run {seg.number} left {', '.join(f.name for f in files)}")
        return problems

    # -- resume ----------------------------------------------------------------------------
    def resume(self, fault, dead):
        """Start the next run from the logdir after ``dead`` ended; check it starts from the
        newest valid checkpoint and removes the dead run's /dev/shm files. True if it trains."""
        expected = self.newest_valid()
        self.start_segment(resume=expected is not None)
        seg = self.seg
        start = time.monotonic()
        if not self.wait_for(lambda: seg.ready or not seg.alive(), self.args.recover_timeout):
            fault.problems.append(f"the resumed run did not train within "
                                  f"{self.args.recover_timeout:.0f} s")
            return False
        if not seg.alive():
            fault.problems.append(f"the resumed run failed: {seg.last_error()}")
            return False
        if expected is not None:
            path, iterations = expected
            if seg.resumed is None or seg.resumed[0].name != path.name \
                    or seg.resumed[1] != iterations:
                fault.problems.append(f"resumed from {seg.resumed} instead of {path.name} "
                                      f"({iterations:,} iterations)")
            fault.detail += (f"; resumed from {path.name}, training "
                             f"{time.monotonic() - start:.1f} s after its start")
        else:
            fault.detail += "; no checkpoint yet: started over"
        files = dead.shm_files()
        if files:
            fault.problems.append(f"the resumed run left the killed run's "
                                  f"{', '.join(f.name for f in files)}")
        return True

    # -- faults ----------------------------------------------------------------------------
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
        _kill(pid, signal.SIGKILL)
        self._replaced(pid, fault, before)

    def _worker_stop(self, fault, before):
        pid = self._pick_worker(fault)
        if pid is None:
            fault.problems.append("no worker to stop")
            return
        start = benchlib.proc_table().get(pid, (0, "", 0))[2]
        _kill(pid, signal.SIGSTOP)
        self.stopped.add((pid, start))
        self.wait_for(lambda: False, fault.seconds)
        long_stop = fault.seconds >= 2 * self.args.worker_timeout
        if long_stop:       # hung that long, it must be replaced: a little more time for that
            self.wait_for(lambda: not benchlib.is_alive(pid, start),
                          self.args.worker_timeout + 5, run=True)
        self.stopped.discard((pid, start))
        replaced = not benchlib.is_alive(pid, start)
        if not replaced:
            _kill(pid, signal.SIGCONT)
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
        _kill(dead.pid, signal.SIGKILL)
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

    def newest_iterations(self):
        found = self.newest_valid()
        return found[1] if found else None

    def _disk_full(self, fault, before):
        seg = self.seg
        fault.target = f"main (pid {seg.pid}) fsize {FSIZE_LIMIT} B"
        try:
            old = resource.prlimit(seg.pid, resource.RLIMIT_FSIZE)
            resource.prlimit(seg.pid, resource.RLIMIT_FSIZE, (FSIZE_LIMIT, old[1]))
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
        fault.detail = f"the run stopped (exit {code}: {seg.last_error()[:120]})"
        if seg.has_traceback():
            fault.problems.append("the run stopped with a traceback: a refused write must end "
                                  "in one error line")
        if code == 0:
            fault.problems.append("the run exited 0 after a failed checkpoint write")
        fault.problems += self.check_exit(seg, killed=False, fault=fault)
        fault.recovered = self.resume(fault, seg)

    def _slow_disk(self, fault, before):
        path = self.logdir.parent / f".{self.logdir.name}-soak-{os.getpid()}.io"
        fault.target = f"fsync writer {fault.seconds:.0f} s"
        self.loads.append(_start(_WRITER, f"{fault.seconds:.1f}", str(path)))
        newest = self.newest_iterations() or 0
        fault.recovered = self.wait_for(
            lambda: (self.newest_iterations() or 0) > newest,
            fault.seconds + 3 * self.args.snapshot_interval + self.args.recover_timeout, run=True)
        fault.detail = f"newest checkpoint {newest:,} -> {self.newest_iterations() or 0:,}"

    def _cpu_load(self, fault, before):
        fault.target = f"{fault.busy} busy loop(s) {fault.seconds:.0f} s"
        for _ in range(fault.busy):
            self.loads.append(_start(_BUSY, f"{fault.seconds:.1f}"))
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

    # -- the soak --------------------------------------------------------------------------
    def run(self):
        self.start_segment(resume=False)
        seg = self.seg
        if not self.wait_for(lambda: seg.ready or not seg.alive(), self.args.recover_timeout):
            raise SystemExit(f"soak: the run did not start training within "
                             f"{self.args.recover_timeout:.0f} s")
        if not seg.alive():
            seg.finish(60)
            raise SystemExit(f"soak: the run failed to start: {seg.last_error()}")
        fault = self.schedule.next()
        due = self.now() + fault.gap
        try:
            while self.now() < self.duration:
                self.tick()
                if not self.seg.alive():
                    if not self.unexpected_exit():
                        break
                    due = self.now() + fault.gap
                elif self.now() >= due and self.seg.ready:
                    self.inject(fault)
                    if not self.seg.ready:
                        break               # not recovered: the run is gone
                    fault = self.schedule.next()
                    due = self.now() + fault.gap
                time.sleep(TICK)
            self.stop()
        finally:
            self.cleanup()
        return self.report()

    def stop(self):
        """The end: SIGINT to a running run, its final checkpoint and ``done:`` line."""
        seg = self.seg
        self.wait_for(lambda: seg.ready or not seg.alive(), self.args.recover_timeout)
        if not seg.alive():
            self.problems.append(f"no run at the end (run {seg.number} ended: "
                                 f"{seg.last_error()})")
            return
        self.stop_at = self.now()
        done = self.interrupt(seg, signal.SIGINT, self.problems)
        self.end_iterations = done and done["iterations"]
        self.problems += self.check_exit(seg, killed=False)

    def interrupt(self, seg, sig, problems):
        """Stop the run ``seg`` with ``sig`` (SIGINT or SIGTERM): it must write a final
        checkpoint, the newest valid one, and exit 0 with its ``done:`` line (returned as a
        dict; None if it did not). Adds what went wrong to ``problems``."""
        seg.look(benchlib.proc_table())
        os.kill(seg.pid, sig)
        try:
            code = seg.finish(self.args.recover_timeout)
        except subprocess.TimeoutExpired:
            problems.append(f"the run did not stop within {self.args.recover_timeout:.0f} s of "
                            f"{sig.name}")
            seg.proc.kill()
            code = seg.finish(60)
        done = benchlib.parse_done("\n".join(seg.stdout))
        if code != 0 or done is None:
            problems.append(f"the run exited {code} on {sig.name}: {seg.last_error()}")
            return None
        newest = self.newest_valid()
        if newest is None or newest[1] != done["iterations"] \
                or newest[0].name != done["checkpoint"].name:
            problems.append(f"the done: line ({done['checkpoint'].name}) is not the newest "
                            f"valid checkpoint ({newest})")
        return done

    def cleanup(self):
        for pid, start in self.stopped:
            if benchlib.is_alive(pid, start):
                _kill(pid, signal.SIGCONT)
        for proc in self.loads:
            proc.kill()
            proc.wait()
        for seg in self.segments:
            if seg.alive():
                seg.proc.kill()
                seg.finish(60)

    # -- the end ---------------------------------------------------------------------------
    def leftovers(self):
        """(files, processes) any run of the soak left: /dev/shm files, live children, and
        temporary checkpoint files older than a minute (a run removes younger ones later).
        multiprocessing's resource tracker exits once the last of its run is gone: give it the
        grace of a killed run's workers."""
        self.wait_for(lambda: not any(seg.survivors() for seg in self.segments), KILLED_GRACE)
        files = [f.name for seg in self.segments for f in seg.shm_files()]
        directory = ckpt.checkpoint_dir(self.logdir)
        files += [p.name for p in directory.glob(".ckpt-*.tmp")
                  if time.time() - p.stat().st_mtime > 60]
        procs = [pid for seg in self.segments for pid in seg.survivors()]
        return files, procs

    def window_rate(self, lo, hi):
        """Training between soak seconds ``lo`` and ``hi`` away from the faults: a
        :class:`Rate` over the stretches between progress lines that overlap no fault (from
        its injection to SETTLE seconds after its effect ended). Progress of each run counts
        from its own start (iterations lost to a kill are not subtracted)."""
        spans = [(f.at, f.until + SETTLE) for f in self.faults]
        trained = seconds = cpu = visits = 0.0
        for seg in self.segments:
            points = [p for p in seg.progress if lo <= p[0] <= hi]
            for (ta, a, _), (tb, b, per_iteration) in zip(points, points[1:]):
                if b > a and not any(s < tb and ta < e for s, e in spans):
                    trained += b - a
                    seconds += tb - ta
                    cpu += self._cpu_at(tb) - self._cpu_at(ta)
                    visits += (b - a) * (per_iteration or 0.0)  # since the previous line
        load = [v for t, v in self.loadavg if lo <= t <= hi]
        return Rate(trained, seconds, cpu, hi - lo, statistics.mean(load) if load else 0.0,
                    visits)

    def _cpu_at(self, t):
        """CPU seconds the runs had used at soak second ``t`` (interpolated)."""
        times = [x for x, _ in self.cpu]
        i = min(max(bisect.bisect_left(times, t), 1), len(times) - 1)
        (t0, c0), (t1, c1) = self.cpu[i - 1], self.cpu[i]
        return c0 + (c1 - c0) * min(max((t - t0) / (t1 - t0), 0.0), 1.0) if t1 > t0 else c1

    def exploitability(self, path):
        proc = subprocess.run([sys.executable, "-m", "holdem.cli.eval_blueprint", "--checkpoint",
                               str(path), "--exploitability"], capture_output=True, text=True,
                              cwd=benchlib.ROOT, timeout=3600)
        m = EXPLOIT_RE.search(proc.stdout)
        if proc.returncode != 0 or m is None:
            self.problems.append(f"eval_blueprint --exploitability failed: {proc.stderr[-300:]}")
            return None
        return float(m[1])

    def exact_game(self):
        from holdem import config as config_mod
        from holdem.analysis import evaluation
        from holdem.games import make_game
        return evaluation.applies("exploitability", make_game(config_mod.load(self.config_path)))

    def report(self):
        self.problems += self.check_checkpoints()
        files, procs = self.leftovers()
        if files:
            self.problems.append(f"leftover files: {', '.join(files)}")
        if procs:
            self.problems.append(f"leftover processes: {procs}")
        lines = ["", "summary", f"{'kind':<12} {'count':>5} {'recovered':>9} {'failures':>8}"]
        for kind in KINDS + ("run-exit",):
            got = [f for f in self.faults if f.kind == kind]
            if got:
                lines.append(self._row(kind, got))
        lines.append(self._row("total", self.faults))
        # From the first progress line to the final SIGINT: start-up and shutdown are not
        # training time.
        begin = self.segments[0].progress[0][0]
        end = self.stop_at or self.now()
        window = min(1200.0, 0.2 * (end - begin))
        first = self.window_rate(begin, begin + window)
        last = self.window_rate(end - window, end)
        lines.append(f"iterations: {self.end_iterations or 0:,} in {(end - begin) / 60:.1f} min "
                     f"of training over {len(self.segments)} run(s); checkpoints verified: "
                     f"{len(self.verified)}")
        lines += self._rate_lines(window, first, last)
        lines.append(self._memory_line(begin + window, end - window))
        lines.append(f"leftover files: {len(files)}; leftover processes: {len(procs)}")
        if self.end_iterations and self.exact_game():
            lines.append(self._exploitability_line())
        lines.append("problems: " + ("none" if not self.problems else "; ".join(self.problems)))
        print("\n".join(lines), flush=True)
        failed = self.problems or any(f.problems or not f.recovered for f in self.faults)
        return 1 if failed else 0

    def _rate_lines(self, window, first, last):
        """The rate in the first and last windows away from faults: iterations per second of
        wall time (what the machine gave the run, other load included), iterations and
        decision-node visits per CPU second the run's processes used (the run's own speed).
        The check (--max-slowdown) is on visits per CPU second: an iteration's work grows as
        the strategy learns (hunl_blueprint's doubles in its first minutes: fewer folds, longer
        lines), and only a slower run does less work per CPU second. Progress lines without
        visits (an older run) fall back to iterations per CPU second."""
        lines = []
        for name, a, b in (("first", first, None), ("last", last, first)):
            line = (f"rate, {name} {window / 60:.1f} min: {a.per_second:,.0f} it/s over "
                    f"{a.seconds / 60:.1f} min away from faults ({a.share:.0%}); "
                    f"{a.per_cpu:,.0f} it per CPU second")
            if a.visits:
                line += (f", {a.visits_per_cpu / 1e6:,.2f} M decision-node visits per CPU "
                         f"second ({a.visits_per_iteration:,.0f} per iteration)")
            line += f"; load average {a.load:.1f}"
            if b is not None and b.per_second and b.per_cpu:
                line += (f" -- the first's {a.per_second / b.per_second:.2f}x it/s, "
                         f"{a.per_cpu / b.per_cpu:.2f}x it per CPU second")
                if a.visits and b.visits:
                    line += f", {a.visits_per_cpu / b.visits_per_cpu:.2f}x visits per CPU second"
            lines.append(line)
        if first.visits and last.visits:
            what, ratio = "decision-node visits", last.visits_per_cpu / first.visits_per_cpu
        else:
            what, ratio = "iterations", last.per_cpu / first.per_cpu if first.per_cpu else 1.0
        if window < MIN_RATE_WINDOW:
            lines.append(f"rate: windows under {MIN_RATE_WINDOW / 60:.0f} min, not judged")
        elif ratio < 1 - self.args.max_slowdown:
            self.problems.append(f"the run slowed down: {ratio:.2f}x the {what} per CPU second "
                                 f"of its first {window / 60:.0f} min (limit "
                                 f"{1 - self.args.max_slowdown:.2f}x)")
        return lines

    @staticmethod
    def _row(kind, faults):
        ok = sum(f.recovered for f in faults)
        bad = sum(bool(f.problems) or not f.recovered for f in faults)
        return f"{kind:<12} {len(faults):>5} {ok:>9} {bad:>8}"

    def _memory_line(self, early_end, late_start):
        early = [b for t, b in self.memory if t <= early_end]
        late = [b for t, b in self.memory if t >= late_start]
        if not early or not late:
            return f"PSS: too few samples ({len(self.memory)})"
        first, last = statistics.median(early), statistics.median(late)
        ratio = last / first
        if ratio > 1 + self.args.memory_tolerance:
            self.problems.append(f"memory grew {ratio:.2f}x (limit "
                                 f"{1 + self.args.memory_tolerance:.2f}x)")
        return (f"PSS (main + workers): first 20% {first / 2**20:,.1f} MiB, last 20% "
                f"{last / 2**20:,.1f} MiB ({ratio:.2f}x; {len(self.memory)} samples)")

    def _exploitability_line(self):
        value = self.exploitability(self.logdir)
        if value is None or not self.args.reference:
            return (f"exploitability: {value:.6g} (no --reference)" if value is not None
                    else "exploitability: not measured")
        ref_dir = self.soak_dir / "reference"
        workers = self.args.reference_workers
        log(f"soak: reference run, {'in-process' if workers == 1 else f'{workers} workers'}, "
            f"{self.end_iterations:,} iterations")
        benchlib.train(self.config_path, ref_dir, workers, seed=self.args.seed,
                       iters=self.end_iterations, memory=False)
        reference = self.exploitability(ref_dir)
        if reference is None:
            return f"exploitability: {value:.6g} (the reference failed)"
        ratio = value / reference if reference > 0 else float("inf")
        if ratio > self.args.max_ratio:
            self.problems.append(f"exploitability {ratio:.2f}x the unfaulted run's (limit "
                                 f"{self.args.max_ratio}x)")
        what = "in-process" if workers == 1 else f"{workers}-worker"
        return (f"exploitability: {value:.6g}, unfaulted {what} run {reference:.6g} "
                f"({ratio:.2f}x; limit {self.args.max_ratio}x)")


def _kill(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _die_with_parent():
    """In a child before exec: SIGKILL when the soak dies, however it dies (a soak killed by a
    test's timeout must not leave a run training for an hour)."""
    _LIBC.prctl(1, signal.SIGKILL)      # PR_SET_PDEATHSIG; nothing imported after fork


def _start(script, *args):
    return subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, preexec_fn=_die_with_parent)


def _gap(text):
    lo, _, hi = text.partition("-")
    try:
        lo, hi = float(lo), float(hi or lo)
    except ValueError:
        raise SystemExit(f"--fault-every: expected SECONDS or LO-HI, got {text!r}") from None
    if not 0 < lo <= hi:
        raise SystemExit(f"--fault-every: expected 0 < LO <= HI, got {text!r}")
    return lo, hi


def _kinds(text):
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    unknown = set(kinds) - set(KINDS)
    if unknown or not kinds:
        raise SystemExit(f"--faults: unknown kinds {sorted(unknown)}; choose from "
                         f"{', '.join(KINDS)}")
    return kinds


def main(argv=None):
    p = benchlib.parser(__doc__, "game of configs/GAME.yaml to soak (default leduc)")
    p.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--minutes", type=float, required=True, help="length of the soak")
    p.add_argument("--fault-every", type=_gap, default=(60.0, 180.0), metavar="LO-HI",
                   help="seconds between faults, drawn uniformly (default 60-180)")
    p.add_argument("--faults", type=_kinds, default=list(KINDS), metavar="KIND,...",
                   help=f"fault kinds to inject (default all: {','.join(KINDS)})")
    p.add_argument("--logdir", required=True, metavar="DIR", help="the run's logdir")
    p.add_argument("--overwrite", action="store_true",
                   help="start over in a DIR that holds a run (train_blueprint --overwrite)")
    p.add_argument("--seed", type=int, default=0, help="fault schedule and training seed")
    p.add_argument("--snapshot-interval", type=float, default=15.0, metavar="SECONDS",
                   help="seconds between checkpoints (default 15; each is loaded and "
                        "verified, so a large store wants more)")
    p.add_argument("--worker-timeout", type=float, default=5.0, metavar="SECONDS",
                   help="the run's worker_timeout; worker-stop lasts 0.2-0.6x or 2-3x it "
                        "(default 5)")
    p.add_argument("--worker-restarts", type=int, metavar="N",
                   help="the run's worker_restarts (default: the config's): raise it when "
                        "worker faults come faster than its restart budget allows")
    p.add_argument("--recover-timeout", type=float, default=180.0, metavar="SECONDS",
                   help="how long a fault may take to recover (default 180)")
    p.add_argument("--memory-tolerance", type=float, default=0.25, metavar="FRACTION",
                   help="PSS growth allowed between the first and last 20%% (default 0.25)")
    p.add_argument("--max-slowdown", type=float, default=0.10, metavar="FRACTION",
                   help="drop allowed in decision-node visits per CPU second between the first "
                        "and last 20 minutes (or 20%%) away from faults; judged when those "
                        "windows last 5 minutes or more (default 0.10)")
    p.add_argument("--reference", action="store_true",
                   help="exact games: train an unfaulted in-process run of the same iterations "
                        "and compare exploitability")
    p.add_argument("--reference-workers", type=int, default=1, metavar="N",
                   help="workers of the --reference run (default 1: in-process)")
    p.add_argument("--max-ratio", type=float, default=1.2,
                   help="exploitability limit against --reference (default 1.2)")
    args = p.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so the soak stops what it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    return Soak(args).run()


if __name__ == "__main__":
    sys.exit(main())
