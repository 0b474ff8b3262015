"""Card abstraction: hand isomorphism, preflop classes, hand strength, bucket files.

Oracles: canonical forms by brute force over the 24 suit permutations, and hand strength by
ranking every opponent pair with the evaluator. One small build (few Monte Carlo samples, tiny
k) is shared by the tests of the builder and the file format.
"""

import hashlib
import itertools
import json
import struct
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from holdem._jit import njit_exact
from holdem.abstraction import build_kernels, deal_kernels
from holdem.abstraction.bucket_build import build_buckets, preflop_equity, quantile_buckets
from holdem.abstraction.bucket_file import (
    BucketFileError,
    BucketParams,
    bucket_file_checksum,
    encode_buckets,
    load_buckets,
    save_buckets,
)
from holdem.abstraction.bucket_tables import (
    lookup_buckets,
    make_tables,
    make_work,
    river_hand_strength,
)
from holdem.abstraction.deal_kernels import hand_index_kernel, num_buckets
from holdem.abstraction.preflop import PREFLOP_CLASS_NAMES, preflop_class, preflop_hands
from holdem.abstraction.isomorphism import (
    STREET_SIZES,
    HandIndexer,
    board_indexer,
    street_indexer,
)
from holdem.cards import parse
from holdem.evaluator import rank7_batch
from holdem.evaluator.kernels import CARD_BITS

ROOT = Path(__file__).resolve().parents[1]
PERMUTATIONS = [np.array(p) for p in itertools.permutations(range(4))]
TINY = BucketParams(k_preflop=10, k_flop=8, k_turn=8, k_river=8, seed=7, preflop_samples=300,
                    turn_samples=3, river_samples=3)


def permute_suits(cards, perm):
    return (cards >> 2) * 4 + perm[cards & 3]


def random_hands(rng, n, num_cards):
    return np.array([rng.permutation(52)[:num_cards] for _ in range(n)], dtype=np.int64)


def canonical_form(row):
    """The smallest (sorted hole, sorted board) over the 24 suit permutations."""
    best = None
    for perm in PERMUTATIONS:
        cards = permute_suits(row, perm)
        form = (tuple(sorted(cards[:2])), tuple(sorted(cards[2:])))
        best = form if best is None or form < best else best
    return best


def brute_score(hole, board):
    """2 * wins + ties of ``hole`` against every pair of the 45 other cards, by the evaluator."""
    rest = [c for c in range(52) if c not in set(hole) | set(board)]
    opp = np.array(list(itertools.combinations(rest, 2)))
    mine = rank7_batch(np.array([list(hole) + list(board)]))[0]
    theirs = rank7_batch(np.concatenate([opp, np.tile(board, (len(opp), 1))], axis=1))
    return int(2 * (theirs < mine).sum() + (theirs == mine).sum())


# ------------------------------------------------------------------------------------------
# Isomorphism
# ------------------------------------------------------------------------------------------

def test_street_sizes():
    assert [street_indexer(s).size for s in range(4)] == list(STREET_SIZES)
    assert STREET_SIZES == (169, 1_286_792, 13_960_050, 123_156_254)
    assert board_indexer(3).size == 1755 and board_indexer(4).size == 16432


@pytest.mark.parametrize("street", [0, 1, 2, 3])
def test_suit_permutations_share_an_index(street, rng):
    indexer = street_indexer(street)
    hands = random_hands(rng, 3000, (2, 5, 6, 7)[street])
    index = indexer.index(hands)
    assert index.min() >= 0 and index.max() < indexer.size
    for perm in PERMUTATIONS:
        permuted = permute_suits(hands, perm)
        permuted[:, :2] = permuted[:, 1::-1]            # order inside a round is irrelevant
        permuted[:, 2:] = permuted[:, :1:-1]
        assert np.array_equal(indexer.index(permuted), index)


@pytest.mark.parametrize("street", [1, 2, 3])
def test_index_is_bijective_on_samples(street, rng):
    """Same index <=> same canonical form, on random hands and on suit-rich near misses."""
    indexer = street_indexer(street)
    num_cards = (2, 5, 6, 7)[street]
    hands = random_hands(rng, 1500, num_cards)
    # Near misses: one board card swapped for another of the same rank, other suit.
    near = hands.copy()
    near[:, -1] = (near[:, -1] & ~3) | ((near[:, -1] + 1) & 3)
    ok = np.array([len(set(row)) == num_cards for row in near])
    hands = np.concatenate([hands, near[ok]])
    index = indexer.index(hands)
    by_form, by_index = {}, {}
    for row, i in zip(hands, index):
        form = canonical_form(row)
        assert by_form.setdefault(form, i) == i
        assert by_index.setdefault(i, form) == form


def test_preflop_indexer_has_169_classes():
    hands = np.array(list(itertools.combinations(range(52), 2)))
    index = street_indexer(0).index(hands)
    assert np.unique(index).size == 169 and index.max() == 168


@njit_exact
def flop_census_kernel(radix, offset, code_mult, counts):
    """The flop indexer's census: add one to ``counts[index]`` for every raw flop hand (hole
    pair, flop set): 1326 * C(50, 3) = 25,989,600 hands; ``counts`` (1,286,792,) int64 zeros,
    in place. Returns the number of out-of-range indices (0 when the indexer is correct)."""
    bad = 0
    n = counts.shape[0]
    for h0 in range(52):
        for h1 in range(h0 + 1, 52):
            kh = CARD_BITS[h0] | CARD_BITS[h1]
            for f0 in range(52):
                if f0 == h0 or f0 == h1:
                    continue
                for f1 in range(f0 + 1, 52):
                    if f1 == h0 or f1 == h1:
                        continue
                    for f2 in range(f1 + 1, 52):
                        if f2 == h0 or f2 == h1:
                            continue
                        kf = CARD_BITS[f0] | CARD_BITS[f1] | CARD_BITS[f2]
                        idx = hand_index_kernel(radix, offset, code_mult, kh, kf, 0, 0)
                        if idx < 0 or idx >= n:
                            bad += 1
                        else:
                            counts[idx] += 1
    return bad


def test_flop_census_exhaustive():
    """Every raw flop hand (1326 * C(50, 3)) maps into range and every index is hit."""
    indexer = street_indexer(1)
    counts = np.zeros(indexer.size, dtype=np.int64)
    assert flop_census_kernel(*indexer.tables, counts) == 0
    assert counts.min() >= 1 and counts.max() <= 24
    assert counts.sum() == 1326 * 19600


def test_generic_indexer_rounds():
    """The indexer also works for 3 and 4 rounds (Waugh's 2, 3, 1, 1: 55,190,538 turn hands)."""
    assert HandIndexer((2, 3, 1)).size == 55_190_538
    with pytest.raises(ValueError):
        HandIndexer((2, 3, 1, 1, 1))


# ------------------------------------------------------------------------------------------
# Preflop and hand strength
# ------------------------------------------------------------------------------------------

def test_preflop_classes():
    sizes = np.zeros(169, dtype=np.int64)
    for c0, c1 in itertools.combinations(range(52), 2):
        assert preflop_class(c0, c1) == preflop_class(c1, c0)
        sizes[preflop_class(c0, c1)] += 1
    names = PREFLOP_CLASS_NAMES
    assert len(set(names)) == 169
    for k, name in enumerate(names):
        assert sizes[k] == {2: 6}.get(len(name), 4 if name.endswith("s") else 12), name
    assert names[preflop_class(*parse("As Ah"))] == "AA"
    assert names[preflop_class(*parse("Ks As"))] == "AKs"
    assert names[preflop_class(*parse("2c 7d"))] == "72o"


def test_preflop_equity():
    eq = preflop_equity(num_players=2, samples=20000, seed=1)
    by = dict(zip(PREFLOP_CLASS_NAMES, eq))
    assert abs(by["AA"] - 0.852) < 0.012
    assert abs(by["72o"] - 0.346) < 0.015
    assert eq.argmax() == PREFLOP_CLASS_NAMES.index("AA")
    three = preflop_equity(num_players=3, samples=20000, seed=1)
    assert abs(three[PREFLOP_CLASS_NAMES.index("AA")] - 0.735) < 0.015
    assert np.array_equal(eq, preflop_equity(2, 20000, 1, num_threads=1))


def test_river_hand_strength_extremes():
    assert river_hand_strength(parse("Ts 9h"), parse("As Ks Qs Js 2d")) == 1.0
    # The board plays: every pair ties except those improving it (none beat a royal flush).
    assert river_hand_strength(parse("2c 3d"), parse("As Ks Qs Js Ts")) == 0.5
    hole, board = parse("2c 3d"), parse("7h 8s 9c Jd Kh")     # the board plays: many ties
    assert river_hand_strength(hole, board) == brute_score(list(hole), list(board)) / 1980


@pytest.mark.parametrize("suited", [0, 3, 4, 5])
def test_river_score_matches_brute_force(suited, rng):
    """Run-time scoring (rank pairs + flush-suit pairs) equals ranking all 990 opponents."""
    work = make_work()
    for _ in range(6):
        suit = rng.integers(4)
        same = rng.permutation(13)[:suited] * 4 + suit
        others = [c for c in rng.permutation(52) if c & 3 != suit or suited == 0]
        board = np.array(list(same) + others[:5 - suited], dtype=np.int64)
        rest = [c for c in rng.permutation(52) if c not in board]
        for h in range(3):
            hole = np.array(rest[2 * h:2 * h + 2], dtype=np.int64)
            score = deal_kernels.river_score_kernel(hole[0], hole[1], board, work)
            assert score == brute_score(hole, board)


def test_river_sweep_matches_brute_force(rng):
    """The builder's sort-and-sweep scores of all 1,081 pairs on a board."""
    board = random_hands(rng, 1, 5)[0]
    cards = np.array([c for c in range(52) if c not in board], dtype=np.int64)
    pa, pb = np.zeros(1081, np.int64), np.zeros(1081, np.int64)
    build_kernels.fill_pairs_kernel(47, pa, pb)
    z = [np.zeros(n, np.int64) for n in (1081, 1081, 1024, 47, 47, 1081)]
    key = int(np.bitwise_or.reduce(deal_kernels.CARD_BITS[board]))
    build_kernels.river_scores_kernel(key, cards, pa, pb, *z)
    for p in rng.integers(0, 1081, 12):
        assert z[5][p] == brute_score([cards[pa[p]], cards[pb[p]]], board)


def test_turn_feature_is_exact(rng):
    """E[HS^2] of a turn hand, all 48 rivers, against a brute-force mean over rivers."""
    indexer, boards = street_indexer(2), board_indexer(4)
    reps = np.zeros((boards.size, 4), np.int64)
    counts = np.zeros(boards.size, np.int64)
    build_kernels.board_census_kernel(*boards.tables, 4, reps, counts)
    assert counts.sum() == 270725                   # C(52, 4)
    feature = np.zeros(indexer.size)
    weight = np.zeros(indexer.size, np.int64)
    hist = np.zeros(1981, np.int64)
    r = 4321
    build_kernels.turn_pass_kernel(reps, counts, r, r + 1, *indexer.tables, 1, 48, 0, feature,
                                   weight, hist, np.zeros(build_kernels.RIVER_IWORK, np.int64),
                                   np.zeros(build_kernels.RIVER_FWORK),
                                   np.zeros(4, np.uint64))
    assert hist.sum() == counts[r] * 48 * 1081
    board = list(reps[r])
    rest = [c for c in range(52) if c not in board]
    for _ in range(2):
        hole = list(rng.choice(rest, 2, replace=False))
        want = np.mean([brute_score(hole, board + [c]) ** 2 for c in rest if c not in hole])
        got = feature[indexer.index(np.array([hole + board]))[0]]
        assert got == pytest.approx(want, rel=1e-12)


# ------------------------------------------------------------------------------------------
# Quantile bins and the builder
# ------------------------------------------------------------------------------------------

def test_quantile_buckets(rng):
    values = rng.integers(0, 50, 10000) / 7.0
    weights = rng.integers(1, 5, 10000)
    b = quantile_buckets(values, weights, 10)
    order = np.argsort(values, kind="stable")
    assert np.all(np.diff(b[order]) >= 0)
    for v in np.unique(values):
        assert np.unique(b[values == v]).size == 1
    share = np.bincount(b, weights=weights, minlength=10) / weights.sum()
    assert share.max() < 0.2 and b.min() == 0 and b.max() == 9
    b, lower = quantile_buckets(values, weights, 10, return_lower=True)
    for k in range(10):
        if np.any(b == k):
            assert lower[k] == values[b == k].min()


@pytest.fixture(scope="session")
def tiny_build():
    """(header, arrays, features) of a small, fast build (3 turn and 3 river samples)."""
    return build_buckets(TINY, keep_features=True)


@pytest.fixture(scope="session")
def tiny_file(tiny_build, tmp_path_factory):
    header, arrays, _ = tiny_build
    return save_buckets(tmp_path_factory.mktemp("buckets") / "tiny.buckets", header, arrays)


def test_build_covers_every_class(tiny_build):
    header, arrays, features = tiny_build
    assert features["flop_weight"].min() >= 1 and features["turn_weight"].min() >= 1
    assert features["flop_weight"].sum() == 1326 * 19600
    assert features["turn_weight"].sum() == 1326 * 230300
    assert header["stats"]["used_buckets"] == [10, 8, 8, 8]
    assert num_buckets(make_tables(arrays, TINY)) == (10, 8, 8, 8)


@pytest.mark.parametrize("street", ["flop", "turn"])
def test_buckets_monotone_in_feature(tiny_build, street):
    _, arrays, features = tiny_build
    value, bucket = features[street], arrays[f"{street}_bucket"].astype(np.int64)
    order = np.argsort(value, kind="stable")
    assert np.all(np.diff(bucket[order]) >= 0)
    assert 0 <= value.min() and value.max() <= 1
    share = np.bincount(bucket, weights=features[f"{street}_weight"]) / features[
        f"{street}_weight"].sum()
    assert share.min() > 0.5 / 8 and share.max() < 2 / 8
    lower = arrays[f"{street}_lower"]
    assert np.all(np.diff(lower) > 0)


def test_river_and_preflop_buckets_monotone(tiny_build):
    _, arrays, features = tiny_build
    river = arrays["river_bucket"].astype(np.int64)
    assert river[0] == 0 and river[-1] == 7 and np.all(np.diff(river) >= 0)
    share = np.bincount(river, weights=features["river_hist"]) / features["river_hist"].sum()
    assert share.min() > 0.5 / 8
    eq, pre = arrays["preflop_equity"], arrays["preflop_bucket"].astype(np.int64)
    order = np.argsort(eq, kind="stable")
    assert np.all(np.diff(pre[order]) >= 0) and pre[PREFLOP_CLASS_NAMES.index("AA")] == 9


def test_preflop_hands_names_the_classes_of_each_bucket(tiny_build):
    from holdem.analysis.ranges.charts import GRID, combos

    tables = make_tables(tiny_build[1], TINY)
    hands = preflop_hands(tables)
    assert len(hands) == 10 and "AA" in hands[9]
    listed = [name for names in hands for name in names]
    assert sorted(listed) == sorted(PREFLOP_CLASS_NAMES)                 # each class once
    grid = [name for row in GRID for name in row]
    for bucket, names in enumerate(hands):
        assert list(names) == sorted(names, key=grid.index)              # in grid order
        for name in names:
            for hole in combos(name):
                board = [c for c in range(52) if c not in hole][:5]
                assert lookup_buckets(tables, np.array(hole), np.array(board))[0, 0] == bucket


def test_lookup_errors_name_cards_as_text(tiny_build):
    tables = make_tables(tiny_build[1], TINY)
    with pytest.raises(ValueError, match="As appears twice in As Kd As 7h 9d 2c 3c"):
        lookup_buckets(tables, parse("As Kd"), parse("As 7h 9d 2c 3c"))


def test_deal_buckets_match_tables(tiny_build, rng):
    """deal_buckets == per-street lookups by class, isomorphism index and river score, for
    2..6 players; the answer does not depend on the other players."""
    _, arrays, _ = tiny_build
    tables = make_tables(arrays, TINY)
    flop_iso, turn_iso = street_indexer(1), street_indexer(2)
    for num_players in (2, 3, 6):
        for cards in random_hands(rng, 40, 2 * num_players + 5):
            hole, board = cards[:2 * num_players].reshape(-1, 2), cards[2 * num_players:]
            got = lookup_buckets(tables, hole, board)
            for p in range(num_players):
                want = [
                    arrays["preflop_bucket"][preflop_class(*hole[p])],
                    arrays["flop_bucket"][flop_iso.index(np.r_[hole[p], board[:3]])[0]],
                    arrays["turn_bucket"][turn_iso.index(np.r_[hole[p], board[:4]])[0]],
                    arrays["river_bucket"][deal_kernels.river_score_kernel(
                        hole[p, 0], hole[p, 1], board, make_work())],
                ]
                assert got[p].tolist() == [int(w) for w in want]
                assert np.array_equal(lookup_buckets(tables, hole[p], board)[0], got[p])
    with pytest.raises(ValueError, match="distinct"):
        lookup_buckets(tables, parse("As Ks"), parse("As 2c 3c 4c 5c"))


def test_params_validation():
    with pytest.raises(ValueError, match="k_preflop"):
        replace(TINY, k_preflop=170).validate()
    with pytest.raises(ValueError, match="river_samples"):
        replace(TINY, river_samples=2).validate()
    with pytest.raises(ValueError, match="num_players"):
        replace(TINY, num_players=1).validate()


# ------------------------------------------------------------------------------------------
# Files
# ------------------------------------------------------------------------------------------

def test_round_trip(tiny_build, tiny_file):
    header, arrays, _ = tiny_build
    loaded = load_buckets(tiny_file)
    assert loaded.params == TINY
    assert loaded.header["params"] == header["params"]
    for name, arr in arrays.items():
        assert loaded.arrays[name].dtype == arr.dtype
        assert np.array_equal(loaded.arrays[name], arr, equal_nan=arr.dtype.kind == "f")
    digest = hashlib.sha256(tiny_file.read_bytes()).hexdigest()
    assert loaded.sha256 == digest == bucket_file_checksum(tiny_file)
    assert num_buckets(loaded.tables) == (10, 8, 8, 8)
    assert tiny_file.read_bytes() == encode_buckets(header, arrays)


@pytest.mark.slow
def test_same_seed_same_bytes(tiny_build, tiny_file):
    """A rebuild on one thread gives the same bytes; another seed changes them."""
    header, arrays = build_buckets(TINY, num_threads=1)
    assert encode_buckets(header, arrays) == tiny_file.read_bytes()
    header, arrays = build_buckets(replace(TINY, seed=8))
    assert encode_buckets(header, arrays) != tiny_file.read_bytes()


def _corrupt(tmp_path, data, name="bad.buckets"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _rejected(path, field):
    with pytest.raises(BucketFileError) as info:
        load_buckets(path)
    message = str(info.value)
    assert str(path) in message and f": {field}:" in message, message
    return message


def test_corrupt_files_rejected(tiny_file, tmp_path):
    data = tiny_file.read_bytes()
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x40
    _rejected(_corrupt(tmp_path, bytes(flipped)), "checksum")
    _rejected(_corrupt(tmp_path, data[:len(data) - 1000]), "checksum")
    _rejected(_corrupt(tmp_path, data[:100]), "header")
    _rejected(_corrupt(tmp_path, data[:10]), "file")
    _rejected(_corrupt(tmp_path, b""), "file")
    _rejected(_corrupt(tmp_path, b"HOLDEMCK" + data[8:]), "magic")
    newer = data[:8] + struct.pack("<I", 99) + data[12:]
    assert "version 99" in _rejected(_corrupt(tmp_path, newer), "format")
    import pickle
    message = _rejected(_corrupt(tmp_path, pickle.dumps({"flop_bucket": [1, 2]})), "magic")
    assert "pickle" in message
    npz = tmp_path / "x.npz"
    np.savez(npz, flop_bucket=np.zeros(3))
    assert "zip" in _rejected(npz, "magic")
    with pytest.raises(BucketFileError, match="cannot read"):
        load_buckets(tmp_path / "missing.buckets")


def test_inconsistent_files_rejected(tiny_build, tmp_path):
    """Files with a valid checksum but a bad field are rejected naming the field."""
    header, arrays, _ = tiny_build

    def rejected(field, header=header, arrays=arrays):
        return _rejected(_corrupt(tmp_path, encode_buckets(header, arrays)), field)

    rejected("params.k_flop", header={**header, "params": {**header["params"], "k_flop": 0}})
    rejected("params.seed", header={**header, "params": {
        k: v for k, v in header["params"].items() if k != "seed"}})
    rejected("kind", header={**header, "kind": "something else"})
    rejected("generator.version", header={**header, "generator": {"name": "x", "version": 99}})
    rejected("sizes", header={**header, "sizes": {**header["sizes"], "turn": 5}})
    bad = dict(arrays, flop_bucket=arrays["flop_bucket"].copy())
    bad["flop_bucket"][5] = 8
    rejected("flop_bucket", arrays=bad)
    rejected("turn_bucket", arrays={k: v for k, v in arrays.items() if k != "turn_bucket"})
    rejected("river_bucket.shape", arrays=dict(arrays, river_bucket=arrays["river_bucket"][1:]))
    rejected("preflop_equity.dtype",
             arrays=dict(arrays, preflop_equity=arrays["preflop_equity"].astype(np.float32)))


# ------------------------------------------------------------------------------------------
# Command line and the shipped file
# ------------------------------------------------------------------------------------------

def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "holdem.cli.build_buckets", *map(str, args)],
                          capture_output=True, text=True, timeout=600)


def test_cli_help_and_bad_flags(tmp_path):
    proc = run_cli("--help")
    assert proc.returncode == 0 and proc.stdout.startswith("usage:") and "--k-flop" in proc.stdout
    for args in (["--k-flop", "0", "--out", tmp_path / "x"], ["--out", tmp_path / "x",
                                                              "--num-players", "one"],
                 ["--bogus"], []):
        proc = run_cli(*args)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stderr.startswith("python -m holdem.cli.build_buckets: error:")


@pytest.mark.slow
def test_cli_build_matches_in_process(tiny_file, tmp_path):
    out, manifest = tmp_path / "cli.buckets", tmp_path / "manifest.json"
    t = TINY
    proc = run_cli("--k-preflop", t.k_preflop, "--k-flop", t.k_flop, "--k-turn", t.k_turn,
                   "--k-river", t.k_river, "--num-players", 2, "--seed", t.seed,
                   "--preflop-samples", t.preflop_samples, "--turn-samples", t.turn_samples,
                   "--river-samples", t.river_samples, "--out", out, "--manifest", manifest)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == tiny_file.read_bytes()
    assert proc.stdout.startswith(f"wrote {out}: method=ehs2 k=10/8/8/8") and "100%" in proc.stderr
    entry = json.loads(manifest.read_text())["files"]["cli.buckets"]
    assert entry["sha256"] == bucket_file_checksum(out)
    assert entry["size_bytes"] == out.stat().st_size and entry["params"]["seed"] == 7


def test_shipped_default_file():
    manifest_path = ROOT / "assets" / "abstraction" / "manifest.json"
    if not manifest_path.exists():
        pytest.skip("no shipped bucket file")
    manifest = json.loads(manifest_path.read_text())
    for name, entry in manifest["files"].items():
        path = manifest_path.parent / name
        assert path.stat().st_size == entry["size_bytes"] <= 30 << 20
        loaded = load_buckets(path)
        assert loaded.sha256 == entry["sha256"]
        assert loaded.header["params"] == entry["params"]
        tables = loaded.tables
        hole, board = parse("As Ah Kd Qc"), parse("Ac Ad 7h 2s 9c")
        got = lookup_buckets(tables, hole.reshape(2, 2), board)
        k = num_buckets(tables)
        assert got[0, 3] == k[3] - 1 and got[0, 1] == k[1] - 1  # quads of aces: top buckets


def test_deal_buckets_callable_from_a_kernel(tiny_build):
    """A caller's own kernel can call deal_buckets with a BucketTables argument."""
    _, arrays, _ = tiny_build
    tables = make_tables(arrays, TINY)
    holes = parse("As Ah Kd Qc").astype(np.int64).reshape(1, 2, 2)
    boards = parse("Ac Ad 7h 2s 9c").astype(np.int64).reshape(1, 5)
    out = np.zeros((1, 2, 4), np.int64)
    deal_kernels.deal_buckets_batch_kernel(tables, holes, boards, 2, out, make_work(tables))
    assert out[0, 0].tolist() == [9, 7, 7, 7]
