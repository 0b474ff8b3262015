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
  disk-full     RLIMIT_FSIZE of the main process (prlimit on the running process) set, by
                turns, to 1 KiB (every write fails with EFBIG) or to the size of the store's
                newest shared-memory generation (a checkpoint fits, the store's next
                generation does not), for a while: the run stops with one error line (a
                traceback fails the check) and is resumed, or carries on and writes the next
                checkpoint once the limit is lifted. A run stopped because its store could not
                grow must exit 3 and name its final checkpoint, which must be the newest that
                loads and hold the iterations the line says; under the 1 KiB limit the line
                may say instead that the final checkpoint was refused too.
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

# This module is the CLI and the soak's loop (one run at a time, a fault when one is due);
# soak_segment.py holds the runs (processes, output, children), soak_faults.py the fault
# schedule and injectors, soak_checks.py the checks and the summary.

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import benchlib
from benchlib import log
from soak_checks import SoakChecks
from soak_faults import KINDS, WORKER_KINDS, FaultInjector, Schedule
from soak_segment import Segment, kill

TICK = 0.25                     # seconds between looks at the run


class Soak(FaultInjector, SoakChecks):
    """The soak: one run (a :class:`soak_segment.Segment`) at a time, a fault from the schedule
    when one is due, the checks after each, the summary at the end."""

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
                kill(pid, signal.SIGCONT)
        for proc in self.loads:
            proc.kill()
            proc.wait()
        for seg in self.segments:
            if seg.alive():
                seg.proc.kill()
                seg.finish(60)


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
