"""Kernels of the potential-aware (EMD) card abstraction: next-street histograms, earth mover's
distances, k-means steps.

Everything here is @njit, iterative and allocation-free (``_nrt=False``); the orchestration
(sampling, k-means++ seeding, threads, relabelling) is in :mod:`holdem.abstraction.emd`.

Histograms
    A turn hand's histogram counts, over the river cards, the river bucket it lands in (river
    buckets are ordered by HS). It is stored *cumulative*: ``cum[i]`` = rivers in buckets 0..i,
    so ``cum[k - 1]`` is the number of rivers seen (46 when all are enumerated).
    A flop hand's histogram counts, over the turn cards, the turn bucket it lands in (plain
    counts; at most 47 non-zero entries).

Distances
    River buckets lie on a line (their mean HS), so the EMD between two distributions over them is
    exact and cheap: ``sum_i gap[i] * |P_i - Q_i|`` over the CDFs P, Q, ``gap[i]`` = distance
    between the mean HS of buckets i and i + 1 (:func:`emd_line`).
    Turn buckets do not lie on a line: the ground distance between two of them is the EMD between
    their centres' river distributions. The EMD from a flop hand (a few atoms) to a flop centre (a
    dense histogram) uses the greedy approximation of Ganzfried and Sandholm (2014, "Potential-aware
    imperfect-recall abstraction with earth mover's distance in imperfect-information games",
    Algorithm 2): every atom takes mass from the centre's entries in order of ground distance, one
    rank at a time. It is a feasible transport plan, so it is never below the exact EMD, and it is
    exact when the hand has one atom (:func:`emd_greedy`).
"""

from collections import namedtuple

import numpy as np

from holdem._jit import njit, njit_exact, njit_inline, overload_inline
from holdem.abstraction.build_kernels import (FLOP_IWORK, NUM_PAIRS_47, NUM_PAIRS_48,
                                              RIVER_IWORK, fill_pairs_kernel, flop_scratch,
                                              flop_turn_cards, river_draw, river_scratch,
                                              turn_hands, turn_river_cards)
from holdem.abstraction.deal_kernels import hand_index_kernel
from holdem.evaluator.kernels import CARD_BITS

HIST_IWORK = max(RIVER_IWORK, FLOP_IWORK)
"""Size of the int64 scratch of :func:`turn_hist_kernel` and :func:`flop_hist_kernel` (the
layouts of :mod:`holdem.abstraction.build_kernels`)."""

_DONE = 1e-12
_SLACK = 1e-9           # rounding allowance on the mean-difference lower bound


@njit_exact
def turn_hist_kernel(reps, start, stop, radix, offset, code_mult, river_bucket, river_samples,
                     seed, cum, iwork, acc, state):
    """Cumulative river-bucket histograms of every hole pair on the canonical turn boards
    ``reps[start:stop]`` over ``river_samples`` river cards (48 = all; fewer = the same seeded
    subset per board as :func:`holdem.abstraction.build_kernels.turn_pass_kernel`). Writes
    ``cum[index, :]`` (uint8[num turn hands, k_river]); ``acc`` int32[1128, k_river], ``iwork``
    int64[HIST_IWORK] and ``state`` uint64[4] are scratch."""
    k = cum.shape[1]
    (cards48, _, pair_a, pair_b, _, _, scores, _, _, _, perm, _, pair48,
     hand) = river_scratch(iwork)
    fill_pairs_kernel(47, pair_a, pair_b)
    for rep in range(start, stop):
        kb, m = turn_river_cards(reps, rep, river_samples, seed, cards48, perm, state)
        for q in range(NUM_PAIRS_48):
            for i in range(k):
                acc[q, i] = 0
        for s in range(m):
            river_draw(iwork, kb, perm[s])
            for p in range(NUM_PAIRS_47):
                acc[pair48[p], river_bucket[scores[p]]] += 1
        turn_hands(radix, offset, code_mult, kb, iwork)
        for q in range(NUM_PAIRS_48):
            idx = hand[q]
            total = 0
            for i in range(k):
                total += acc[q, i]
                cum[idx, i] = total


@njit_exact
def flop_hist_kernel(reps, start, stop, flop_radix, flop_offset, flop_code_mult, turn_radix,
                     turn_offset, turn_code_mult, turn_bucket, turn_samples, seed, hist, iwork,
                     state):
    """Turn-bucket histograms of every hole pair on the canonical flops ``reps[start:stop]`` over
    ``turn_samples`` turn cards (47 = all; fewer = the same seeded subset per flop as
    :func:`holdem.abstraction.build_kernels.flop_pass_kernel`). Writes ``hist[index, :]``
    (uint8[num flop hands, k_turn]); ``iwork`` int64[HIST_IWORK] and ``state`` uint64[4] are
    scratch."""
    k = hist.shape[1]
    cards49, perm = flop_scratch(iwork)
    for rep in range(start, stop):
        kf, m = flop_turn_cards(reps, rep, turn_samples, seed, cards49, perm, state)
        for a in range(49):
            for b in range(a + 1, 49):
                kh = CARD_BITS[cards49[a]] | CARD_BITS[cards49[b]]
                idx = hand_index_kernel(flop_radix, flop_offset, flop_code_mult, kh, kf, 0, 0)
                for i in range(k):
                    hist[idx, i] = 0
                for s in range(m):
                    jt = perm[s]
                    if jt == a or jt == b:
                        continue
                    tidx = hand_index_kernel(turn_radix, turn_offset, turn_code_mult, kh,
                                             kf | CARD_BITS[cards49[jt]], 0, 0)
                    hist[idx, turn_bucket[tidx]] += 1


# --------------------------------------------------------------------------------------------
# Distances
# --------------------------------------------------------------------------------------------

@njit_inline
def emd_line(p_cdf, q_cdf, gap):
    """Exact EMD between two distributions on points of a line, given as CDFs over the first
    ``gap.shape[0]`` points (``gap[i]`` = distance from point i to point i + 1)."""
    total = 0.0
    for i in range(gap.shape[0]):
        total += gap[i] * abs(p_cdf[i] - q_cdf[i])
    return total


@njit_inline
def emd_greedy(atom, mass, num_atoms, target, ground, order, remaining, left):
    """Greedy EMD (an upper bound on the exact one) from ``num_atoms`` atoms (bucket
    ``atom[i]``, mass ``mass[i]``, total 1) to the histogram ``target`` (total 1), with
    ``ground[a, b]`` the distance between buckets and ``order[a]`` the buckets by distance from
    a (nearest first). ``remaining`` (len(target)) and ``left`` (>= num_atoms) are scratch."""
    k = target.shape[0]
    for b in range(k):
        remaining[b] = target[b]
    todo = 0
    for i in range(num_atoms):
        left[i] = mass[i]
        if mass[i] > _DONE:
            todo += 1
    cost = 0.0
    for r in range(k):
        if todo == 0:
            break
        for i in range(num_atoms):
            if left[i] <= _DONE:
                continue
            a = atom[i]
            b = order[a, r]
            amount = min(left[i], remaining[b])
            if amount > 0.0:
                cost += amount * ground[a, b]
                remaining[b] -= amount
                left[i] -= amount
                if left[i] <= _DONE:
                    todo -= 1
    return cost


@njit_exact
def emd_line_kernel(p_cdf, q_cdf, gap):
    """:func:`emd_line` for one pair."""
    return emd_line(p_cdf, q_cdf, gap)


# --------------------------------------------------------------------------------------------
# k-means steps over a chunk of points (each call writes only its own slice or partial sums)
# --------------------------------------------------------------------------------------------

@njit_inline
def _search(sorted_mean, x):
    """First position in the ascending ``sorted_mean`` whose value is >= x."""
    lo = 0
    hi = sorted_mean.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if sorted_mean[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit_inline
def _advance(sorted_mean, x, lo, hi, best):
    """The next centre to try, outwards from the mean ``x`` between the nearest unvisited
    positions ``lo`` (below) and ``hi`` (above): (position, new lo, new hi), position -1 once
    the nearer one's lower bound |mean - x| exceeds ``best`` (or none is left)."""
    k = sorted_mean.shape[0]
    if lo < 0 and hi >= k:
        return -1, lo, hi
    if hi >= k or (lo >= 0 and x - sorted_mean[lo] <= sorted_mean[hi] - x):
        if x - sorted_mean[lo] - _SLACK > best:
            return -1, lo, hi
        return lo, lo - 1, hi
    if sorted_mean[hi] - x - _SLACK > best:
        return -1, lo, hi
    return hi, lo, hi + 1


LineCenters = namedtuple("LineCenters", "centers gap cdf")
"""The centres of :func:`line_assign_kernel` and the point's CDF (float64[k - 1])."""
GreedyCenters = namedtuple("GreedyCenters",
                           "centers ground order atom mass num_atoms remaining left")
"""The centres of :func:`greedy_assign_kernel` and the point's atoms (:func:`emd_greedy`)."""


def _center_distance(metric, c):
    """Distance from the point held in ``metric`` to centre ``c``: at compile time, the
    implementation that fits the type of ``metric`` (:class:`LineCenters` or
    :class:`GreedyCenters`)."""


@overload_inline(_center_distance)
def _center_distance_typer(metric, c):
    kind = getattr(metric, "instance_class", None)
    if kind is LineCenters:
        def line(metric, c):
            return emd_line(metric.cdf, metric.centers[c], metric.gap)
        return line
    if kind is GreedyCenters:
        def greedy(metric, c):
            return emd_greedy(metric.atom, metric.mass, metric.num_atoms, metric.centers[c],
                              metric.ground, metric.order, metric.remaining, metric.left)
        return greedy
    return None


@njit_inline
def _nearest(metric, x, sorted_mean, center_order):
    """(centre, distance) of the centre nearest to the point in ``metric`` whose mean is ``x``
    (ties: the lower centre id, as a full scan). ``center_order`` lists the centres by their
    mean (``sorted_mean``, ascending); the distance is at least the difference of the means, so
    centres are tried outwards from ``x`` until that bound exceeds the best distance."""
    best = 1e300            # fastmath: no infinities
    arg = 0
    hi = _search(sorted_mean, x)
    lo = hi - 1
    while True:
        pos, lo, hi = _advance(sorted_mean, x, lo, hi, best)
        if pos < 0:
            break
        c = center_order[pos]
        d = _center_distance(metric, c)
        if d < best or (d == best and c < arg):
            best = d
            arg = c
    return arg, best


@njit
def line_assign_kernel(cum, index, start, stop, centers, gap, order, sorted_mean, label, dist,
                       cdf):
    """Nearest centre (float64[K, k - 1] CDFs) of the points ``cum[index[start:stop]]`` by
    :func:`emd_line`; writes ``label`` and ``dist`` at positions start..stop (ties: the lower
    centre id, as a full scan). ``order`` lists the centres by their mean ``-sum(gap * cdf)``
    (``sorted_mean``, ascending): the EMD is at least the difference of the means, so centres
    are tried outwards from the point's mean and the search stops once that bound exceeds the
    best distance. ``cdf`` float64[k] is scratch."""
    k = cum.shape[1]
    for j in range(start, stop):
        p = index[j]
        total = np.float64(cum[p, k - 1])
        x = 0.0
        for i in range(k - 1):
            cdf[i] = cum[p, i] / total
            x -= gap[i] * cdf[i]
        arg, best = _nearest(LineCenters(centers, gap, cdf), x, sorted_mean, order)
        label[j] = arg
        dist[j] = best


@njit_exact
def line_sum_kernel(cum, index, weight, label, start, stop, sums, mass):
    """Adds the weighted CDFs of the points ``cum[index[start:stop]]`` into ``sums[label]``
    (float64[K, k - 1]) and their weights into ``mass`` (float64[K])."""
    k = cum.shape[1]
    for j in range(start, stop):
        p = index[j]
        c = label[j]
        w = weight[j]
        total = np.float64(cum[p, k - 1])
        for i in range(k - 1):
            sums[c, i] += w * (cum[p, i] / total)
        mass[c] += w


@njit
def greedy_assign_kernel(hist, index, start, stop, centers, ground, order, strength,
                         center_order, sorted_mean, label, dist, atom, mass, remaining, left):
    """Nearest centre (float64[K, k] histograms) of the points ``hist[index[start:stop]]`` by
    :func:`emd_greedy`; writes ``label`` and ``dist`` at positions start..stop (ties: the lower
    centre id). ``strength[b]`` is a position of bucket b on a line with ``ground[a, b] >=
    |strength[a] - strength[b]|``, so every transport costs at least the difference of the mean
    strengths: centres are tried outwards from the point's mean (``center_order`` by
    ``sorted_mean``, ascending) until that bound exceeds the best distance. ``atom`` int64,
    ``mass``, ``remaining`` and ``left`` float64 (each of length k) are scratch."""
    k = hist.shape[1]
    for j in range(start, stop):
        p = index[j]
        n = 0
        total = 0.0
        for b in range(k):
            if hist[p, b] > 0:
                atom[n] = b
                mass[n] = hist[p, b]
                total += hist[p, b]
                n += 1
        x = 0.0
        for i in range(n):
            mass[i] /= total
            x += mass[i] * strength[atom[i]]
        arg, best = _nearest(GreedyCenters(centers, ground, order, atom, mass, n, remaining,
                                           left), x, sorted_mean, center_order)
        label[j] = arg
        dist[j] = best


@njit_exact
def hist_sum_kernel(hist, index, weight, label, start, stop, sums, mass):
    """Adds the weighted normalized histograms of ``hist[index[start:stop]]`` into
    ``sums[label]`` (float64[K, k]) and their weights into ``mass`` (float64[K])."""
    k = hist.shape[1]
    for j in range(start, stop):
        p = index[j]
        c = label[j]
        w = weight[j]
        total = 0.0
        for b in range(k):
            total += hist[p, b]
        for b in range(k):
            sums[c, b] += w * (hist[p, b] / total)
        mass[c] += w
