"""The invariant checks of a chaos soak (:mod:`soak`; what is checked is described in its
docstring): after every fault, the logdir's checkpoints and what a run that ended left behind;
at the end, leftovers, the training rate away from faults, memory and exploitability, and the
summary table.

:class:`SoakChecks` is a mixin of :class:`soak.Soak`: it reads the soak's record (``args``,
``logdir``, ``segments``, ``faults``, ``verified``, ``memory``, ``cpu``, ``loadavg``, ``problems``)
and waits with its ``wait_for``.
"""

import bisect
import re
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

import benchlib
from benchlib import log
from soak_faults import KINDS
from soak_segment import CLEAN_EXIT_GRACE, KILLED_GRACE, kill

from holdem import checkpoint as ckpt

SETTLE = 10.0                   # seconds after a fault's effect ended still counted as its own
EXPLOIT_RE = re.compile(r"^exploitability: ([\d.eE+-]+)", re.M)
MIN_RATE_WINDOW = 300.0         # seconds: shorter first/last windows are too noisy to judge


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


class SoakChecks:
    """The checks of the soak, each returning or recording the problems it found (a mixin of
    :class:`soak.Soak`)."""

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
                kill(pid, signal.SIGKILL)
        if not killed:
            files = seg.shm_files()
            if files:
                problems.append(f"run {seg.number} left {', '.join(f.name for f in files)}")
        return problems

    def newest_iterations(self):
        found = self.newest_valid()
        return found[1] if found else None
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
