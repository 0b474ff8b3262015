"""The lag simulator's clock: how long a worker's flush and the main process's merge pass take,
in nominal seconds, so that when a flush is merged follows from the runtime's costs and not
from the timers of the machine that runs the simulation.

:class:`holdem.runtime.lagged.LaggedExecutor` runs W simulated workers on one core. Each has a
clock: a slice of iterations advances it by the slice's decision-node visits times
:attr:`Costs.visit`, a flush by :attr:`Costs.flush` plus its record's bytes times
:attr:`Costs.encode_byte`. A finished flush's record *arrives* at the main process at its
worker's clock. :class:`MainProcess` is the main process as the process executor's loop is
(:meth:`holdem.runtime.process.ProcessExecutor.results`): idle, it wakes :attr:`Costs.wake`
after a record arrives (longer, and every cost stretched, when the workers and it share
cores: :func:`core_share`), takes every record that has
arrived by then into one merge pass and merges them at the pass's end, which comes
``pass_ + sum(record + bytes x byte / thread_gain)`` later (records over a quarter of a ring
come through the pipe: ``pipe_byte`` more per byte). Records that arrive meanwhile wait for the
next pass; a DCFR sweep (:meth:`MainProcess.pause`) holds the main process for its length. A
worker whose ring (sized as the process pool sizes it, :func:`holdem.runtime.ring.ring_bytes_for`)
is full, or whose unmerged iterations would pass the cap
(:func:`holdem.runtime.flush.unmerged_cap`), waits, as a real one blocks on its pipe, until
merges free its ring or bring it under the cap.

So the flush-to-merge delay is not an input: it comes out of the records' real sizes and these
costs, grows with the worker count and, when the records arrive faster than passes absorb
them, rises until the rings hold the workers back -- what 15 workers did on a 16-core machine
(docs/parallel.md). Nothing here reads a clock: a seed gives the same run on a quiet machine and
on a loaded one.

The costs were measured on the 2-core development machine (the runs they come from:
docs/parallel.md#the-lag-simulators-clock); :func:`costs_for` gives a game's, and every one can
be overridden.
"""

import bisect
import dataclasses

from holdem.runtime.ring import DEFAULT_BYTES, RECORDS_PER_RING

# A worker's traversal time per decision-node visit, by game name, on one core of the 2-core
# machine: Leduc 56 ns (CPU time of BatchRunner flushes against a warm store, 22.3 visits per
# iteration), No-Limit Hold'em 145 ns (hunl_default: 19-21 us per iteration, 141 visits; issue
# 38). Kuhn's is Leduc's.
VISIT_SECONDS = {"kuhn": 56e-9, "leduc": 56e-9, "nlhe": 145e-9}
DEFAULT_VISIT_SECONDS = 145e-9


# The main process's costs on the 16-core machine lent (2026-11-28), over this machine's:
# tools/bench_mainloop.py on both, the same warm 3 M-iteration hunl_default checkpoint, 15 virtual
# workers at that machine's recorded worker rates (13,219 and 18,576 iterations/s): main CPU per
# 50-iteration record 216.8, 176.7 and 240.2 us there against 126.8, 109.4 and 127.8 here (1.71x,
# 1.62x, 1.88x). Its single core is that much slower for the workers too (their CPU per iteration
# 57-59 us against 34-37 here), so the factor is mostly the machine's speed; give its workers'
# speed with --visit-ns (its 15 real workers: 341 ns a visit). ``Costs.main_scaled``.
SIXTEEN_CORE_MAIN_FACTOR = 1.7


@dataclasses.dataclass(frozen=True)
class Costs:
    """Nominal seconds of the simulated runtime (see the module docstring), measured on the
    2-core machine (docs/parallel.md#the-lag-simulators-clock)."""

    visit: float = DEFAULT_VISIT_SECONDS   # worker: per decision-node visit
    flush: float = 80e-6                   # worker: per flush beyond its visits (a run call,
    #                                        the split's and the encoding's fixed parts)
    encode_byte: float = 2.2e-9            # worker: per record byte (split, encode, ring copy)
    wake: float = 60e-6                    # main: from an arrival to its pass, a core free
    wake_shared: float = 1.5e-3            # the same when workers and main share the cores
    # The main process's CPU per merge pass and per record, CPU per record = record + byte x
    # bytes + pass_ / records per pass. Fitted to 10 runs of tools/bench_mainloop.py on the quiet
    # 2-core machine, 2026-11-28, after the pass's Python was cut (9ebebde, 8d0f519;
    # hunl_default resumed from a warm 3 M-iteration checkpoint, 15 virtual workers, one merge
    # thread, flushes of 50 to 1,000 iterations at 16,400 iterations/s a worker, and flush 50 at
    # 1,000 and 4,000: records of 53-663 kB, 1-12 a pass, 90-1,021 us each): 196 us a pass,
    # 2 us a record (held), 1.251 ns a byte, within 6%. Before the cut, on the machine shared
    # with four to six jobs: 366 us, 4.3 us, 1.257 ns. The pass and record costs here lie
    # between the two (280 us, 3 us): the checks against the real runtime run beside other
    # tests, and with 196 us the 2-worker one fell to 0.65x (CI), with 366 us the 63-worker one
    # rose to 1.79x; with these they gave 1.01-1.18x, 0.90x and 1.01x
    # (docs/parallel.md#the-lag-simulators-clock). Before all that, from 2-worker merge lines:
    # 200 us, 80 us and 2.4 ns. Since b1ac5b1 and f9eaf7b (a pass's fixed Python cut again: a
    # one-record pass 188.5, 178.0 -> 152.3, 155.6 us in the loop), 200 us: the 2-worker check
    # gave 1.36-1.46x with 230 us and 1.55-1.63x with 280 (the real passes faster), 1.16-1.22x
    # with 200; the 15- and 63-worker one 1.32x and 0.82x alone, 1.22x and 1.02x beside other
    # tests (/work/exp/s28/ratios2.txt).
    pass_: float = 200e-6                  # main: per merge pass (wait, loop, bookkeeping)
    record: float = 3e-6                   # main: per record (note, index, checks, result)
    byte: float = 1.25e-9                  # main: per record byte merged, one merge thread
    pipe_byte: float = 0.5e-9              # main: per byte of a record sent through the pipe
    sweep_entry: float = 2e-9              # main: per store entry of a DCFR sweep
    thread_gain: float = 0.4               # merge threads T divide the byte cost by 1 + g (T-1)

    def with_changes(self, **changes):
        """These costs with some replaced (None values are ignored)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    def main_scaled(self, factor):
        """These costs with the main process's work (passes, records, bytes, pipe, sweeps)
        ``factor`` times as long: another machine's main process
        (:data:`SIXTEEN_CORE_MAIN_FACTOR`), or this one's given a share of a core."""
        return dataclasses.replace(
            self, pass_=factor * self.pass_, record=factor * self.record,
            byte=factor * self.byte, pipe_byte=factor * self.pipe_byte,
            sweep_entry=factor * self.sweep_entry)


def costs_for(game, **changes):
    """The default :class:`Costs` of ``game`` (its visit cost by name), with ``changes``."""
    return Costs(visit=VISIT_SECONDS.get(game.name, DEFAULT_VISIT_SECONDS)).with_changes(
        **changes)


def core_share(workers, cores):
    """How much slower each process runs when ``workers`` workers and the main process share
    ``cores`` cores: (W + 1) / cores, at least 1."""
    return max(1.0, (int(workers) + 1) / max(1, int(cores)))


class MainProcess:
    """The simulated main process: records arrive (:meth:`arrive`), passes merge them
    (:meth:`advance`). Times are nominal seconds from the run's start. ``share``: how much
    slower it runs for sharing cores (:func:`core_share`); above 1 it also wakes more slowly
    (:attr:`Costs.wake_shared`)."""

    def __init__(self, costs, merge_threads=1, share=1.0, ring_bytes=DEFAULT_BYTES):
        self.costs = costs
        self.ring_bytes = int(ring_bytes)   # a record over a quarter of it takes the pipe
        self.share = max(1.0, float(share))
        self.wake = costs.wake_shared if self.share > 1.0 else costs.wake
        self.byte = costs.byte / (1.0 + costs.thread_gain * (max(1, merge_threads) - 1))
        self.free = 0.0             # when it is next idle
        self.clock = 0.0            # the end of the last pass (or pause) it finished
        self.arrived = []           # (time, seq, worker, record), by time
        self.pass_end = None        # the running pass's end, or None
        self.pass_records = []
        self.busy = 0.0             # seconds of finished passes and of pauses
        self.merging = 0.0          # of that, the finished passes' records (not pass_)
        self.pass_merging = 0.0     # the running pass's
        self.pass_start = 0.0
        self._seq = 0

    def arrive(self, time, worker, record):
        bisect.insort(self.arrived, (time, self._seq, worker, record))
        self._seq += 1

    def pause(self, seconds):
        """The main thread is busy ``seconds`` (a DCFR sweep) as soon as its pass is over."""
        start = max(self.free, self.clock) if self.pass_end is None else self.pass_end
        self.free = start + seconds
        self.busy += seconds

    def record_cost(self, length):
        c = self.costs
        pipe = c.pipe_byte * length if length > self.ring_bytes // RECORDS_PER_RING else 0.0
        return self.share * (c.record + self.byte * length + pipe)

    def next_event(self):
        """When the next pass ends or starts (inf: nothing to do)."""
        if self.pass_end is not None:
            return self.pass_end
        if self.arrived:
            return max(self.free, self.arrived[0][0] + self.wake)
        return float("inf")

    def advance(self, until):
        """Run the main process up to time ``until`` (every record arriving by then is known);
        returns the passes that ended, each as (end, [(arrival, worker, record)])."""
        done = []
        while True:
            if self.pass_end is not None:
                if self.pass_end > until:
                    break
                done.append((self.pass_end, self.pass_records))
                self.busy += self.pass_end - self.pass_start
                self.merging += self.pass_merging
                self.free = self.clock = self.pass_end
                self.pass_end, self.pass_records = None, []
                continue
            if not self.arrived:
                break
            start = max(self.free, self.arrived[0][0] + self.wake)
            if start > until:
                break
            k = bisect.bisect_right(self.arrived, (start, float("inf")))
            taken, self.arrived = self.arrived[:k], self.arrived[k:]
            self.pass_merging = sum(self.record_cost(len(r[3])) for r in taken)
            self.pass_start = start
            self.pass_end = start + self.share * self.costs.pass_ + self.pass_merging
            self.pass_records = [(t, w, r) for t, _, w, r in taken]
        return done
