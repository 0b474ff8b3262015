"""The implicit multi-way abstract game against the rules engine and the heads-up tree, and
training it through the solver, the parallel runtime and checkpoints."""

import numpy as np
import pytest

from holdem import config as config_mod
from holdem.abstraction.actions import ActionAbstraction
from holdem.config import ConfigError
from holdem.evaluator import rank7
from holdem.games import make_game
from holdem.games.nlhe import multiway_kernels as mk
from holdem.games.nlhe.abstract import HeadsUpTable, build_heads_up_tree
from holdem.games import LINES
from holdem.games.nlhe.multiway import (MultiwayGame, MultiwayNode, MultiwayTable,
                                        build_multiway)
from holdem.games.nlhe.records import Action, ActionKind, TableConfig
from holdem.games.nlhe.rules import HandState
from holdem.games.tree import NodeKind
from holdem.games.tree_kernels import terminal_utility

WIDE = ActionAbstraction(preflop_open=(2.0, 3.0), preflop=((0.5, 1.0), (1.0,)),
                         flop=((0.33, 1.0), (1.0,)), turn=((0.5, 1.5),), river=((1.0,),),
                         all_in=True, max_raises=(4, 3, 2, 2))


def _pick(actions, rng):
    """A random action, folding rarely so that lines reach later streets and all-ins."""
    weights = np.array([0.15 if k == mk.ACT_FOLD else 1.0 for k, _ in actions])
    return int(rng.choice(len(actions), p=weights / weights.sum()))


def _rules_action(state, kind, to):
    if kind == mk.ACT_FOLD:
        return Action.fold()
    if kind == mk.ACT_CALL:
        return Action.check() if state.can_check() else Action.call()
    p = state.to_act
    if to == state.street_commitments[p] + state.stacks[p]:
        return Action.all_in()
    return Action.bet(to) if state.bet_to == 0 else Action.raise_to(to)


@pytest.mark.parametrize("num_players", [3, 4, 5, 6])
@pytest.mark.parametrize("stack,ante", [(100.0, 0.0), (12.0, 0.25), (2.5, 0.0)])
def test_random_lines_agree_with_rules_engine(num_players, stack, ante):
    """Same deal, same line: every abstract action is legal in the rules engine, the same seat
    acts, raises are offered exactly when the rules allow one (and the cap is not reached),
    contributions match after every action, and payoffs match chip for chip and sum to zero."""
    g = build_multiway(MultiwayTable(num_players=num_players, stack=stack, ante=ante), WIDE)
    rng = np.random.default_rng(num_players * 1000 + int(stack))
    n = num_players
    all_ins = postflop = 0
    for _ in range(150):
        cards = rng.permutation(52)[:2 * n + 5]
        hole = [tuple(int(c) for c in cards[2 * p:2 * p + 2]) for p in range(n)]
        board = tuple(int(c) for c in cards[2 * n:])
        state = HandState(TableConfig(stacks=(int(g.stack),) * n, small_blind=int(g.small_blind),
                                      big_blind=int(g.big_blind), ante=int(g.ante)),
                          hole_cards=hole, board=board)
        node = MultiwayNode(g, WIDE)
        while not node.is_terminal:
            assert state.to_act == node.player
            assert int(state.street) == node.street
            postflop += node.street > 0
            actions = node.actions()
            offers_raise = any(k == mk.ACT_RAISE for k, _ in actions)
            rules_raise = {ActionKind.BET, ActionKind.RAISE} & set(state.legal_actions().kinds)
            capped = node.row[mk.F_RAISES] >= g.max_raises[node.street]
            assert offers_raise == (bool(rules_raise) and not capped)
            assert len(node.labels()) == len(actions)
            a = _pick(actions, rng)
            state.apply(_rules_action(state, *actions[a]))
            node = node.child(a)
            np.testing.assert_array_equal(node.contributions, state.total_commitments)
        assert state.is_terminal
        strengths = [rank7(hole[p] + board) for p in range(n)]
        payoffs = node.payoffs(strengths)
        assert payoffs.sum() == 0.0
        np.testing.assert_array_equal(payoffs, state.payoffs())
        all_ins += any(state.all_in)
    assert all_ins > 0
    assert postflop > 0


def test_payoffs_with_side_pots_match_the_pot_rules(rng):
    """Unequal commitments (as with unequal stacks): the kernel's side pots and odd chips give
    what :mod:`holdem.games.nlhe.pots` gives, for random commitments, folds and ties."""
    from holdem.games.nlhe.pots import side_pots, split_pot

    for n in range(2, 7):
        g = build_multiway(MultiwayTable(num_players=n), WIDE)
        order = [int(q) for q in g.odd_order]
        for _ in range(300):
            contrib = rng.integers(1, 40, n) * rng.choice([1, 7], n)
            folded = rng.random(n) < 0.3
            if folded.all():
                folded[rng.integers(n)] = False
            live = np.flatnonzero(~folded)
            # folded seats never committed more than the largest live commitment
            contrib[folded] = np.minimum(contrib[folded], contrib[live].max())
            strength = rng.integers(0, 4, n)
            row = g.root.copy()
            row[mk.F_CONTRIB:mk.F_CONTRIB + n] = contrib
            row[mk.F_FOLDED] = int(sum(1 << int(q) for q in np.flatnonzero(folded)))
            row[mk.F_KIND] = mk.KIND_SHOWDOWN
            expected = -contrib.astype(np.int64)
            for pot in side_pots([int(c) for c in contrib], [bool(f) for f in folded]):
                best = max(strength[q] for q in pot.eligible)
                winners = [q for q in pot.eligible if strength[q] == best]
                for q, chips in split_pot(pot.amount, winners, order).items():
                    expected[q] += chips
            node = MultiwayNode(g, WIDE, row)
            np.testing.assert_array_equal(node.payoffs(strength), expected)


def test_two_players_is_the_heads_up_tree():
    """With two seats the implicit game is node for node the enumerated heads-up tree."""
    hu = build_heads_up_tree(HeadsUpTable(), WIDE)
    g = build_multiway(MultiwayTable(num_players=2), WIDE)
    tree = hu.tree
    rng = np.random.default_rng(5)
    for _ in range(300):
        node, m = 0, MultiwayNode(g, WIDE)
        while tree.kind[node] == NodeKind.DECISION:
            c0, na = int(tree.child_start[node]), int(tree.num_actions[node])
            assert m.player == tree.player[node] and m.street == tree.street[node]
            assert m.labels() == [hu.labels[c0 + a] for a in range(na)]
            raises = [to for k, to in m.actions() if k == mk.ACT_RAISE]
            assert raises == [int(hu.raise_to[c0 + a]) for a in range(na)
                              if hu.labels[c0 + a] not in ("f", "c")]
            a = _pick(m.actions(), rng)
            node, m = c0 + a, m.child(a)
        assert m.is_terminal
        np.testing.assert_array_equal(m.contributions, tree.contrib[node])
        strengths = rng.integers(0, 3, 2)
        expected = [terminal_utility(tree, node, p, strengths) for p in range(2)]
        # the tree splits a tied pot in halves, the rules engine (and this game) in whole chips
        np.testing.assert_allclose(m.payoffs(strengths), expected, atol=0.5)


def test_infoset_keys_separate_histories_and_buckets():
    g = build_multiway(MultiwayTable(num_players=6), WIDE)
    root = MultiwayNode(g, WIDE)
    keys = set()
    for a in range(len(root.actions())):
        child = root.child(a)
        for bucket in range(169):
            keys.add(child.infoset_key(bucket))
        assert child.history != root.history
    assert len(keys) == 169 * len(root.actions())
    assert min(keys) >= 0


def _six_max_config(**train):
    data = {
        "game": {"name": "nlhe", "num_players": 3, "stack": 20.0},
        "actions": {"preflop_open": [2.5], "preflop": [[1.0]], "flop": [[1.0]],
                    "turn": [[1.0]], "river": [[1.0]], "all_in": True,
                    "max_raises": [2, 1, 1, 1]},
        "solver": {"weighting": "linear", "discount_interval": 1000},
        "train": {"seed": 3, **train},
    }
    return config_mod.from_dict(data, source="test")


def test_three_player_training_visits_the_tree_and_learns():
    """Training fills the store with infosets of the walked game (keys from the Python walk
    exist, with the walked action counts), and regrets move."""
    from holdem.solver.solver import Solver

    config = _six_max_config()
    game = make_game(config)
    assert isinstance(game, MultiwayGame) and not game.supports(LINES)
    solver = Solver(game, config)
    solver.run(3000)
    store = solver.store
    assert store.num_infosets > 1000
    root = MultiwayNode(game.kernel, game.rules.abstraction)
    found = 0
    for bucket in range(int(game.deal.tables.num_buckets[0])):
        values = store.values_of(root.infoset_key(bucket))
        if values is not None:
            found += 1
            assert values[0].shape[0] == len(root.actions())
    assert found > 100                         # the first seat to act, most preflop classes
    assert np.any(store.arrays.regrets[:store.num_entries] != 0.0)
    assert solver.workspace.visits[1] == 0     # no insertion was ever skipped
    keys, num_actions = store.used()[:2]
    assert game.keys_match(keys, num_actions)
    assert not game.keys_match(keys, np.full(keys.shape, 99))


def test_multiway_rejects_outcome_sampling():
    data = config_mod.to_dict(_six_max_config())
    data["solver"]["sampling"] = "outcome"
    for key in ("opponent_exploration", "opponent_exploration_stop"):   # external's own keys
        data["solver"].pop(key, None)
    with pytest.raises(ConfigError, match="^test: solver.sampling: .*external only"):
        config_mod.from_dict(data, source="test")


# -- analysis of multi-way checkpoints ------------------------------------------------------

@pytest.fixture(scope="module")
def trained_three_way(tmp_path_factory):
    from holdem.solver.solver import Solver
    from holdem.solver.solver import save_solver

    config = _six_max_config()
    solver = Solver(make_game(config), config)
    solver.run(4000)
    logdir = tmp_path_factory.mktemp("three_way")
    save_solver(solver, logdir / "checkpoints" / "ckpt-000000004000.ckpt")
    return logdir, solver


def test_blueprint_query_reads_the_trained_store(trained_three_way):
    import holdem
    from holdem.abstraction.bucket_tables import lookup_buckets

    logdir, solver = trained_three_way
    bp = holdem.Blueprint.load(logdir)
    assert isinstance(bp.game, MultiwayGame) and bp.metadata["iterations"] == 4000
    hole = [48, 51]                                              # two aces
    probs = bp.query([], hole=hole)
    assert list(probs) == ["f", "c", "r2.5b", "a"]               # seat 2 opens the action
    node = bp.multiway_node([])
    bucket = int(lookup_buckets(bp.game.deal.tables, np.array([hole]),
                                np.array([0, 1, 2, 3, 4]))[0, 0])
    sums = solver.store.values_of(node.infoset_key(bucket))[1]
    np.testing.assert_allclose(list(probs.values()), sums / sums.sum())
    later = bp.query(["c", "c", "c"], hole=[0, 5], board=[10, 20, 30])      # a limped flop
    assert list(later)[0] == "c" and sum(later.values()) == pytest.approx(1)
    with pytest.raises(ValueError, match="not an action here"):
        bp.query(["r9b"], hole=hole)


def test_preflop_export_round_trips(trained_three_way, tmp_path):
    import subprocess
    import sys

    from holdem.analysis.export.records import read_export

    logdir, solver = trained_three_way
    out = tmp_path / "pre.csv"
    cmd = [sys.executable, "-m", "holdem.cli.export_strategy", "--checkpoint", str(logdir),
           "--out", str(out), "--street", "preflop"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert "wrote" in done.stderr
    records = read_export(out)
    assert records and {r["street"] for r in records} == {"preflop"}
    assert {r["player"] for r in records} == {0, 1, 2}
    assert all(sum(r["strategy"]) == pytest.approx(1) for r in records)
    seat_of = {"": 2, "f": 0, "ff": 1, "c": 0, "r2.5": 0}
    assert all(r["player"] == seat_of[r["history"]] for r in records if r["history"] in seat_of)
    root = [r for r in records if r["history"] == ""]
    assert len(root) > 10
    hands = [r["hand"] for r in records]
    assert all(hands) and {h for h in hands} >= {"AA", "AKs"}   # the buckets' hand classes
    for r in root:
        node = MultiwayNode(solver.game.kernel, solver.game.rules.abstraction)
        sums = solver.store.values_of(node.infoset_key(r["bucket"]))[1]
        np.testing.assert_array_equal(r["strategy"], sums / sums.sum())


def _record_key(bp, record, nodes=None):
    """The store key of an exported multi-way record, found from its history by the line
    reader (Blueprint.line_labels, multiway_node), not by the export's walk (``nodes``: a
    dict caching the node of each history)."""
    nodes = {} if nodes is None else nodes
    if record["history"] not in nodes:
        node = nodes[record["history"]] = bp.multiway_node(bp.line_labels(record["history"]))
        assert node.player == record["player"] and node.labels() == record["actions"]
        assert bp.game.cards.street_names[node.street] == record["street"]
    return nodes[record["history"]].infoset_key(record["bucket"])


def test_postflop_export_finds_every_visited_infoset(trained_three_way, tmp_path, capsys):
    """Issue 40 point 1: a 3-player export lists every street. Walking only the histories
    training visited finds each infoset of the store exactly once and invents none; its
    strategies are the store's; --street keeps those streets (walking no further)."""
    import holdem
    from holdem.analysis.export.records import read_export
    from holdem.analysis.export.multiway import multiway_records
    from holdem.cli.export_strategy import main

    logdir, solver = trained_three_way
    bp = holdem.Blueprint.load(logdir)
    store = solver.store
    records = multiway_records(solver.game, store)
    nodes = {}
    keys = [_record_key(bp, r, nodes) for r in records]
    assert len(set(keys)) == len(keys) == store.num_infosets       # all of them, once
    stored = store.used()[0]
    assert set(keys) == set(stored.tolist())
    by_street = {}
    for r, key in zip(records, keys):
        by_street.setdefault(r["street"], set()).add(key)
    assert set(by_street) == {"preflop", "flop", "turn", "river"}
    rng = np.random.default_rng(4)
    for street in by_street:                      # the average strategy (kept on every street)
        chosen = [i for i, r in enumerate(records) if r["street"] == street]
        for i in rng.choice(chosen, 20, replace=False).tolist():
            r = records[i]
            assert sum(r["strategy"]) == pytest.approx(1)
            np.testing.assert_allclose(r["strategy"], bp.strategy(keys[i], len(r["actions"])),
                                       rtol=1e-12)
            sums = store.values_of(keys[i])[1]
            if sums.sum() > 0:
                np.testing.assert_allclose(r["strategy"], sums / sums.sum(), rtol=1e-12)
    out = tmp_path / "late.csv"
    assert main(["--checkpoint", str(logdir), "--out", str(out), "--street", "flop",
                 "--street", "river"]) == 0
    assert f"wrote {len(by_street['flop']) + len(by_street['river'])} infosets" in (
        capsys.readouterr().err)
    late = read_export(out)
    assert {r["street"] for r in late} == {"flop", "river"}
    for street in ("flop", "river"):
        assert {_record_key(bp, r, nodes) for r in late
                if r["street"] == street} == by_street[street]
    flop = multiway_records(solver.game, store, ["flop"])
    assert [r for r in records if r["street"] == "flop"] == flop
    assert all("hand" not in r for r in flop)


def test_a_worker_run_exports_what_lies_past_the_histories_it_sent_nothing_for(tmp_path):
    """A worker sends no infoset whose updates were all zero: here every opponent's node
    after the preflop (average_max_street 0), so a visited history may have no key while
    those after it do. The walk passes through up to num_players such nodes in a row (for a
    run with workers) and finds (nearly: worker runs vary; a few hundredths of a percent at
    most) every infoset; without that it misses some and warns."""
    import warnings

    import holdem
    from holdem.analysis.blueprint import load_checkpoint_store
    from holdem.analysis.export.records import export_records
    from holdem.analysis.export.multiway import multiway_records

    data = config_mod.to_dict(_six_max_config(iters=3000, num_workers=2, batch_size=500,
                                              start_method="fork"))
    config = config_mod.from_dict({
        "game": data["game"], "actions": data["actions"],
        "solver": {"weighting": "linear", "discount_interval": 1000, "average_max_street": 0},
        "train": {"seed": 3, "iters": 3000, "num_workers": 2, "batch_size": 500,
                  "start_method": "fork"}}, source="test")
    holdem.train(config, tmp_path / "run", progress=False)
    game, store, checkpoint = load_checkpoint_store(tmp_path / "run")
    with pytest.warns(UserWarning, match="infosets lie below more than 0 decisions in a row"):
        assert len(multiway_records(game, store, max_gap=0)) < store.num_infosets
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        records = export_records(game, store, checkpoint)
    assert store.num_infosets - 10 <= len(records) <= store.num_infosets
    bp = holdem.Blueprint.load(tmp_path / "run")
    flop = [r for r in records if r["street"] == "flop"]
    for r in flop[:50]:                      # no average after the preflop: the current one
        np.testing.assert_allclose(
            r["strategy"], bp.strategy(_record_key(bp, r), len(r["actions"]), average=False))


def _always_raise_store(game):
    """A store whose average strategy takes the last (largest) action at every first decision
    of every seat after the seats before it folded."""
    from holdem.store.store import RegretStore

    node = MultiwayNode(game.kernel, game.rules.abstraction)
    keys, num_actions = [], []
    while not node.is_terminal:
        na = len(node.actions())
        for bucket in range(int(game.deal.tables.num_buckets[0])):
            keys.append(node.infoset_key(bucket))
            num_actions.append(na)
        node = node.child(0)                                     # fold
    sums = np.concatenate([np.eye(na)[-1] for na in num_actions])
    return RegretStore.from_arrays(np.array(keys, np.int64), np.array(num_actions, np.int8),
                                   np.zeros(sums.size, np.float32), sums)


@pytest.mark.parametrize("num_players", [3, 6])
def test_rotation_match_against_folding_bots_is_exact(num_players):
    """A blueprint that always raises first in, against bots that always fold: in seat k >= 2
    it wins both blinds (1.5 bb), as small blind the big blind (1 bb), as big blind the small
    blind (0.5 bb) -- with no variance."""
    from holdem.analysis.matches.headtohead import play_match

    data = config_mod.to_dict(_six_max_config())
    data["game"]["num_players"] = num_players
    game = make_game(config_mod.from_dict(data, source="test"))
    store = _always_raise_store(game)
    result = play_match(game, store.arrays, "fold", hands=20 * num_players, seed=1)
    expected = (1.5 * (num_players - 2) + 1.0 + 0.5) / num_players * 1000.0
    assert result.mbb_per_hand == pytest.approx(expected)
    assert result.ci95 == pytest.approx(0.0, abs=1e-9)
    assert result.hands == 20 * num_players
    calls = play_match(game, store.arrays, "call", hands=30 * num_players, seed=1)
    assert calls.ci95 > 0                                        # showdowns: real variance


def test_two_workers_train_the_three_way_game_and_resume(tmp_path):
    """The parallel runtime runs the implicit game unchanged: exact iteration counts, a
    checkpoint that resumes in-process, and one that evaluates head-to-head."""
    import holdem
    from holdem.analysis.matches.headtohead import head_to_head

    first = _six_max_config(iters=6000, num_workers=2, batch_size=500, start_method="fork")
    result = holdem.train(first, tmp_path / "run", progress=False)
    assert result.iterations == 6000 and result.infosets > 1000
    second = _six_max_config(iters=8000, num_workers=1)
    resumed = holdem.train(second, tmp_path / "run2", resume_from=tmp_path / "run",
                           progress=False)
    assert resumed.iterations == 8000 and resumed.infosets >= result.infosets
    match = head_to_head(holdem.Blueprint.load(tmp_path / "run2"), "random", hands=3000)
    assert match.hands == 3000 and match.ci95 > 0


def test_pluribus_options_in_the_multiway_traversal():
    """Pruning skips subtrees (fewer node visits for the same iterations), the regret floor
    holds, and ``average_max_street: 0`` keeps strategy sums only preflop."""
    from holdem.solver.solver import Solver

    def run(**solver):
        data = config_mod.to_dict(_six_max_config())
        data["solver"].update(solver)
        config = config_mod.from_dict(data, source="test")
        s = Solver(make_game(config), config)
        s.run(3000)
        return s

    plain = run()
    pruned = run(prune=True, prune_after=1000, prune_prob=1.0, prune_threshold=-1.0,
                 regret_floor=-5000.0, average_max_street=0)
    assert pruned.workspace.visits[0] < 0.9 * plain.workspace.visits[0]
    keys, num_actions, offsets, regrets, sums = pruned.store.used()
    assert -5000.0 * 3 <= regrets.min() < -5000.0     # floored (x the linear weight, <= 3)
    assert plain.store.used()[3].min() < -5000.0 * 3  # without the floor regrets go lower
    # infosets whose strategy sums stayed zero are exactly the postflop ones: check the root's
    root = MultiwayNode(pruned.game.kernel, pruned.game.rules.abstraction)
    stored = [pruned.store.values_of(root.infoset_key(b)) for b in range(169)]
    assert any(v is not None and v[1].sum() > 0 for v in stored)
    flop = root
    for _ in range(3):                                # call, call, check: a limped flop
        flop = flop.child(flop.labels().index("c"))
    assert flop.street == 1
    postflop = [pruned.store.values_of(flop.infoset_key(b)) for b in range(50)]
    assert any(v is not None for v in postflop)
    assert all(v[1].sum() == 0.0 for v in postflop if v is not None)


def test_baseline_match_during_multiway_training_reaches_tensorboard(tmp_path):
    import holdem
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config = _six_max_config(iters=3000, eval_baseline="call", eval_hands=600,
                             tensorboard=True)
    holdem.train(config, tmp_path, progress=False)
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    values = [e.value for e in events.Scalars("eval/mbb_vs_call")]
    assert values and all(np.isfinite(values))


def test_multiway_export_histories_are_lines_query_takes(trained_three_way, tmp_path):
    """One notation for lines with any number of seats: each exported preflop history, given to
    Blueprint.line_labels, reaches the node whose actions and strategy the record lists."""
    import holdem
    from holdem.analysis.export.multiway import multiway_records

    logdir, solver = trained_three_way
    bp = holdem.Blueprint.load(logdir)
    records = multiway_records(solver.game, solver.store, ["preflop"])
    checked = set()
    for r in records:
        if r["history"] in checked or r["hand"] != "AA":
            continue
        checked.add(r["history"])
        labels = bp.line_labels(r["history"])
        assert list(bp.action_meanings(labels)) == r["actions"], r["history"]
        probs = bp.query(r["history"], hole="Ah As")
        np.testing.assert_allclose(list(probs.values()), r["strategy"], rtol=1e-6)
        assert bp.line_labels(" ".join(labels)) == labels       # labels read back as labels
    assert len(checked) > 5 and any("r" in h for h in checked)


# -- multi-way matches: the AIVAT-style correction ------------------------------------------

def _turn_row(game, fold_first=True):
    """The state at the start of the turn after the first player folds (or calls) preflop and
    everyone else checks or calls."""
    g = game.kernel
    row = g.root.copy()
    akind = np.zeros(16, np.int64)
    ato = np.zeros(16, np.int64)
    first = True
    while row[mk.F_STREET] < 2:
        na = mk.legal_actions_py(g, row, akind, ato)
        a = 0 if (first and fold_first) else int(np.flatnonzero(akind[:na] == mk.ACT_CALL)[0])
        first = False
        mk.apply_action(g, row, row, akind[a], ato[a], a)
    assert row[mk.F_KIND] == mk.KIND_DECISION
    return row


def test_checkdown_values_are_the_mean_showdown_over_every_river():
    """On the turn the check-down value is exact: the mean over the 52 - 4 - 2 x players river
    cards of the seat's chips at showdown (the folded player's cards stay out of the deck)."""
    from holdem.evaluator import rank7
    from holdem.games.nlhe import multiway_play_kernels as mpk

    game = make_game(_six_max_config())
    g = game.kernel
    row = _turn_row(game)
    rng = np.random.default_rng(5)
    cards = rng.permutation(52)
    hole = cards[:6].reshape(3, 2).astype(np.int64)
    board = cards[6:11].astype(np.int64)
    scratch = mpk.make_scratch(3, 8)
    scratch.rows[0] = row
    state = np.zeros(4, np.uint64) + np.uint64(1)
    for seat in range(3):
        mpk.checkdown_values(g, 1, seat, hole, board, 2, 10, state, scratch)
        expected = []
        strength = np.zeros(3, np.int64)
        out = np.zeros(3)
        for river in sorted(set(range(52)) - set(cards[:10].tolist())):
            for p in range(3):
                strength[p] = rank7([*hole[p], *board[:4], river])
            mk.payoffs_py(g, row, strength, out)
            expected.append(out[seat])
        assert len(expected) == 42
        assert scratch.values[0] == pytest.approx(np.mean(expected), abs=1e-9)
    folded = [p for p in range(3) if (row[mk.F_FOLDED] >> p) & 1]
    assert len(folded) == 1
    mpk.checkdown_values(g, 1, folded[0], hole, board, 2, 10, state, scratch)
    assert scratch.values[0] == -row[mk.F_CONTRIB + folded[0]]      # a folded seat: its chips


@pytest.mark.parametrize("opponent", ["call", "random", "equity"])
def test_the_multiway_correction_leaves_the_match_alone_and_narrows_its_interval(
        trained_three_way, opponent):
    """The correction draws from a stream of its own (the hands played are the same with or
    without it), has mean zero (within four standard errors), and removes the board's luck:
    the corrected interval is narrower than the plain one. Each seat's mean is A's chips in
    that seat, and the seats' mean is the match's."""
    from holdem.analysis.matches.headtohead import control_coefficient, match_samples, play_match

    game = make_game(_six_max_config())
    store = trained_three_way[1].store.arrays
    plain0, none = match_samples(game, store, opponent, hands=3000, seed=4, samples=0)
    assert none is None
    plain, correction, seat_plain, seat_correction = match_samples(
        game, store, opponent, hands=3000, seed=4, samples=50, seats=True)
    np.testing.assert_array_equal(plain, plain0)
    np.testing.assert_allclose(seat_plain.mean(axis=1), plain)
    np.testing.assert_allclose(seat_correction.mean(axis=1), correction)
    assert abs(correction.mean()) < 4 * correction.std() / np.sqrt(correction.size)
    # an unbiased correction built on a value that follows the outcome is worth about itself:
    # the fitted coefficient is near 1 (a sign error would fit near -1, noise near 0)
    assert 0.7 < control_coefficient(plain, correction) < 1.3
    result = play_match(game, store, opponent, hands=3000, seed=4, samples=50)
    scale = 1000.0 / game.cards.table.chips_per_bb
    assert result.raw_mbb_per_hand == pytest.approx(plain.mean() * scale)
    assert result.ci95 < 0.8 * result.raw_ci95
    assert len(result.seats) == 3
    assert result.seat_line().startswith("SB ")
