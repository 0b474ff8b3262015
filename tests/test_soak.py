"""The CI soak (issue 26): ``tools/soak.py`` on Leduc and on ``hunl_default``, 27 s and 21 s, a
fault every 1-2 s after the previous one recovered, with a fixed seed; every fault kind is drawn
for one game or the other. The soak's own checks decide (nothing lost, nothing leaked, resumes
from the newest valid checkpoint, Leduc's exploitability against an unfaulted run); the test
asserts its exit code and that its summary shows each injected kind recovered. No timing is
asserted: every wait in the soak has a generous timeout, so load only makes it slower."""

import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROW_RE = re.compile(r"^([a-z-]+) +(\d+) +(\d+) +(\d+)$", re.M)

SOAKS = {
    # Faults that restart the main process on the game that starts fastest, with the
    # exploitability check; worker and load faults on the No-Limit game. The exploitability
    # limit is wider than the soak's 1.2x: at these few million iterations on a loaded 2-core
    # machine, 2 workers alone, unfaulted, gave 1.4x the in-process figure (seed 4), and short
    # soaks gave 1.09x-1.67x (five seeds); 2x still catches a run that lost its training.
    "leduc": (["--game", "leduc", "--minutes", "0.45", "--faults",
               "main-kill,main-stop,disk-full", "--reference", "--max-ratio", "2"],
              {"main-kill", "main-stop", "disk-full"}),
    # A worker fault every few seconds would exhaust the restart budget (5 failures of one
    # worker, each within 60 s of the one before), which stops a run by design.
    "hunl_default": (["--config", "configs/hunl_default.yaml", "--minutes", "0.35", "--faults",
                      "worker-kill,worker-stop,slow-disk,cpu-load", "--worker-restarts", "50"],
                     {"worker-kill", "worker-stop", "slow-disk", "cpu-load"}),
}


def summary_rows(stdout):
    """{kind: (count, recovered, failures)} of the soak's summary table."""
    table = stdout.split("\nsummary\n", 1)[1]
    return {m[1]: tuple(map(int, m.groups()[1:])) for m in ROW_RE.finditer(table)}


@pytest.mark.parametrize("game", sorted(SOAKS))
def test_ci_soak_recovers_from_every_fault(game, tmp_path):
    args, kinds = SOAKS[game]
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "soak.py"), *args, "--workers",
                           "2", "--fault-every", "1-2", "--seed", "3", "--snapshot-interval",
                           "1", "--worker-timeout", "1.5", "--logdir", str(tmp_path / "run")],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    report = f"{proc.stdout}\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, report
    rows = summary_rows(proc.stdout)
    # Which kinds fit depends on the load (a resume takes 3-8 s here): at least two of them.
    injected = {kind for kind in rows if kind != "total"}
    assert len(injected) >= 2 and injected <= kinds, report
    for kind in injected:
        count, recovered, failures = rows[kind]
        assert count == recovered and failures == 0, report
    assert "run-exit" not in rows, report
    assert "leftover files: 0; leftover processes: 0" in proc.stdout, report
    assert "problems: none" in proc.stdout, report
    if game == "leduc":
        assert "unfaulted in-process run" in proc.stdout, report


def _soak_modules():
    """tools/soak.py (the ``Soak`` class) and tools/soak_checks.py (``SETTLE``, ``Rate``)."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import soak
        import soak_checks
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return soak, soak_checks


def test_rates_leave_out_the_stretches_a_fault_touched():
    """Known progress: 100 it/s, a fault from 20 s whose effect ended at 30 s (counted until
    40 s with the settle time), a second run from 50 s at 300 it/s; the runs used half a CPU
    second per wall second. Only the stretches clear of the fault count."""
    soak, checks = _soak_modules()
    assert checks.SETTLE == 10.0
    run1 = SimpleNamespace(progress=[(t, 100 * t, 4.0) for t in range(0, 46)])     # to 45 s
    run2 = SimpleNamespace(progress=[(t, 300 * (t - 50), 6.0) for t in range(50, 101)])
    fault = SimpleNamespace(at=20.0, until=30.0)
    view = SimpleNamespace(segments=[run1, run2], faults=[fault],
                           cpu=[(0.0, 0.0), (100.0, 50.0)], loadavg=[(10.0, 1.0), (60.0, 3.0)])
    view._cpu_at = lambda t: soak.Soak._cpu_at(view, t)
    rate = soak.Soak.window_rate(view, 0.0, 100.0)
    # kept: 0-20 s (2,000 it) and 40-45 s (500 it) of run 1; 50-100 s of run 2 (15,000 it)
    assert rate.seconds == pytest.approx(75.0)
    assert rate.trained == pytest.approx(17_500)
    assert rate.per_second == pytest.approx(17_500 / 75)
    assert rate.per_cpu == pytest.approx(17_500 / 37.5)
    assert rate.share == pytest.approx(0.75)
    assert rate.load == pytest.approx(2.0)
    # 4 visits per iteration in run 1, 6 in run 2
    assert rate.visits == pytest.approx(2_500 * 4 + 15_000 * 6)
    assert rate.visits_per_cpu == pytest.approx(100_000 / 37.5)
    assert rate.visits_per_iteration == pytest.approx(100_000 / 17_500)
    clear = soak.Soak.window_rate(view, 50.0, 100.0)
    assert clear.per_second == pytest.approx(300.0) and clear.share == pytest.approx(1.0)


@pytest.mark.parametrize("last_visits, problem", [
    (1_000_000.0, None),                    # half the iterations, twice the visits each: flat
    (800_000.0, "0.80x the decision-node visits per CPU second"),
    (0.0, "0.50x the iterations per CPU second"),   # progress lines without visits
])
def test_the_slowdown_check_judges_visits_per_cpu_second(last_visits, problem):
    """Iterations per CPU second halve between the windows: a run whose iterations do twice
    the work (visits) passes, one whose visits per CPU second fell 20% fails, and without
    visits the check falls back to iterations."""
    soak, checks = _soak_modules()
    first = checks.Rate(trained=1000.0, seconds=400.0, cpu=800.0, window=600.0, load=1.0,
                        visits=1_000_000.0 if last_visits else 0.0)
    last = checks.Rate(trained=500.0, seconds=400.0, cpu=800.0, window=600.0, load=1.0,
                       visits=last_visits)
    view = SimpleNamespace(problems=[], args=SimpleNamespace(max_slowdown=0.10))
    lines = soak.Soak._rate_lines(view, 600.0, first, last)
    assert "0.50x it per CPU second" in lines[1]
    if problem is None:
        assert view.problems == [] and "1.00x visits per CPU second" in lines[1]
    else:
        assert len(view.problems) == 1 and problem in view.problems[0], view.problems
