"""Head-to-head on the real game between two heads-up blueprints with different action
abstractions (bet menus), each playing through its own translation.

:func:`holdem.analysis.matches.headtohead.head_to_head` plays two blueprints on one abstract tree,
so it needs the same menu. Comparing menus -- which is how a menu is chosen (issue 52: is a tree
that holds more ordinary sizes worth its larger size at equal training time?) -- needs them to
meet where players meet: the real game, integer chips, every size read on the real pot by each
bot as ``play``'s bot reads it (:mod:`holdem.analysis.matches.crossmatch_kernels`). Duplicate deals;
the result is blueprint A's mean winnings in mbb/hand with a 95% interval (normal, over deals).
No control variate: intervals are wider than ``head_to_head``'s for the same hands.

    from holdem import Blueprint
    from holdem.analysis.matches.crossmatch import cross_match
    print(cross_match(Blueprint.load("runs/a"), Blueprint.load("runs/b"), hands=2_000_000).line())
"""

from dataclasses import asdict

import numpy as np

from holdem import rng
from holdem.abstraction.deal_kernels import RUNTIME_WORK
from holdem.analysis.matches import crossmatch_kernels as ck
from holdem.analysis.lbr import sampled as lbr
from holdem.analysis.matches.headtohead import MatchResult, blueprint_store
from holdem.analysis.intervals import mean_ci
from holdem.analysis.lbr.hand_kernels import NUM_REAL
from holdem.games import LINES


def check_same_game(a, b, capability=LINES, kind="heads-up No-Limit Hold'em",
                    table="the same stacks and blinds"):
    """Raise ValueError unless blueprints ``a`` and ``b`` both support ``capability`` (a match
    of ``kind`` blueprints) and play the same game (buckets aside: each reads its own)."""
    for bp in (a, b):
        if not bp.game.supports(capability):
            raise ValueError(f"{bp.checkpoint.path}: a cross-menu match is for {kind} "
                             f"blueprints, not {bp.game.name!r}")
    ga = {**asdict(a.config.game), "buckets": None}
    gb = {**asdict(b.config.game), "buckets": None}
    if ga != gb:
        diff = sorted(k for k in ga if ga[k] != gb[k])
        raise ValueError(f"{a.checkpoint.path} and {b.checkpoint.path} play different games "
                         f"(game.{', game.'.join(diff)} differ): a match needs {table}")


def _bot(bp, store):
    game = bp.game
    return ck.CrossBot(tree=game.tree, spec=lbr.make_spec(game), store=store,
                       tables=game.deal.tables, bucket_work=np.zeros(RUNTIME_WORK, np.int64),
                       sigma=np.zeros(int(game.max_actions), np.float64),
                       opt_child=np.zeros(2, np.int64), opt_prob=np.zeros(2, np.float64))


def cross_match(a, b, hands=1_000_000, seed=0, threads=1):
    """Blueprint ``a`` against blueprint ``b`` (heads-up, the same game, any two action and
    card abstractions) on the real game: a :class:`MatchResult` of A's mbb/hand. ``hands`` is
    rounded up to an even number (duplicate deals); ``threads`` > 1 splits the deals (the
    kernels release the GIL), each with its own random streams: reproducible for a given seed
    and thread count."""
    check_same_game(a, b)
    deals = max(1, (int(hands) + 1) // 2)
    threads = max(1, min(int(threads), deals))
    store_a, store_b = blueprint_store(a).arrays, blueprint_store(b).arrays
    bots = [(_bot(a, store_a), _bot(b, store_b)) for _ in range(threads)]
    states = rng.make_states(seed, 2 * threads)
    out = np.zeros(deals, dtype=np.float64)
    bounds = np.linspace(0, deals, threads + 1).astype(np.int64)

    def run(t, n=None, target=None):
        n = bounds[t + 1] - bounds[t] if n is None else n
        target = out[bounds[t]:bounds[t + 1]] if target is None else target
        ck.cross_play(bots[t][0], bots[t][1], states[t], states[threads + t], np.int64(n),
                      np.zeros(52, np.int64), np.zeros(9, np.int64),
                      np.zeros(NUM_REAL, np.int64), target)

    run(0, 0, out[:0])                              # compile or load from the cache
    seconds = lbr.timed_on_threads(run, threads)
    scale = 1000.0 / a.game.cards.table.chips_per_bb
    mean, ci = mean_ci(out, scale)
    result = MatchResult(mean, ci, hands=2 * deals)
    result.seconds = seconds
    return result
