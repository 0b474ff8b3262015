"""Benchmark the card abstraction: run-time bucket lookup cost and build time.

Loads a bucket file, then times ``deal_buckets`` (the solver's per-deal call: every player's
preflop, flop, turn and river bucket) over uniformly random deals on one core, for 2 and for 6
players, and prints ns per deal, per player and per player-street, plus the per-deal share
(ranking the river's unseen pairs once) and the marginal cost of one more player. The build time
is the one the manifest recorded for the file; ``--build`` also times a fresh build with the
file's parameters (into a temporary directory).

    python tools/bench_buckets.py --buckets assets/abstraction/default_hu.buckets
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

import benchlib  # noqa: F401  (first: puts this checkout's holdem on sys.path)

DEFAULT = Path(__file__).resolve().parents[1] / "assets" / "abstraction" / "default_hu.buckets"


def time_lookup(tables, num_players, num_deals, repeats, seed):
    import numpy as np

    from holdem.abstraction import deal_kernels
    from holdem.abstraction.bucket_tables import make_work
    from holdem.cards import random_hands
    cards = random_hands(np.random.default_rng(seed), num_deals, 2 * num_players + 5)
    cards = cards.astype(np.int64)
    holes = np.ascontiguousarray(cards[:, :2 * num_players].reshape(num_deals, num_players, 2))
    boards = np.ascontiguousarray(cards[:, 2 * num_players:])
    out = np.zeros((num_deals, num_players, 4), dtype=np.int64)
    work = make_work(tables)
    deal_kernels.deal_buckets_batch_kernel(tables, holes[:1], boards[:1], num_players, out[:1],
                                           work)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        deal_kernels.deal_buckets_batch_kernel(tables, holes, boards, num_players, out, work)
        best = min(best, time.perf_counter() - start)
    return best / num_deals * 1e9


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--buckets", type=Path, default=DEFAULT,
                        help="bucket file (default: %(default)s)")
    parser.add_argument("--deals", type=int, default=200_000,
                        help="random deals per timed run (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed runs; the best is reported (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="RNG seed (default: %(default)s)")
    parser.add_argument("--build", action="store_true",
                        help="also time a fresh build with the file's parameters")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    from holdem.abstraction.bucket_build import build_buckets
    from holdem.abstraction.bucket_file import BucketParams, load_buckets, save_buckets
    import_seconds = time.perf_counter() - start
    start = time.perf_counter()
    loaded = load_buckets(args.buckets)
    load_seconds = time.perf_counter() - start
    print(f"import holdem.abstraction: {import_seconds:.3f} s; load {args.buckets.name}: "
          f"{load_seconds:.3f} s ({args.buckets.stat().st_size:,} bytes, k="
          f"{'/'.join(str(int(k)) for k in loaded.tables.num_buckets)})")

    per_deal = {}
    for num_players in (2, 6):
        ns = time_lookup(loaded.tables, num_players, args.deals, args.repeats, args.seed)
        per_deal[num_players] = ns
        print(f"deal_buckets, {num_players} players: {ns:,.0f} ns per deal = "
              f"{ns / num_players:,.0f} ns per player = {ns / num_players / 4:,.0f} ns per "
              f"player per street (best of {args.repeats} x {args.deals:,} random deals)")
    marginal = (per_deal[6] - per_deal[2]) / 4
    shared = per_deal[2] - 2 * marginal
    print(f"split: {shared:,.0f} ns per deal (river: rank the unseen pairs once) + "
          f"{marginal:,.0f} ns per player (4 lookups, 2 isomorphism indices, 1 river count)")

    manifest = args.buckets.parent / "manifest.json"
    if manifest.exists():
        entry = json.loads(manifest.read_text()).get("files", {}).get(args.buckets.name)
        if entry:
            print(f"build time (manifest): {entry['build_seconds']} s on "
                  f"{entry['machine']['cpus']} cpus: {entry['command']}")
    if args.build:
        params = BucketParams(**loaded.header["params"])
        start = time.perf_counter()
        header, arrays = build_buckets(params)
        with tempfile.TemporaryDirectory() as tmp:
            path = save_buckets(Path(tmp) / "bench.buckets", header, arrays)
            same = path.read_bytes() == args.buckets.read_bytes()
        print(f"build time (now): {time.perf_counter() - start:.1f} s; identical bytes: {same}")


if __name__ == "__main__":
    main()
