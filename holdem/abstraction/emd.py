"""Potential-aware card abstraction: flop and turn buckets by k-means with earth mover's distance.

``build_buckets --method emd`` (:func:`holdem.abstraction.bucket_build.build_buckets` with
``BucketParams(method="emd")``) buckets the river exactly as the E[HS^2] method does (quantile
bins of HS), then works backwards (Johanson et al. 2013; Ganzfried and Sandholm 2014):

turn
    Each canonical turn hand gets its histogram over the river buckets it reaches (46 river
    cards). River buckets lie on a line (their mean HS), so the EMD between two histograms is
    exact: the gap-weighted L1 distance between their CDFs. Weighted k-means (k-means++ seeding,
    Lloyd steps on a seeded sample of canonical hands, then every hand to its nearest centre).
flop
    Each canonical flop hand gets its histogram over the *turn buckets* it reaches (47 turn
    cards). The ground distance between two turn buckets is the EMD between their centres'
    river histograms, so a flop hand is judged by where it can go next, not only by its mean
    strength. The EMD to a centre is Ganzfried and Sandholm's greedy approximation
    (:func:`holdem.abstraction.emd_kernels.emd_greedy`); k-means as on the turn.

Bucket ids are sorted by the centre's expected river HS (the weakest bucket is 0), so a larger id
still means a stronger hand on average. Hands that are isomorphic share a canonical index, hence a
histogram and a bucket. Every random choice comes from ``numpy.random.default_rng`` seeded with
``(seed, street)``, and every sum is taken over fixed chunks in a fixed order, so a seed gives the
same file whatever the number of threads.
"""

import numpy as np

from holdem.abstraction import emd_kernels as ek
from holdem.abstraction.isomorphism import street_indexer

CHUNK = 1 << 14
"""Points per k-means work item (fixed, so sums never depend on the number of threads)."""
STOP_CHANGED = 1e-3
"""Lloyd steps stop once fewer than this share of the sample's weight changes bucket."""


def river_gaps(river_bucket, river_hist, k_river):
    """Mean HS of each river bucket (weighted by how often each score occurs; an unused id
    takes its predecessor's) and the distances between neighbours: float64[k_river - 1]."""
    score = np.arange(river_bucket.shape[0], dtype=np.float64) / (river_bucket.shape[0] - 1)
    bucket = np.asarray(river_bucket, dtype=np.int64)
    mass = np.bincount(bucket, weights=river_hist, minlength=k_river)
    total = np.bincount(bucket, weights=river_hist * score, minlength=k_river)
    mean = np.zeros(k_river)
    last = 0.0
    for b in range(k_river):
        if mass[b] > 0:
            last = total[b] / mass[b]
        mean[b] = last
    return mean, np.maximum(np.diff(mean), 0.0)


class _LineMetric:
    """Points = cumulative uint8 histograms over points of a line; centres = CDFs."""

    def __init__(self, cum, gap):
        self.cum, self.gap = cum, gap
        self.dims = cum.shape[1] - 1

    def point(self, p):
        return self.cum[p, :-1] / float(self.cum[p, -1])

    def prepare(self, centers):
        mean = -(centers @ self.gap)
        order = np.argsort(mean, kind="stable").astype(np.int64)
        return order, np.ascontiguousarray(mean[order])

    def assign(self, index, start, stop, centers, prepared, label, dist):
        ek.line_assign_kernel(self.cum, index, start, stop, centers, self.gap, *prepared, label,
                              dist, np.zeros(self.cum.shape[1]))

    def add(self, index, weight, label, start, stop, sums, mass):
        ek.line_sum_kernel(self.cum, index, weight, label, start, stop, sums, mass)


class _GreedyMetric:
    """Points = uint8 histograms over buckets with a ground distance; centres = histograms."""

    def __init__(self, hist, ground, strength):
        self.hist, self.ground, self.strength = hist, ground, strength
        self.order = np.argsort(ground, axis=1, kind="stable").astype(np.int64)
        self.dims = hist.shape[1]

    def point(self, p):
        row = self.hist[p].astype(np.float64)
        return row / row.sum()

    def prepare(self, centers):
        mean = centers @ self.strength
        order = np.argsort(mean, kind="stable").astype(np.int64)
        return order, np.ascontiguousarray(mean[order])

    def assign(self, index, start, stop, centers, prepared, label, dist):
        k = self.dims
        ek.greedy_assign_kernel(self.hist, index, start, stop, centers, self.ground, self.order,
                                self.strength, *prepared, label, dist, np.zeros(k, np.int64),
                                np.zeros(k), np.zeros(k), np.zeros(k))

    def add(self, index, weight, label, start, stop, sums, mass):
        ek.hist_sum_kernel(self.hist, index, weight, label, start, stop, sums, mass)


def _chunks(n):
    return [(i, min(i + CHUNK, n)) for i in range(0, n, CHUNK)]


def _assign(metric, index, centers, run_chunks, progress=None, stage=""):
    label = np.zeros(index.shape[0], np.int64)
    dist = np.zeros(index.shape[0])
    centers = np.ascontiguousarray(centers, dtype=np.float64)
    prepared = metric.prepare(centers)
    run_chunks(lambda c: metric.assign(index, c[0], c[1], centers, prepared, label, dist),
               _chunks(index.shape[0]), progress, stage)
    return label, dist


def _means(metric, index, weight, label, k, run_chunks):
    chunks = _chunks(index.shape[0])
    sums = np.zeros((len(chunks), k, metric.dims))
    mass = np.zeros((len(chunks), k))

    def run(chunk):
        i = chunk[0] // CHUNK
        metric.add(index, weight, label, chunk[0], chunk[1], sums[i], mass[i])

    run_chunks(run, chunks)
    total_sums = np.zeros((k, metric.dims))
    total_mass = np.zeros(k)
    for i in range(len(chunks)):            # in chunk order: independent of the schedule
        total_sums += sums[i]
        total_mass += mass[i]
    return total_sums, total_mass


def kmeans(metric, num_points, weights, k, iters, sample, rng, run_chunks, progress=None,
           stage=""):
    """Weighted k-means under ``metric``: k-means++ seeding and up to ``iters`` Lloyd steps on a
    sample of ``sample`` points (all when there are fewer), then every point to its nearest
    centre. Returns ``(label int64[num_points], centers, info)``; ``info`` holds the steps run
    and the mean distance to the centre (weighted, over all points)."""
    if num_points <= sample:
        index = np.arange(num_points, dtype=np.int64)
    else:
        index = np.sort(rng.choice(num_points, size=sample, replace=False)).astype(np.int64)
    weight = np.asarray(weights[index], dtype=np.float64)
    k = min(k, index.shape[0])
    steps = k + iters + 1
    if progress:
        progress(stage, 0, steps)
    centers = np.zeros((k, metric.dims))
    first = rng.choice(index.shape[0], p=weight / weight.sum())
    centers[0] = metric.point(index[first])
    _, best = _assign(metric, index, centers[:1], run_chunks)
    for c in range(1, k):
        score = weight * best * best
        if score.sum() <= 0:                       # fewer distinct points than k
            pick = c % index.shape[0]
        else:
            pick = rng.choice(index.shape[0], p=score / score.sum())
        centers[c] = metric.point(index[pick])
        _, dist = _assign(metric, index, centers[c:c + 1], run_chunks)
        np.minimum(best, dist, out=best)
        if progress:
            progress(stage, c, steps)
    label, dist = _assign(metric, index, centers, run_chunks)
    done = 0
    for done in range(1, iters + 1):
        sums, mass = _means(metric, index, weight, label, k, run_chunks)
        empty = mass <= 0
        centers[~empty] = sums[~empty] / mass[~empty, None]
        for c in np.flatnonzero(empty):            # re-seed at the worst-served point
            far = int(np.argmax(weight * dist))
            centers[c] = metric.point(index[far])
            dist[far] = 0.0
        new, dist = _assign(metric, index, centers, run_chunks)
        changed = float(weight[new != label].sum() / weight.sum())
        label = new
        if progress:
            progress(stage, k + done, steps)
        if changed < STOP_CHANGED:
            break
    if progress:
        progress(stage, steps, steps)
    everything = np.arange(num_points, dtype=np.int64)
    label, dist = _assign(metric, everything, centers, run_chunks, progress,
                          stage.replace("k-means", "assign"))
    w = np.asarray(weights, dtype=np.float64)
    info = {"lloyd_steps": int(done), "sample": int(index.shape[0]),
            "mean_distance": float(np.dot(w, dist) / w.sum())}
    return label, centers, info


def _relabel(label, centers, strength):
    """Bucket ids sorted by ``strength`` of each centre (ties by id): new labels, centres in
    the new order, and the sorted strengths."""
    order = np.argsort(strength, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    return rank[label], centers[order], strength[order]


def _cdf_to_hist(cdf):
    full = np.concatenate([cdf, np.ones((cdf.shape[0], 1))], axis=1)
    return np.diff(full, axis=1, prepend=0.0)


def _turn_clusters(params, reps, river_bucket, gap, turn_weight, run_chunks, progress):
    """Turn buckets (int64[13,960,050]) and centres (CDFs over the river buckets)."""
    turn_iso = street_indexer(2)
    cum = np.zeros((turn_iso.size, params.k_river), dtype=np.uint8)
    bucket = np.asarray(river_bucket, dtype=np.int64)

    def turn_chunk(chunk):
        ek.turn_hist_kernel(reps, chunk[0], chunk[1], *turn_iso.tables, bucket,
                            params.river_samples, params.seed, cum,
                            np.zeros(ek.HIST_IWORK, np.int64),
                            np.zeros((ek.NUM_PAIRS_48, params.k_river), np.int32),
                            np.zeros(4, np.uint64))

    run_chunks(turn_chunk, [(i, min(i + 48, reps.shape[0])) for i in range(0, reps.shape[0], 48)],
               progress, "turn histograms")
    turn, centers, info = kmeans(
        _LineMetric(cum, gap), turn_iso.size, turn_weight, params.k_turn, params.kmeans_iters,
        params.kmeans_sample, np.random.default_rng([params.seed, 2]), run_chunks, progress,
        "turn k-means")
    return turn, centers, info


def emd_clusters(params, turn_boards, flop_boards, river_bucket, river_hist, turn_weight,
                 flop_weight, run_chunks, progress=None):
    """Flop and turn buckets of the potential-aware abstraction (see the module docstring):
    ``(flop int64[1,286,792], turn int64[13,960,050], info)``. ``turn_boards`` /
    ``flop_boards`` = (canonical boards, raw boards each) from the board census; ``run_chunks(
    run, chunks, progress=None, stage="")`` runs ``run`` over every chunk on the build's
    threads."""
    flop_iso, turn_iso = street_indexer(1), street_indexer(2)
    river_mean, gap = river_gaps(river_bucket, river_hist, params.k_river)
    turn, turn_centers, turn_info = _turn_clusters(params, turn_boards[0], river_bucket, gap,
                                                   turn_weight, run_chunks, progress)
    turn_strength = _cdf_to_hist(turn_centers) @ river_mean
    turn, turn_centers, turn_strength = _relabel(turn, turn_centers, turn_strength)
    k_turn = turn_centers.shape[0]
    ground = np.zeros((k_turn, k_turn))
    for a in range(k_turn):
        for b in range(k_turn):
            ground[a, b] = ek.emd_line_kernel(turn_centers[a], turn_centers[b], gap)

    hist = np.zeros((flop_iso.size, k_turn), dtype=np.uint8)
    reps = flop_boards[0]
    turn_bucket = turn.astype(np.int64)

    def flop_chunk(chunk):
        ek.flop_hist_kernel(reps, chunk[0], chunk[1], *flop_iso.tables, *turn_iso.tables,
                            turn_bucket, params.turn_samples, params.seed, hist,
                            np.zeros(ek.HIST_IWORK, np.int64), np.zeros(4, np.uint64))

    run_chunks(flop_chunk, [(i, min(i + 8, reps.shape[0])) for i in range(0, reps.shape[0], 8)],
               progress, "flop histograms")
    flop, flop_centers, flop_info = kmeans(
        _GreedyMetric(hist, ground, turn_strength), flop_iso.size, flop_weight, params.k_flop,
        params.kmeans_iters, params.kmeans_sample, np.random.default_rng([params.seed, 1]),
        run_chunks, progress, "flop k-means")
    flop, _, _ = _relabel(flop, flop_centers, flop_centers @ turn_strength)
    return flop, turn, {"flop": flop_info, "turn": turn_info}
