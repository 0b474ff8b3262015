"""Command-line flags that no other test runs, each checked for what it does (a test here fails
when its flag is ignored):

- ``train_blueprint``: ``--snapshot-interval`` (and its alias ``--checkpoint-interval``),
  ``--keep-checkpoints``, ``--max-memory``;
- ``inspect_blueprint --current`` (``--spot`` and ``--range``) and ``charts --current``: the
  current strategy is regret matching on the checkpoint's cumulative regrets, computed here
  from the file's raw arrays;
- ``eval_blueprint --vs-checkpoint``: a blueprint against itself is 0 within its interval, a
  trained one beats an untrained one, and swapping the two negates the result;
- ``export_strategy --format``: each format, chosen against the ``--out`` suffix, read back and
  compared with the blueprint's own numbers;
- ``build_buckets --method``, ``--kmeans-iters``, ``--kmeans-sample`` and their bad values.

``play --stack``/``--big-blind`` are checked by tests/test_hand_history.py
(test_play_writes_every_finished_hand: starting stacks, blinds and each hand's result in chips).

Small games train in-process; the No-Limit checkpoints are the session's ``hunl_run`` (20,000
iterations) and an untrained one. Nothing here times a run tightly: where an interval matters
the bound is the run's own measured wall time.
"""

import csv
import html
import io
import json
import re
import time
from pathlib import Path

import numpy as np
import pytest

from holdem import checkpoint as ckpt
from test_cli import run

ROOT = Path(__file__).resolve().parents[1]
GIB = 1 << 30
DONE_RE = re.compile(r"^done: iterations=(\d+) elapsed=\S+ it/s=\S+ infosets=(\d+) "
                     r"checkpoint=(\S+)$", re.M)
WRITTEN_RE = re.compile(r"^checkpoint at iteration ([\d,]+): ", re.M)


def done(proc):
    """(iterations, checkpoint path) of a training run's ``done:`` line."""
    found = DONE_RE.findall(proc.stdout)
    assert len(found) == 1, proc.stdout
    return int(found[0][0]), Path(found[0][2])


def written(stderr):
    """Iteration counts of the background checkpoints a run announced, in order."""
    return [int(n.replace(",", "")) for n in WRITTEN_RE.findall(stderr)]


def on_disk(logdir):
    """{iterations in the file name: iterations in the header} of a logdir's checkpoints."""
    out = {}
    for path in sorted((Path(logdir) / "checkpoints").glob("ckpt-*.ckpt")):
        out[int(ckpt.NAME_RE.match(path.name)[1])] = ckpt.read_header(path)[0]["iterations"]
    return out


def hole_of(hand_class):
    """Two cards of a preflop hand class: ``AKs`` -> ``As Ks``, ``AKo`` -> ``As Kh``."""
    hi, lo = hand_class[0], hand_class[1]
    return f"{hi}s {lo}s" if hand_class.endswith("s") else f"{hi}s {lo}h"


class RawStrategies:
    """Strategies straight from a checkpoint's arrays: the normalized strategy sums (average)
    and regret matching on the cumulative regrets (current), uniform where nothing is
    positive."""

    def __init__(self, path):
        arrays = ckpt.load(path).arrays
        self.row = {int(k): i for i, k in enumerate(np.asarray(arrays["keys"]).tolist())}
        counts = np.asarray(arrays["num_actions"], dtype=np.int64)
        self.offsets = np.cumsum(counts) - counts
        self.counts = counts
        self.regrets = np.asarray(arrays["regrets"], dtype=np.float64)
        self.sums = np.asarray(arrays["strategy_sum"], dtype=np.float64)

    def _normalized(self, values, key, num_actions):
        row = self.row.get(int(key))
        if row is None:
            return np.full(num_actions, 1.0 / num_actions)
        assert self.counts[row] == num_actions
        v = values[self.offsets[row]:self.offsets[row] + num_actions]
        return v / v.sum() if v.sum() > 0 else np.full(num_actions, 1.0 / num_actions)

    def current(self, key, num_actions):
        return self._normalized(np.maximum(self.regrets, 0.0), key, num_actions)

    def average(self, key, num_actions):
        return self._normalized(self.sums, key, num_actions)


# -- train_blueprint: --snapshot-interval, --keep-checkpoints, --max-memory -------------------
def test_snapshot_interval_below_a_batch_checkpoints_after_every_batch(tmp_path):
    """With an interval shorter than any batch every batch ends in a checkpoint (in-process
    batches start small and grow, so there are several), each named after and holding its
    iteration count."""
    proc = run("train_blueprint", "--game", "kuhn", "--iters", 200_000, "--snapshot-interval",
               1e-6, "--keep-checkpoints", 1000, "--logdir", tmp_path)
    iterations, final = done(proc)
    assert iterations == 200_000 and final.name == "ckpt-000000200000.ckpt"
    announced = written(proc.stderr)
    assert len(announced) >= 4, proc.stderr
    assert announced == sorted(set(announced)) and announced[-1] == 200_000
    files = on_disk(tmp_path)
    assert sorted(files) == announced                       # the final one is the last batch's
    assert all(name == header for name, header in files.items())


def test_snapshot_interval_is_seconds_between_checkpoints(tmp_path):
    """A 1 s interval over a run of at least 3 s of training writes a checkpoint during the run
    and at most one per second of the whole command's wall time (plus the final one)."""
    start = time.monotonic()
    proc = run("train_blueprint", "--game", "kuhn", "--time-budget", 3, "--snapshot-interval",
               1, "--keep-checkpoints", 1000, "--logdir", tmp_path, "--quiet")
    wall = time.monotonic() - start
    iterations, _ = done(proc)
    files = on_disk(tmp_path)
    assert 2 <= len(files) <= wall / 1.0 + 2, (files, wall)
    assert max(files) == iterations and min(files) < iterations


def test_checkpoint_interval_flag_overrides_the_config_file(tmp_path):
    config = tmp_path / "kuhn.yaml"
    config.write_text("game:\n  name: kuhn\ntrain:\n  snapshot_interval: 0.000001\n"
                      "  keep_checkpoints: 1000\n")
    logdir = tmp_path / "run"
    proc = run("train_blueprint", "--config", config, "--iters", 200_000,
               "--checkpoint-interval", 3600, "--logdir", logdir)
    assert written(proc.stderr) == []
    assert list(on_disk(logdir)) == [200_000]               # only the final checkpoint
    header = ckpt.read_header(done(proc)[1])[0]
    assert header["config"]["train"]["snapshot_interval"] == 3600


@pytest.mark.parametrize("keep", [2, 5])                    # below and above the default 3
def test_keep_checkpoints_leaves_the_newest(tmp_path, keep):
    proc = run("train_blueprint", "--game", "kuhn", "--iters", 200_000, "--snapshot-interval",
               1e-6, "--keep-checkpoints", keep, "--logdir", tmp_path)
    announced = sorted(set(written(proc.stderr)) | {200_000})     # and the final one
    assert len(announced) > keep, proc.stderr               # more were written than are kept
    files = on_disk(tmp_path)
    assert sorted(files) == announced[-keep:]
    assert done(proc)[1].name == "ckpt-000000200000.ckpt"
    assert ckpt.read_header(done(proc)[1])[0]["config"]["train"]["keep_checkpoints"] == keep


@pytest.fixture(scope="module")
def leduc_store_bytes(tmp_path_factory):
    """The store size (bytes) a Leduc run ends with: every infoset stored."""
    logdir = tmp_path_factory.mktemp("leduc_full")
    proc = run("train_blueprint", "--game", "leduc", "--iters", 20_000, "--logdir", logdir,
               "--quiet")
    return ckpt.read_header(done(proc)[1])[0]["stats"]["store_bytes"]


def test_max_memory_stops_with_a_checkpoint_when_the_store_reaches_it(tmp_path,
                                                                      leduc_store_bytes):
    limit_gib = 0.9 * leduc_store_bytes / GIB
    proc = run("train_blueprint", "--game", "leduc", "--iters", 10_000_000, "--max-memory",
               repr(limit_gib), "--logdir", tmp_path, "--quiet")
    iterations, path = done(proc)
    assert iterations < 10_000_000
    lines = [line for line in proc.stderr.splitlines() if "--max-memory" in line]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("store reached ") and f"(--max-memory {limit_gib} " in lines[0]
    assert lines[0].endswith(": checkpointing and stopping")
    header = ckpt.read_header(path)[0]
    assert header["iterations"] == iterations                # the stop was checkpointed
    assert header["stats"]["store_bytes"] >= limit_gib * GIB
    assert "Traceback" not in proc.stderr


def test_max_memory_is_gibibytes_and_a_store_below_it_trains_on(tmp_path, leduc_store_bytes):
    """5% above the full store in GiB: the run reaches --iters (read as 10^9-byte GB the limit
    would be below the store and stop it)."""
    limit_gib = 1.05 * leduc_store_bytes / GIB
    proc = run("train_blueprint", "--game", "leduc", "--iters", 20_000, "--max-memory",
               repr(limit_gib), "--logdir", tmp_path, "--quiet")
    assert done(proc)[0] == 20_000 and "--max-memory" not in proc.stderr
    assert ckpt.read_header(done(proc)[1])[0]["config"]["train"]["max_memory_gb"] == limit_gib


# -- the No-Limit checkpoints ----------------------------------------------------------------
@pytest.fixture(scope="module")
def trained(hunl_run):
    return next((hunl_run / "checkpoints").glob("*.ckpt"))


@pytest.fixture(scope="module")
def bp(trained):
    from holdem import Blueprint

    return Blueprint.load(trained)


@pytest.fixture(scope="module")
def raw(trained):
    return RawStrategies(trained)


# -- --current: inspect_blueprint and charts -------------------------------------------------
def test_inspect_spot_current_is_regret_matching(trained, bp, raw):
    spot = bp.spot("", "As Kd")                               # the small blind's first action
    n = len(spot.labels)
    current, average = raw.current(spot.key, n), raw.average(spot.key, n)
    assert np.abs(current - average).max() > 0.05            # the two differ at this spot
    proc = run("inspect_blueprint", "--checkpoint", trained, "--spot", " | As Kd | ",
               "--current")
    assert "current (regret matching) strategy after 20,000 iterations:" in proc.stdout
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith("  ")]
    assert [r[0] for r in rows] == list(spot.labels)
    np.testing.assert_allclose([float(r[-1]) for r in rows], current, atol=5.1e-5)


def test_inspect_range_current_uses_regret_matching_for_reach_and_mix(trained, bp, raw,
                                                                     tmp_path):
    out = tmp_path / "range.csv"
    proc = run("inspect_blueprint", "--checkpoint", trained, "--range", "r2.5b | ", "--current",
               "--out", out)
    assert "current (regret matching) strategy after 20,000 iterations" in proc.stdout
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert len(rows) == 1326
    open_index = list(bp.spot("", "As Kd").labels).index("r2.5b")
    expected, differs = {}, False
    for row in rows:
        bucket = int(row["bucket"])
        if bucket not in expected:
            hole = row["combo"][:2] + " " + row["combo"][2:]
            root, facing = bp.spot("", hole), bp.spot("r2.5b", hole)
            opens = raw.current(root.key, len(root.labels))[open_index]
            mix = raw.current(facing.key, len(facing.labels))
            differs |= (abs(opens - raw.average(root.key, len(root.labels))[open_index]) > 0.01
                        or np.abs(mix - raw.average(facing.key, len(mix))).max() > 0.01)
            expected[bucket] = (opens, mix, facing.labels)
        opens, mix, labels = expected[bucket]
        assert float(row["reach_p0"]) == pytest.approx(opens, rel=1e-7, abs=1e-9)
        got = [float(row[f"mix_{label}"]) for label in labels]
        np.testing.assert_allclose(got, mix, rtol=1e-7, atol=1e-9)
    assert differs


def test_charts_current_cells_are_regret_matching(trained, bp, raw, tmp_path):
    page = tmp_path / "current.html"
    run("charts", "--checkpoint", trained, "--current", "--html", page)
    cells = re.findall(r'data-hand="(\w+)" data-probs="([^"]*)"', page.read_text())
    assert len(cells) == 169
    differs = 0
    for hand_class, probs in cells:
        probs = json.loads(html.unescape(probs))
        spot = bp.spot("", hole_of(hand_class))
        assert list(probs) == list(spot.labels)
        current = raw.current(spot.key, len(spot.labels))
        np.testing.assert_allclose(list(probs.values()), current, rtol=1e-12, atol=1e-15)
        differs += np.abs(current - raw.average(spot.key, len(current))).max() > 0.01
    assert differs > 100


# -- eval_blueprint --vs-checkpoint ----------------------------------------------------------
VS_RE = re.compile(r"^vs (\S+): mbb/hand: ([+-]?[\d,.]+) ± ([\d,.]+) \(95% CI, (\d+) hands",
                   re.M)


def match(checkpoint, other):
    """(opponent named, mbb/hand, 95% half-width) of ``--checkpoint`` against ``other``."""
    proc = run("eval_blueprint", "--checkpoint", checkpoint, "--vs-checkpoint", other,
               "--hands", 4000, "--seed", 3)
    found = VS_RE.findall(proc.stdout)
    assert len(found) == 1, proc.stdout
    name, value, half, hands = found[0]
    assert int(hands) == 4000
    return name, float(value.replace(",", "")), float(half.replace(",", ""))


def test_vs_checkpoint_signs_and_symmetry(trained, untrained):
    """Against itself 0 within the interval; the trained blueprint beats the untrained one
    beyond it; from the other side the same hands give the negated result."""
    name, value, half = match(trained, trained)
    assert name == str(trained) and abs(value) <= half
    name, value, half = match(trained, untrained)
    assert name == str(untrained)
    assert value - half > 0                                 # wins beyond its interval
    back_name, back, back_half = match(untrained, trained)
    assert back_name == str(trained)
    assert back + back_half < 0
    assert abs(value + back) <= min(half, back_half)        # the same hands from each side


# -- export_strategy --format ----------------------------------------------------------------
@pytest.fixture(scope="module")
def leduc_run(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("leduc_export")
    run("train_blueprint", "--game", "leduc", "--iters", 20_000, "--logdir", logdir, "--quiet")
    return logdir


def read_format(path, fmt):
    """Records of an export parsed as ``fmt`` whatever the file's suffix (strategy and visited
    as numbers and booleans; CSV's empty optional fields dropped)."""
    text = Path(path).read_text()
    if fmt == "json":
        data = json.loads(text)
        return data, data["infosets"]
    reader = csv.DictReader(io.StringIO(text))
    from holdem.analysis.export.records import CSV_FIELDS

    assert tuple(reader.fieldnames) == CSV_FIELDS
    records = []
    for row in reader:
        record = {k: v for k, v in row.items()
                  if v != "" or k not in ("private", "public", "bucket", "hand")}
        record["player"] = int(row["player"])
        record["actions"] = row["actions"].split()
        record["strategy"] = [float(x) for x in row["strategy"].split()]
        record["visited"] = {"true": True, "false": False}[row["visited"]]
        records.append(record)
    return None, records


@pytest.mark.parametrize("fmt,suffix", [("json", ".txt"), ("csv", ".csv"), ("csv", ".txt")])
def test_export_format_leduc_round_trip(leduc_run, tmp_path, fmt, suffix):
    """--format decides the format of a name that is not the other format's (a ``.json`` name
    for CSV is refused: tests/test_user_input.py); every exported probability is the
    checkpoint's normalized strategy sum at that infoset (exactly: JSON and CSV keep every
    digit)."""
    from holdem import Blueprint
    from holdem.games.small import RANK_LETTERS
    from holdem.games.tree import ACTION_LETTERS, NodeKind, history_letters

    out = tmp_path / f"leduc{suffix}"
    run("export_strategy", "--checkpoint", leduc_run, "--out", out, "--format", fmt)
    data, records = read_format(out, fmt)
    if data is not None:
        assert data["game"] == "leduc" and data["iterations"] == 20_000
    assert len(records) == 288
    bp = Blueprint.load(leduc_run)
    game, tree = bp.game, bp.game.tree
    r = game.deal.num_ranks
    nodes = {history_letters(tree, n): int(n) for n in np.flatnonzero(tree.kind ==
                                                                       NodeKind.DECISION)}
    seen = set()
    for record in records:
        node = nodes[record["history"]]
        private = RANK_LETTERS.index(record["private"])
        public = record.get("public")
        bucket = private if public is None else private * r + RANK_LETTERS.index(public)
        key = int(tree.history[node]) * game.bucket_stride + bucket
        seen.add(key)
        na = int(tree.num_actions[node])
        c0 = int(tree.child_start[node])
        assert record["player"] == int(tree.player[node])
        assert record["actions"] == [ACTION_LETTERS[int(tree.action[c0 + a])]
                                     for a in range(na)]
        assert record["strategy"] == list(bp.strategy(key, na))
    assert len(seen) == 288


@pytest.mark.parametrize("fmt,suffix", [("json", ".txt"), ("csv", ".csv")])
def test_export_format_nlhe_round_trip(trained, bp, tmp_path, fmt, suffix):
    """Every exported preflop strategy is the blueprint's (Blueprint.spot, the lookup behind
    Blueprint.query) for a hand of the record's class on the record's line."""
    out = tmp_path / f"preflop{suffix}"
    run("export_strategy", "--checkpoint", trained, "--out", out, "--format", fmt,
        "--street", "preflop")
    data, records = read_format(out, fmt)
    if data is not None:
        assert data["game"] == bp.game.name and data["iterations"] == 20_000
    assert len(records) > 1000
    assert {r["street"] for r in records} == {"preflop"}
    for record in records:
        spot = bp.spot(record["history"], hole_of(record["hand"].split()[0]))
        assert int(record["bucket"]) == spot.bucket and record["actions"] == list(spot.labels)
        assert record["strategy"] == pytest.approx(list(spot.strategy), rel=1e-12, abs=1e-15)


# -- build_buckets --method, --kmeans-iters, --kmeans-sample --------------------------------
TINY = ("--k-preflop", 10, "--k-flop", 8, "--k-turn", 8, "--k-river", 8, "--seed", 7,
        "--preflop-samples", 300, "--turn-samples", 3, "--river-samples", 3, "--threads", 2,
        "--quiet")


@pytest.fixture(scope="module")
def tiny_buckets(tmp_path_factory):
    """Three tiny builds with one seed: emd with no Lloyd step, emd with up to 3, and ehs2
    given the same k-means flags (which only emd uses). {name: (BucketFile, stdout)}."""
    from holdem.abstraction.bucket_file import load_buckets

    directory = tmp_path_factory.mktemp("buckets")
    builds = {"emd0": ("--method", "emd", "--kmeans-iters", 0, "--kmeans-sample", 300),
              "emd3": ("--method", "emd", "--kmeans-iters", 3, "--kmeans-sample", 300),
              "ehs2": ("--method", "ehs2", "--kmeans-iters", 3, "--kmeans-sample", 300)}
    out = {}
    for name, flags in builds.items():
        path = directory / f"{name}.buckets"
        proc = run("build_buckets", *TINY, *flags, "--out", path)
        out[name] = (load_buckets(path), proc.stdout)
    return out


@pytest.mark.slow
def test_build_buckets_emd_records_its_method_and_kmeans_flags(tiny_buckets):
    for name, steps in (("emd0", (0, 0)), ("emd3", (1, 3))):
        loaded, stdout = tiny_buckets[name]
        assert stdout.startswith(f"wrote {loaded.path}: method=emd k=10/8/8/8")
        params = loaded.header["params"]
        assert (params["method"], params["kmeans_sample"]) == ("emd", 300)
        assert params["kmeans_iters"] == steps[1]
        assert loaded.header["stats"]["used_buckets"] == [10, 8, 8, 8]
        assert "k-means" in loaded.header["features"]["flop"]
        for street in ("flop", "turn"):
            info = loaded.header["stats"]["kmeans"][street]
            assert info["sample"] == 300                        # fitted on 300 hands
            assert steps[0] <= info["lloyd_steps"] <= steps[1]


@pytest.mark.slow
def test_build_buckets_kmeans_iters_changes_the_buckets(tiny_buckets):
    a, b = tiny_buckets["emd0"][0].arrays, tiny_buckets["emd3"][0].arrays
    assert not np.array_equal(a["turn_bucket"], b["turn_bucket"])
    for name in ("preflop_bucket", "river_bucket", "river_lower"):     # not k-means streets
        assert np.array_equal(a[name], b[name])


@pytest.mark.slow
def test_build_buckets_method_ehs2_ignores_the_kmeans_flags(tiny_buckets):
    """ehs2 bins flop and turn by E[HS^2]: the file is a version-1 file without k-means
    parameters; preflop and river are the same as emd's with the seed."""
    ehs2, stdout = tiny_buckets["ehs2"]
    emd = tiny_buckets["emd3"][0]
    assert stdout.startswith(f"wrote {ehs2.path}: method=ehs2 k=10/8/8/8")
    assert ehs2.params.method == "ehs2" and ehs2.header["generator"]["version"] == 1
    assert not {"method", "kmeans_iters", "kmeans_sample"} & set(ehs2.header["params"])
    assert "kmeans" not in ehs2.header["stats"]
    for name in ("preflop_bucket", "preflop_equity", "river_bucket", "river_lower"):
        assert np.array_equal(ehs2.arrays[name], emd.arrays[name])
    for name in ("flop_bucket", "turn_bucket"):
        assert not np.array_equal(ehs2.arrays[name], emd.arrays[name])


@pytest.mark.parametrize("args,message", [
    (["--kmeans-iters", "-1"], "argument --kmeans-iters: must be in 0..1000, got -1"),
    (["--kmeans-iters", "1001"], "argument --kmeans-iters: must be in 0..1000, got 1001"),
    (["--kmeans-iters", "many"], "argument --kmeans-iters: expected an integer, got 'many'"),
    (["--kmeans-sample", "99"], "argument --kmeans-sample: must be in 100..100000000, got 99"),
    (["--method", "kmeans"], "argument --method: invalid choice: 'kmeans'"),
    # checked with the method: emd histograms of more buckets would not fit (a traceback before)
    (["--k-turn", "600"], "--k-turn must be at most 512 with method emd"),
    (["--k-river", "513"], "--k-river must be at most 512 with method emd"),
])
def test_build_buckets_bad_kmeans_values_name_the_flag(tmp_path, capsys, args, message):
    from holdem.cli import build_buckets

    out = tmp_path / "x.buckets"
    with pytest.raises(SystemExit) as stop:
        build_buckets.main(["--method", "emd", *args, "--out", str(out), "--quiet"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m holdem.cli.build_buckets: error: ") and message in err
    assert err.count("\n") == 1 and not out.exists()


def test_keep_checkpoints_zero_is_refused_as_the_flag(tmp_path):
    proc = run("train_blueprint", "--game", "kuhn", "--iters", "10", "--keep-checkpoints", "0",
               "--logdir", tmp_path / "log", check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("python -m holdem.cli.train_blueprint: error: argument "
                                   "--keep-checkpoints: must be positive, got '0'")
    assert not (tmp_path / "log").exists()
