"""Potential-aware (EMD) card abstraction: the distances against a brute-force transport oracle,
the k-means, and a small build's determinism, isomorphism and file round trip.

The build here is tiny (few turn and river cards, k = 8), so it checks the machinery, not the
quality; the quality figures (head-to-head, LBR) are in docs/configuration.md (Card abstraction)
and docs/performance.md.
"""

import itertools
from dataclasses import replace

import numpy as np
import pytest

from holdem.abstraction import emd, emd_kernels as ek
from holdem.abstraction.bucket_build import build_buckets
from holdem.abstraction.bucket_file import (BucketFileError, BucketParams, encode_buckets,
                                            load_buckets)
from holdem.abstraction.bucket_tables import lookup_buckets, make_tables
from holdem.cards import parse
from tests.reference.transport import exact_emd

TINY_EMD = BucketParams(k_preflop=10, k_flop=8, k_turn=8, k_river=8, seed=7,
                        preflop_samples=300, turn_samples=3, river_samples=3, method="emd",
                        kmeans_iters=10, kmeans_sample=5000)
PERMUTATIONS = [np.array(p) for p in itertools.permutations(range(4))]


def _histogram(rng, n, zeros=True):
    h = rng.random(n)
    if zeros:
        h[rng.random(n) < 0.3] = 0.0
    if h.sum() == 0:
        h[rng.integers(n)] = 1.0
    return h / h.sum()


def test_line_emd_matches_exact_transport():
    rng = np.random.default_rng(1)
    for _ in range(40):
        n = int(rng.integers(2, 7))
        pos = np.cumsum(rng.random(n))
        p, q = _histogram(rng, n), _histogram(rng, n)
        want = exact_emd(p, q, np.abs(pos[:, None] - pos[None, :]))
        got = ek.emd_line_kernel(np.cumsum(p)[:-1], np.cumsum(q)[:-1], np.diff(pos))
        assert got == pytest.approx(want, abs=1e-9)


def _greedy(atom, mass, target, ground):
    order = np.argsort(ground, axis=1, kind="stable").astype(np.int64)
    k = target.shape[0]
    return ek.emd_greedy(np.asarray(atom, np.int64), np.asarray(mass, np.float64), len(atom),
                         target, ground, order, np.zeros(k), np.zeros(len(atom)))


def test_greedy_emd_is_a_transport_plan_never_below_the_exact_one():
    """Greedy is a feasible plan (never below the optimum), exact for one atom, zero between a
    histogram and itself, and close to the optimum on average (Ganzfried and Sandholm)."""
    rng = np.random.default_rng(2)
    ratios = []
    for _ in range(60):
        k = int(rng.integers(2, 8))
        points = rng.random((k, 3))
        ground = np.abs(points[:, None, :] - points[None, :, :]).sum(axis=2)   # a metric
        target = _histogram(rng, k, zeros=False)
        p = _histogram(rng, k)
        atom = np.flatnonzero(p)
        got = _greedy(atom, p[atom], target, ground)
        want = exact_emd(p, target, ground)
        assert got >= want - 1e-9
        ratios.append(got / want if want > 0 else 1.0)
        one = int(rng.integers(k))
        assert _greedy([one], [1.0], target, ground) == pytest.approx(
            exact_emd(np.eye(k)[one], target, ground), abs=1e-12)
        assert _greedy(atom, p[atom], p, ground) == pytest.approx(0.0, abs=1e-12)
    assert np.mean(ratios) < 1.25


def test_pruned_assignment_equals_a_full_scan():
    """The nearest-centre kernels skip centres by a lower bound (the difference of means); they
    must pick exactly what comparing every centre picks, ties to the lower id."""
    rng = np.random.default_rng(5)
    k, num_centers, n = 9, 25, 400
    counts = rng.integers(0, 6, size=(n, k))
    counts[:, 0] += 1
    cum = np.cumsum(counts, axis=1).astype(np.uint8)
    gap = rng.random(k - 1) * 0.2
    line = emd._LineMetric(cum, gap)
    centers = np.sort(rng.random((num_centers, k - 1)), axis=1)
    centers[3] = centers[7]                                   # a tie
    label, dist = np.zeros(n, np.int64), np.zeros(n)
    index = np.arange(n, dtype=np.int64)
    line.assign(index, 0, n, centers, line.prepare(centers), label, dist)
    for p in range(n):
        full = [ek.emd_line_kernel(line.point(p), centers[c], gap) for c in range(num_centers)]
        assert label[p] == int(np.argmin(full)) and dist[p] == pytest.approx(min(full))

    position = np.sort(rng.random(k))
    ground = np.abs(position[:, None] - position[None, :]) + 0.3 * (1 - np.eye(k))
    hist = rng.integers(0, 4, size=(n, k)).astype(np.uint8)
    hist[:, 2] += 1
    greedy = emd._GreedyMetric(hist, ground, position)
    centers = rng.random((num_centers, k))
    centers /= centers.sum(axis=1, keepdims=True)
    greedy.assign(index, 0, n, centers, greedy.prepare(centers), label, dist)
    for p in range(n):
        atom = np.flatnonzero(hist[p])
        mass = hist[p, atom] / hist[p].sum()
        full = [_greedy(atom, mass, centers[c], ground) for c in range(num_centers)]
        assert label[p] == int(np.argmin(full)) and dist[p] == pytest.approx(min(full))


def test_kmeans_recovers_separated_groups():
    """Three river-bucket distributions, 300 noisy hands around each: k-means with the line EMD
    puts each group in one bucket, and a fixed seed gives the same labels."""
    rng = np.random.default_rng(3)
    templates = np.array([[40, 4, 2, 0, 0], [2, 4, 34, 4, 2], [0, 0, 2, 4, 40]])
    counts = []
    for t in templates:
        for _ in range(300):
            c = t + rng.integers(0, 3, size=5)
            counts.append(c)
    cum = np.cumsum(np.array(counts), axis=1).astype(np.uint8)
    metric = emd._LineMetric(cum, np.full(4, 0.25))
    weights = np.ones(cum.shape[0], np.int64)

    def run_chunks(run, chunks, progress=None, stage=""):
        for c in chunks:
            run(c)

    labels = [emd.kmeans(metric, cum.shape[0], weights, 3, 20, 10_000,
                         np.random.default_rng(seed), run_chunks)[0] for seed in (0, 0, 1)]
    assert np.array_equal(labels[0], labels[1])
    for label in (labels[0], labels[2]):
        groups = label.reshape(3, 300)
        assert all(np.unique(g).size == 1 for g in groups)
        assert np.unique(groups[:, 0]).size == 3


@pytest.fixture(scope="module")
def emd_build():
    header, arrays = build_buckets(TINY_EMD, num_threads=2)
    return header, arrays


def test_build_has_every_bucket_and_its_statistics(emd_build):
    header, arrays = emd_build
    assert header["params"]["method"] == "emd"
    assert header["stats"]["used_buckets"] == [10, 8, 8, 8]
    assert "k-means" in header["features"]["flop"] and "EMD" in header["features"]["turn"]
    for street in ("flop", "turn"):
        info = header["stats"]["kmeans"][street]
        assert 1 <= info["lloyd_steps"] <= TINY_EMD.kmeans_iters
        assert info["sample"] == TINY_EMD.kmeans_sample and info["mean_distance"] > 0
        assert np.bincount(arrays[f"{street}_bucket"]).min() > 0
    tables = make_tables(arrays, TINY_EMD)
    strong = lookup_buckets(tables, parse("As Ah"), parse("Ac Ad 7h 2s 9c"))[0]
    weak = lookup_buckets(tables, parse("3h 2d"), parse("Ac Kd 7h Js 9c"))[0]
    assert strong[1] == 7 and strong[2] == 7 and weak[1] < 4 and weak[2] < 4


def test_same_seed_same_bytes_whatever_the_threads(emd_build):
    header, arrays = emd_build
    again = build_buckets(TINY_EMD, num_threads=1)
    assert encode_buckets(*again) == encode_buckets(header, arrays)


def test_isomorphic_hands_share_buckets(emd_build):
    _, arrays = emd_build
    tables = make_tables(arrays, TINY_EMD)
    rng = np.random.default_rng(4)
    for _ in range(200):
        cards = rng.permutation(52)[:7]
        want = lookup_buckets(tables, cards[:2], cards[2:])[0]
        perm = PERMUTATIONS[int(rng.integers(24))]
        moved = (cards >> 2) * 4 + perm[cards & 3]
        assert np.array_equal(lookup_buckets(tables, moved[:2], moved[2:])[0], want)


def test_file_round_trip_and_bad_method(emd_build, tmp_path):
    header, arrays = emd_build
    path = tmp_path / "emd.buckets"
    path.write_bytes(encode_buckets(header, arrays))
    loaded = load_buckets(path)
    assert loaded.params == TINY_EMD
    assert np.array_equal(loaded.arrays["turn_bucket"], arrays["turn_bucket"])
    bad = tmp_path / "bad.buckets"
    bad.write_bytes(encode_buckets({**header, "params": {**header["params"], "method": "x"}},
                                   arrays))
    with pytest.raises(BucketFileError, match=r"bad\.buckets: params\.method: method must be"):
        load_buckets(bad)


def test_version_1_files_load_as_ehs2(emd_build, tmp_path):
    """Files written before the method parameters (generator version 1) still load."""
    header, arrays = emd_build
    params = {k: v for k, v in header["params"].items()
              if k not in ("method", "kmeans_iters", "kmeans_sample")}
    old = {**header, "params": params, "generator": {**header["generator"], "version": 1}}
    path = tmp_path / "v1.buckets"
    path.write_bytes(encode_buckets(old, arrays))
    assert load_buckets(path).params == replace(TINY_EMD, method="ehs2", kmeans_iters=30,
                                                kmeans_sample=200_000)
    newer = tmp_path / "v1-with-method.buckets"
    newer.write_bytes(encode_buckets({**old, "params": header["params"]}, arrays))
    assert load_buckets(newer).params.method == "emd"


def test_emd_params_validation():
    with pytest.raises(ValueError, match="method must be one of ehs2, emd"):
        replace(TINY_EMD, method="kmeans").validate()
    with pytest.raises(ValueError, match="k_river must be at most 512 with method emd"):
        replace(TINY_EMD, k_river=600).validate()
    with pytest.raises(ValueError, match="kmeans_sample"):
        replace(TINY_EMD, kmeans_sample=5).validate()
    replace(TINY_EMD, method="ehs2", k_river=600).validate()
