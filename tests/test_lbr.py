"""Local best response: known answers (always-fold opponent), the Bayes range update, LBR's
action values, equity against a brute-force evaluator, and the ``--lbr`` command line."""

import itertools
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from holdem import config as config_mod
from holdem import rng as rng_mod
from holdem.analysis.lbr import sampled as lbr
from holdem.analysis.lbr import kernels as lk
from holdem.cards import COMBOS
from holdem.evaluator import rank7, rank7_batch
from holdem.games import make_game
from holdem.games.tree import ActionCode, NodeKind
from holdem.solver.solver import Solver
from holdem.store.store import RegretStore
from holdem.solver.solver import save_solver

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def game():
    return make_game(config_mod.load(ROOT / "configs" / "hunl_default.yaml"))


@pytest.fixture(scope="module")
def nlhe_checkpoint(tmp_path_factory, game):
    tmp = tmp_path_factory.mktemp("lbr")
    cfg = config_mod.load(ROOT / "configs" / "hunl_default.yaml")
    solver = Solver(game, cfg)
    solver.run(2_000)
    save_solver(solver, tmp / "checkpoints" / "ckpt-000000002000.ckpt")
    return tmp


# -- known answers ------------------------------------------------------------------------------

def test_always_fold_opponent_loses_750_mbb_per_hand(game, seed):
    """LBR raises as the small blind (the blueprint folds: +1 bb) and collects the small blind
    as the big blind (+0.5 bb): 0.75 bb = 750 mbb/hand on every deal."""
    result = lbr.lbr_match(game, lbr.baseline_store(game, "fold"), hands=2_000, seed=seed)
    assert result.hands == 2_000
    assert abs(result.mbb_per_hand - 750.0) < 1e-9 and result.ci95 < 1e-9
    assert result.stats["decisions"] == 1_000        # one decision per deal: the open raise
    assert result.seconds > 0 and result.hands_per_second > 0
    threaded = lbr.lbr_match(game, lbr.baseline_store(game, "fold"), hands=200, threads=2)
    assert threaded.mbb_per_hand == 750.0 and threaded.hands == 200


RAISING_SETTINGS = ["abstract:1-4", "abstract:3-4", "fcpa:1-4", "fcpa:3-4", "56:1-4", "56:3-4"]


@pytest.mark.parametrize("setting", RAISING_SETTINGS)
def test_always_fold_loses_750_in_every_setting_that_bets(game, setting):
    """Every setting that may bet wins the blinds: as the big blind the small blind folds
    (+0.5 bb); as the small blind LBR bets once it may (preflop, or on the turn after checking
    the small blind in and checking the flop, when it acts on rounds 3-4) and the blueprint
    folds (+1 bb). Exactly 750 mbb/hand on every deal, whatever the bet size and however the
    bot's translation reads it."""
    result = lbr.lbr_match(game, lbr.baseline_store(game, "fold"), hands=400, seed=3,
                           setting=setting)
    assert result.mbb_per_hand == 750.0 and result.ci95 == 0.0, result.line()
    late = setting.endswith("3-4")
    # (with the nuts LBR checks the turn, a tie between checking down and betting, and bets
    # the river)
    by_street = (result.stats["raises_turn"] + result.stats["raises_river"] if late
                 else result.stats["raises_preflop"])
    assert result.stats["lbr_raises"] == by_street == 200
    assert result.stats["folds_to_raises"] == 200
    assert result.stats["passive_calls"] == (2 * 200 if late else 0)


def test_always_fold_against_fold_call_is_250_in_expectation(game):
    """LBR with fold and call only cannot bet: as the small blind it limps and checks down to
    a showdown worth 0 on average; as the big blind it collects the small blind. 250 mbb/hand
    in expectation (the DeepStack paper's LBR table lists 250 for always-fold in this
    setting), and never a bet."""
    for setting in ("fc:1-4", "fc:3-4"):
        result = lbr.lbr_match(game, lbr.baseline_store(game, "fold"), hands=4_000, seed=3,
                               setting=setting)
        assert abs(result.mbb_per_hand - 250.0) <= 2 * result.ci95, result.line()
        assert 0 < result.ci95 < 40
        assert result.stats["lbr_raises"] == 0 and result.stats["lbr_folds"] == 0


def test_abstract_setting_gives_the_old_kernels_figures(game):
    """The abstract action set on every round is what ``--lbr`` measured before LBR played
    the real game: the figures below are the old kernel's (holdem 7fda7e6) on the same
    20,000-iteration blueprint, bit for bit (its average strategy from every iteration, as
    the config then kept it)."""
    cfg = config_mod.with_overrides(config_mod.load(ROOT / "configs" / "hunl_default.yaml"),
                                    solver={"strategy_interval": 1})
    solver = Solver(game, cfg)
    solver.run(20_000)
    result = lbr.lbr_match(game, solver.store.arrays, hands=2_000, seed=3)
    assert result.mbb_per_hand == 2516.618181818182
    assert result.ci95 == 1138.9041004719293
    assert (result.stats["decisions"], result.stats["range_updates"], result.stats["boards"],
            result.stats["lbr_raises"], result.stats["folds_to_raises"]) == (
        3101, 3366, 625229, 1731, 696)
    assert result.stats["translated"] == result.stats["off_tree"] == 0
    assert result.stats["max_branches"] == 1


def test_rounds_3_4_check_and_call_before_the_turn(game):
    """On rounds 3-4 LBR never bets, raises or folds preflop or on the flop, and computes no
    equity there; on rounds 1-4 it does bet early. Against a random blueprint both win."""
    store = lbr.baseline_store(game, "call")
    late = lbr.lbr_match(game, store, hands=400, seed=4, setting="fcpa:3-4")
    early = lbr.lbr_match(game, store, hands=400, seed=4, setting="fcpa:1-4")
    assert late.stats["raises_preflop"] == late.stats["raises_flop"] == 0
    assert late.stats["equity_preflop"] == late.stats["equity_flop"] == 0
    assert late.stats["passive_calls"] >= 400             # limps and flop checks, each hand
    assert late.stats["raises_turn"] + late.stats["raises_river"] > 100
    assert early.stats["raises_preflop"] > 100 and early.stats["passive_calls"] == 0
    assert late.mbb_per_hand - late.ci95 > 2_000 and early.mbb_per_hand - early.ci95 > 2_000


def test_paired_runs_play_the_same_cards(game):
    """With ``paired`` the cards come from their own stream: a LBR that bets on the turn and
    one that never chooses see the same deals, though they draw different numbers in play
    (bench_lbr --station differences them deal by deal). Without it, the one stream."""
    store = lbr.baseline_store(game, "call")
    specs = [lbr.make_spec(game, setting="fcpa:3-4"),
             lbr.make_spec(game, setting="fc:3-4", first_round=4)]
    works = [lbr.make_work(game) for _ in specs]
    deals = [rng_mod.make_states(5, 1)[0] for _ in specs]
    states = list(rng_mod.make_states(6, 2))
    seen = []
    for _ in range(30):
        for k in range(2):
            lk.lbr_play(game.tree, game.deal.tables, store, specs[k], works[k], states[k],
                        deals[k], np.int64(1), np.zeros(1))
        assert list(works[0].cards) == list(works[1].cards)
        seen.append(tuple(works[0].cards))
    assert len(set(seen)) == 30 and works[0].stats[lk.STAT_RAISES] > 0
    assert works[1].stats[lk.STAT_DECISIONS] == 0
    paired = lbr.lbr_match(game, store, hands=200, seed=3, setting="fcpa:3-4", paired=True)
    station = lbr.lbr_match(game, store, hands=200, seed=3, setting="fc:3-4", first_round=4,
                            paired=True)
    assert paired.per_deal.size == station.per_deal.size == 100
    assert abs(station.mbb_per_hand) < 500 < paired.mbb_per_hand


def test_bad_settings_are_refused():
    assert lbr.LbrSetting.parse("fcpa:3-4") == lbr.LbrSetting("fcpa", "3-4")
    assert str(lbr.LbrSetting.parse("56")) == "56:1-4"
    assert len(lbr.FIFTY_SIX) == 55 and lbr.FIFTY_SIX[0] == 0.05
    assert lbr.FIFTY_SIX[-1] == pytest.approx(0.05 * 1.15 ** 54)
    with pytest.raises(ValueError, match="unknown LBR action set 'fcp'"):
        lbr.LbrSetting.parse("fcp:3-4")
    with pytest.raises(ValueError, match="unknown LBR rounds '2-4'"):
        lbr.LbrSetting.parse("fc:2-4")


def test_calling_station_is_exploited_heavily(game, seed):
    result = lbr.lbr_match(game, lbr.baseline_store(game, "call"), hands=1_000, seed=seed)
    assert result.mbb_per_hand - result.ci95 > 2_000          # value bets get paid
    assert result.mbb_per_hand <= 100_000                     # at most the stacks
    again = lbr.lbr_match(game, lbr.baseline_store(game, "call"), hands=1_000, seed=seed)
    assert again.mbb_per_hand == result.mbb_per_hand          # seeded


def test_training_lowers_the_bound(game):
    """The same LBR (seed) against an untrained blueprint (uniform play) and after 100,000
    iterations: training must cut the bound by a wide margin (measured with 100,000 hands:
    5,660 +- 162 against 1,211 +- 127 mbb/hand)."""
    cfg = config_mod.load(ROOT / "configs" / "hunl_default.yaml")
    solver = Solver(game, cfg)
    untrained = lbr.lbr_match(game, solver.store.arrays, hands=4_000, seed=11)
    solver.run(100_000)
    trained = lbr.lbr_match(game, solver.store.arrays, hands=4_000, seed=11)
    assert untrained.mbb_per_hand - untrained.ci95 > trained.mbb_per_hand + trained.ci95
    assert trained.mbb_per_hand < 0.5 * untrained.mbb_per_hand


def test_lbr_refuses_multiway_checkpoints(tmp_path):
    data = config_mod.to_dict(config_mod.load(ROOT / "configs" / "hunl_default.yaml"))
    data["game"]["num_players"] = 3
    data["train"].pop("eval_interval", None)         # heads-up only (the preflop change)
    cfg = config_mod.from_dict(data, source="test")
    solver = Solver(make_game(cfg), cfg)
    solver.run(200)
    save_solver(solver, tmp_path / "checkpoints" / "ckpt-000000000200.ckpt")
    proc = _eval("--checkpoint", tmp_path, "--lbr", "--hands", 10)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "heads-up" in proc.stderr


def test_bad_input_is_rejected(kuhn, game):
    with pytest.raises(ValueError, match="heads-up No-Limit Hold'em"):
        lbr.lbr_match(kuhn, None, hands=10)
    with pytest.raises(ValueError, match="unknown policy"):
        lbr.baseline_store(game, "shove")
    with pytest.raises(ValueError, match="preflop_samples"):
        lbr.make_spec(None, preflop_samples=0)


# -- range update and action values --------------------------------------------------------------

def _random_store(game, nodes, rng):
    """Random average strategies at ``nodes`` for every bucket, except: some buckets have zero
    strategy sums (regret matching applies) and some are missing (uniform)."""
    keys, num_actions, regrets, sums = [], [], [], []
    for node in nodes:
        na = int(game.tree.num_actions[node])
        k = int(game.deal.tables.num_buckets[game.tree.street[node]])
        for b in range(k):
            if b % 7 == 3:
                continue                                       # never stored: uniform
            keys.append(int(game.tree.history[node]) * game.bucket_stride + b)
            num_actions.append(na)
            r = rng.normal(size=na).astype(np.float32)
            s = np.zeros(na) if b % 5 == 1 else rng.random(na) * (rng.random(na) > 0.2)
            regrets.append(r)
            sums.append(s)
    store = RegretStore.from_arrays(np.array(keys), np.array(num_actions, dtype=np.int8),
                                    np.concatenate(regrets), np.concatenate(sums))
    return store


def _sigma(game, store, node, bucket):
    """The average strategy as documented: normalized sums, regret matching, uniform."""
    na = int(game.tree.num_actions[node])
    values = store.values_of(int(game.tree.history[node]) * game.bucket_stride + bucket)
    if values is None:
        return np.full(na, 1.0 / na)
    regrets, sums = (np.asarray(v, dtype=np.float64) for v in values)
    if sums.sum() > 0:
        return sums / sums.sum()
    pos = np.maximum(regrets, 0.0)
    return pos / pos.sum() if pos.sum() > 0 else np.full(na, 1.0 / na)


def _preflop_spot(game, hole, setting=None):
    """LBR's state at the first decision with ``hole``: one belief branch at the root with a
    uniform range, the real hand at its start."""
    spec, work = lbr.make_spec(game, setting=setting), lbr.make_work(game)
    work.cards[:2] = hole
    work.cards[2:] = [c for c in range(52) if c not in hole][:7]
    lk.prepare_street(game.deal.tables, spec, work, np.int64(0))
    live = work.live[0, :work.num_live[0]].copy()
    work.num_branches[0] = 1
    work.node[0] = 0
    work.range[0, live] = 1.0 / live.size
    lk.real_start(game.tree, spec, work.real)
    return spec, work, live


def test_range_update_is_bayes_rule(game, rng):
    tree = game.tree
    root = 0
    limp = int(tree.child_start[root]) + 1                  # SB calls: the BB decides
    assert tree.kind[limp] == NodeKind.DECISION and tree.player[limp] == 1
    store = _random_store(game, [root, limp], rng)
    spec, work, live = _preflop_spot(game, [51, 46])
    card = COMBOS
    bucket = game.deal.tables.preflop_bucket[card[live, 0] * 52 + card[live, 1]].astype(int)
    expected = np.ones(live.size) / live.size
    for seat, node, action in ((0, root, 1), (1, limp, 0)):     # SB calls, BB checks
        lk.update_range(tree, store.arrays, spec, np.int64(seat), np.int64(ActionCode.CALL),
                        np.int64(0), work)
        lk.real_apply(spec, work.real, np.int64(ActionCode.CALL), np.int64(0))
        expected = expected * np.array([_sigma(game, store, node, b)[action] for b in bucket])
        expected /= expected.sum()
        np.testing.assert_allclose(work.range[0, live], expected, rtol=1e-9, atol=1e-15)
        assert work.num_branches[0] == 1
    assert work.node[0] == int(tree.child_start[limp]) + 0      # the flop after the check
    assert {_sigma(game, store, root, b)[1] for b in bucket} != {1.0 / 3}   # not uniform


def test_lbr_action_values_follow_the_formulas(game, rng):
    tree, contrib = game.tree, game.tree.contrib
    root = 0
    c0, na = int(tree.child_start[root]), int(tree.num_actions[root])
    raises = [c0 + a for a in range(na) if tree.kind[c0 + a] == NodeKind.DECISION and a >= 2]
    store = _random_store(game, [root] + raises, rng)
    spec, work, live = _preflop_spot(game, [48, 49])          # LBR holds a pair of aces
    work.range[0, live] = rng.random(live.size)
    work.range[0, live] /= work.range[0, live].sum()
    lk.street_equity(spec, work, np.int64(0), rng_mod.make_states(1, 1)[0])
    choice = lk.lbr_action(tree, store.arrays, spec, np.int64(0), work)
    card = COMBOS
    bucket = game.deal.tables.preflop_bucket[card[live, 0] * 52 + card[live, 1]].astype(int)
    prob, eq = work.range[0, live], work.equity[0, live]
    wp = float(prob @ eq)
    expected = [-contrib[root, 0], wp * contrib[c0 + 1].sum() - contrib[c0 + 1, 0]]
    for child in raises:
        sig = np.array([_sigma(game, store, child, b) for b in bucket])
        fold, call = sig[:, 0], sig[:, 1]
        fp = float(prob @ fold)
        wp_call = float((prob * call) @ eq / (prob @ call))
        after = int(tree.child_start[child]) + 1               # the blueprint calls
        expected.append(fp * contrib[child, 1]
                        + (1 - fp) * (wp_call * contrib[after].sum() - contrib[after, 0]))
    np.testing.assert_allclose(work.value[:na], expected, rtol=1e-9)
    assert choice == int(np.argmax(expected))
    assert 0.75 < wp < 0.95                                    # aces against a random range


@pytest.mark.parametrize("mostly_folds_to_all_in", [False, True])
def test_raise_value_uses_the_translated_response(game, rng, mostly_folds_to_all_in):
    """LBR's pot raise to 3 bb at the root is off the tree (2.5 bb open, all-in): its value
    uses the bot's answer at both readings, weighted by the pseudo-harmonic probability. A
    LBR reading it as the likelier size alone would value it differently."""
    tree, contrib = game.tree, game.tree.contrib
    c0, na = int(tree.child_start[0]), int(tree.num_actions[0])
    raises = [c0 + a for a in range(2, na)]
    labels = [game.rules.labels[c] for c in raises]
    assert labels == ["r2.5b", "a"]
    store = _random_store(game, [0] + raises, rng)
    if mostly_folds_to_all_in:      # the bot calls 2.5 bb but mostly folds to an all-in
        keys, num_actions, regrets, sums = [], [], [], []
        for node, pick in ((raises[0], 1), (raises[1], 0)):
            na_child = int(tree.num_actions[node])
            for bucket in range(169):
                keys.append(int(tree.history[node]) * game.bucket_stride + bucket)
                num_actions.append(na_child)
                regrets.append(np.zeros(na_child, np.float32))
                row = np.full(na_child, 0.1)
                row[pick] = 1.0
                sums.append(row)
        store = RegretStore.from_arrays(np.array(keys), np.array(num_actions, dtype=np.int8),
                                        np.concatenate(regrets), np.concatenate(sums))
    spec, work, live = _preflop_spot(game, [44, 41], setting="fcpa")      # LBR: K-Q
    work.range[0, live] = rng.random(live.size)
    work.range[0, live] /= work.range[0, live].sum()
    lk.street_equity(spec, work, np.int64(0), rng_mod.make_states(1, 1)[0])
    lk.lbr_action(tree, store.arrays, spec, np.int64(0), work)
    assert list(work.cand_to[:4]) == [0, 0, 300, 10_000]
    card = COMBOS
    bucket = game.deal.tables.preflop_bucket[card[live, 0] * 52 + card[live, 1]].astype(int)
    prob, eq = work.range[0, live], work.equity[0, live]
    p_small = (49.5 - 1.0) * 1.75 / (48.75 * 2.0)          # x = 1 pot between 0.75 and 49.5

    def answer(child):
        sig = np.array([_sigma(game, store, child, b) for b in bucket])
        return prob @ sig[:, 0], prob @ sig[:, 1], (prob * sig[:, 1]) @ eq

    def value(readings, to):
        fp = sum(p * answer(c)[0] for c, p in readings)
        w = sum(p * answer(c)[1] for c, p in readings)
        e = sum(p * answer(c)[2] for c, p in readings)
        return fp * contrib[0, 1] + (1 - fp) * (e / w * 2 * to - to)

    translated = value([(raises[0], p_small), (raises[1], 1 - p_small)], 300)
    assert work.value[2] == pytest.approx(translated, rel=1e-9)
    assert work.value[3] == pytest.approx(value([(raises[1], 1.0)], 10_000), rel=1e-9)
    nearest_only = value([(raises[0], 1.0)], 300)
    if mostly_folds_to_all_in:      # the 13% all-in reading folds 10/11 (2.06 chips more)
        assert translated - nearest_only > 1.0              # chips: the readings matter


def test_off_tree_bot_checks_and_calls(game):
    """Once the real hand leaves the abstract tree the bot checks or calls: a raise there
    has fold probability 0, and its Bayes update keeps the range (a call is certain)."""
    store = lbr.baseline_store(game, "fold")
    spec, work, live = _preflop_spot(game, [48, 49], setting="fcpa")      # LBR: aces
    work.node[0] = -1                                      # the bot is off its tree
    lk.street_equity(spec, work, np.int64(0), rng_mod.make_states(1, 1)[0])
    tree = game.tree
    lk.lbr_action(tree, store, spec, np.int64(0), work)
    wp = float(work.range[0, live] @ work.equity[0, live])
    for k, to in ((2, 300), (3, 10_000)):
        assert work.value[k] == pytest.approx(wp * 2 * to - to, rel=1e-12)
    before = work.range[0, live].copy()
    lk.real_apply(spec, work.real, np.int64(ActionCode.RAISE), np.int64(300))
    lk.update_range(tree, store, spec, np.int64(1), np.int64(ActionCode.CALL), np.int64(0), work)
    np.testing.assert_allclose(work.range[0, live], before, rtol=1e-12)
    lk.update_range(tree, store, spec, np.int64(1), np.int64(ActionCode.FOLD), np.int64(0),
                    work)          # impossible off the tree: nothing left, the prior stands
    assert work.num_branches[0] == 1


# -- equity ------------------------------------------------------------------------------------

def _brute_equity(hole, board, combo):
    """Pot share of ``hole`` against ``combo`` over every completion of ``board`` (rank7)."""
    rest = [c for c in range(52) if c not in set(hole) | set(board) | set(combo)]
    wins = 0.0
    runs = list(itertools.combinations(rest, 5 - len(board)))
    for run in runs:
        full = list(board) + list(run)
        mine, theirs = rank7(list(hole) + full), rank7(list(combo) + full)
        wins += 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
    return wins / len(runs)


@pytest.mark.parametrize("hole, board, picks", [
    ((51, 46), (0, 5, 10, 20, 30), 60),            # river
    ((50, 46), (2, 6, 10, 14, 19), 60),            # river, four of a suit on the board
    ((12, 13), (40, 41, 8, 33), 25),               # turn, paired board
    ((51, 47), (3, 7, 11, 14), 25),                # turn, three of a suit
    ((0, 4), (1, 5, 9), 4),                        # flop, a flush draw on the board
    ((30, 45), (22, 27, 36), 4),                   # flop, rainbow
])
def test_equity_matches_brute_force(hole, board, picks, rng):
    eq = lbr.combo_equity(hole, board)
    card = COMBOS
    dead = set(hole) | set(board)
    live = np.array([not (set(c.tolist()) & dead) for c in card])
    assert np.isnan(eq[~live]).all() and not np.isnan(eq[live]).any()
    for c in rng.choice(np.flatnonzero(live), picks, replace=False):
        assert eq[c] == pytest.approx(_brute_equity(hole, board, tuple(card[c])), abs=1e-12)


@pytest.mark.parametrize("street, board", [(2, (40, 41, 8, 33)), (3, (0, 5, 10, 20, 30))])
def test_bucket_only_equity_is_the_mean_over_the_bucket(game, street, board):
    """Bucket-only LBR decides with the mean equity of hands drawn from its own bucket (its own
    hand included): with many draws it matches the exact mean over every such hand; with no
    draws it is the exact equity of its own cards."""
    hole = (51, 46)
    tables = game.deal.tables
    work = lbr.make_work(game)
    work.cards[:] = list(hole) + [12, 13] + list(board) + [0] * (5 - len(board))
    for s in range(street + 1):
        lk.prepare_street(tables, lbr.make_spec(game), work, np.int64(s))
    own = work.own_bucket[street]
    card = COMBOS
    live = work.live[street, :work.num_live[street]]
    mates = [lk.combo_of(*hole)] + [c for c in live if work.bucket[street, c] == own]
    assert len(mates) > 5
    exact = np.array([lbr.combo_equity(card[m], board) for m in mates])
    want = np.nanmean(exact[:, live], axis=0)
    state = rng_mod.make_states(5, 1)[0]
    lk.decision_equity(lbr.make_spec(game, bucket_samples=3000), work, np.int64(street), state)
    got = work.equity[street, live]
    assert np.abs(got - want).max() < 0.06 and np.abs(got - want).mean() < 0.01
    assert list(work.cards[:2]) == list(hole)                  # LBR's own cards restored
    work.ready[4 + street] = 0
    lk.decision_equity(lbr.make_spec(game), work, np.int64(street), state)
    np.testing.assert_allclose(work.equity[street, live],
                               lbr.combo_equity(hole, board)[live], atol=1e-12)


def test_bucket_only_lbr_plays_preflop_like_lbr(game, seed):
    """Preflop it decides exactly as LBR (the 169 classes lose nothing): the always-fold
    blueprint still gives exactly 750 mbb/hand."""
    result = lbr.lbr_match(game, lbr.baseline_store(game, "fold"), hands=400, seed=seed,
                           bucket_samples=2)
    assert result.mbb_per_hand == 750.0 and result.ci95 == 0.0
    with pytest.raises(ValueError, match="bucket_samples must not be negative"):
        lbr.make_spec(game, bucket_samples=-1)


def test_equity_takes_cards_as_text_and_names_them_as_text():
    np.testing.assert_array_equal(lbr.combo_equity("Ts Kd", "7h 8d Js"),
                                  lbr.combo_equity([35, 45], [22, 25, 39]))
    with pytest.raises(ValueError, match="got hole As Kd, board As 7h 9d"):
        lbr.combo_equity("As Kd", "As 7h 9d")
    with pytest.raises(ValueError, match="board: bad card 'Xh'"):
        lbr.combo_equity("As Kd", "Xh 7h 9d")


@pytest.mark.parametrize("street", [1, 2])
def test_allin_expectation_matches_brute_force(street):
    """An all-in before the river scores LBR's exact pot share against the actual hand."""
    work = lbr.make_work(None)
    work.cards[:] = [51, 46, 12, 13, 40, 41, 8, 33, 0]
    shown = street + 2
    expected = _brute_equity((51, 46), tuple(work.cards[4:4 + shown]), (12, 13))
    state = rng_mod.make_states(0, 1)[0]
    assert lk.allin_equity(work, np.int64(street), np.int64(0), state) == pytest.approx(
        expected, abs=1e-12)


def test_preflop_equity_is_a_fair_monte_carlo_estimate(rng):
    hole, combo = (48, 49), (44, 45)                        # AcAd against KcKd
    eq = lbr.combo_equity(hole, (), preflop_samples=5_000, seed=3)
    rest = np.array([c for c in range(52) if c not in hole + combo])
    boards = rest[np.argsort(rng.random((200_000, rest.size)), axis=1)[:, :5]]
    mine = rank7_batch(np.hstack([boards, np.tile(hole, (boards.shape[0], 1))]))
    theirs = rank7_batch(np.hstack([boards, np.tile(combo, (boards.shape[0], 1))]))
    reference = float(np.mean((mine > theirs) + 0.5 * (mine == theirs)))
    index = COMBOS.tolist().index(list(combo))
    assert eq[index] == pytest.approx(reference, abs=0.025)
    assert 0.78 < reference < 0.86


# -- command line --------------------------------------------------------------------------------

def _eval(*args):
    return subprocess.run([sys.executable, "-m", "holdem.cli.eval_blueprint", *map(str, args)],
                          capture_output=True, text=True, timeout=600)


def test_cli_lbr_prints_the_bound(nlhe_checkpoint):
    proc = _eval("--checkpoint", nlhe_checkpoint, "--lbr", "--hands", 300, "--seed", 2)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^lbr: -?[\d.]+ ± [\d.]+ mbb/hand \(95% CI, 300 hands\)$", proc.stdout,
                     re.M), proc.stdout
    assert re.search(r"^lbr speed: \d+ hands/s", proc.stdout, re.M), proc.stdout
    note = re.search(r"^note: 300 hands are too few for a useful interval \(± (\d+) mbb/hand or "
                     r"less, from at least 10,000 hands\); try --hands (\d+) \(", proc.stdout, re.M)
    assert note and int(note[2]) >= 10_000, proc.stdout
    proc = _eval("--checkpoint", nlhe_checkpoint, "--exploitability")
    assert proc.returncode == 2 and "--lbr" in proc.stderr and "not available" not in proc.stderr
    proc = _eval("--checkpoint", nlhe_checkpoint, "--lbr", "--hands", 100,
                 "--lbr-bucket-samples", 2)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^bucket-only \(2 draws per street\) lbr: -?[\d.]+ ± [\d.]+ mbb/hand",
                     proc.stdout, re.M), proc.stdout
    proc = _eval("--checkpoint", nlhe_checkpoint, "--vs", "fold", "--lbr-bucket-samples", 2)
    assert proc.returncode == 2 and "--lbr-bucket-samples needs --lbr" in proc.stderr


def test_cli_lbr_plays_each_setting_named(nlhe_checkpoint):
    proc = _eval("--checkpoint", nlhe_checkpoint, "--lbr", "fcpa:3-4", "56", "--hands", 200,
                 "--threads", 2)
    assert proc.returncode == 0, proc.stderr
    for name in ("fcpa:3-4", "56:1-4"):
        assert re.search(rf"^lbr {name}: -?[\d.]+ ± [\d.]+ mbb/hand \(95% CI, 200 hands\)$",
                         proc.stdout, re.M), proc.stdout
        assert re.search(rf"^lbr {name} speed: \d+ hands/s", proc.stdout, re.M), proc.stdout
    proc = _eval("--checkpoint", nlhe_checkpoint, "--lbr", "paper", "--hands", 100)
    assert proc.returncode == 0, proc.stderr
    table = proc.stdout[proc.stdout.index("LBR against published bots"):].splitlines()
    assert table[1].startswith("| LBR setting | Hyperborean 2014 | Slumbot 2016 | Act1 2016 |")
    assert table[1].endswith("| this blueprint (100 BB) |")
    for row, setting in zip(table[3:], lbr.PAPER_SETTINGS):
        mine = re.search(rf"^lbr {setting}: (-?[\d.]+) ± ([\d.]+) ", proc.stdout, re.M)
        assert row.startswith(f"| {setting} | ") and row.endswith(
            f" | {float(mine[1]):,.0f} ± {float(mine[2]):,.0f} |"), row
    assert "| fcpa:3-4 | 3,852 ± 141 | 4,020 ± 115 | 2,597 ± 140 | -536 ± 87 |" in table[4]
    proc = _eval("--checkpoint", nlhe_checkpoint, "--lbr", "fcpa:2-4")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--lbr: unknown LBR rounds '2-4'" in proc.stderr


@pytest.mark.parametrize("mbb, ci95, hands, needed", [
    (900.0, 135.0, 100_000, 100_000),       # ± 135 <= a quarter of 900: useful as it is
    (900.0, 300.0, 100_000, 180_000),       # 100,000 x (300 / 225)^2 = 177,778
    (200.0, 250.0, 50_000, 320_000),        # ± 100 wanted: 50,000 x 2.5^2 = 312,500
    (500.0, 3_000.0, 300, 180_000),         # 300 x (3000 / 125)^2 = 172,800
    (500.0, 50.0, 2_000, 10_000),           # narrow, but from too few hands to trust
    (750.0, 0.0, 2_000, 2_000),             # no spread at all (always-fold): exact
    (100.0, float("inf"), 2, lbr.DEFAULT_HANDS),   # one deal: no interval
])
def test_too_few_hands_for_a_useful_interval_suggest_a_count(mbb, ci95, hands, needed):
    result = lbr.LbrResult(mbb_per_hand=mbb, ci95=ci95, hands=hands, seconds=1.0)
    assert result.hands_needed() == needed
    if needed == hands:
        assert result.advice() is None
    else:
        note = result.advice()
        assert note.startswith(f"note: {hands:,} hands are too few for a useful interval")
        assert f"try --hands {needed} " in note


def test_cli_lbr_on_a_small_game_is_exact(tmp_path):
    """Kuhn and Leduc have exact best responses, so ``--lbr`` there is LBR's exact value
    (holdem.analysis.lbr.small), printed next to the exploitability it bounds; the No-Limit
    action sets are refused with the reason."""
    from holdem.analysis.lbr.small import small_lbr_value

    cfg = config_mod.default_for_game("kuhn")
    solver = Solver(make_game(cfg), cfg)
    solver.run(100)
    save_solver(solver, tmp_path / "checkpoints" / "ckpt-000000000100.ckpt")
    proc = _eval("--checkpoint", tmp_path, "--lbr", "--exploitability")
    assert proc.returncode == 0, proc.stderr
    lbr_value = float(re.search(r"^lbr: (\S+) chips/game \(as player 0: ", proc.stdout, re.M)[1])
    exploitability = float(re.search(r"^exploitability: (\S+)$", proc.stdout, re.M)[1])
    assert lbr_value == pytest.approx(small_lbr_value(solver.game, solver.store).value,
                                      rel=1e-8)
    assert 0 < lbr_value <= exploitability + 1e-9
    proc = _eval("--checkpoint", tmp_path, "--lbr", "fcpa:3-4")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "kuhn has its own limit actions" in proc.stderr


# -- LBR's bets by street and size ------------------------------------------------------------

@pytest.mark.parametrize("setting, labels", [("abstract:1-4", ("2.5", "all-in")),
                                             ("fcpa:1-4", ("3", "all-in"))])
def test_size_histogram_puts_known_opens_in_their_bins(game, setting, labels):
    """Against a blueprint that always folds LBR opens as the small blind with one of the
    raises of its set and wins the blind (every raise is worth +1 bb; which one it takes is
    left to rounding): abstract the tree's 2.5 bb open or all-in, fcpa a pot raise (to 3 bb)
    or all-in. Every open lands in those bins, none in the re-raises' row or after the flop,
    and each carries the +1 bb LBR won in its hand."""
    result = lbr.lbr_match(game, lbr.baseline_store(game, "fold"), hands=400, seed=3,
                           setting=setting)
    bins = [lbr.SIZE_LABELS[0].index(label) for label in labels]
    assert result.sizes[0, bins].sum() == result.sizes.sum() == 200
    bb = game.cards.table.chips_per_bb
    np.testing.assert_array_equal(result.size_chips, result.sizes * bb)
    line, = result.size_lines(bb)
    assert line.startswith("sizes preflop opens (bb raised to; 200 raises): ")
    assert all(f" {label} " in f" {line}" for label, k in zip(labels, bins)
               if result.sizes[0, k])


def _size_bin(spec, street, contrib, commit, player, to_bb):
    real = np.zeros(lk.NUM_REAL, np.int64)
    bb = int(spec.big_blind)
    real[lk.R_CONTRIB:lk.R_CONTRIB + 2] = [int(c * bb) for c in contrib]
    real[lk.R_COMMIT:lk.R_COMMIT + 2] = [int(c * bb) for c in commit]
    real[lk.R_BET] = max(real[lk.R_COMMIT:lk.R_COMMIT + 2])
    real[lk.R_PLAYER] = player
    real[lk.R_STREET] = street
    to = lk.real_max_to(spec, real) if to_bb == "all-in" else int(round(to_bb * bb))
    return lk.size_bin(spec, real, np.int64(to))


@pytest.mark.parametrize("to_bb, label", [(2.0, "<=2"), (2.5, "2.5"), (3.0, "3"), (4.0, "4"),
                                          (8.0, "7"), (9.0, "10"), (40.0, "45"),
                                          (99.0, ">60"), ("all-in", "all-in")])
def test_preflop_raises_are_binned_by_the_big_blinds_raised_to(game, to_bb, label):
    spec = lbr.make_spec(game)
    assert _size_bin(spec, 0, (0.5, 1.0), (0.5, 1.0), 0, to_bb) == \
        lbr.SIZE_LABELS[0].index(label)


@pytest.mark.parametrize("commit, to_bb, label", [
    ((0, 0), 0.5, "<=0.1"),         # a tenth of the 5 bb pot
    ((0, 0), 1.0, "1/6"),           # a fifth: on the bin's upper edge, 0.2
    ((0, 0), 1.25, "1/4"),
    ((0, 0), 2.5, "1/2"),
    ((0, 0), 5.0, "1"),
    ((0, 0), 15.0, "3"),
    ((0, 2.5), 10.0, "3/4"),        # facing 2.5 into 5: calling makes 10, raising adds 7.5
    ((0, 2.5), 12.5, "1"),
    ((0, 2.5), "all-in", "all-in")])
def test_postflop_raises_are_binned_by_the_pot_fraction_they_add(game, commit, to_bb, label):
    """On the flop with 2.5 bb each in the pot (5 bb), LBR (seat 0) to act: the fraction is
    of the pot after calling, and counts only what the raise adds beyond the call."""
    spec = lbr.make_spec(game)
    contrib = (2.5 + commit[0], 2.5 + commit[1])
    assert _size_bin(spec, 1, contrib, commit, 0, to_bb) == lbr.SIZE_LABELS[1].index(label)


def test_size_histogram_sums_to_the_raises_of_each_street(game, nlhe_checkpoint):
    """Against a trained blueprint with the 56 bets on every street: the histogram's rows
    hold exactly the raises counted per street, the re-raises are a part of the preflop
    row, and the chips are LBR's (a raise's hand loses at most a stack, wins at most one)."""
    from holdem.analysis.blueprint import Blueprint
    from holdem.analysis.matches.headtohead import blueprint_store

    store = blueprint_store(Blueprint.load(nlhe_checkpoint)).arrays
    result = lbr.lbr_match(game, store, hands=600, seed=5, setting="56:1-4")
    streets = ("preflop", "flop", "turn", "river")
    assert result.sizes[:4].sum(axis=1).tolist() == [result.stats[f"raises_{s}"]
                                                     for s in streets]
    assert result.sizes[:4].sum() == result.stats["lbr_raises"] > 0
    assert np.all(result.sizes[4] <= result.sizes[0]) and result.sizes[4].sum() > 0
    assert np.count_nonzero(result.sizes[0]) >= 3                 # the 56 set varies its sizes
    stack = float(lbr.make_spec(game).stack)
    assert np.all(np.abs(result.size_chips) <= result.sizes * stack)
    lines = result.size_lines(game.cards.table.chips_per_bb)
    assert lines[0].startswith("sizes preflop opens (bb raised to; ")
    assert all(line.endswith(")") for line in lines)
