"""Building bucket files: hand features, quantile bins (k-means with method "emd"), the header.

:func:`build_buckets` turns :class:`~holdem.abstraction.bucket_file.BucketParams` into the
arrays and header of a bucket file (:mod:`holdem.abstraction.bucket_file`); the kernels it runs
are in :mod:`holdem.abstraction.build_kernels`, the k-means of method "emd" in
:mod:`holdem.abstraction.emd`. What each street's buckets are for is in
:mod:`holdem.abstraction.bucket_tables`.

Features (computed exactly by default: no sampling noise)
    HS           share of opponent hole pairs beaten on the river, ties count half.
    E[HS^2]      mean of HS^2 over the remaining board cards (Johanson et al. 2013, "Evaluating
                 state-space abstractions in extensive-form games": squaring rewards potential).
                 With ``num_players`` = N > 2 the target is E[HS^(2(N-1))], HS^(N-1) being the
                 chance to beat N-1 independent random hands (approximate: it ignores card
                 removal between opponents). River buckets do not depend on N (a monotone
                 transform of HS has the same quantile bins).
    The builder enumerates the 16,432 canonical 4-card boards; for each board and each of its 48
    river cards one radix sort and sweep scores all 1,081 hole pairs, which gives every turn
    hand's E[HS^2] exactly. A flop hand's E[HS^2] is the mean of its 47 turn hands'. About 30 s
    on 2 cores for any k.
    ``turn_samples`` / ``river_samples`` below 47 / 48 use a seeded random subset of turn/river
    cards per board instead (fast builds for tests). Preflop pot shares are Monte Carlo
    (``preflop_samples`` deals per class, fixed seed).

Quantile bins
    Each canonical hand is weighted by the number of raw hands it stands for, so buckets are
    about equally likely at run time. Bucket ``b`` of a value is ``floor(k * m)``, where ``m``
    is the mid-point of the value's step in the weighted CDF; equal values share a bucket and a
    value of mass above 1/k leaves some bucket ids unused (``header["stats"]["used_buckets"]``).
    Larger feature -> bucket not lower. ``<street>_lower`` arrays record each bucket's smallest
    feature value (the quantile boundaries; NaN for an unused id).
"""

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np

from holdem.abstraction import build_kernels
from holdem.abstraction.bucket_file import BucketParams, header_for
from holdem.abstraction.bucket_tables import NUM_SCORES
from holdem.abstraction.deal_kernels import MAX_SCORE
from holdem.abstraction.isomorphism import board_indexer, street_indexer
from holdem.abstraction.preflop import NUM_PREFLOP_CLASSES, preflop_tables

_CHUNK_TURN = 48
_CHUNK_FLOP = 8


def preflop_equity(num_players=2, samples=100_000, seed=0, num_threads=None):
    """Monte Carlo pot share (float64[169], by class) of each preflop class against
    ``num_players - 1`` uniformly random hands (win 1, an m-way tie 1/m); one seeded stream
    per class, so the result does not depend on ``num_threads``."""
    _, _, reps = preflop_tables()
    equity = np.empty(NUM_PREFLOP_CLASSES, dtype=np.float64)

    def run(chunk):
        build_kernels.preflop_equity_kernel(reps, chunk[0], chunk[1], int(num_players),
                                            int(samples), int(seed), equity,
                                            np.empty(52, np.int64), np.empty(4, np.uint64))

    _run_chunks(run, _chunks(NUM_PREFLOP_CLASSES, 13), num_threads)
    return equity



def _chunks(n, size):
    return [(i, min(i + size, n)) for i in range(0, n, size)]


def _run_chunks(run, chunks, num_threads, progress=None, stage=""):
    """Run ``run(chunk)`` for every chunk on ``num_threads`` threads (the kernels release the
    GIL; each chunk writes disjoint outputs, so the result is independent of the schedule)."""
    num_threads = num_threads or os.cpu_count() or 1
    if progress:
        progress(stage, 0, len(chunks))
    run(chunks[0])                      # compiles (or loads) the kernel once, in this thread
    done = 1
    if progress:
        progress(stage, done, len(chunks))
    with ThreadPoolExecutor(max_workers=num_threads) as pool:
        for _ in pool.map(run, chunks[1:]):
            done += 1
            if progress:
                progress(stage, done, len(chunks))


def quantile_buckets(values, weights, k, return_lower=False):
    """Weighted quantile bins (int64, shape of ``values``): value v gets ``floor(k * m)``, m the
    mid-point of v's step in the CDF of ``values`` weighted by ``weights`` (non-negative
    integers). Equal values share a bucket; a larger value never gets a lower one. With
    ``return_lower`` also each bucket's smallest value (float64[k], NaN for an unused id)."""
    values = np.asarray(values)
    weights = np.asarray(weights, dtype=np.int64)
    order = np.argsort(values)             # ties may come in any order: they share a bucket
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    mass = np.add.reduceat(weights[order], starts)
    after = np.cumsum(mass)
    total = int(after[-1])
    if total <= 0:
        raise ValueError("quantile_buckets needs a positive total weight")
    step = np.minimum((k * (2 * after - mass)) // (2 * total), k - 1)   # exact integer floor
    out = np.empty(values.shape[0], dtype=np.int64)
    out[order] = np.repeat(step, np.diff(np.r_[starts, values.shape[0]]))
    if not return_lower:
        return out
    lower = np.full(k, np.nan)
    used = mass > 0
    ids, first = np.unique(step[used], return_index=True)
    lower[ids] = ordered[starts[used][first]]
    return out, lower


def _bucket_min(bucket, value, k):
    """Smallest ``value`` in each bucket (float64[k], NaN for an unused id)."""
    lower = np.full(k, np.inf)
    np.minimum.at(lower, bucket, value)
    lower[np.isinf(lower)] = np.nan
    return lower


def _bucket_dtype(k):
    return np.uint8 if k <= 256 else np.uint16


def build_buckets(params=BucketParams(), progress=None, num_threads=None,
                  keep_features=False):
    """Build the arrays and header of a bucket file (:mod:`.bucket_file`; the features and bins
    of the module docstring).

    ``progress(stage, done, total)`` is called as chunks finish; ``num_threads`` defaults to
    the number of cores. Returns ``(header, arrays)``; with ``keep_features`` also a dict of
    the per-class features (``flop``, ``turn`` float64, ``flop_weight``, ``turn_weight``
    int64, ``river_hist`` int64[1981]) as a third item. The result depends only on ``params``.
    """
    params = params.validate()
    if params.method == "ehs2":         # the k-means settings do not apply
        params = replace(params, kmeans_iters=BucketParams.kmeans_iters,
                         kmeans_sample=BucketParams.kmeans_sample)
    exponent = params.num_players - 1
    flop_iso, turn_iso = street_indexer(1), street_indexer(2)

    _, class_sizes, _ = preflop_tables()
    equity = preflop_equity(params.num_players, params.preflop_samples, params.seed,
                            num_threads)
    if progress:
        progress("preflop equity", 1, 1)
    if params.k_preflop == NUM_PREFLOP_CLASSES:
        preflop = np.arange(NUM_PREFLOP_CLASSES, dtype=np.int64)
    else:
        preflop = quantile_buckets(equity, class_sizes, params.k_preflop)

    boards = {}
    for num_cards in (3, 4):
        indexer = board_indexer(num_cards)
        reps = np.zeros((indexer.size, 4), dtype=np.int64)
        counts = np.zeros(indexer.size, dtype=np.int64)
        build_kernels.board_census_kernel(*indexer.tables, num_cards, reps, counts)
        boards[num_cards] = (reps, counts)

    turn_feature = np.zeros(turn_iso.size, dtype=np.float64)
    turn_weight = np.zeros(turn_iso.size, dtype=np.int64)
    hists = []
    reps, counts = boards[4]

    def turn_chunk(chunk):
        hist = np.zeros(NUM_SCORES, dtype=np.int64)
        build_kernels.turn_pass_kernel(reps, counts, chunk[0], chunk[1], *turn_iso.tables,
                                       exponent, params.river_samples, params.seed,
                                       turn_feature, turn_weight, hist,
                                       np.zeros(build_kernels.RIVER_IWORK, np.int64),
                                       np.zeros(build_kernels.RIVER_FWORK, np.float64),
                                       np.zeros(4, np.uint64))
        hists.append(hist)

    _run_chunks(turn_chunk, _chunks(reps.shape[0], _CHUNK_TURN), num_threads, progress,
                "turn boards")
    river_hist = np.sum(hists, axis=0)

    flop_feature = np.zeros(flop_iso.size, dtype=np.float64)
    flop_weight = np.zeros(flop_iso.size, dtype=np.int64)
    reps, counts = boards[3]

    def flop_chunk(chunk):
        build_kernels.flop_pass_kernel(reps, counts, chunk[0], chunk[1], *flop_iso.tables,
                                       *turn_iso.tables, turn_feature, params.turn_samples,
                                       params.seed, flop_feature, flop_weight,
                                       np.zeros(build_kernels.FLOP_IWORK, np.int64),
                                       np.zeros(4, np.uint64))

    _run_chunks(flop_chunk, _chunks(reps.shape[0], _CHUNK_FLOP), num_threads, progress,
                "flops")

    for name, weight, raw in (("flop", flop_weight, 1326 * 19600),
                              ("turn", turn_weight, 1326 * 230300)):
        if weight.min() <= 0 or int(weight.sum()) != raw:
            raise AssertionError(f"{name} pass did not cover every canonical hand once per raw "
                                 f"hand ({int((weight <= 0).sum())} uncovered)")
    if progress:
        progress("quantile bins", 0, 1)
    scale = float(MAX_SCORE) ** (2 * exponent)
    flop_feature /= scale
    turn_feature /= scale
    river, river_lower = quantile_buckets(np.arange(NUM_SCORES) / MAX_SCORE, river_hist,
                                          params.k_river, True)
    if params.method == "ehs2":
        flop, flop_lower = quantile_buckets(flop_feature, flop_weight, params.k_flop, True)
        turn, turn_lower = quantile_buckets(turn_feature, turn_weight, params.k_turn, True)
        if progress:
            progress("quantile bins", 1, 1)
    else:
        from holdem.abstraction.emd import emd_clusters

        def run_chunks(run, chunks, progress=None, stage=""):
            _run_chunks(run, chunks, num_threads, progress, stage)

        flop, turn, kmeans_info = emd_clusters(params, boards[4], boards[3], river, river_hist,
                                               turn_weight, flop_weight, run_chunks, progress)
        flop_lower = _bucket_min(flop, flop_feature, params.k_flop)
        turn_lower = _bucket_min(turn, turn_feature, params.k_turn)

    arrays = {
        "preflop_bucket": preflop.astype(_bucket_dtype(params.k_preflop)),
        "preflop_equity": equity,
        "flop_bucket": flop.astype(_bucket_dtype(params.k_flop)),
        "turn_bucket": turn.astype(_bucket_dtype(params.k_turn)),
        "river_bucket": river.astype(_bucket_dtype(params.k_river)),
        "flop_lower": flop_lower,
        "turn_lower": turn_lower,
        "river_lower": river_lower,
    }
    used = [int(np.unique(preflop).size), int(np.unique(flop).size),
            int(np.unique(turn).size), int(np.unique(river[river_hist > 0]).size)]
    header = {
        **header_for(params),
        "sizes": {"preflop": NUM_PREFLOP_CLASSES, "flop": int(flop_iso.size),
                  "turn": int(turn_iso.size), "river_scores": NUM_SCORES},
        "features": {
            "preflop": ("169 lossless classes" if params.k_preflop == NUM_PREFLOP_CLASSES else
                        f"quantile bins of pot share vs {exponent} random hand(s), Monte Carlo"),
            "flop": f"quantile bins of E[HS^{2 * exponent}] over turn and river",
            "turn": f"quantile bins of E[HS^{2 * exponent}] over the river",
            "river": "quantile bins of HS (score = 2 * wins + ties vs 990 pairs)",
        },
        "stats": {"used_buckets": used},
    }
    if params.method == "emd":
        header["features"]["flop"] = ("k-means of turn-bucket histograms, greedy EMD with the "
                                      "turn centres' EMD as ground distance; ids by strength")
        header["features"]["turn"] = ("k-means of river-bucket histograms, exact EMD on the "
                                      "river buckets' mean HS; ids by strength")
        header["stats"]["kmeans"] = kmeans_info
    if keep_features:
        features = {"flop": flop_feature, "turn": turn_feature, "flop_weight": flop_weight,
                    "turn_weight": turn_weight, "river_hist": river_hist}
        return header, arrays, features
    return header, arrays
