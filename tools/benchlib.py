"""Pieces the training benchmarks share: running ``holdem.cli.train_blueprint`` as a child,
parsing its ``done:`` and ``merge:`` lines, and sampling memory (PSS) from ``/proc``.

Importing this module first also puts the repository root ahead of any installed ``holdem`` on
``sys.path``: ``python tools/X.py`` starts with ``tools/`` on the path, not the checkout, so an
editable install of another checkout would otherwise be the code measured.
"""

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402  (after the path fix above, like every holdem import)

DONE_RE = re.compile(r"^done: iterations=(\d+) elapsed=([\d.]+) it/s=([\d.]+) infosets=(\d+) "
                     r"checkpoint=(\S+)$", re.M)
MERGE_RE = re.compile(r"^merge: ([\d.]+) ms/delta \(([\d.]+)% of a core, ([\d.]+) deltas/pass\); "
                      r"(\d+) iterations/delta(?: \(flushes paced[^)]*\))?; flush to merge "
                      r"([\d.]+) ms \(([\d,]+) iterations; waking ([\d.]+|nan) ms\); delta "
                      r"([\d.]+) bytes/iteration; store ([^;]+); main "
                      r"process busy ([\d.]+)% of a core; worker restarts (\d+)"
                      r"(?:; unmerged iterations capped[^\n]*)?$", re.M)
PROGRESS_RE = re.compile(r"iterations=([\d,]+) it/s=")
STORE_FILE_RE = re.compile(r"/holdem-\d+-[0-9a-f]+-g\d+\.store")
KIB = 1024


def parser(doc, game_help):
    """An ArgumentParser described by the tool's docstring ``doc`` (first paragraph; the rest,
    with its example commands, as the epilog) with the ``--game`` and ``--config`` options."""
    from holdem import registry

    p = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(doc.split("\n\n")[1:]))
    p.add_argument("--game", default="leduc", choices=registry.names_with_defaults(),
                   help=game_help)
    p.add_argument("--config", metavar="FILE", help="YAML config instead of --game")
    return p


def log(text):
    """Progress for the reader: stderr, so stdout holds only the results."""
    print(text, file=sys.stderr, flush=True)


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# -- /proc ------------------------------------------------------------------------------------
def children(ppid):
    """Pids of the live worker processes of ``ppid`` (multiprocessing's resource tracker left
    out)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        rest = _stat_fields(entry)
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if (rest is not None and int(rest[1]) == ppid and rest[0] != "Z"
                and b"resource_tracker" not in cmd):
            out.append(int(entry))
    return sorted(out)


def proc_table():
    """{pid: (parent pid, state letter, start time in clock ticks since boot)} of every process
    visible in ``/proc`` (the start time tells a pid apart from a later process that reuses it)."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat = _stat(int(entry))
        if stat is not None:
            table[int(entry)] = stat
    return table


def _stat_fields(pid):
    """The fields of ``/proc/PID/stat`` after the command name (the state first), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()


def _stat(pid):
    rest = _stat_fields(pid)
    return None if rest is None else (int(rest[1]), rest[0], int(rest[19]))


def cpu_seconds(pid):
    """User + system CPU seconds process ``pid`` used so far (None if it is gone)."""
    rest = _stat_fields(pid)
    return None if rest is None else (int(rest[11]) + int(rest[12])) / CLOCK_TICKS


def is_alive(pid, start):
    """Whether process ``pid``, started at ``start`` (:func:`proc_table`'s clock ticks), still
    runs: neither gone nor a zombie nor another process under the same pid."""
    stat = _stat(pid)
    return stat is not None and stat[1] != "Z" and stat[2] == start


def pss(pid):
    """(total PSS, PSS of holdem store mappings) of ``pid`` in bytes, or None if it is gone."""
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        smaps = Path(f"/proc/{pid}/smaps").read_text()
    except OSError:
        return None
    total = int(re.search(r"^Pss:\s+(\d+) kB", rollup, re.M)[1]) * KIB
    store, in_store = 0, False
    for line in smaps.splitlines():
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            in_store = STORE_FILE_RE.search(line) is not None
        elif in_store and line.startswith("Pss:"):
            store += int(line.split()[1]) * KIB
    return total, store


def sample_pss(main_pid, workers):
    """{role: (pid, total PSS, store PSS)} for the main process and each of its ``workers``
    (none when ``workers`` is 1: in-process), or None unless every one of them answered."""
    sample = {}
    pids = [("main", main_pid)] + [(f"worker {i}", p) for i, p in
                                   enumerate(children(main_pid))]
    for role, pid in pids:
        got = pss(pid)
        if got is not None:
            sample[role] = (pid, *got)
    return sample if len(sample) == workers + (1 if workers > 1 else 0) else None


# -- output lines -----------------------------------------------------------------------------
def parse_done(stdout):
    """The ``done:`` line of train_blueprint as a dict, or None."""
    m = DONE_RE.search(stdout)
    if m is None:
        return None
    return {"iterations": int(m[1]), "elapsed": float(m[2]), "rate": float(m[3]),
            "infosets": int(m[4]), "checkpoint": Path(m[5])}


def parse_merge(stderr):
    """The parallel run's ``merge:`` line (stderr) as a dict, or None (in-process runs)."""
    m = MERGE_RE.search(stderr)
    if m is None:
        return None
    return {"merge_ms": float(m[1]), "merge_core": float(m[2]), "per_pass": float(m[3]),
            "flush": int(m[4]), "delay_ms": float(m[5]), "delay_iters": int(m[6].replace(",", "")),
            "wake_ms": float(m[7]), "delta_bytes": float(m[8]), "main_busy": float(m[10]),
            "restarts": int(m[11])}


# -- runs -------------------------------------------------------------------------------------
def config_source(config, game):
    """The YAML file of ``--config FILE`` or, without it, of ``--game GAME``."""
    return Path(config) if config else ROOT / "configs" / f"{game}.yaml"


def write_config(source, path, seed=0, **train):
    """Write the YAML ``source`` to ``path`` with the bucket file's path made absolute (so the
    copy works from any directory) and ``train`` keys (and ``seed``) set; returns the data."""
    data = yaml.safe_load(Path(source).read_text())
    if data.get("game", {}).get("buckets"):
        from holdem.games.nlhe.game import resolve_asset
        data["game"]["buckets"] = str(resolve_asset(data["game"]["buckets"]).resolve())
    data.setdefault("train", {}).update(train, seed=seed)
    Path(path).write_text(yaml.safe_dump(data))
    return data


class Run:
    """One finished train_blueprint run: the ``done:`` fields as attributes (``iterations``,
    ``elapsed``, ``rate``, ``infosets``, ``checkpoint``), ``merge`` (dict or None) and ``memory``
    (:func:`sample_pss`'s dict, empty when the run ended before a sample was taken)."""

    def __init__(self, workers, done, merge, memory):
        self.workers = workers
        self.label = "in-process" if workers == 1 else f"{workers} workers"
        self.__dict__.update(done)
        self.merge = merge
        self.memory = memory


def train(source, logdir, workers, seed=0, seconds=None, iters=None, start_method="spawn",
          extra_args=(), memory=True):
    """Run train_blueprint on the YAML ``source`` for ``seconds`` (or ``iters``) with ``workers``
    (1 = in-process) under ``logdir``, with ``extra_args`` (e.g. ``--backend ray``); PSS is
    sampled about half-way through training unless ``memory`` is false (reading ``smaps``
    takes CPU from the run; Ray's daemons are the run's children, not its workers). Returns a
    :class:`Run`; raises SystemExit with the run's stderr if it failed."""
    logdir = Path(logdir)
    config = logdir.with_suffix(".yaml")
    data = yaml.safe_load(Path(source).read_text())
    if data.get("game", {}).get("buckets"):
        from holdem.games.nlhe.game import resolve_asset
        data["game"]["buckets"] = str(resolve_asset(data["game"]["buckets"]).resolve())
    # Progress lines tell how far training is, so memory is sampled mid-run.
    data.setdefault("train", {}).update(progress_interval=0.25, seed=seed)
    if workers == 1:
        # The in-process run of a config tuned for workers: its worker keys would be refused.
        from holdem.config import WORKER_KEYS
        for key in WORKER_KEYS:
            data["train"].pop(key, None)
    config.write_text(yaml.safe_dump(data))
    # A benchmark's logdir is scratch: a rerun replaces the run in it.
    cmd = [sys.executable, "-m", "holdem.cli.train_blueprint", "--config", str(config),
           "--num-workers", str(workers), "--logdir", str(logdir), "--overwrite"]
    cmd += ["--iters", str(iters)] if seconds is None else ["--time-budget", str(seconds)]
    if workers > 1 and "ray" not in extra_args:
        cmd += ["--start-method", start_method]
    cmd += list(extra_args)
    err_path = logdir.with_suffix(".stderr")
    with open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, cwd=ROOT)
    try:
        start = None
        best = None                 # (distance from the middle, sample)
        while proc.poll() is None:
            time.sleep(0.1)
            if not memory:
                continue
            found = PROGRESS_RE.findall(err_path.read_text())
            done = int(found[-1].replace(",", "")) if found else 0
            if done == 0:
                continue
            start = start or time.monotonic()
            frac = done / iters if seconds is None else (time.monotonic() - start) / seconds
            # One early sample in case the run ends soon, then only near the middle: reading
            # smaps walks every page of every process, CPU taken from the runs being measured.
            if best is not None and (frac < 0.4 or (frac > 0.5 and best[0] < 0.1)):
                continue
            sample = sample_pss(proc.pid, workers)
            if sample is not None and (best is None or abs(frac - 0.5) < best[0]):
                best = (abs(frac - 0.5), sample)
        stdout = proc.communicate(timeout=60)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = err_path.read_text()
    done = parse_done(stdout)
    if proc.returncode != 0 or done is None:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{stderr}")
    return Run(workers, done, parse_merge(stderr), best[1] if best else {})
