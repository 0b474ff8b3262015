"""The turn/river subgame solver (holdem.subgame): known answers, an oracle, convergence.

Known answers: the clairvoyance game (Chen & Ankenman, *The Mathematics of Poker*: the bettor
bluffs B/(P+B) combos per value combo, the caller calls P/(P+B)), value 0 where nobody is
favoured (a royal flush on the board; identical ranges and checks only). The average strategy's
values and both best responses are compared with :mod:`tests.reference.subgame_oracle`, a slow
recursion over explicit deals with exact 7-card ranks, on a tiny river and a tiny turn spot.
The betting tree's sizes and labels are checked by hand.

Player 0 is out of position (OOP), player 1 in position (IP). Chips throughout.
"""

import numpy as np
import pytest

from holdem.cards import card_tuple
from holdem.evaluator import rank7
from holdem.subgame import COMBOS, BetMenu, Spot, SubgameSolver, combo_index
from holdem.subgame.tree import (CHANCE, DECISION, FOLD, RIVER, SHOWDOWN, TURN, build_tree,
                                  street_actions)
from tests.reference.subgame_oracle import Oracle

CHECK_ONLY = BetMenu.uniform(bets=(), raises=(), all_in=False)


def _indices(hands):
    return np.array([combo_index(*card_tuple(h)) for h in hands])


def _weights(hands):
    """1,326 weights from {combo text: weight}."""
    out = np.zeros(len(COMBOS))
    out[_indices(hands)] = list(hands.values())
    return out


def _random_weights(rng, num_combos, board):
    """1,326 weights: ``num_combos`` random combos off the board, weights in [0.05, 1]."""
    live = np.flatnonzero(~np.isin(COMBOS, board).any(axis=1))
    out = np.zeros(len(COMBOS))
    out[rng.choice(live, num_combos, replace=False)] = rng.uniform(0.05, 1.0, num_combos)
    return out


def _random_river_spot(seed, num_combos=300, menu=None):
    rng = np.random.default_rng(seed)
    board = rng.choice(52, 5, replace=False)
    pot = float(rng.integers(10, 300))
    stack = float(rng.uniform(0.3, 5.0)) * pot
    return Spot.make(board.tolist(), _random_weights(rng, num_combos, board),
                     _random_weights(rng, num_combos, board), pot, stack, menu)


def _game_value(solver, player):
    """``player``'s value per deal under the average strategies, from ``values``: each hand's
    value (less its half of the pot) weighted by its weight x the opponent's weight on the hands
    sharing no card with it (the deal's probability)."""
    ranges = solver.spot.ranges
    mine, theirs = np.flatnonzero(ranges[player]), np.flatnonzero(ranges[1 - player])
    a, b = COMBOS[mine], COMBOS[theirs]
    overlap = (a[:, None, :, None] == b[None, :, None, :]).any(axis=(2, 3))
    deal_weight = ranges[player][mine] * ((~overlap) @ ranges[1 - player][theirs])
    values = solver.values(player)[mine] - solver.spot.pot / 2
    return float(deal_weight @ values / deal_weight.sum())


# -- known answers ------------------------------------------------------------------------------

CLAIRVOYANCE_BOARD = "Kh Th 6h 3c 2s"
VALUE = {"AhQh": 1.0, "AhJh": 0.5, "QhJh": 1.0, "9h8h": 0.75}               # flushes
CATCHERS = {"KcKd": 1.0, "AcKs": 0.6, "AdKc": 1.0, "KdQs": 0.8}            # a set, top pair
AIR = {h: 1.0 for h in ("QcJc", "QdJd", "Jc9c", "Jd9d", "9c8c", "9d8d", "8s7s", "8d7d")}


@pytest.mark.parametrize("bet_fraction", [0.5, 1.0])
def test_clairvoyance_game(bet_fraction):
    """IP holds nut flushes and air, OOP only bluff-catchers and no bet of its own. With pot P
    and one bet B (no raises), OOP calls P/(P+B) of the time (IP's bluffs break even) and IP
    bets all its value and B/(P+B) bluff combos per value combo (OOP's calls break even). IP
    has more air than that, so the bluffing weight is pinned; no IP combo shares a card with an
    OOP combo, so card removal does not blur the answer."""
    board = list(card_tuple(CLAIRVOYANCE_BOARD))
    strength = {h: rank7(board + list(card_tuple(h))) for h in (*VALUE, *CATCHERS, *AIR)}
    assert min(strength[h] for h in VALUE) > max(strength[h] for h in CATCHERS)
    assert min(strength[h] for h in CATCHERS) > max(strength[h] for h in AIR)
    ip_cards = {c for h in (*VALUE, *AIR) for c in card_tuple(h)}
    assert not ip_cards & {c for h in CATCHERS for c in card_tuple(h)}

    pot = 100.0
    bet = bet_fraction * pot
    menus = (CHECK_ONLY, BetMenu.uniform(bets=(bet_fraction,), raises=(), all_in=False))
    spot = Spot.make(CLAIRVOYANCE_BOARD, _weights(CATCHERS), _weights({**VALUE, **AIR}), pot,
                     3 * pot, menus)
    result = SubgameSolver(spot).solve(target=0.05, max_iterations=3000)
    assert result.exploitability_pct <= 0.05

    labels, root = result.strategy(())
    assert labels == ("x",) and root[0, spot.ranges[0] > 0] == pytest.approx(1.0)
    labels, ip = result.strategy(("x",))
    assert labels == ("x", f"b{bet:g}")
    value_weight = np.array(list(VALUE.values()))
    bets = ip[1]
    assert bets[_indices(VALUE)] == pytest.approx(1.0, abs=0.01)
    bluffs_per_value = bets[_indices(AIR)] @ np.array(list(AIR.values())) / value_weight.sum()
    assert bluffs_per_value == pytest.approx(bet / (pot + bet), abs=0.01)

    labels, oop = result.strategy(("x", f"b{bet:g}"))
    assert labels == ("f", "c")
    catcher_weight = np.array(list(CATCHERS.values()))
    calls = oop[1, _indices(CATCHERS)] @ catcher_weight / catcher_weight.sum()
    assert calls == pytest.approx(pot / (pot + bet), abs=0.01)


@pytest.mark.parametrize("seed", range(5))
def test_random_river_spots_converge(seed):
    """Random board, 300 combos a side with random weights, random pot and stack, the default
    menu (two bets, a pot raise, all-in): solve reaches 0.3 % of the pot, and a best response
    computed afterwards agrees."""
    spot = _random_river_spot(seed)
    solver = SubgameSolver(spot)
    result = solver.solve(target=0.3, max_iterations=1000)
    assert result.exploitability_pct <= 0.3
    assert result.iterations < 1000
    br0, br1 = solver.best_response_values()
    assert (br0 + br1) / 2 / spot.pot * 100 == pytest.approx(result.exploitability_pct,
                                                            rel=1e-6)
    assert result.exploitability == pytest.approx((br0 + br1) / 2, rel=1e-6)


def test_random_turn_spot_converges():
    """A random turn spot (60 combos a side, two bets, a pot raise, at most two a street),
    solved on two threads, reaches 0.3 % of the pot."""
    rng = np.random.default_rng(21)
    board = rng.choice(52, 4, replace=False)
    menu = BetMenu.uniform(bets=(0.5, 1.0), raises=(1.0,), max_raises=2)
    spot = Spot.make(board.tolist(), _random_weights(rng, 60, board),
                     _random_weights(rng, 60, board), 100, 200, menu)
    solver = SubgameSolver(spot, threads=2)
    try:
        result = solver.solve(target=0.3, max_iterations=400)
        assert result.exploitability_pct <= 0.3
        assert sum(solver.best_response_values()) / 2 == pytest.approx(result.exploitability)
    finally:
        solver.close()


def test_royal_flush_board_has_value_zero():
    """Identical ranges on a board holding a royal flush: every hand plays the board, so every
    showdown ties and neither player is favoured -- betting can win only a fold, and calling
    (a tie, 0) beats folding. The game's value is 0. The average strategies' value u lies
    between the best responses, -BR1 <= u <= BR0, and each best response is at least the game's
    value (0) for its player, so |u| <= BR0 + BR1 = twice the exploitability."""
    rng = np.random.default_rng(5)
    board = card_tuple("As Ks Qs Js Ts")
    weights = _random_weights(rng, 120, board)
    spot = Spot.make(board, weights, weights, 60, 180)
    solver = SubgameSolver(spot)
    result = solver.solve(target=0.1, max_iterations=1000)
    assert result.exploitability_pct <= 0.1
    br0, br1 = solver.best_response_values()
    slack = 1e-5 * spot.pot
    assert br0 >= -slack and br1 >= -slack
    u0, u1 = _game_value(solver, 0), _game_value(solver, 1)
    assert u0 == pytest.approx(-u1, abs=slack)
    assert abs(u0) <= br0 + br1 + slack
    assert abs(u0) <= 0.003 * spot.pot
    equity = solver.equity(0)[np.flatnonzero(weights)]
    assert np.allclose(equity, 0.5)


@pytest.mark.parametrize("board", ["Td 9d 6h Qc 2s", "Td 9d 6h Qc"])
def test_identical_ranges_without_bets_have_value_zero(board):
    """Identical ranges and no bets for either player: the hand goes to showdown, and the deal
    is symmetric (each pair of hands is dealt either way round with the same weight), so the
    value is 0 and each combo is worth the same to both players. The turn board also checks the
    river card's chance node."""
    rng = np.random.default_rng(11)
    weights = _random_weights(rng, 60, card_tuple(board))
    spot = Spot.make(board, weights, weights, 40, 100, CHECK_ONLY)
    solver = SubgameSolver(spot)
    result = solver.solve(max_iterations=1, check_every=1)
    assert result.exploitability_pct == pytest.approx(0, abs=1e-6)
    live = np.flatnonzero(weights)
    assert np.allclose(solver.values(0)[live], solver.values(1)[live], rtol=0, atol=1e-5)
    assert _game_value(solver, 0) == pytest.approx(0, abs=1e-5 * spot.pot)
    assert solver.values(0)[live].min() < 0.5 * spot.pot < solver.values(0)[live].max()


@pytest.mark.parametrize("board", ["Td 9d 6h Qc 2s", "Td 9d 6h Qc"])
def test_stack_zero_goes_straight_to_showdown(board):
    """Stack 0 (which Spot.make accepts): no betting, straight to showdown; identical ranges
    give value 0."""
    spot = Spot.make(board, "QQ+,AK,T9s", "QQ+,AK,T9s", 40, 0)
    solver = SubgameSolver(spot)
    assert solver.tree.kind[0] == (SHOWDOWN if len(spot.board) == 5 else CHANCE)
    result = solver.solve(max_iterations=1, check_every=1)
    assert result.exploitability_pct == pytest.approx(0, abs=1e-6)
    assert _game_value(solver, 0) == pytest.approx(0, abs=1e-5 * spot.pot)


# -- the oracle ---------------------------------------------------------------------------------

def _compare_with_oracle(solver):
    pot = solver.spot.pot
    oracle = Oracle(solver)
    for player in (0, 1):
        live = [i for i, _, _ in oracle.hands[player]]
        for name, got, want in (("values", solver.values(player), oracle.values(player)),
                                ("equity", solver.equity(player), oracle.equity(player))):
            want = np.array([want[i] for i in live])
            scale = pot if name == "values" else 1.0
            np.testing.assert_allclose(got[live], want, rtol=0, atol=1e-5 * scale,
                                       err_msg=f"{name} of player {player}")
        outside = np.setdiff1d(np.arange(len(COMBOS)), live)
        assert not solver.values(player)[outside].any()
    got = solver.best_response_values()
    want = [oracle.best_response_value(p) for p in (0, 1)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * pot)
    return oracle


# Overlapping ranges: combos in both (AsKs), combos sharing one card (AsQs / AsKs), ties
# (AcKc / AdKd), a hand whose every opponent hand shares a card with it is avoided here.
ORACLE_OOP = "AhQh:0.7,AsKs,AcKc:0.4,QcQd:0.3,Jh9h,7s7c,AdKd:0.9"
ORACLE_IP = "AsKs:0.5,AsQs,KsQs,QhJh,JcJd,5c4c:0.8,AcKd:0.6"


@pytest.mark.parametrize("iterations", [0, 7])
def test_river_matches_oracle(iterations):
    """A tiny river spot with bets, pot raises and all-ins, after 0 iterations (the uniform
    average strategy) and 7 (uneven ones): per-hand values of the average strategies, per-hand
    equity and both best responses as the oracle computes them over explicit deals."""
    menu = BetMenu.uniform(bets=(0.5, 1.0), raises=(1.0,), all_in=True)
    spot = Spot.make("Kh Th 6h 3c 2s", ORACLE_OOP, ORACLE_IP, 10, 25, menu)
    solver = SubgameSolver(spot)
    solver.iterate(iterations)
    assert solver.tree.num_decisions() > 5
    _compare_with_oracle(solver)


def test_turn_matches_oracle():
    """A tiny turn spot (a pot bet or all-in on the turn, all-in on the river): the river
    card's chance node, with each pair of disjoint hands seeing its 44 river cards equally
    likely; the threads=2 solver gives the same numbers bit for bit."""
    menu = BetMenu.uniform(bets=(1.0,), raises=(), all_in=True)
    spot = Spot.make("Kh Th 6h 3c", "AhQh:0.7,AsKs,AcKc:0.4,Jh9h,7s7c",
                     "AsKs:0.5,AsQs,KsQs,QhJh,5c4c:0.8", 10, 15, menu)
    solver = SubgameSolver(spot)
    assert list(solver.river_cards) == [c for c in range(52) if c not in spot.board]
    solver.iterate(7)
    kinds = solver.tree.kind
    assert (kinds == CHANCE).sum() > 1 and solver.tree.num_decisions() > 48
    _compare_with_oracle(solver)

    threaded = SubgameSolver(spot, threads=2)
    try:
        threaded.iterate(7)
        assert np.array_equal(threaded.store.regrets, solver.store.regrets)
        assert np.array_equal(threaded.store.strategy_sum, solver.store.strategy_sum)
        assert threaded.best_response_values() == solver.best_response_values()
    finally:
        threaded.close()


# -- convergence and consistency ----------------------------------------------------------------

def test_exploitability_falls_and_best_responses_bound_the_value():
    """Exploitability after 200 iterations is a small fraction of that after 5, and falls at
    every checkpoint; NashConv (BR0 + BR1) is never negative, the average strategies' value u0
    lies in [-BR1, BR0], and the two players' values from ``values`` sum to 0 (zero-sum)."""
    spot = _random_river_spot(7, num_combos=120)
    solver = SubgameSolver(spot)
    slack = 1e-5 * spot.pot
    history = []
    for iterations in (0, 1, 5, 20, 50, 200):
        solver.iterate(iterations - solver.iterations)
        br0, br1 = solver.best_response_values()
        assert br0 + br1 >= -slack
        u0, u1 = _game_value(solver, 0), _game_value(solver, 1)
        assert u0 + u1 == pytest.approx(0, abs=slack)
        assert -br1 - slack <= u0 <= br0 + slack
        assert solver.exploitability() == pytest.approx((br0 + br1) / 2)
        history.append((iterations, (br0 + br1) / 2))
    by_iterations = dict(history)
    assert by_iterations[200] < 0.01 * by_iterations[5]
    tail = [e for n, e in history if n >= 5]
    assert all(later < earlier for earlier, later in zip(tail, tail[1:])), history


def test_solution_and_strategy():
    """``solve`` stops at the target (checking every ``check_every``), reports progress, and
    ``strategy`` gives each held combo a distribution (0 for combos not held)."""
    spot = _random_river_spot(3, num_combos=80)
    solver = SubgameSolver(spot)
    seen = []
    result = solver.solve(target=1.0, max_iterations=500, check_every=5,
                          progress=lambda n, pct, s: seen.append((n, pct)))
    assert [n for n, _ in seen] == list(range(5, result.iterations + 1, 5))
    assert seen[-1][1] == result.exploitability_pct <= 1.0
    assert all(pct > 1.0 for _, pct in seen[:-1])
    for line in ((), ("x",)):
        labels, strategy = result.strategy(line)
        player = len(line) % 2
        held = spot.ranges[player] > 0
        assert strategy.shape == (len(labels), len(COMBOS))
        np.testing.assert_allclose(strategy.sum(axis=0)[held], 1.0, atol=1e-5)
        assert not strategy[:, ~held].any()
    capped = SubgameSolver(spot).solve(target=0.0, max_iterations=12, check_every=5)
    assert capped.iterations == 12


@pytest.mark.parametrize("method", ["equity", "values", "strategy"])
def test_results_before_solving(method):
    """``equity`` depends only on the spot; ``values`` and ``strategy`` of a solver that has not
    iterated are those of the uniform strategy. None should need ``solve`` first."""
    spot = Spot.make("Td 9d 6h Qc 2s", "QQ+,AK", "JJ-88,AQs", 20, 50)
    fresh, allocated = SubgameSolver(spot), SubgameSolver(spot)
    allocated.allocate()
    np.testing.assert_array_equal(getattr(fresh, method)(0), getattr(allocated, method)(0))


# -- the betting tree ---------------------------------------------------------------------------

def _children(tree, line=(), river_index=None):
    return tree.child_labels(tree.find(line, river_index))


def test_tree_min_raise_is_lifted():
    """A raise smaller than the last bet or raise is lifted to that size (No-Limit's min-raise),
    and a bet to at least 1 chip."""
    tree = build_tree(100, 1000, RIVER, BetMenu.uniform(bets=(1.0,), raises=(0.1,),
                                                        all_in=False))
    assert _children(tree) == ("x", "b100")
    assert _children(tree, ("b100",)) == ("f", "c", "r200")          # raise by 100, not 30
    assert _children(tree, ("b100", "r200")) == ("f", "c", "r300")
    assert _children(tree, ("b100", "r200", "r300")) == ("f", "c", "r400")
    tiny = build_tree(1, 100, RIVER, BetMenu.uniform(bets=(0.1, 0.2), raises=(), all_in=False))
    assert _children(tiny) == ("x", "b1")                             # both lifted and merged


def test_tree_pot_raise_size():
    """A pot raise against a bet b into p raises to b + (p + 2b): 50 into 100 raises to 250,
    and a pot re-raise of that to 250 + (200 + 2 x 200) = 850."""
    tree = build_tree(100, 1000, RIVER, BetMenu.uniform(bets=(0.5,), raises=(1.0,),
                                                        all_in=False))
    assert _children(tree, ("b50",)) == ("f", "c", "r250")
    assert _children(tree, ("b50", "r250")) == ("f", "c", "r850")
    node = tree.find(("b50", "r250"))
    assert tuple(tree.invest[node]) == (50, 250)


def test_tree_sizes_are_whole_chips():
    """Sizes are rounded to whole chips: 0.33 and 0.66 of 10 are 3 and 7; a pot raise of 3
    into 10 raises to 3 + (10 + 6) = 19."""
    tree = build_tree(10, 100, RIVER, BetMenu.uniform(bets=(0.33, 0.66), raises=(1.0,),
                                                      all_in=False))
    assert _children(tree) == ("x", "b3", "b7")
    assert _children(tree, ("b3",)) == ("f", "c", "r19")
    assert tuple(tree.invest[tree.find(("b3", "r19"))]) == (3, 19)


@pytest.mark.parametrize("line, size", [(("b100",), 100.4), ((), 0.3)])
def test_tree_extra_size_rounding_to_nothing_is_dropped(line, size):
    menu = BetMenu.uniform(bets=(1.0,), raises=(1.0,), all_in=False)
    tree = build_tree(100, 1000, RIVER, menu, extra={line: (size,)})
    assert _children(tree, line) == _children(build_tree(100, 1000, RIVER, menu), line)


def test_tree_sizes_merge_into_all_in():
    """A size that puts the whole stack in is the all-in ('a'), offered once even when
    ``all_in`` is off and several sizes land there; equal sizes are merged."""
    tree = build_tree(100, 150, RIVER, BetMenu.uniform(bets=(1.0, 2.0), raises=(),
                                                       all_in=False))
    assert _children(tree) == ("x", "b100", "a")
    assert tree.invest[tree.find(("a",))][0] == 150
    tree = build_tree(100, 150, RIVER, BetMenu.uniform(bets=(1.5, 2.0, 3.0), raises=(),
                                                       all_in=False))
    assert _children(tree) == ("x", "a")
    tree = build_tree(100, 1000, RIVER, BetMenu.uniform(bets=(0.5, 0.5, 1.0), raises=(),
                                                        all_in=True))
    assert _children(tree) == ("x", "b50", "b100", "a")
    assert _children(tree, ("b50",)) == ("f", "c", "a")
    assert _children(tree, ("a",)) == ("f", "c")                     # nothing above all-in
    no_all_in = build_tree(100, 1000, RIVER, BetMenu.uniform(bets=(0.5,), raises=(),
                                                             all_in=False))
    assert _children(no_all_in) == ("x", "b50")


def test_tree_max_raises():
    """``max_raises`` counts bets and raises per street; 0 leaves checks only."""
    menu = BetMenu.uniform(bets=(0.5, 1.0), raises=(1.0,), all_in=True, max_raises=2)
    tree = build_tree(100, 1000, RIVER, menu)
    assert _children(tree, ("b50",)) == ("f", "c", "r250", "a")
    assert _children(tree, ("b50", "r250")) == ("f", "c")
    assert _children(tree, ("x", "b100", "r400")) == ("f", "c")
    one = build_tree(100, 1000, RIVER, BetMenu.uniform(max_raises=1))
    assert _children(one, ("x", "b50")) == ("f", "c")
    none = build_tree(100, 1000, TURN, BetMenu.uniform(max_raises=0), num_river_cards=2)
    assert _children(none) == ("x",) and _children(none, ("x", "x"), 1) == ("x",)
    assert none.num_decisions() == 2 + 2 * 2


def test_tree_labels_count_from_the_streets_start():
    """A turn tree: a pot bet and call on the turn, then on the river a pot bet is b300 and a
    pot raise r1200 -- chips put in on the river, not since the subgame began (invest)."""
    tree = build_tree(100, 5000, TURN, BetMenu.uniform(bets=(1.0,), raises=(1.0,),
                                                       all_in=False), num_river_cards=3)
    assert _children(tree, ("x", "b100")) == ("f", "c", "r400")
    chance = tree.find(("x", "b100", "c"))
    assert tree.kind[chance] == CHANCE and tree.num_children[chance] == 3
    assert tree.child_labels(chance) == ("card0", "card1", "card2")
    assert tree.find(("x", "b100", "c"), 1) == tree.first_child[chance] + 1
    assert _children(tree, ("x", "b100", "c"), 1) == ("x", "b300")
    assert _children(tree, ("x", "b100", "c", "b300"), 1) == ("f", "c", "r1200")
    node = tree.find(("x", "b100", "c", "b300", "r1200"), 2)
    assert tuple(tree.invest[node]) == (400, 1300)
    assert tree.line(node) == ("x", "b100", "c", "card2", "b300", "r1200")
    # segments: the river subtrees of (chance node, card), in order
    assert tree.segment[tree.find(("x", "b100"))] == -1
    assert len({int(tree.segment[n]) for n in np.flatnonzero(tree.node_street == RIVER)}) \
        == 3 * len(tree.chance_nodes)
    with pytest.raises(KeyError, match="say which card"):
        tree.find(("x", "b100", "c", "b300"))
    with pytest.raises(KeyError, match=r"'b7' is not an action at x b100.*f, c, r400"):
        tree.find(("x", "b100", "b7"))
    with pytest.raises(KeyError, match="over before"):
        tree.find(("x", "b100", "f", "x"))


def test_tree_extra_sizes():
    """``extra`` adds sizes (chips in on the street after the action) at the node after a
    line; a size the menu has is not repeated, one not above the bet faced is dropped."""
    menu = BetMenu.uniform(bets=(1.0,), raises=(1.0,), all_in=False)
    extra = {(): (30, 100), ("b100",): (250,), ("x", "b100"): (50, 100)}
    tree = build_tree(100, 1000, RIVER, menu, extra=extra)
    assert _children(tree) == ("x", "b30", "b100")
    assert _children(tree, ("b100",)) == ("f", "c", "r250", "r400")
    assert _children(tree, ("x", "b100")) == ("f", "c", "r400")
    assert _children(tree, ("b30",)) == ("f", "c", "r190")
    assert _children(build_tree(100, 1000, RIVER, menu)) == ("x", "b100")
    capped = build_tree(100, 200, RIVER, menu, extra={(): (500,)})
    assert _children(capped) == ("x", "b100", "a")


def test_tree_per_player_menus():
    """A pair of menus: OOP checks or calls only, IP bets half pot."""
    oop = CHECK_ONLY
    ip = BetMenu.uniform(bets=(0.5,), raises=(1.0,), all_in=False)
    tree = build_tree(100, 1000, RIVER, (oop, ip))
    assert tree.menu == (oop, ip)
    assert _children(tree) == ("x",)
    assert _children(tree, ("x",)) == ("x", "b50")
    assert _children(tree, ("x", "b50")) == ("f", "c")
    assert tree.num_nodes == 6
    swapped = build_tree(100, 1000, RIVER, (ip, oop))
    assert _children(swapped) == ("x", "b50")
    assert _children(swapped, ("b50",)) == ("f", "c")
    assert _children(swapped, ("x",)) == ("x",)


@pytest.mark.parametrize("menu", [
    BetMenu(), BetMenu.uniform(bets=(0.33, 0.75, 1.5), raises=(0.5, 1.0), all_in=True),
    BetMenu.uniform(bets=(2.0,), raises=(3.0,), all_in=False, max_raises=3)])
def test_tree_invariants(menu):
    """Whatever the menu: parents and children agree; investments never fall along an edge and
    stay within the stack; a call or second check equalizes, a bet or raise goes above the
    opponent; folds record the folder; showdowns have equal investments; players alternate."""
    tree = build_tree(7, 40, TURN, menu, num_river_cards=4)
    for n in range(tree.num_nodes):
        kids = list(tree.children(n))
        assert (len(kids) > 0) == (tree.kind[n] in (DECISION, CHANCE))
        for c in kids:
            assert tree.parent[c] == n
            assert (tree.invest[c] >= tree.invest[n]).all() and (tree.invest[c] <= 40).all()
            label = tree.labels[c]
            if tree.kind[n] == CHANCE:
                assert tree.kind[c] in (DECISION, SHOWDOWN) and tree.node_street[c] == RIVER
                continue
            me = tree.player[n]
            if label == "f":
                assert tree.kind[c] == FOLD and tree.player[c] == me
            elif label in ("x", "c"):
                if tree.kind[c] != DECISION:
                    assert tree.invest[c, 0] == tree.invest[c, 1]
            else:
                assert label == "a" or label[0] in "br"
                assert tree.invest[c, me] > tree.invest[c, 1 - me]
                assert tree.kind[c] == DECISION and tree.player[c] == 1 - me
        if tree.kind[n] == SHOWDOWN:
            assert tree.invest[n, 0] == tree.invest[n, 1]
    assert len(set(tree.labels[c] for c in tree.children(0))) == tree.num_children[0]


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(menu=BetMenu.uniform(bets=(0.0,))), ValueError, "above 0, got 0"),
    (dict(menu=BetMenu.uniform(raises=(-1.0,))), ValueError, "raises .* above 0"),
    (dict(menu=BetMenu.uniform(bets=(float("nan"),))), ValueError, "above 0, got nan"),
    (dict(menu=BetMenu.uniform(max_raises=-1)), ValueError, "max_raises"),
    (dict(menu="pot"), TypeError, "BetMenu or a pair"),
    (dict(menu=(BetMenu(),)), TypeError, "BetMenu or a pair"),
    (dict(pot=0), ValueError, "pot must be above 0"),
    (dict(pot=-5), ValueError, "pot must be above 0"),
    (dict(stack=-1), ValueError, "stack must be 0 chips or more"),
    (dict(street=1), ValueError, "turn .* or the river"),
])
def test_tree_errors(kwargs, error, match):
    args = dict(pot=100, stack=100, street=RIVER, menu=None) | kwargs
    with pytest.raises(error, match=match):
        build_tree(**args)


@pytest.mark.parametrize("kwargs, match", [
    (dict(board="Kh Th 6h"), "4 cards .* or 5 .* got 3"),
    (dict(board="Kh Th 6h 3c 2s 4d"), "got 6"),
    (dict(board="Kh Th 6h Kh"), "Kh is on the board twice"),
    (dict(board="Kh Th 6h Zz"), "board"),
    (dict(oop="KhTh"), "oop range: no combo left"),
    (dict(ip="KhTh,Th6h"), "ip range: no combo left"),
    (dict(pot=0), "pot must be above 0"),
    (dict(stack=-1), "stack 0 or more"),
    (dict(ip=np.ones(5)), "1326 weights"),
    (dict(ip=np.full(1326, 2.0)), r"in \[0, 1\]"),
    (dict(menu=BetMenu.uniform(bets=(0,))), "above 0"),
])
def test_spot_errors(kwargs, match):
    args = dict(board="Kh Th 6h 3c", oop="QQ", ip="JJ", pot=10, stack=10) | kwargs
    with pytest.raises(ValueError, match=match):
        Spot.make(**args)


@pytest.mark.parametrize("weight", [2.0, float("inf")])
def test_spot_checks_dict_weights(weight):
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        Spot.make("Kh Th 6h 3c", {(0, 1): weight}, "QQ", 10, 10)


def test_spot_drops_board_combos_and_keeps_weights():
    spot = Spot.make("Kh Th 6h 3c", "KK,AhQh:0.25", "TT:0.5", 10, 10)
    assert spot.street == TURN
    oop, ip = spot.ranges
    assert np.count_nonzero(oop) == 3 + 1 and np.count_nonzero(ip) == 3
    assert oop[combo_index(*card_tuple("AhQh"))] == 0.25 and set(ip[ip > 0]) == {0.5}
    assert oop[combo_index(*card_tuple("KhKs"))] == 0


def test_street_actions_facing_an_all_in():
    """Facing a bet that puts the player all-in: fold or call, nothing above."""
    menu = BetMenu()
    assert street_actions(menu, RIVER, 100, (0.0, 150.0), 0, 150.0, 1, 150.0) == \
        [("f", 0.0), ("c", 150.0)]


@pytest.mark.parametrize("board", ["Td 9d 6h Qc 2s", "Td 9d 6h Qc"])
def test_memory_reported_before_solving_is_what_allocate_commits(board):
    spot = Spot.make(board, "QQ+,AK,T9s,87s", "JJ-88,AQs,KJs,65s", 100, 400)
    solver = SubgameSolver(spot, threads=2)
    estimate = solver.memory_bytes()
    assert solver.allocated_bytes() == 0
    solver.allocate()
    assert solver.allocated_bytes() == estimate
    solver.close()


def _sparse_river_spot(seed):
    rng = np.random.default_rng(seed)
    w0 = rng.random(1326) * (rng.random(1326) < 0.3)
    w1 = rng.random(1326) * (rng.random(1326) < 0.3)
    return Spot.make("Td 9d 6h Qc 2s", w0, w1, 100, 400)


def test_the_gadget_gives_no_opponent_hand_more_than_its_blueprint_value():
    """Safe re-solving: a weak 'blueprint' (20 iterations) gives player 1's best-response
    values; re-solved with the gadget, player 1's best response earns at most that in total
    and, hand by hand, at most a small slack; re-solved without, it need not."""
    spot = _sparse_river_spot(3)
    blueprint = SubgameSolver(spot)
    blueprint.iterate(20)
    cbv = blueprint.counterfactual_values(1, "best_response")
    safe = SubgameSolver(spot)
    safe.set_gadget(1, cbv)
    safe.solve(target=0.05, max_iterations=600, check_every=50)
    safe.gadget = None                      # the real subgame, the bot's new strategy
    br = safe.counterfactual_values(1, "best_response")
    live = safe.combos[1]
    reach = safe.init_reach[1, :len(live)].astype(float)
    assert reach @ br[live] <= reach @ cbv[live]
    slack = 0.01 * spot.pot * safe._disjoint(1, safe.init_reach[0, :safe.num_hands[0]])
    assert np.all(br[live] <= cbv[live] + slack)


def test_the_gadget_follows_its_values():
    """Values far below what a hand gets in the subgame: every hand enters; far above: every
    hand takes them, and the exploitability of the gadget game still falls to the target."""
    spot = _sparse_river_spot(4)
    for scale, enters in ((-1e6, True), (1e6, False)):
        solver = SubgameSolver(spot)
        solver.set_gadget(0, np.full(1326, scale))
        result = solver.solve(target=0.3, max_iterations=400)
        enter = solver.gadget.enter(False)
        assert np.all(enter > 0.99) if enters else np.all(enter < 0.01)
        assert result.exploitability_pct <= 0.3


def test_load_strategy_fixes_the_average_strategy():
    spot = _sparse_river_spot(5)
    solver = SubgameSolver(spot)
    node = 0
    na = int(solver.tree.num_children[node])
    probs = np.zeros((na, 1326))
    probs[0] = 1.0                          # always check
    solver.load_strategy(node, probs)
    held = solver.combos[0]
    np.testing.assert_allclose(solver.strategy(node)[:, held], probs[:, held])
