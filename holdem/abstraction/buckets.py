"""Card abstraction for No-Limit Hold'em: build, save, load and look up card buckets.

A player's *bucket* on a street is the card part of its infoset key. Buckets depend only on the
player's own hole cards and the board, so the solver computes them once per deal (for every
player and street) with :func:`deal_buckets` and never looks at cards again.

What each street uses
    ========  =========================================  ======================================
    street    bucket of a hand                           stored in the file / done at run time
    ========  =========================================  ======================================
    preflop   one of the 169 classes (pair, suited,      ``preflop_bucket[class]`` (169); the
              offsuit by ranks) when k = 169; else       run-time table is 52 x 52 by card
              quantile bins of the pot share against
              ``num_players - 1`` random hands (MC)
    flop      quantile bin of E[HS^2] (below), or with   ``flop_bucket[index]`` for each of the
              method "emd" a k-means cluster of its      1,286,792 canonical flop hands
              histogram over turn buckets
    turn      quantile bin of E[HS^2], or with "emd"     ``turn_bucket[index]`` for each of the
              a k-means cluster of its histogram over    13,960,050 canonical turn hands
              river buckets (:mod:`.emd`)
    river     quantile bin of HS                         ``river_bucket[score]`` (1,981): HS is
                                                         computed per deal at run time
    ========  =========================================  ======================================

    ``index`` is the hand isomorphism index (:mod:`holdem.abstraction.isomorphism`: the hole pair
    and the board as a set, up to suit permutation), so isomorphic hands share a bucket and the
    tables hold one byte per class (two when k > 256): 15.2 MB. A river table would take
    123,156,254 bytes more, while HS is cheap enough to compute at run time: ``score = 2 * wins
    + ties`` of the hand against the 990 hole pairs that share no card with it or the board
    (``HS = score / 1980``, exact), for all players at once: the unseen pairs are ranked once per
    deal (per rank pair where suits cannot matter: at most 91 evaluations, plus up to 415 pairs
    holding a card of a suit with 3+ board cards), then each player counts with card removal.

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

File format (version 1; ``.buckets``; never a pickle)::

    offset 0   8 bytes   magic b"HOLDEMBK"
    offset 8   uint32    format version (little-endian)
    offset 12  uint32    header length H
    offset 16  H bytes   header: msgpack map
    ...        zero padding to a 64-byte boundary D (the data section)
    D + off    arrays, each at the 64-byte aligned ``offset`` (relative to D) named in the header
    end - 32   32 bytes  sha256 of every byte before it

The header holds ``format``, ``kind`` ("holdem.buckets"), ``generator`` (name, version),
``params`` (k_preflop, k_flop, k_turn, k_river, num_players, seed, preflop_samples,
turn_samples, river_samples, method, kmeans_iters, kmeans_sample; a generator version 1 file
predates the last three and reads as method "ehs2"), ``sizes``, ``features`` (descriptions),
``stats`` (used bucket ids; with "emd" the k-means' steps and mean distances) and ``arrays``
(name, dtype, shape, offset, nbytes). Arrays: ``preflop_bucket`` (169), ``preflop_equity``
(169, float64), ``flop_bucket``, ``turn_bucket``, ``river_bucket`` (1981), ``flop_lower``,
``turn_lower``, ``river_lower`` (k, float64; with "emd" the smallest E[HS^2] in each flop and
turn bucket). The file holds no time stamp, so the same
parameters give the same bytes. :func:`load_buckets` checks the magic and version first, then
the sha256, then every field, and raises :class:`BucketFileError` naming the file and the
field. :func:`bucket_file_checksum` is the sha256 of the whole file (as ``sha256sum`` prints).

Run time (from a kernel)::

    from holdem.abstraction.deal_kernels import deal_buckets
    deal_buckets(tables, hole, board, num_players, buckets_out, work)

``tables`` = ``load_buckets(path).tables`` (a :data:`BucketTables` of plain arrays), ``hole``
int[num_players, 2], ``board`` int[5], ``buckets_out`` int64[num_players, 4] (preflop, flop,
turn, river), ``work`` = :func:`make_work` (int64[1,088]). Measured cost (tools/bench_buckets.py,
one core, random deals): about 2.3 us per heads-up deal, i.e. 290 ns per player per street; 3.0
us per 6-player deal (2.0 us per deal + 0.17 us per player).
"""

import hashlib
import os
import struct
from collections import namedtuple
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import msgpack
import numpy as np

from holdem.abstraction import build_kernels, deal_kernels
from holdem.abstraction.deal_kernels import MAX_SCORE, RUNTIME_WORK, deal_buckets, num_buckets
from holdem.abstraction.isomorphism import STREET_SIZES, board_indexer, street_indexer
from holdem.cards import RANK_CHARS, describe_cards, repeated_card
from holdem.fileio import atomic_open

__all__ = ["BucketParams", "BucketTables", "BucketFile", "BucketFileError", "build_buckets",
           "save_buckets", "load_buckets", "bucket_file_checksum", "make_work", "num_buckets",
           "deal_buckets", "lookup_buckets", "river_hand_strength", "preflop_equity",
           "preflop_class", "preflop_hands", "PREFLOP_CLASS_NAMES", "quantile_buckets"]

MAGIC = b"HOLDEMBK"
FORMAT_VERSION = 1
GENERATOR_VERSION = 2
"""Version 2 adds the params method, kmeans_iters and kmeans_sample. An "ehs2" file is still
written as version 1 (without them), so it keeps the bytes and sha256 it always had."""
METHODS = ("ehs2", "emd")
KIND = "holdem.buckets"
SUFFIX = ".buckets"
NUM_PREFLOP_CLASSES = 169
NUM_SCORES = MAX_SCORE + 1
MAX_BUCKETS = 65535
MAX_PLAYERS = 9
MAX_EMD_BUCKETS = 512
_PREFIX = struct.Struct("<8sII")
_ALIGN = 64
_DIGEST = 32
_MAX_HEADER = 1 << 20
_MAX_FILE = 1 << 30
_TURN_IWORK = 8192
_CHUNK_TURN = 48
_CHUNK_FLOP = 8

BucketTables = namedtuple("BucketTables", [
    "num_buckets",      # int64[4]: k per street
    "preflop_bucket",   # uint8/uint16[52 * 52]: bucket of hole (c0, c1) at c0 * 52 + c1
    "flop_bucket",      # uint8/uint16[1,286,792]: bucket by flop isomorphism index
    "turn_bucket",      # uint8/uint16[13,960,050]: bucket by turn isomorphism index
    "river_bucket",     # uint8/uint16[1981]: bucket by river score (2 * wins + ties)
    "flop_radix", "flop_offset", "flop_code_mult",      # flop IsoTables (int64)
    "turn_radix", "turn_offset", "turn_code_mult",      # turn IsoTables (int64)
])
"""Everything :func:`deal_buckets` reads, as plain arrays (see the module docstring)."""


class BucketFileError(ValueError):
    """A bucket file is missing, truncated, corrupt, of another format or inconsistent."""


@dataclass(frozen=True)
class BucketParams:
    """Parameters of a bucket file (all enter the header and the bytes)."""

    k_preflop: int = 169        #: preflop buckets; 169 = the lossless classes
    k_flop: int = 50            #: flop buckets
    k_turn: int = 50            #: turn buckets
    k_river: int = 50           #: river buckets
    num_players: int = 2        #: equity target: against num_players - 1 random hands
    seed: int = 0               #: seeds every Monte Carlo step
    preflop_samples: int = 100_000   #: Monte Carlo deals per preflop class
    turn_samples: int = 47      #: turn cards per flop (47 = all: exact)
    river_samples: int = 48     #: river cards per turn board (48 = all: exact)
    method: str = "ehs2"        #: flop/turn buckets: "ehs2" quantiles or "emd" k-means
    kmeans_iters: int = 30      #: emd: at most this many Lloyd steps per street
    kmeans_sample: int = 200_000    #: emd: canonical hands the k-means is fitted on

    def validate(self):
        """Raise ValueError naming the first bad field."""
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        limits = {"k_preflop": (1, NUM_PREFLOP_CLASSES), "k_flop": (1, MAX_BUCKETS),
                  "k_turn": (1, MAX_BUCKETS), "k_river": (1, MAX_BUCKETS),
                  "num_players": (2, MAX_PLAYERS), "seed": (0, 2 ** 63 - 1),
                  "preflop_samples": (1, 10 ** 9), "turn_samples": (3, 47),
                  "river_samples": (3, 48), "kmeans_iters": (0, 1000),
                  "kmeans_sample": (100, 10 ** 8)}
        for field in fields(self):
            if field.name == "method":
                continue
            value = getattr(self, field.name)
            low, high = limits[field.name]
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ValueError(f"{field.name} must be an integer, got {value!r}")
            if not low <= value <= high:
                raise ValueError(f"{field.name} must be in {low}..{high}, got {value}")
        for name in ("k_turn", "k_river"):
            if self.method == "emd" and getattr(self, name) > MAX_EMD_BUCKETS:
                raise ValueError(f"{name} must be at most {MAX_EMD_BUCKETS} with method emd "
                                 f"(its histograms take 14 MB per bucket), got "
                                 f"{getattr(self, name)}")
        return self


@dataclass
class BucketFile:
    """A loaded bucket file: its header, parameters, raw arrays and run-time tables."""

    path: Path
    header: dict
    params: BucketParams
    arrays: dict
    tables: BucketTables
    sha256: str


# --------------------------------------------------------------------------------------------
# Preflop classes
# --------------------------------------------------------------------------------------------

def preflop_class(c0, c1):
    """Class 0..168 of the hole pair (c0, c1): ``13 * r + r`` for a pair of rank r,
    ``13 * high + low`` suited, ``13 * low + high`` offsuit (the usual 13 x 13 grid)."""
    r0, r1 = int(c0) >> 2, int(c1) >> 2
    high, low = max(r0, r1), min(r0, r1)
    if (int(c0) & 3) == (int(c1) & 3) and r0 != r1:
        return 13 * high + low
    return 13 * low + high


def _class_names():
    names = [""] * NUM_PREFLOP_CLASSES
    for high in range(13):
        for low in range(high + 1):
            h, lo = RANK_CHARS[high], RANK_CHARS[low]
            if high == low:
                names[13 * high + low] = h + h
            else:
                names[13 * high + low] = h + lo + "s"
                names[13 * low + high] = h + lo + "o"
    return tuple(names)


PREFLOP_CLASS_NAMES = _class_names()
"""Name of each preflop class ('AA', 'AKs', 'AKo', ...), indexed by :func:`preflop_class`."""


def _preflop_tables():
    """(class of each card pair (52 * 52, -1 for c0 == c1), class sizes (169), a representative
    hole pair per class (169, 2))."""
    cls = np.full(52 * 52, -1, dtype=np.int64)
    sizes = np.zeros(NUM_PREFLOP_CLASSES, dtype=np.int64)
    reps = np.full((NUM_PREFLOP_CLASSES, 2), -1, dtype=np.int64)
    for c0 in range(52):
        for c1 in range(52):
            if c0 != c1:
                k = preflop_class(c0, c1)
                cls[c0 * 52 + c1] = k
                if c0 < c1:
                    sizes[k] += 1
                    if reps[k, 0] < 0:
                        reps[k] = (c0, c1)
    return cls, sizes, reps


def preflop_hands(tables):
    """The hand classes in each preflop bucket of ``tables`` (:class:`BucketTables`): a list
    indexed by bucket of tuples of class names (``('AKs',)``; one class per bucket when the
    buckets are the 169 lossless classes), in grid order AA, AKs, ..., AKo, KK, ..., 22."""
    _, _, reps = _preflop_tables()
    out = [[] for _ in range(int(tables.num_buckets[0]))]
    for k in range(NUM_PREFLOP_CLASSES - 1, -1, -1):        # class index descending = grid order
        c0, c1 = reps[k]
        out[int(tables.preflop_bucket[c0 * 52 + c1])].append(PREFLOP_CLASS_NAMES[k])
    return [tuple(names) for names in out]


def preflop_equity(num_players=2, samples=100_000, seed=0, num_threads=None):
    """Monte Carlo pot share (float64[169], by class) of each preflop class against
    ``num_players - 1`` uniformly random hands (win 1, an m-way tie 1/m); one seeded stream
    per class, so the result does not depend on ``num_threads``."""
    _, _, reps = _preflop_tables()
    equity = np.empty(NUM_PREFLOP_CLASSES, dtype=np.float64)

    def run(chunk):
        build_kernels.preflop_equity_kernel(reps, chunk[0], chunk[1], int(num_players),
                                            int(samples), int(seed), equity,
                                            np.empty(52, np.int64), np.empty(4, np.uint64))

    _run_chunks(run, _chunks(NUM_PREFLOP_CLASSES, 13), num_threads)
    return equity


# --------------------------------------------------------------------------------------------
# Build
# --------------------------------------------------------------------------------------------

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
    """Build the arrays and header of a bucket file (see the module docstring).

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

    _, class_sizes, _ = _preflop_tables()
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
                                       np.zeros(_TURN_IWORK, np.int64),
                                       np.zeros(build_kernels.NUM_PAIRS_48, np.float64),
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
                                       np.zeros(128, np.int64), np.zeros(4, np.uint64))

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
    stored = asdict(params)
    if params.method == "ehs2":         # as generator version 1 wrote it: the same bytes
        stored = {k: v for k, v in stored.items() if k not in _V2_PARAMS}
    header = {
        "format": FORMAT_VERSION,
        "kind": KIND,
        "generator": {"name": __name__,
                      "version": 1 if params.method == "ehs2" else GENERATOR_VERSION},
        "params": stored,
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


# --------------------------------------------------------------------------------------------
# File
# --------------------------------------------------------------------------------------------

_ARRAY_SPECS = {                     # name -> (allowed dtypes, shape; "k:<street>" = k of street)
    "preflop_bucket": (("|u1", "<u2"), (NUM_PREFLOP_CLASSES,)),
    "preflop_equity": (("<f8",), (NUM_PREFLOP_CLASSES,)),
    "flop_bucket": (("|u1", "<u2"), (STREET_SIZES[1],)),
    "turn_bucket": (("|u1", "<u2"), (STREET_SIZES[2],)),
    "river_bucket": (("|u1", "<u2"), (NUM_SCORES,)),
    "flop_lower": (("<f8",), ("k_flop",)),
    "turn_lower": (("<f8",), ("k_turn",)),
    "river_lower": (("<f8",), ("k_river",)),
}
_V2_PARAMS = ("method", "kmeans_iters", "kmeans_sample")
_BUCKET_ARRAYS = {"preflop_bucket": "k_preflop", "flop_bucket": "k_flop",
                  "turn_bucket": "k_turn", "river_bucket": "k_river"}


def _pad(n):
    return (-n) % _ALIGN


def encode_buckets(header, arrays):
    """The bytes of a bucket file holding ``header`` (msgpack-able dict without ``arrays``) and
    ``arrays`` (name -> ndarray), in the layout of the module docstring."""
    header = dict(header)
    specs, blobs, offset = [], [], 0
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        specs.append({"name": name, "dtype": arr.dtype.str, "shape": list(arr.shape),
                      "offset": offset, "nbytes": int(arr.nbytes)})
        blobs.append(arr)
        offset += arr.nbytes + _pad(arr.nbytes)
    header["arrays"] = specs
    packed = msgpack.packb(header, use_bin_type=True)
    head = _PREFIX.pack(MAGIC, FORMAT_VERSION, len(packed)) + packed
    parts = [head, b"\0" * _pad(len(head))]
    for arr in blobs:
        parts.append(memoryview(arr).cast("B").tobytes())
        parts.append(b"\0" * _pad(arr.nbytes))
    body = b"".join(parts)
    return body + hashlib.sha256(body).digest()


def save_buckets(path, header, arrays):
    """Write a bucket file atomically (temporary file in the same directory, fsync, rename);
    returns the path."""
    path = Path(path)
    data = encode_buckets(header, arrays)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb") as f:
        f.write(data)
    return path



def bucket_file_checksum(path):
    """sha256 (hex) of the whole file at ``path``, as ``sha256sum`` prints it; checkpoints
    record it to refuse a different abstraction on resume."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise BucketFileError(f"bucket file {path}: cannot read: {exc.strerror}") from None
    return digest.hexdigest()


def _fail(path, field, message):
    raise BucketFileError(f"bucket file {path}: {field}: {message}")


def _check_prefix(path, data):
    size = len(data)
    if size >= 2 and data[0] == 0x80 and data[1] <= 5:
        _fail(path, "magic", "this is a Python pickle, which is never loaded: not a holdem "
              "bucket file")
    if data[:4] == b"PK\x03\x04":
        _fail(path, "magic", "this is a zip/.npz archive: not a holdem bucket file")
    if size < _PREFIX.size:
        _fail(path, "file", f"truncated ({size} bytes): not a holdem bucket file")
    magic, version, hlen = _PREFIX.unpack_from(data)
    if magic != MAGIC:
        _fail(path, "magic", f"{magic!r} is not {MAGIC!r}: not a holdem bucket file")
    if version != FORMAT_VERSION:
        _fail(path, "format", f"version {version} is not supported (this holdem reads version "
              f"{FORMAT_VERSION})")
    if hlen > _MAX_HEADER or _PREFIX.size + hlen + _DIGEST > size:
        _fail(path, "header", f"length {hlen} runs past the end of the file ({size} bytes): "
              "the file is truncated or corrupt")
    if hashlib.sha256(memoryview(data)[:-_DIGEST]).digest() != bytes(data[-_DIGEST:]):
        _fail(path, "checksum", "sha256 mismatch: the file is truncated or corrupt")
    return hlen


def _check_header(path, header):
    if not isinstance(header, dict):
        _fail(path, "header", "not a mapping")
    if header.get("kind") != KIND:
        _fail(path, "kind", f"{header.get('kind')!r} is not {KIND!r}")
    if header.get("format") != FORMAT_VERSION:
        _fail(path, "format", f"header says {header.get('format')!r}, expected "
              f"{FORMAT_VERSION}")
    generator = header.get("generator")
    if not isinstance(generator, dict) or not isinstance(generator.get("version"), int):
        _fail(path, "generator", "missing or not a mapping with an int version")
    if generator["version"] > GENERATOR_VERSION:
        _fail(path, "generator.version", f"{generator['version']} is newer than this holdem "
              f"({GENERATOR_VERSION})")
    raw = header.get("params")
    if not isinstance(raw, dict):
        _fail(path, "params", "missing or not a mapping")
    names = {f.name for f in fields(BucketParams)}
    if generator["version"] < 2:            # version 1 files predate the method parameters
        raw = {**{name: getattr(BucketParams(), name) for name in _V2_PARAMS}, **raw}
    for name in names:
        if name not in raw:
            _fail(path, f"params.{name}", "missing")
    unknown = sorted(set(raw) - names)
    if unknown:
        _fail(path, f"params.{unknown[0]}", "unknown parameter")
    try:
        params = BucketParams(**raw).validate()
    except ValueError as exc:
        _fail(path, "params." + str(exc).split(" ", 1)[0], str(exc))
    sizes = header.get("sizes")
    expected = {"preflop": NUM_PREFLOP_CLASSES, "flop": STREET_SIZES[1],
                "turn": STREET_SIZES[2], "river_scores": NUM_SCORES}
    if sizes != expected:
        _fail(path, "sizes", f"{sizes!r} differs from this holdem's {expected!r}")
    if not isinstance(header.get("arrays"), list):
        _fail(path, "arrays", "missing or not a list")
    return params


def _read_arrays(path, header, params, data, data_start):
    arrays = {}
    end = len(data) - _DIGEST
    for i, spec in enumerate(header["arrays"]):
        field = f"arrays[{i}]"
        try:
            name, dtype, shape = spec["name"], spec["dtype"], tuple(spec["shape"])
            offset, nbytes = int(spec["offset"]), int(spec["nbytes"])
        except (KeyError, TypeError, ValueError):
            _fail(path, field, "malformed array description")
        if name not in _ARRAY_SPECS:
            _fail(path, field, f"unknown array {name!r}")
        if name in arrays:
            _fail(path, name, "appears twice")
        dtypes, want = _ARRAY_SPECS[name]
        want = tuple(getattr(params, n) if isinstance(n, str) else n for n in want)
        if dtype not in dtypes:
            _fail(path, f"{name}.dtype", f"{dtype!r} is not one of {dtypes}")
        if shape != want:
            _fail(path, f"{name}.shape", f"{list(shape)} is not {list(want)}")
        dt = np.dtype(dtype)
        if nbytes != int(np.prod(shape)) * dt.itemsize:
            _fail(path, f"{name}.nbytes", f"{nbytes} does not match the shape")
        start = data_start + offset
        if offset < 0 or start + nbytes > end:
            _fail(path, name, "data runs past the end of the file")
        arrays[name] = np.frombuffer(data, dtype=dt, count=int(np.prod(shape)),
                                     offset=start).reshape(shape)
    missing = sorted(set(_ARRAY_SPECS) - set(arrays))
    if missing:
        _fail(path, missing[0], "missing array")
    for name, k_name in _BUCKET_ARRAYS.items():
        k = getattr(params, k_name)
        top = int(arrays[name].max())
        if top >= k:
            _fail(path, name, f"bucket {top} is not below {k_name}={k}")
    if np.any(np.diff(arrays["river_bucket"].astype(np.int64)) < 0):
        _fail(path, "river_bucket", "not non-decreasing in the score")
    return arrays


def load_buckets(path):
    """Load and fully validate a bucket file -> :class:`BucketFile` (its ``tables`` are what
    :func:`deal_buckets` reads). Raises :class:`BucketFileError` naming the file and the field
    on a missing, truncated, corrupt, foreign (pickle, npz, ...) or inconsistent file."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > _MAX_FILE:
            _fail(path, "file", f"{size} bytes is too large for a bucket file")
        data = bytearray(size)
        with open(path, "rb") as f:
            got = f.readinto(data)
    except OSError as exc:
        raise BucketFileError(f"bucket file {path}: cannot read: {exc.strerror}") from None
    if got != size:
        _fail(path, "file", "changed while being read")
    hlen = _check_prefix(path, data)
    try:
        header = msgpack.unpackb(bytes(data[_PREFIX.size:_PREFIX.size + hlen]), raw=False,
                                 strict_map_key=True)
    except Exception as exc:  # msgpack raises several types; none of them runs code
        _fail(path, "header", f"not valid msgpack ({exc})")
    params = _check_header(path, header)
    data_start = _PREFIX.size + hlen + _pad(_PREFIX.size + hlen)
    arrays = _read_arrays(path, header, params, data, data_start)
    return BucketFile(path=path, header=header, params=params, arrays=arrays,
                      tables=make_tables(arrays, params),
                      sha256=hashlib.sha256(data).hexdigest())


def make_tables(arrays, params):
    """:data:`BucketTables` from a bucket file's arrays (as :func:`build_buckets` returns or
    :func:`load_buckets` reads them)."""
    cls, _, _ = _preflop_tables()
    preflop_by_class = arrays["preflop_bucket"]
    preflop = np.zeros(52 * 52, dtype=preflop_by_class.dtype)
    valid = cls >= 0
    preflop[valid] = preflop_by_class[cls[valid]]
    flop_iso, turn_iso = street_indexer(1), street_indexer(2)
    return BucketTables(
        num_buckets=np.array([params.k_preflop, params.k_flop, params.k_turn, params.k_river],
                             dtype=np.int64),
        preflop_bucket=preflop,
        flop_bucket=np.ascontiguousarray(arrays["flop_bucket"]),
        turn_bucket=np.ascontiguousarray(arrays["turn_bucket"]),
        river_bucket=np.ascontiguousarray(arrays["river_bucket"]),
        flop_radix=flop_iso.tables.radix, flop_offset=flop_iso.tables.offset,
        flop_code_mult=flop_iso.tables.code_mult,
        turn_radix=turn_iso.tables.radix, turn_offset=turn_iso.tables.offset,
        turn_code_mult=turn_iso.tables.code_mult)


# --------------------------------------------------------------------------------------------
# Run time helpers
# --------------------------------------------------------------------------------------------

def make_work(tables=None):
    """Scratch for :func:`deal_buckets`: int64[1,088] (the ranked unseen pairs of the deal's
    board, see :func:`holdem.abstraction.deal_kernels.river_prepare_kernel`); one per thread. Its
    size depends neither on ``tables`` nor on the number of players."""
    return np.zeros(RUNTIME_WORK, dtype=np.int64)


def _checked_deal(hole, board):
    hole = np.asarray(hole)
    board = np.asarray(board)
    if hole.ndim == 1:
        hole = hole[None, :]
    if hole.ndim != 2 or hole.shape[1] != 2 or not 1 <= hole.shape[0] <= MAX_PLAYERS:
        raise ValueError(f"hole must be (num_players, 2) cards, got shape {hole.shape}")
    if board.shape != (5,):
        raise ValueError(f"board must be 5 cards, got shape {board.shape}")
    cards = np.concatenate([hole.reshape(-1), board])
    if cards.dtype.kind not in "iu" or cards.min() < 0 or cards.max() > 51:
        raise ValueError(f"cards must be integers 0..51, got {cards.tolist()}")
    if np.unique(cards).size != cards.size:
        raise ValueError(f"cards must be distinct: {repeated_card(cards)} appears twice in "
                         f"{describe_cards(cards)}")
    return hole.astype(np.int64), board.astype(np.int64)


def lookup_buckets(tables, hole, board):
    """Buckets (int64[num_players, 4]: preflop, flop, turn, river) of one deal; ``hole``
    (num_players, 2) or (2,) and ``board`` (5,) distinct cards. Validating Python wrapper of
    :func:`deal_buckets`."""
    hole, board = _checked_deal(hole, board)
    out = np.zeros((hole.shape[0], 4), dtype=np.int64)
    deal_buckets(tables, hole, board, hole.shape[0], out, make_work(tables))
    return out


def river_hand_strength(hole, board):
    """HS of a hole pair on a 5-card board: share of the 990 other hole pairs it beats, ties
    count half (float in [0, 1])."""
    hole, board = _checked_deal(hole, board)
    score = deal_kernels.river_score_kernel(hole[0, 0], hole[0, 1], board, make_work())
    return score / MAX_SCORE
