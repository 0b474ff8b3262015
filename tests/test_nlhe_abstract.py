"""The abstract heads-up NLHE game: action menus, translation, and agreement with the rules
engine."""

from pathlib import Path

import numba
import numpy as np
import pytest

from holdem.abstraction.actions import (ActionAbstraction, pseudo_harmonic, raise_options,
                                        translate)
from holdem.evaluator import rank7
from holdem.games.nlhe.abstract import HeadsUpTable, build_heads_up_tree, history_string
from holdem.games.nlhe.records import Action, TableConfig
from holdem.games.nlhe.rules import HandState
from holdem.games.deal_kernels import deal as deal_fn
from holdem.games.tree import NodeKind
from holdem.games.tree_kernels import terminal_utility


def test_raise_options_clamp_merge_and_all_in():
    ab = ActionAbstraction(flop=((0.1, 0.5, 0.52, 5.0),))
    opts = raise_options(ab, 1, 0, pot=1000, current_bet=0, my_commit=0, min_raise_to=100,
                         max_to=2000, big_blind=100)
    # 0.1 pot = 100 is the min bet; 0.5 and 0.52 pot -> 500 and 520 (distinct); 5 pot -> all-in
    assert [(o.to, o.label) for o in opts] == [(100, "r0.1p"), (500, "r0.5p"), (520, "r0.52p"),
                                               (2000, "a")]
    ab = ActionAbstraction(flop=((0.1, 0.2),), all_in=False)
    opts = raise_options(ab, 1, 0, pot=300, current_bet=0, my_commit=0, min_raise_to=100,
                         max_to=2000, big_blind=100)
    assert [(o.to, o.label) for o in opts] == [(100, "r0.1p")]      # both below min: merged


def test_preflop_open_in_big_blinds_and_pot_raises():
    ab = ActionAbstraction(preflop_open=(2.0, 3.0), preflop=((1.0,),))
    opts = raise_options(ab, 0, 0, pot=150, current_bet=100, my_commit=50, min_raise_to=200,
                         max_to=10000, big_blind=100)
    assert [(o.to, o.label) for o in opts][:2] == [(200, "r2b"), (300, "r3b")]
    # a pot raise facing 2.5bb: pot after calling 500 -> raise to 250 + 500
    opts = raise_options(ab, 0, 1, pot=350, current_bet=250, my_commit=100, min_raise_to=400,
                         max_to=10000, big_blind=100)
    assert opts[0].to == 750 and opts[0].label == "r1p"


def test_pseudo_harmonic_mapping():
    assert pseudo_harmonic(0.5, 0.5, 1.0) == 1.0
    assert pseudo_harmonic(1.0, 0.5, 1.0) == 0.0
    assert pseudo_harmonic(0.75, 0.5, 1.0) == pytest.approx((0.25 * 1.5) / (0.5 * 1.75))
    out = translate(0.75, [0.5, 1.0, 2.0])
    assert [i for i, _ in out] == [0, 1] and sum(p for _, p in out) == pytest.approx(1.0)
    assert translate(3.0, [0.5, 1.0]) == [(1, 1.0)]
    with pytest.raises(ValueError):
        translate(1.0, [1.0, 0.5])


@pytest.fixture(scope="module")
def hu():
    return build_heads_up_tree(HeadsUpTable(stack=100.0), ActionAbstraction())


def test_root_and_heads_up_order(hu):
    tree = hu.tree
    assert tree.player[0] == 0 and tree.street[0] == 0          # small blind acts first preflop
    kids = range(tree.child_start[0], tree.child_start[0] + tree.num_actions[0])
    assert [hu.labels[k] for k in kids] == ["f", "c", "r2.5b", "a"]
    limp_check = next(k for k in range(tree.kind.size) if history_string(hu, k) == "cc/")
    assert tree.street[limp_check] == 1 and tree.player[limp_check] == 1   # BB first postflop
    assert history_string(hu, tree.child_start[0] + 2) == "r2.5"


def test_terminals_within_stacks(hu):
    tree = hu.tree
    stack = 100 * 100
    assert tree.contrib.max() <= stack
    showdown = tree.kind == NodeKind.SHOWDOWN
    assert np.all(tree.contrib[showdown, 0] == tree.contrib[showdown, 1])


@numba.njit
def _kernel_payoffs(tree, node, strength):
    """Both players' payoffs from the traversal kernels' terminal utility."""
    return terminal_utility(tree, node, 0, strength), terminal_utility(tree, node, 1, strength)


def _abstract_payoff(tree, node, strengths):
    return np.array(_kernel_payoffs(tree, node, np.asarray(strengths, dtype=np.int64)))


def test_random_lines_agree_with_rules_engine(hu):
    """Same deal, same line: the rules engine accepts every abstract action and pays the same."""
    tree = hu.tree
    rng = np.random.default_rng(7)
    for _ in range(400):
        cards = rng.permutation(52)[:9]
        hole = [tuple(int(c) for c in cards[0:2]), tuple(int(c) for c in cards[2:4])]
        board = tuple(int(c) for c in cards[4:9])
        state = HandState(TableConfig(stacks=(10000, 10000), small_blind=50, big_blind=100),
                          hole_cards=hole, board=board)
        node = 0
        while tree.kind[node] == NodeKind.DECISION:
            assert state.to_act == tree.player[node]
            a = int(rng.integers(tree.num_actions[node]))
            child = int(tree.child_start[node]) + a
            label = hu.labels[child]
            if label == "f":
                state.apply(Action.fold())
            elif label == "c":
                state.apply(Action.check() if state.can_check() else Action.call())
            elif label == "a":
                state.apply(Action.all_in())
            else:
                to = int(hu.raise_to[child])
                state.apply(Action.bet(to) if state.bet_to == 0 else Action.raise_to(to))
            node = child
        assert state.is_terminal
        strengths = [rank7(hole[p] + board) for p in range(2)]
        kernel = _abstract_payoff(tree, node, strengths)
        assert kernel.sum() == 0.0                                   # zero-sum
        np.testing.assert_allclose(state.payoffs(), kernel)


def test_deal_kernel_matches_evaluator_and_bucket_lookup():
    """The NLHE deal kernel's strengths are 7-card ranks and its buckets the bucket lookup's."""
    from holdem import config as config_mod
    from holdem import rng
    from holdem.abstraction.bucket_tables import lookup_buckets
    from holdem.games import make_game
    from holdem.solver.kernels import make_workspace

    cfg = config_mod.load(Path(__file__).resolve().parents[1] / "configs" / "hunl_default.yaml")
    game = make_game(cfg)
    ws = make_workspace(game.max_depth, game.max_actions, 2, 4, 52)
    state = rng.make_states(5, 1)[0]
    for _ in range(200):
        _deal_once(game.deal, state, ws)
        hole, board = game.deal.hole.copy(), game.deal.board.copy()
        cards = np.concatenate([hole.ravel(), board])
        assert np.unique(cards).size == 9
        for p in range(2):
            assert ws.strength[p] == rank7(tuple(hole[p]) + tuple(board))
        np.testing.assert_array_equal(ws.buckets, lookup_buckets(game.deal.tables, hole, board))


@numba.njit
def _deal_once(deal, state, ws):
    deal_fn(deal, state, ws.deck, ws.buckets, ws.strength)
