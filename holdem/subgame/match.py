"""The re-solving bot against a blueprint, hand by hand on the real rules engine.

Every deal is played four times: the re-solving bot in each seat, and its own blueprint alone in
each seat, against the same opponent, with the same cards and the same random draws. Until the
re-solved street the two versions play the same actions (the re-solving bot's blueprint draws
from the same stream), so the deal-by-deal difference keeps only what re-solving changes. The
head-to-head of the re-solving bot is reported plain (duplicate deals) and, when the opponent is
its own blueprint (whose match with itself is 0 by symmetry), as that difference with its much
narrower interval. Real chips: both stacks ``stack`` big blinds of 100 chips.
"""

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

import numpy as np

from holdem.analysis.bot import BlueprintBot, real_table
from holdem.analysis.intervals import mean_ci
from holdem.games.nlhe.rules import HandState
from holdem.subgame.resolving import CACHE_BYTES, ResolvingBot, SolveCache

BIG_BLIND = 100


@dataclass
class ResolveResult:
    mbb_per_hand: float         # re-solving bot against the opponent, duplicate deals
    ci95: float
    difference: float           # minus its blueprint against the same opponent, per hand
    difference_ci95: float
    hands: int                  # hands the re-solving bot played (one per seat per deal)
    solves: int                 # subgames solved (re-solves included)
    seconds: float

    def line(self):
        return (f"mbb/hand: {self.mbb_per_hand:.1f} ± {self.ci95:.1f}; re-solving adds "
                f"{self.difference:.1f} ± {self.difference_ci95:.1f} over the blueprint alone "
                f"(95% CI, {self.hands} hands, {self.solves} solves, "
                f"{self.hands / self.seconds:.1f} hands/s)")


def _play(state, bots, seat_of):
    while not state.is_terminal:
        bot = bots[seat_of[state.to_act]]
        state.apply(bot.decide(state).action)
    return state.payoffs()


def deals_of(table, seed, deals, per_board=1, bots=2, indices=None):
    """(hole_cards, full_board, ``bots`` seeds for the bots' draws) of ``deals`` deals:
    independent ones (``per_board`` 1), or groups of ``per_board`` deals that share a board,
    the hole cards dealt from the rest. The first K deals of a seed are the same whatever
    ``deals`` is. ``indices``: only those deals (in that order), the same as in the whole."""
    seeds = np.random.SeedSequence(seed).spawn(deals if per_board == 1 else
                                               -(-deals // per_board))
    for i in (range(deals) if indices is None else indices):
        if per_board == 1:
            deal_seed, *bot_seeds = seeds[i].generate_state(1 + bots)
            cards = HandState(table, rng=np.random.default_rng(deal_seed))
            yield cards.hole_cards, cards.full_board, bot_seeds
            continue
        group, k = divmod(i, per_board)
        board_seed = seeds[group].generate_state(1)[0]
        board = tuple(int(c) for c in np.random.default_rng(board_seed).permutation(52)[:5])
        deal = np.random.SeedSequence([int(board_seed), k])
        deal_seed, *bot_seeds = deal.generate_state(1 + bots)
        rest = np.array([c for c in range(52) if c not in board])
        holes = np.random.default_rng(deal_seed).permutation(rest)[:4].tolist()
        yield (tuple(holes[:2]), tuple(holes[2:])), board, bot_seeds


def play_groups(work, spec, deals, per_board, processes=1, on_group=None):
    """Play ``deals`` deals in groups of ``per_board`` (a board each):
    ``work(spec, indices, cache)`` plays the deals ``indices`` with ``spec`` (its options; a
    Blueprint under "bp" and "opponent") and a :class:`SolveCache` (None when ``per_board`` is
    1; it keeps up to ``spec["cache_bytes"]`` bytes of solutions, default
    :data:`~holdem.subgame.resolving.CACHE_BYTES`), and ``on_group(group, output)`` receives
    each group's output as it comes, in any order.

    ``processes`` > 1 spreads the groups over that many processes (spawned; each loads the
    checkpoints under "bp" and "opponent" from their files once and keeps its own cache). A
    board's deals stay in one process, so its solutions are read from the cache as in one
    process, and solving is deterministic: the outputs are the same as in one process."""
    if per_board < 1:
        raise ValueError(f"per_board must be at least 1, got {per_board}")
    groups = [range(g, min(deals, g + per_board)) for g in range(0, deals, per_board)]
    if processes <= 1:
        cache = _cache(spec)
        for k, indices in enumerate(groups):
            on_group(k, work(spec, indices, cache))
        return
    files = {}
    for name in ("bp", "opponent"):
        if spec.get(name) is not None:
            path = getattr(spec[name].checkpoint, "path", None)
            if path is None:
                raise ValueError(f"processes > 1 loads the {name} blueprint from its checkpoint "
                                 f"file in each process; this one has no file")
            files[name] = str(path)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(min(processes, len(groups)), mp_context=context,
                             initializer=_start_process, initargs=({**spec, **files},)) as pool:
        futures = {pool.submit(_play_in_process, work, indices): k
                   for k, indices in enumerate(groups)}
        for future in as_completed(futures):
            on_group(futures[future], future.result())


_PROCESS = {}        # in a process of play_groups: its spec (blueprints loaded) and its cache


def _start_process(spec):
    from holdem.analysis.blueprint import Blueprint

    loaded = {k: Blueprint.load(v) if k in ("bp", "opponent") and v is not None else v
              for k, v in spec.items()}
    _PROCESS.update(spec=loaded, cache=_cache(spec))


def _cache(spec):
    """The solve cache of one process of :func:`play_groups` (None for independent deals)."""
    if spec["per_board"] <= 1:
        return None
    return SolveCache(max_bytes=spec.get("cache_bytes", CACHE_BYTES))


def _play_in_process(work, indices):
    return work(_PROCESS["spec"], indices, _PROCESS["cache"])


def group_means(values, per_board):
    """The means of consecutive groups of ``per_board`` values (deals that share a board are
    not independent; the groups are)."""
    values = np.asarray(values, dtype=np.float64)
    return [values[i:i + per_board].mean() for i in range(0, len(values), per_board)]


def resolve_match(bp, opponent, street="river", deals=100, seed=0, stack=100, target=0.5,
                  max_iterations=300, menu=None, threads=1, progress=None, safe=False,
                  per_board=1, processes=1, cache_bytes=CACHE_BYTES):
    """Play ``deals`` duplicate deals (module docstring); ``opponent`` is a Blueprint.
    ``per_board`` > 1: groups of deals share a board, the bots share a
    :class:`~holdem.subgame.resolving.SolveCache` of ``cache_bytes`` (per process), and the
    intervals are over the groups (as in :func:`holdem.subgame.lbr.resolve_lbr`).
    ``processes``: see :func:`play_groups` (the same result, sooner)."""
    spec = dict(bp=bp, opponent=opponent, street=street, deals=deals, seed=seed, stack=stack,
                target=target, max_iterations=max_iterations, menu=menu, threads=threads,
                safe=safe, per_board=per_board, cache_bytes=cache_bytes)
    done, solves = {}, 0
    start = time.perf_counter()

    def on_group(k, output):
        nonlocal solves
        done[k], solves = output[0], solves + output[1]
        if progress is not None:
            progress(sum(map(len, done.values())), deals, time.perf_counter() - start)

    play_groups(_match_deals, spec, deals, per_board, processes, on_group)
    rows = [row for k in sorted(done) for row in done[k]]
    plain, diff = [r[0] for r in rows], [r[1] for r in rows]
    if per_board > 1:
        plain, diff = group_means(plain, per_board), group_means(diff, per_board)
    mean, ci = mean_ci(plain, student=True)
    dmean, dci = mean_ci(diff, student=True)
    return ResolveResult(mean, ci, dmean, dci, 2 * deals, solves, time.perf_counter() - start)


def _match_deals(spec, indices, cache):
    """The deals ``indices`` of :func:`resolve_match`: per deal (the re-solving bot's mbb/hand,
    its difference from the blueprint alone), and the solves made."""
    bp, opponent = spec["bp"], spec["opponent"]
    table = real_table(bp, round(spec["stack"] * BIG_BLIND), BIG_BLIND)
    to_mbb = 1000.0 / BIG_BLIND
    rows, solves = [], 0
    for hole, board, bot_seeds in deals_of(table, spec["seed"], spec["deals"],
                                           spec["per_board"], 4, indices):
        deal_plain, deal_diff = 0.0, 0.0
        for seat in (0, 1):
            outcome = []
            for resolving in (True, False):
                mine = np.random.default_rng(bot_seeds[2 * seat])
                theirs = np.random.default_rng(bot_seeds[2 * seat + 1])
                if resolving:
                    me = ResolvingBot(bp, BIG_BLIND, mine, street=spec["street"],
                                      target=spec["target"],
                                      max_iterations=spec["max_iterations"], menu=spec["menu"],
                                      threads=spec["threads"], safe=spec["safe"], cache=cache)
                else:
                    me = BlueprintBot(bp, BIG_BLIND, mine)
                other = BlueprintBot(opponent, BIG_BLIND, theirs)
                state = HandState(table, hole_cards=hole, board=board)
                payoffs = _play(state, (me, other), {seat: 0, 1 - seat: 1})
                outcome.append(payoffs[seat] * to_mbb)
                if resolving:
                    solves += me.solves
            deal_plain += outcome[0]
            deal_diff += outcome[0] - outcome[1]
        rows.append((deal_plain / 2, deal_diff / 2))
    return rows, solves
