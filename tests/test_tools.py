"""Smoke tests of the parallel-training benchmarks in tools/: each runs on Leduc with tiny
settings and prints its documented last line with positive figures."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from holdem import config as config_mod
from holdem.delta import records
from holdem.runtime.worker import BatchRunner
from holdem.store.store import RegretStore

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"
LEDUC_INFOSETS = 288


def run_tool(name, *args, timeout=300):
    proc = subprocess.run([sys.executable, str(TOOLS / name), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return proc


def fields(stdout):
    """``name: value`` lines as a dict of strings."""
    return dict(line.split(": ", 1) for line in stdout.splitlines() if ": " in line)


@pytest.mark.parametrize("name", ["bench_merge.py", "bench_mainloop.py", "bench_scaling.py",
                                  "bench_backends.py",
                                  "bench_visits.py", "checkpoint_digest.py", "soak.py",
                                  "openspiel_mccfr.py"])
def test_help_shows_example_commands(name):
    proc = run_tool(name, "--help", timeout=60)
    assert f"python tools/{name}" in proc.stdout


def test_the_openspiel_reference_says_it_needs_openspiel():
    import importlib.util

    if importlib.util.find_spec("pyspiel") is not None:
        pytest.skip("OpenSpiel is installed here")
    proc = subprocess.run([sys.executable, str(TOOLS / "openspiel_mccfr.py"), "kuhn_poker"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr == "openspiel_mccfr: error: needs OpenSpiel (pip install open_spiel)\n"


@pytest.fixture(scope="module")
def bench_merge():
    sys.path.insert(0, str(TOOLS))
    try:
        import bench_merge
    finally:
        sys.path.remove(str(TOOLS))
    return bench_merge


def test_consume_merges_what_produce_recorded(bench_merge, leduc):
    config = config_mod.default_for_game("leduc")
    runner = BatchRunner(leduc, config)
    empty = RegretStore(row_capacity=16)
    payload = bench_merge.produce(runner, empty.arrays, 0, 200, True)
    delta = records.decode_delta(payload)
    assert delta["regret_offsets"].size == delta["strategy_offsets"].size == 0   # all new
    state = bench_merge.Replay(leduc, config, empty, 0)
    assert bench_merge.consume(state, [payload], 1) == 200
    assert state.iterations == 200
    assert 0 < state.store.num_infosets == delta["keys"].size
    assert empty.num_infosets == 0                 # the replay merged into a copy
    for i in (0, delta["keys"].size - 1):
        key = delta["keys"][i]
        regrets, strategy = state.store.values_of(key)
        start = int(delta["num_actions"][:i].sum())
        end = start + int(delta["num_actions"][i])
        np.testing.assert_allclose(regrets, delta["new_regrets"][start:end])
        np.testing.assert_allclose(strategy, delta["new_strategy"][start:end])
    # Two more flushes against the filled store name their rows by offset; merged in one
    # pass on two threads, they give what merging them one at a time gives.
    second = bench_merge.produce(runner, state.store.arrays, 200, 200, True)
    third = bench_merge.produce(runner, state.store.arrays, 400, 100, True)
    msg = records.decode_delta(second)
    assert 0 < msg["regret_offsets"].size <= state.store.num_infosets
    one_by_one = bench_merge.Replay(leduc, config, state.store, 200)
    assert bench_merge.consume(one_by_one, [second], 1) == 200
    assert bench_merge.consume(one_by_one, [third], 1) == 100
    one_by_one.close()
    before = state.store.arrays.regrets.copy()
    assert bench_merge.consume(state, [second, third], 2) == 300
    state.close()
    np.testing.assert_array_equal(state.store.arrays.regrets, one_by_one.store.arrays.regrets)
    np.testing.assert_array_equal(state.store.arrays.strategy_sum,
                                  one_by_one.store.arrays.strategy_sum)
    pos = 0
    for off in msg["regret_offsets"][:3].tolist():        # the second's rows: added
        na = int(state.store.arrays.row_num_actions[np.searchsorted(state.store.used()[2], off)])
        assert not np.array_equal(state.store.arrays.regrets[off:off + na],
                                  before[off:off + na]) or not msg["regrets"][pos:pos + na].any()
        pos += na


def test_bench_merge_reports_capacity():
    proc = run_tool("bench_merge.py", "--game", "leduc", "--warm-seconds", "1", "--flushes", 6,
                    "--flush", 500, "--per-pass", 3, "--rounds", 2, "--threads", 2)
    last = proc.stdout.splitlines()[-1]
    m = re.fullmatch(r"merge capacity: (\d+) iterations/s \((\d+) threads\)", last)
    assert m, last
    assert m[2] == "2"
    got = fields(proc.stdout)
    number = {name: float(value.replace(",", "")) for name, value in got.items()
              if re.fullmatch(r"[\d,.]+", value)}
    assert got["config"] == "leduc"
    assert got["infosets in the store"] == f"{LEDUC_INFOSETS}"
    assert got["records"] == "6"
    assert got["iterations per record"] == "500 (the flush of 15 workers)"
    # Timings cannot be known, but the figures derived from them can: each is checked against
    # the printed figures it comes from, within their rounding.
    capacity, rate = number["capacity (it/s)"], number["per-worker rate here (it/s)"]
    assert int(m[1]) == capacity > 0
    assert number["per-worker rate predicted for (it/s)"] == rate > 0    # no --worker-rate
    assert number["workers served"] == pytest.approx(capacity / rate, abs=0.05 + 1e-6)
    for name in ("delta bytes per iteration", "receive ms/record"):
        assert number[name] > 0, name
    # A pass's fixed cost and each record's are fitted from two timings and clamped at 0: on a
    # loaded machine either can come out 0 (record ms did once in CI), never both.
    a, b = number["pass ms"], number["record ms"]
    assert min(a, b) >= 0 and a + b > 0, (a, b)
    # The delay at 15 workers: records arrive at L = 15 x rate / 500 per second, a pass takes
    # T = a / (1 - L b), a record waits 1.5 T (tools/bench_merge.py); printed a and b are
    # rounded to 0.0005 ms, so T is known within an interval.
    arrivals = 15 * rate / 500 / 1e3                          # per millisecond
    lows = (max(0.0, a - 5e-4), max(0.0, b - 5e-4))
    highs = (a + 5e-4, b + 5e-4)
    delay = got["flush to merge at 15 workers"]
    if arrivals * highs[1] < 1:
        dm = re.fullmatch(r"([\d.]+) ms \(([\d,]+) iterations\)", delay)
        assert dm, delay
        wait_ms, wait_iters = float(dm[1]), int(dm[2].replace(",", ""))
        assert (1.5 * lows[0] / (1 - arrivals * lows[1]) - 0.005 <= wait_ms
                <= 1.5 * highs[0] / (1 - arrivals * highs[1]) + 0.005), (a, b, rate, delay)
        assert wait_iters == pytest.approx(wait_ms / 1e3 * 15 * rate,
                                           abs=0.005e-3 * 15 * rate + 1)
    elif arrivals * lows[1] >= 1:
        assert delay == "saturated"


@pytest.mark.slow
@pytest.mark.parallel
def test_bench_mainloop_drives_the_real_main_loop_with_virtual_workers():
    """Three virtual workers on Leduc at a rate its main process keeps up with: every figure is
    there, and the derived ones agree with the ones they come from."""
    proc = run_tool("bench_mainloop.py", "--game", "leduc", "--workers", 3, "--flush", 200,
                    "--worker-rate", 100_000, "--records", 8, "--seconds", 2,
                    "--warm-iters", 20_000, "--parts")
    got = fields(proc.stdout)
    number = {name: float(re.match(r"[\d,.]+", value)[0].replace(",", ""))
              for name, value in got.items() if re.match(r"[\d,.]+", value)}
    assert got["config"] == "leduc"
    assert got["store"] == f"{LEDUC_INFOSETS} infosets after 20,000 iterations"
    assert got["record"].startswith("200 iterations, ")
    m = re.fullmatch(r"3 at ([\d,]+) iterations/s each asked, ([\d,]+) merged",
                     got["virtual workers"])
    asked, merged = (float(x.replace(",", "")) for x in m.groups())
    assert asked == 100_000 and 0 < merged <= 1.2 * asked
    per_record = number["main CPU per record (us)"]
    per_iteration = number["main CPU per merged iteration (us)"]
    assert per_record > 0 and per_iteration == pytest.approx(per_record / 200, rel=0.01,
                                                             abs=0.001)
    assert number["main CPU per row (ns)"] > 0 and number["records per pass"] >= 1
    fit = re.fullmatch(r"(-?[\d.]+|nan) \+ (-?[\d.]+|nan) a record; a record's own, per merged "
                       r"iteration: (-?[\d.]+|nan)", got["main CPU per merge pass, fitted (us)"])
    assert fit, got["main CPU per merge pass, fitted (us)"]
    if fit[2] != "nan":
        assert float(fit[3]) == pytest.approx(float(fit[2]) / 200, abs=0.001)
    assert re.fullmatch(r"[\d.]+ ms \([\d,]+ iterations\)", got["flush to merge"])
    assert "records through the pipe: 0" in proc.stdout
    ratio = number["main/worker cost per iteration"]
    assert ratio == pytest.approx(per_iteration / number["worker CPU per iteration (us)"],
                                  rel=0.05, abs=0.002)
    # --parts: each part's CPU a record; together they are part of the main CPU a record
    # (one merge thread: every part runs on the main thread).
    parts = dict(re.findall(r"^  +(.+?): [\d.]+ us a pass, ([\d.]+) us a record$", proc.stdout,
                            re.M))
    part = {name: float(v) for name, v in parts.items()}
    top = ["merge kernels, one thread: check and add", "merge kernels, threads: add",
           "merge kernels, threads: check", "index kernel", "wait for the workers",
           "records' header columns"]
    assert set(part) == {*top, "of it reading pipes", "of that taking frames in"}
    # Leduc's passes are small: every one checks and adds in one kernel call on this thread.
    assert part["merge kernels, one thread: check and add"] > 0
    assert part["merge kernels, threads: add"] == part["merge kernels, threads: check"] == 0
    assert (part["of that taking frames in"] <= part["of it reading pipes"]
            <= part["wait for the workers"])
    assert sum(part[k] for k in top) <= 1.02 * per_record


def test_bench_mainloops_pass_fit_is_the_line_through_the_pass_sizes_seen_enough(monkeypatch):
    monkeypatch.syspath_prepend(str(TOOLS))
    import bench_mainloop

    line = {n: [100e-6 + 50e-6 * n + e for e in (-5e-6, 0.0, 5e-6)] * 10 for n in range(1, 6)}
    fixed, per_record = bench_mainloop.pass_fit({**line, 6: [1.0] * 5, 12: [1.0] * 40})
    assert fixed == pytest.approx(100e-6) and per_record == pytest.approx(50e-6)
    assert np.isnan(bench_mainloop.pass_fit({1: [1.0] * 30, 2: [1.0] * 19})[0])


def test_bench_scaling_reports_fraction_of_ceiling():
    proc = run_tool("bench_scaling.py", "--game", "leduc", "--workers", "1,2", "--seconds", 2,
                    "--independent", 2)
    lines = proc.stdout.splitlines()
    m = re.fullmatch(r"fraction of ceiling at 2 workers: (\d+\.\d\d)", lines[-1])
    assert m, lines[-1]
    rows = {line.split()[0]: line.split() for line in lines[1:3]}
    assert set(rows) == {"1", "2"}
    rate = {w: float(r[1].replace(",", "")) for w, r in rows.items()}
    assert min(rate.values()) > 0, rate
    top = re.fullmatch(r"ceiling: ([\d,]+) it/s \(2 independent in-process runs\)", lines[-2])
    assert top, lines[-2]
    top = float(top[1].replace(",", ""))
    # Speed-up and fractions are ratios of the printed rates (rounded to 0.01; the rates to
    # 1 it/s, which moves a ratio of rates in the thousands by far less).
    assert rows["1"][2] == "1.00x"                 # one worker against itself
    assert float(rows["2"][2].rstrip("x")) == pytest.approx(rate["2"] / rate["1"], abs=0.0051)
    for w in ("1", "2"):
        assert float(rows[w][3]) == pytest.approx(rate[w] / top, abs=0.0051)
    assert float(m[1]) == pytest.approx(rate["2"] / top, abs=0.0051)
    assert rows["1"][4:7] == ["n/a"] * 3           # in-process: no merge line
    assert rows["2"][4].endswith("%") and float(rows["2"][5]) > 0    # the parallel run's


def test_bench_scaling_without_ceiling():
    proc = run_tool("bench_scaling.py", "--game", "leduc", "--workers", "1", "--seconds", 1,
                    "--independent", 0)
    assert proc.stdout.splitlines()[-1] == "fraction of ceiling at 1 workers: n/a"


def test_bench_backends_compares_both_backends():
    pytest.importorskip("ray")
    proc = run_tool("bench_backends.py", "--game", "leduc", "--seconds", 2, "--rounds", 1)
    out = fields(proc.stdout)
    m = re.match(r"process ([\d,]+) it/s, ray ([\d,]+) it/s \(([\d.]+)x\)$", out["round 1"])
    assert m, out["round 1"]
    process, ray, ratio = (float(x.replace(",", "")) for x in m.groups())
    assert min(process, ray) > 0 and ratio == pytest.approx(ray / process, abs=0.0051)
    assert "ray: 1 node(s), 0 of 2 workers on other nodes" in proc.stdout
    # One round: the median ratio and the ratio of the medians are that round's ratio.
    assert out["median ratio ray/process"] == f"{m[3]}x ({m[3]}x)"
    assert out["median process"].endswith(f"ratio of the medians: {m[3]}x")


def test_checkpoint_digest_with_arrays_ignores_only_the_header(tmp_path):
    """``--arrays``: two checkpoints with the same arrays and iteration count but a header key
    apart digest alike; an array or the iteration count apart, they do not. Without the flag
    the header key counts."""
    import importlib.util

    from holdem import checkpoint

    spec = importlib.util.spec_from_file_location(
        "checkpoint_digest", Path(__file__).resolve().parents[1] / "tools" / "checkpoint_digest.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    arrays = {"regrets": np.arange(6, dtype=np.float64), "keys": np.array([3, 1], np.int64)}
    header = {"iterations": 100, "game": "kuhn", "config": {"solver": {"new_key": 0.0}}}
    paths = {}
    for name, h, a in (("a", header, arrays),
                       ("b", {**header, "config": {"solver": {}}}, arrays),
                       ("c", header, {**arrays, "regrets": np.arange(6, dtype=np.float64) + 1}),
                       ("d", {**header, "iterations": 101}, arrays)):
        paths[name] = checkpoint.save(tmp_path / f"{name}.ckpt", h, a)
    same = {n: tool.digest(p, arrays_only=True)[0] for n, p in paths.items()}
    assert same["a"] == same["b"]
    assert len({same["a"], same["c"], same["d"]}) == 3
    assert tool.digest(paths["a"])[0] != tool.digest(paths["b"])[0]
