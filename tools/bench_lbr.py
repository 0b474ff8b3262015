"""Benchmark local best response (LBR) on one core, or on ``--threads`` threads.

Prints, one ``name: value unit`` per line: the LBR result and hands/s for a checkpoint (or for
a constant opponent of a config's game: ``--policy fold`` must give exactly 750 mbb/hand), the
check of LBR's model of the bot (the fold probability its belief predicted for its bets against
the bot's folds, with z; and the belief counters ``bad_branches``, ``true_node_missing``,
``empty_beliefs``, ``dropped_readings``, which are 0 when the belief is the bot's posterior), the
kernel counters per hand, LBR's bets and raises by street and size (preflop opens and re-raises
by the big blinds raised to, after the flop by the pot fraction added; each size's share of the
line's raises and LBR's mean chips in the hands where it chose it), and the time split: the
equity vectors (measured separately per street on random spots, times how many the match
computed) against the rest (range updates, strategy look-ups, buckets, playing the hands).

    python tools/bench_lbr.py --checkpoint /tmp/runs/h10 --hands 20000
    python tools/bench_lbr.py --checkpoint /tmp/runs/h10 --setting fcpa:3-4 --hands 100000 \
        --threads 2
    python tools/bench_lbr.py --policy fold --config configs/hunl_default.yaml --hands 2000

``--station`` also plays a LBR that never chooses (it checks and calls on every street) on the
same deals (both runs draw their cards from streams of their own) and prints what LBR's own
decisions add to it, with the interval of the deal-by-deal difference: with ``3-4`` settings
the part of LBR's winnings won on the turn and river, apart from how much the blueprint wins
from a calling station on the first two streets
(docs/evaluation.md#strength-heads-up-on-the-fields-yardstick).
"""

import argparse
import time

import benchlib  # noqa: F401  (first: puts this checkout's holdem on sys.path)

import numpy as np

from holdem.cli.common import iteration_count


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--checkpoint", metavar="PATH", help="checkpoint file or logdir")
    source.add_argument("--policy", choices=("fold", "call"),
                        help="a constant opponent on the game of --config instead")
    parser.add_argument("--config", default="configs/hunl_default.yaml",
                        help="game config for --policy (default: %(default)s)")
    parser.add_argument("--hands", type=iteration_count, default=20_000,
                        help="hands, played as duplicate pairs (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default: %(default)s)")
    parser.add_argument("--setting", default="abstract:1-4",
                        help="LBR setting ACTIONS[:ROUNDS] as eval_blueprint --lbr takes it "
                             "(default: %(default)s)")
    parser.add_argument("--threads", type=iteration_count, default=1,
                        help="threads playing the hands (default: %(default)s)")
    parser.add_argument("--station", action="store_true",
                        help="also play a calling station (LBR that never chooses) and print "
                             "the difference")
    parser.add_argument("--preflop-samples", type=iteration_count, default=None,
                        help="Monte Carlo boards for preflop equity (default: the library's)")
    parser.add_argument("--spots", type=iteration_count, default=50,
                        help="random spots per street for the equity timing "
                             "(default: %(default)s)")
    return parser.parse_args(argv)


def equity_seconds(spec, work, spots, seed):
    """Median seconds to compute one equity vector on each street (random cards)."""
    from holdem import rng
    from holdem.analysis.lbr import sampled as lbr
    from holdem.analysis.lbr import kernels as lk

    state = rng.make_states(seed, 1)[0]
    deal = np.random.default_rng(seed)
    out = []
    for street in range(4):
        times = []
        for _ in range(spots + 1):
            work.cards[:] = deal.permutation(52)[:9]
            work.ready[:] = 0
            lbr.live_combos(work, street)
            start = time.perf_counter()
            lk.street_equity(spec, work, np.int64(street), state)
            times.append(time.perf_counter() - start)
        out.append(float(np.median(times[1:])))         # the first call may load the kernel
    return out


def station_match(game, store, args, samples):
    """LBR that never chooses (its first round past the river): it checks and calls."""
    from holdem.analysis.lbr import sampled as lbr

    return lbr.lbr_match(game, store, hands=args.hands, seed=args.seed, preflop_samples=samples,
                         setting="fc:3-4", threads=args.threads, first_round=4, paired=True)


def main(argv=None):
    args = parse_args(argv)
    from holdem import config as config_mod
    from holdem.analysis.lbr import sampled as lbr
    from holdem.analysis.blueprint import Blueprint
    from holdem.analysis.matches.headtohead import blueprint_store
    from holdem.games import make_game

    samples = args.preflop_samples or lbr.DEFAULT_PREFLOP_SAMPLES
    if args.checkpoint:
        bp = Blueprint.load(args.checkpoint)
        game, store, name = bp.game, blueprint_store(bp).arrays, str(bp.checkpoint.path)
    else:
        game = make_game(config_mod.load(args.config))
        store, name = lbr.baseline_store(game, args.policy), f"always-{args.policy}"
    setting = lbr.LbrSetting.parse(args.setting)
    start = time.perf_counter()
    lbr.lbr_match(game, store, hands=2, seed=args.seed, preflop_samples=samples,
                  setting=setting)
    print(f"first call (compile or cache load, 2 hands): {time.perf_counter() - start:.2f} s")
    result = lbr.lbr_match(game, store, hands=args.hands, seed=args.seed,
                           preflop_samples=samples, setting=setting, threads=args.threads,
                           paired=args.station)
    print(f"opponent: {name}")
    print(f"setting: {setting}; threads: {args.threads}")
    print(result.line())
    print(f"speed: {result.hands_per_second:.0f} hands/s ({result.seconds:.1f} s)")
    print(result.folds.line())
    for line in result.size_lines(game.cards.table.chips_per_bb):
        print(line)
    if args.station:
        station = station_match(game, store, args, samples)
        gain = result.per_deal - station.per_deal
        ci = 1.96 * gain.std(ddof=1) / np.sqrt(gain.size)
        print(f"calling station (checks and calls every street): {station.mbb_per_hand:.1f} ± "
              f"{station.ci95:.1f} mbb/hand")
        print(f"LBR's decisions add: {gain.mean():.1f} ± {ci:.1f} mbb/hand (the same deals, "
              "paired)")
    for key, value in result.stats.items():
        if key in ("max_branches", "belief_checks", "bad_branches", "true_node_missing",
                   "empty_beliefs", "dropped_readings"):    # a maximum, or counts to read whole
            print(f"{key}: {value}")
        else:
            print(f"{key} per hand: {value / result.hands:.2f}")
    per_street = equity_seconds(lbr.make_spec(None, samples), lbr.make_work(None), args.spots,
                                args.seed)
    equity = 0.0
    for street, seconds in zip(("preflop", "flop", "turn", "river"), per_street):
        equity += result.stats[f"equity_{street}"] * seconds
        print(f"equity vector, {street}: {seconds * 1e3:.3f} ms")
    share = min(1.0, equity / (result.seconds * args.threads))
    print(f"time split: equity {100 * share:.0f}%, range updates and the rest "
          f"{100 * (1 - share):.0f}% (equity estimated from the per-street timings)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
