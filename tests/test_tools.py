"""Smoke tests of the parallel-training benchmarks in tools/: each runs on Leduc with tiny
settings and prints its documented last line with positive figures."""

import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from holdem import config as config_mod
from holdem.runtime.worker import BatchRunner
from holdem.store import records
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


@pytest.mark.parametrize("name", ["bench_merge.py", "bench_scaling.py", "bench_backends.py",
                                  "bench_visits.py", "checkpoint_digest.py", "soak.py"])
def test_help_shows_example_commands(name):
    proc = run_tool(name, "--help", timeout=60)
    assert f"python tools/{name}" in proc.stdout


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
    assert int(m[1]) > 0
    assert m[2] == "2"
    got = fields(proc.stdout)
    assert got["config"] == "leduc"
    assert got["infosets in the store"] == f"{LEDUC_INFOSETS}"
    assert got["records"] == "6"
    assert got["iterations per record"] == "500 (the flush of 15 workers)"
    for name in ("delta bytes per iteration", "receive ms/record",
                 "per-worker rate here (it/s)", "workers served"):
        assert float(got[name].replace(",", "")) > 0, name
    # A pass's fixed cost and each record's are fitted from two timings and clamped at 0: on a
    # loaded machine either can come out 0 (record ms did once in CI), never both.
    fitted = [float(got[name]) for name in ("pass ms", "record ms")]
    assert min(fitted) >= 0 and sum(fitted) > 0, fitted
    assert re.fullmatch(r"[\d.]+ ms \([\d,]+ iterations\)|saturated",
                        got["flush to merge at 15 workers"])


@pytest.mark.slow
@pytest.mark.parallel
def test_bench_scaling_reports_fraction_of_ceiling():
    proc = run_tool("bench_scaling.py", "--game", "leduc", "--workers", "1,2", "--seconds", 2,
                    "--independent", 2)
    lines = proc.stdout.splitlines()
    m = re.fullmatch(r"fraction of ceiling at 2 workers: (\d+\.\d\d)", lines[-1])
    assert m, lines[-1]
    assert float(m[1]) > 0
    rows = {line.split()[0]: line.split() for line in lines[1:3]}
    assert set(rows) == {"1", "2"}
    assert rows["1"][2] == "1.00x"                 # speed-up of one worker against itself
    assert rows["1"][4] == "n/a"                   # in-process: no merge line
    assert float(rows["2"][5]) > 0                 # merge ms/delta from the parallel run
    for r in rows.values():
        assert float(r[1].replace(",", "")) > 0


def test_bench_scaling_without_ceiling():
    proc = run_tool("bench_scaling.py", "--game", "leduc", "--workers", "1", "--seconds", 1,
                    "--independent", 0)
    assert proc.stdout.splitlines()[-1] == "fraction of ceiling at 1 workers: n/a"


def test_bench_backends_compares_both_backends():
    pytest.importorskip("ray")
    proc = run_tool("bench_backends.py", "--game", "leduc", "--seconds", 2, "--rounds", 1)
    out = fields(proc.stdout)
    assert re.match(r"process [\d,]+ it/s, ray [\d,]+ it/s \([\d.]+x\)$", out["round 1"])
    assert "ray: 1 node(s), 0 of 2 workers on other nodes" in proc.stdout
    assert float(out["median ratio ray/process"].split("x")[0]) > 0
