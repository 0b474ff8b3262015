"""LBR's model of the bot, checked against the bot it plays (issue 52), and the bot's
translation on the real pot.

LBR keeps a belief about the blueprint's node and cards; every figure it gives is only as good
as that belief. The kernels count, at every LBR decision, belief branches at a node the bot
cannot be at and decisions whose belief lost the bot's real node and cards
(:func:`holdem.analysis.lbr.kernels.audit_belief`), beliefs that emptied, and, for every bet or
raise of LBR, the fold probability its belief predicted against the bot's real answer. Where the
belief is the bot's posterior, the folds minus the predictions have mean 0 and a known variance
(:class:`holdem.analysis.lbr.sampled.FoldCheck`).
"""

from pathlib import Path

import numpy as np
import pytest

from holdem import config as config_mod
from holdem.analysis.lbr import sampled as lbr
from holdem.analysis.lbr import hand_kernels as hk
from holdem.analysis.lbr import kernels as lk
from holdem.analysis.blueprint import Blueprint
from holdem.analysis.bot import (BlueprintBot, real_line, real_pot, real_raise_to, real_table,
                                 replay)
from holdem.games import make_game
from holdem.games.tree import ActionCode
from holdem.solver.solver import Solver, save_solver

ROOT = Path(__file__).resolve().parents[1]

SETTINGS = {                    # hands for at least 10,000 LBR bets the bot answered
    "abstract:1-4": 12_600, "fc:1-4": 2_000, "fcpa:3-4": 22_400, "56:1-4": 11_600,
    "56:3-4": 18_000}


def _train(config_name, iterations, tmp):
    cfg = config_mod.load(ROOT / "configs" / config_name)
    solver = Solver(make_game(cfg), cfg)
    solver.run(iterations)
    save_solver(solver, tmp / "checkpoints" / f"ckpt-{iterations:012d}.ckpt")
    return Blueprint.load(tmp)


@pytest.fixture(scope="module", params=["hunl_default.yaml", "hunl_200bb.yaml"],
                ids=["100bb", "200bb"])
def blueprint(request, tmp_path_factory):
    """20,000 in-process iterations at 100 and 200 big blinds: strategies that mix."""
    return _train(request.param, 20_000, tmp_path_factory.mktemp("lbr_model"))


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_lbr_belief_is_the_bots_posterior(blueprint, setting):
    """(a) at every LBR decision each belief branch sits where the bot can be and the bot's
    node and cards are in it; (b) over 10,000 bets the bot folds as often as LBR predicts
    (within 3.3 standard deviations: 99.9%); (c) the belief never empties."""
    from holdem.analysis.matches.headtohead import blueprint_store

    store = blueprint_store(blueprint).arrays
    result = lbr.lbr_match(blueprint.game, store, hands=SETTINGS[setting], seed=52,
                           setting=setting)
    stats = result.stats
    assert stats["belief_checks"] > SETTINGS[setting]
    assert stats["bad_branches"] == 0
    assert stats["true_node_missing"] == 0
    assert stats["empty_beliefs"] == 0
    assert stats["dropped_readings"] == 0
    folds = result.folds
    if setting.startswith("fc:"):
        assert folds.bets == 0                      # fold and call only: LBR never bets
        return
    assert folds.bets >= 10_000, folds.line()
    assert abs(folds.z) < 3.3, folds.line()
    assert abs(folds.z_exact) < 3.3, folds.line()
    assert 0.05 < folds.predicted / folds.bets < 0.95     # the check has something to find
    if setting.startswith("56"):
        assert stats["translated"] > 1_000 and stats["max_branches"] > 1


def test_a_bet_read_two_ways_moves_both_branches(hunl_run):
    """LBR's 3 bb open at the root is read as r2.5b or all-in: after it, LBR's belief holds
    both readings, neither at the root (the first reading used to stay behind at the node
    before the bet, where the bot never is)."""
    bp = Blueprint.load(hunl_run)
    game, tree = bp.game, bp.game.tree
    spec, work = lbr.make_spec(game, setting="56"), lbr.make_work(game)
    work.cards[:] = [0, 1, 2, 3, 4, 5, 6, 7, 8]
    lk.prepare_street(game.deal.tables, spec, work, np.int64(0))
    work.num_branches[0], work.node[0] = 1, 0
    work.range[0, work.live[0, :work.num_live[0]]] = 1.0 / work.num_live[0]
    lk.real_start(tree, spec, work.real)
    lk.lbr_moves(tree, spec, work, np.int64(ActionCode.RAISE), np.int64(300), False)
    weights = {game.lines.labels[int(work.node[b])]: lk.branch_weight(work, b, np.int64(0))
               for b in range(work.num_branches[0])}
    p_small = (49.5 - 1.0) * 1.75 / (48.75 * 2.0)          # x = 1 pot between 0.75 and 49.5
    assert weights == {"r2.5b": pytest.approx(p_small), "a": pytest.approx(1 - p_small)}


# -- translation on the real pot --------------------------------------------------------------

def _random_line(bp, rng, stack, big_blind=100, steps=14):
    """A random real hand: checks, calls, folds now and then, and bets and raises of random
    pot fractions (0.1 to 3 pots, off the tree nearly always) or all-in."""
    state = bp.game.cards.engine.HandState(real_table(bp, stack, big_blind), rng=rng)
    for _ in range(steps):
        if state.is_terminal:
            break
        legal = state.legal_actions()
        names = legal.names()
        u = rng.random()
        if legal.min_to and u < 0.55:
            if u < 0.03:
                kind, amount = "allin", None
            else:
                amount = state.bet_to + round(rng.uniform(0.1, 3.0) * real_pot(state))
                amount = min(max(amount, legal.min_to), legal.max_to)
                kind = "raise" if "raise" in names else "bet"
                kind = "allin" if amount == legal.max_to else kind
        elif "fold" in names and u > 0.97:
            kind, amount = "fold", None
        else:
            kind, amount = ("check" if "check" in names else "call"), None
        replay(state, kind, amount)
    return state


def _kernel_real(spec, tree, line):
    """The LBR kernels' real hand after ``line`` (real_line pairs)."""
    real = np.zeros(lk.NUM_REAL, dtype=np.int64)
    lk.real_start(tree, spec, real)
    for kind, amount in line:
        code = {"fold": ActionCode.FOLD, "check": ActionCode.CALL, "call": ActionCode.CALL}.get(
            kind, ActionCode.RAISE)
        lk.real_apply(spec, real, np.int64(code), np.int64(amount or 0))
    return real


@pytest.mark.parametrize("stack", [10_000, 20_000])
def test_the_kernels_read_and_bet_as_the_bot_on_the_real_pot(hunl_run, stack):
    """On random real hands with off-tree sizes on every street, LBR's model of the bot
    (:func:`lk.translate_action`, :func:`lk.bot_raise_to`) reads each bet as
    :meth:`Blueprint.translate_line` does -- the same readings, the same pseudo-harmonic
    probabilities, the same fraction of the real pot -- and bets what the bot of ``play``
    bets for every abstract raise."""
    bp = Blueprint.load(hunl_run)
    game, tree = bp.game, bp.game.tree
    spec, work = lbr.make_spec(game, setting="56"), lbr.make_work(game)
    spec = spec._replace(stack=np.int64(stack))
    rng = np.random.default_rng(7)
    two_readings, snapped, compared = set(), 0, 0
    for _ in range(150):
        state = _random_line(bp, rng, stack)
        line = real_line(state)
        for i, (kind, amount) in enumerate(line):
            try:
                labels, _ = bp.translate_line(line[:i], 100, stacks=stack)
                node = bp.node_of(labels)
                _, street, _ = bp.actions_at(labels)
            except ValueError:
                break                                      # the line left the tree
            prefix = bp.game.cards.engine.HandState(real_table(bp, stack, 100), rng=rng)
            for pair in line[:i]:
                replay(prefix, *pair)
            real = _kernel_real(spec, tree, line[:i])
            assert real[lk.R_STREET] == street == int(prefix.street)
            assert real[lk.R_CONTRIB] + real[lk.R_CONTRIB + 1] == prefix.pot_total
            for fraction, label in bp.raise_fractions(labels):
                child = int(tree.child_start[node]) + list(
                    bp.action_meanings(labels)).index(label)
                if prefix.legal_actions().min_to:
                    assert hk.bot_raise_to(spec, real, np.int64(child)) == real_raise_to(
                        fraction, label, prefix)
            if kind not in ("bet", "raise", "allin"):
                continue
            try:
                _, notes = bp.translate_line(line[:i + 1], 100, stacks=stack)
            except ValueError:
                break                                      # a raise the tree does not hold
            want = {label: p for label, _, p in notes[-1].options}
            num = lk.translate_action(tree, spec, np.int64(node), np.int64(ActionCode.RAISE),
                                      np.int64(amount), kind == "allin", real, work.opt_child,
                                      work.opt_prob)
            got = {game.lines.labels[int(work.opt_child[k])]: float(work.opt_prob[k])
                   for k in range(num)}
            assert got.keys() == want.keys(), (line[:i + 1], got, want)
            for label in want:
                assert got[label] == pytest.approx(want[label], abs=1e-12)
            assert notes[-1].fraction == pytest.approx(
                (amount - prefix.bet_to) / real_pot(prefix), rel=1e-12)
            compared += 1
            snapped += notes[-1].bots_size
            if num == 2:
                two_readings.add(street)
    assert two_readings == {0, 1, 2, 3} and compared > 300


def test_translation_reads_the_real_pot_not_the_tree_s(hunl_run):
    """A 3 bb open (off the tree) read as r2.5b and called leaves a real pot of 600 where the
    tree has 500: a flop bet of 400 is 2/3 of the real pot (it used to be read as 0.8 of the
    tree's pot), and a bet of 300 is the tree's half pot, made exactly as the bot makes it."""
    bp = Blueprint.load(hunl_run)
    rng = np.random.default_rng(0)
    while True:                                       # a seed reading the open as r2.5b
        labels, notes = bp.translate_line([("raise", 300), ("call", None)], 100, rng=rng)
        if labels[0] == "r2.5b":
            break
    seed_line = [("raise", 300), ("call", None), ("check", None)]
    for seed in range(50):
        labels, notes = bp.translate_line(seed_line + [("bet", 400)], 100,
                                          rng=np.random.default_rng(seed))
        if labels[0] == "r2.5b":
            break
    assert notes[-1].fraction == pytest.approx(400 / 600)
    assert {label for label, _, _ in notes[-1].options} == {"r0.5p", "r1p"}
    labels, notes = bp.translate_line(seed_line + [("bet", 300)], 100,
                                      rng=np.random.default_rng(seed))
    assert labels[-1] == "r0.5p" and notes[-1].is_exact and notes[-1].bots_size


def test_the_bot_bets_its_fraction_of_the_real_pot(hunl_run):
    """After a 3 bb open that the bot read as 2.5 bb, its flop bets are its tree's pot
    fractions of the real pot of 600 (half pot: 300, pot: 600), not the tree's chips."""
    bp = Blueprint.load(hunl_run)
    sizes = set()
    for seed in range(400):
        rng = np.random.default_rng(seed)
        state = bp.game.cards.engine.HandState(real_table(bp, 10_000, 100), rng=rng)
        bot = BlueprintBot(bp, 100, rng)
        replay(state, "raise", 300)
        replay(state, "call", None)                  # the bot (big blind) acts first
        labels, _ = bot.translate(state)
        if labels[0] != "r2.5b":
            continue
        decision = bot.decide(state)
        if decision.label in ("r0.5p", "r1p"):
            sizes.add((decision.label, decision.action.amount))
        if len(sizes) == 2:
            break
    assert sizes == {("r0.5p", 300), ("r1p", 600)}


@pytest.fixture(scope="module")
def six_max(tmp_path_factory):
    return _train("6max.yaml", 2_000, tmp_path_factory.mktemp("six_max_translation"))


def test_six_max_reads_bets_on_the_real_pot(six_max):
    """Six-max: every bet of a random real hand is read as a fraction of the real pot, and
    each size the bot would make for an abstract raise is read back as that raise exactly."""
    bp = six_max
    rng = np.random.default_rng(3)
    streets, exact = set(), 0
    for _ in range(60):
        state = _random_line(bp, rng, 10_000, steps=20)
        line = real_line(state)
        for i, (kind, amount) in enumerate(line):
            try:
                labels, _ = bp.translate_line(line[:i], 100)
                _, street, _ = bp.actions_at(labels)
            except ValueError:
                break
            prefix = bp.game.cards.engine.HandState(real_table(bp, 10_000, 100), rng=rng)
            for pair in line[:i]:
                replay(prefix, *pair)
            if prefix.legal_actions().min_to:
                for fraction, label in bp.raise_fractions(labels):
                    to = real_raise_to(fraction, label, prefix)
                    kind_here = "raise" if "raise" in prefix.legal_actions().names() else "bet"
                    if to == prefix.legal_actions().max_to:
                        kind_here = "allin"
                    read, notes = bp.translate_line(line[:i] + [(kind_here, to)], 100)
                    if kind_here != "allin":
                        assert read[-1] == label and notes[-1].is_exact
                        exact += 1
            if kind in ("bet", "raise", "allin"):
                try:
                    _, notes = bp.translate_line(line[:i + 1], 100)
                except ValueError:
                    break                                  # a raise the tree does not hold
                assert notes[-1].fraction == pytest.approx(
                    (amount - prefix.bet_to) / real_pot(prefix), rel=1e-12)
                streets.add(street)
    assert exact > 50 and streets >= {0, 1}
