"""The re-solving bot, its match against a blueprint and LBR against it (holdem.subgame.resolving,
.match, .lbr), on the session's barely trained heads-up blueprint."""

import numpy as np
import pytest

import holdem
from holdem.analysis.bot import real_table
from holdem.analysis.lbr.sampled import LbrSetting
from holdem.cards import parse
from holdem.games.nlhe.records import Action, ActionKind
from holdem.games.nlhe.rules import HandState
from holdem.subgame.lbr import equity_vector, lbr_hand, resolve_lbr
from holdem.subgame.match import resolve_match
from holdem.subgame.resolving import ResolvingBot, street_labels
from holdem.subgame.solver import COMBOS, combo_index


@pytest.fixture(scope="module")
def bp(hunl_run):
    return holdem.Blueprint.load(hunl_run)


def _river_state(bp, bets=()):
    """A hand checked down to the river, then ``bets`` (Actions) there."""
    table = real_table(bp, 10_000, 100)
    state = HandState(table, hole_cards=[parse("As Kd"), parse("7c 7d")],
                      board=parse("2h 9s Tc 4d Qh"))
    state.apply(Action.call())
    state.apply(Action.check())
    while int(state.street) < 3:
        state.apply(Action.check())
    for action in bets:
        state.apply(action)
    return state


def test_street_labels_name_real_chips_on_the_street(bp):
    state = _river_state(bp, [Action(ActionKind.BET, 150), Action(ActionKind.RAISE, 600)])
    assert street_labels(state, 3) == ["b150", "r600"]
    assert street_labels(state, 2) == ["x", "x"]
    state.apply(Action(ActionKind.RAISE, state.legal_actions().max_to))
    assert street_labels(state, 3)[-1] == "a"


def test_the_policy_is_a_strategy_for_every_combo_in_range(bp):
    bot = ResolvingBot(bp, 100, np.random.default_rng(0), street="river", target=2.0,
                       max_iterations=100)
    state = _river_state(bp)
    labels, actions, probs = bot.policy(state)
    assert bot.solves == 1
    assert labels[0] == "x" and actions[0] == Action.check()
    held = probs.sum(axis=0) > 0
    assert held[combo_index(*state.hole_cards[state.to_act])]
    np.testing.assert_allclose(probs[:, held].sum(axis=0), 1.0, atol=1e-5)
    assert not held[[a in state.board or b in state.board for a, b in COMBOS.tolist()]].any()
    decision = bot.decide(state)
    assert decision.action in actions and "re-solved" in decision.note
    assert bot.solves == 1                      # the solution is kept for the street


def test_a_size_the_tree_lacks_is_re_solved_with_that_size(bp):
    bot = ResolvingBot(bp, 100, np.random.default_rng(0), street="river", target=2.0,
                       max_iterations=60)
    state = _river_state(bp, [Action(ActionKind.BET, 137)])   # 0.685 x pot: not in the menu
    labels, actions, probs = bot.policy(state)
    assert bot.solves == 2                      # solved once, then again with 137 added
    assert labels[:2] == ["f", "c"]
    assert "b137" in bot._game[1].tree.child_labels(0)


def test_a_look_ahead_leaves_the_bots_answer_to_the_real_bet_as_without_it(bp):
    """LBR reads the bot's answer to each size it might bet on a copy of the hand; the bot
    re-solves with that size for the copy but keeps its tree as the real hand made it. So its
    answer to the bet then made is the one LBR read, and the one a bot that was never asked
    gives (the sizes tried stayed on its tree, which answered the real bet from a tree of every
    size tried)."""
    import copy

    def bot():
        return ResolvingBot(bp, 100, np.random.default_rng(0), street="river", target=2.0,
                            max_iterations=60)

    looker, plain = bot(), bot()
    state = _river_state(bp)
    read = {}
    for size in (137, 211, 173):                # none of them in the menu (100, 200, all-in)
        after = copy.deepcopy(state)
        after.apply(Action(ActionKind.BET, size))
        read[size] = looker.policy(after, state)
    assert looker.solves == 4                   # the street once, then once per size tried
    state.apply(Action(ActionKind.BET, 211))
    answer = looker.policy(state)
    alone = plain.policy(state)
    assert answer[0] == alone[0] == read[211][0]
    np.testing.assert_array_equal(answer[2], alone[2])
    np.testing.assert_array_equal(answer[2], read[211][2])
    labels = looker._game[1].tree.child_labels(0)
    assert "b211" in labels and "b137" not in labels and "b173" not in labels


def test_the_blueprints_policy_read_again_for_a_node_is_the_one_computed_afresh(bp):
    """Sizes that the translation reads as one abstract action reach one node: its policy is
    computed once and read again, the same as a bot that computes it afresh."""
    import copy

    state = _river_state(bp)
    kept = ResolvingBot(bp, 100, np.random.default_rng(0), street=5)
    sizes = (100, 110, 137, 150, 180, 200, 220, 300, 450)
    for size in sizes:
        after = copy.deepcopy(state)
        after.apply(Action(ActionKind.BET, size))
        fresh = ResolvingBot(bp, 100, np.random.default_rng(0), street=5)
        fresh.blueprint.translate(state)            # the same hand's draws as ``kept``
        mine, theirs = kept.policy(after, state), fresh.policy(after, state)
        assert mine[0] == theirs[0] and mine[1] == theirs[1]
        np.testing.assert_array_equal(mine[2], theirs[2])
    assert 0 < len(kept._node_policies) < len(sizes)


def test_a_resolving_bot_that_never_resolves_plays_as_its_blueprint(bp):
    """Street 4 (never): the match's two versions play alike on every deal and draw, so the
    pairing leaves exactly nothing."""
    result = resolve_match(bp, bp, street=4, deals=6, seed=3)
    assert result.difference == 0.0 and result.difference_ci95 == 0.0
    assert result.solves == 0


def test_resolve_match_plays_river_subgames(bp):
    result = resolve_match(bp, bp, street="river", deals=30, seed=1, target=2.0,
                           max_iterations=60)
    assert result.hands == 60 and result.solves > 0
    assert np.isfinite(result.mbb_per_hand)


class _FoldBot:
    """Folds whenever it faces a bet, checks otherwise: what LBR must beat by 750."""

    solves = 0

    def policy(self, state, hand=None):
        legal = state.legal_actions()
        action = Action.fold() if ActionKind.FOLD in legal else Action.check()
        return ["f"], [action], np.ones((1, len(COMBOS)))

    def decide(self, state):
        from holdem.analysis.bot import Decision

        return Decision(self.policy(state)[1][0])


@pytest.mark.parametrize("setting", ["fcpa:3-4", "56:3-4"])
def test_lbr_beats_an_always_fold_bot_by_exactly_750(bp, setting):
    from holdem.analysis.lbr.sampled import ROUNDS

    s = LbrSetting.parse(setting)
    table = real_table(bp, 10_000, 100)
    rng = np.random.default_rng(5)
    total = 0
    for _ in range(3):
        cards = HandState(table, rng=rng)
        for seat in (0, 1):
            state = HandState(table, hole_cards=cards.hole_cards, board=cards.full_board)
            total += lbr_hand(state, seat, _FoldBot(), s.fractions, s.bet_allin,
                              ROUNDS[s.rounds], {"decisions": 0, "raises": 0})
    assert total / 6 * 10 == 750.0          # chips per hand -> mbb (big blind 100 chips)


def test_lbr_looking_ahead_leaves_the_real_bots_draws_alone(bp):
    """LBR values a raise by the bot's answers on a copy of the hand, read by copies of the bot
    that take each reading of an off-tree size (tests/test_subgame_lbr_readings.py). The real bot
    is asked about the real hand only, and reads it with one draw per hand (LBR asked it about
    its copies, read with the real hand's draws, and so saw its reading)."""
    from holdem.analysis.lbr.sampled import ROUNDS

    s = LbrSetting.parse("56:3-4")
    table = real_table(bp, 10_000, 100)
    rng = np.random.default_rng(3)
    bot = ResolvingBot(bp, 100, np.random.default_rng(1), street=5)
    translate, seeds, copies = bot.blueprint.translate, [], []

    def recording(state, hand=None):
        out = translate(state, hand)
        seeds.append(bot.blueprint._hand_seed)
        copies.append(hand is not None and hand is not state)
        return out

    bot.blueprint.translate = recording
    stats = {"decisions": 0, "raises": 0}
    for _ in range(6):
        cards = HandState(table, rng=rng)
        for seat in (0, 1):
            seeds.clear()
            state = HandState(table, hole_cards=cards.hole_cards, board=cards.full_board)
            lbr_hand(state, seat, bot, s.fractions, s.bet_allin, ROUNDS[s.rounds], stats)
            assert len(set(seeds)) == 1             # the bot acts at least once a hand
    assert stats["raises"] > 0 and copies and not any(copies)


def test_lbr_against_a_bot_that_never_resolves_pairs_exactly(bp):
    result = resolve_lbr(bp, LbrSetting.parse("fcpa:3-4"), street=4, deals=3, seed=2)
    assert result.difference == 0.0 and result.mbb_per_hand == result.blueprint_mbb


def test_lbr_refuses_settings_that_act_before_the_turn(bp):
    with pytest.raises(ValueError, match="3-4"):
        resolve_lbr(bp, LbrSetting.parse("fcpa:1-4"), deals=1)


def test_equity_vector_counts_every_river_and_ties_half():
    board = parse("2c 2d 2h 2s")                # quads on board: every 5-card hand plays
    eq = equity_vector(tuple(parse("3c 4d")), tuple(board))
    live = eq > 0
    # against any hand the board plays for both: ties unless a kicker decides
    assert np.all((eq[live] >= 0) & (eq[live] <= 1))
    river = equity_vector(tuple(parse("Ac Ad")), tuple(parse("2c 2d 2h 2s 3h")))
    kk = combo_index(*parse("Kc Kd"))
    ak = combo_index(*parse("Ah Kh"))
    assert river[kk] == 1.0 and river[ak] == 0.5   # aces kicker beats kings; A-kicker ties
    assert river[combo_index(*parse("Ac 5c"))] == 0.0   # shares a card with LBR


def test_safe_resolving_puts_the_blueprint_on_the_subgame_tree(bp):
    """--resolve-safe: the subgame uses the blueprint's sizes and cap, so every decision of the
    bot maps onto the abstract tree and the opponent's blueprint values exist."""
    bot = ResolvingBot(bp, 100, np.random.default_rng(0), street="river", target=2.0,
                       max_iterations=60, safe=True)
    state = _river_state(bp)
    labels, actions, probs = bot.policy(state)
    assert bot.gadgets == 1 and bot._game[1].gadget is not None
    assert labels == ["x", "b100", "b200", "a"]      # hunl_default: half pot, pot, all-in
    assert bot.decide(state).action in actions


def test_match_maps_subgame_actions_onto_abstract_ones():
    from holdem.subgame.resolving import _match

    assert _match(["x", "b100", "b200", "a"], ["c", "r0.5p", "r1p", "a"]) == [0, 1, 2, 3]
    assert _match(["f", "c", "r500", "a"], ["f", "c", "r1p", "a"]) == [0, 1, 2, 3]
    assert _match(["f", "c", "a"], ["f", "c", "r1p", "a"]) is None


class _ShoveBot:
    """Goes all-in whenever it can, whatever its cards (calls otherwise)."""

    solves = 0

    def policy(self, state, hand=None):
        legal = state.legal_actions()
        if legal.min_to:
            kind = ActionKind.BET if ActionKind.BET in legal else ActionKind.RAISE
            action = Action(kind, legal.max_to)
        else:
            action = Action.check() if ActionKind.CHECK in legal else Action.call()
        return ["a"], [action], np.ones((1, len(COMBOS)))

    def decide(self, state):
        from holdem.analysis.bot import Decision

        return Decision(self.policy(state)[1][0])


def test_lbr_decides_without_the_bots_cards(bp):
    """Against a bot whose play ignores its cards, LBR's actions cannot depend on the bot's
    hole cards: the same LBR hand and board with the bot holding the nuts or air play the same
    line (a LBR that scored a call by the real showdown would call one and fold the other)."""
    table = real_table(bp, 10_000, 100)
    lines = []
    for theirs in ("As Ks", "3c 2d"):                 # on this board: a flush, or nothing
        state = HandState(table, hole_cards=[parse(theirs), parse("Qh Jd")],
                          board=parse("Qs 7s 4s 9h 8c"))
        lbr_hand(state, 1, _ShoveBot(), (1.0,), True, 0, {"decisions": 0, "raises": 0})
        lines.append([(a.kind, a.amount) for a in state.actions if a.player == 1])
    assert lines[0] == lines[1]


def _turn_all_in(table, holes, board):
    """Both check to the turn, where seat 1 bets all-in and seat 0 calls."""
    state = HandState(table, hole_cards=[parse(h) for h in holes], board=parse(board))
    state.apply(Action.call())
    state.apply(Action.check())
    while int(state.street) < 2:
        state.apply(Action.check())
    state.apply(Action.check())
    state.apply(Action(ActionKind.BET, state.legal_actions().max_to))
    state.apply(Action.call())
    return state


def test_all_in_value_is_the_mean_over_every_river_the_rules_engine_deals(bp):
    from holdem.subgame.lbr import all_in_value

    table = real_table(bp, 10_000, 100)
    holes, turn = ("Ah Kh", "9c 9d"), "Qh 7h 2c 5s"
    dead = set(parse(turn)) | set(parse(holes[0])) | set(parse(holes[1]))
    payoffs = [_turn_all_in(table, holes, f"{turn} {card_text}").payoffs()[0]
               for card_text in _card_names() if parse(card_text)[0] not in dead]
    assert len(payoffs) == 44 and len(set(payoffs)) == 2     # 10,000 won or lost
    value = all_in_value(tuple(tuple(parse(h)) for h in holes), tuple(parse(turn)), 0, 10_000)
    assert value == pytest.approx(np.mean(payoffs), abs=1e-9)
    assert all_in_value(tuple(tuple(parse(h)) for h in holes), tuple(parse(turn)), 1,
                        10_000) == pytest.approx(-value)


def _card_names():
    return [r + s for r in "23456789TJQKA" for s in "cdhs"]


class _TurnShoveBot(_ShoveBot):
    """Checks or calls before the turn, then goes all-in whenever it can."""

    def policy(self, state, hand=None):
        if int(state.street) < 2:
            legal = state.legal_actions()
            action = Action.check() if ActionKind.CHECK in legal else Action.call()
            return ["c"], [action], np.ones((1, len(COMBOS)))
        return super().policy(state)


def test_lbr_scores_a_turn_all_in_by_its_expectation_not_the_river_dealt(bp):
    """Whatever river the deal holds, a hand all-in on the turn scores the same: LBR's
    expected chips over the 44 rivers (lower variance, same mean)."""
    from holdem.subgame.lbr import all_in_value

    table = real_table(bp, 10_000, 100)
    scores = []
    for river in ("8d", "Kh"):                      # LBR loses, then wins, at showdown
        state = HandState(table, hole_cards=[parse("Qh Qc"), parse("6c 4d")],
                          board=parse(f"Qs 7h 2c 5s {river}"))
        scores.append(lbr_hand(state, 0, _TurnShoveBot(), (1.0,), True, 2,
                               {"decisions": 0, "raises": 0}))
        assert state.is_terminal and min(state.total_commitments) == 10_000
        assert state.payoffs()[0] == (-10_000 if river == "8d" else 10_000)
    holes = (tuple(parse("Qh Qc")), tuple(parse("6c 4d")))
    assert scores[0] == scores[1] == pytest.approx(
        all_in_value(holes, tuple(parse("Qs 7h 2c 5s")), 0, 10_000))


def test_bots_sharing_a_cache_read_a_spot_solved_before_instead_of_solving_it_again(bp):
    from holdem.subgame.resolving import SolveCache

    cache = SolveCache(size=2)
    bots = [ResolvingBot(bp, 100, np.random.default_rng(s), street="river", target=2.0,
                         max_iterations=40, cache=cache) for s in (0, 1)]
    first = bots[0].policy(_river_state(bp))
    second = bots[1].policy(_river_state(bp))
    assert (bots[0].solves, bots[1].solves, bots[1].reused, cache.hits) == (1, 0, 1, 1)
    assert first[0] == second[0]
    np.testing.assert_array_equal(first[2], second[2])
    alone = ResolvingBot(bp, 100, np.random.default_rng(2), street="river", target=2.0,
                         max_iterations=40)
    np.testing.assert_array_equal(alone.policy(_river_state(bp))[2], first[2])  # deterministic
    other = _river_state(bp, [Action(ActionKind.BET, 150)])      # off the tree: a new spot
    bots[1].policy(other)
    assert bots[1].solves == 1 and cache.hits == 1


class _Sized:
    def __init__(self, nbytes):
        self.nbytes = nbytes

    def allocated_bytes(self):
        return self.nbytes


def test_a_solve_cache_keeps_the_most_recently_used_solutions_within_its_byte_budget():
    from holdem.subgame.resolving import CACHE_BYTES, SolveCache

    cache = SolveCache(max_bytes=250)
    a, b, c = _Sized(100), _Sized(100), _Sized(100)
    cache.put("a", a)
    cache.put("b", b)
    assert cache.get("a") is a                   # a is now the most recently used
    cache.put("c", c)                            # 300 bytes: b, the least recent, goes
    assert (len(cache), cache.bytes, cache.get("b")) == (2, 200, None)
    assert cache.get("a") is a and cache.get("c") is c and cache.hits == 3
    cache.put("c", c)                            # the same key again: counted once
    assert (len(cache), cache.bytes) == (2, 200)
    big = _Sized(1000)                           # over the budget alone: kept, alone
    cache.put("big", big)
    assert (len(cache), cache.bytes, cache.get("big")) == (1, 1000, big)
    counted = SolveCache(size=2)                 # a count limit as well as the bytes
    for key in "xyz":
        counted.put(key, _Sized(1))
    assert len(counted) == 2 and counted.get("x") is None
    assert SolveCache().max_bytes == CACHE_BYTES
    with pytest.raises(ValueError, match="at least one"):
        SolveCache(size=0)


def test_a_smaller_cache_solves_again_what_it_let_go_with_the_same_result(bp):
    """cache_bytes (eval_blueprint --resolve-cache-mb): a cache that keeps only the newest
    solution solves again the spot a larger one reads; solving is deterministic, so the
    result is the same. (Seed 0: six river spots, one met again after another; seed 4 met
    only the newest again once the bot kept its reading of a hand while LBR looked ahead.)"""
    from holdem.subgame.match import _cache
    from holdem.subgame.resolving import CACHE_BYTES

    options = dict(street="river", deals=8, seed=0, target=5.0, max_iterations=20, per_board=8)
    setting = LbrSetting.parse("fcpa:3-4")
    large = resolve_lbr(bp, setting, **options)
    small = resolve_lbr(bp, setting, cache_bytes=0, **options)
    assert large.reused >= 1 and small.reused < large.reused
    assert small.solves + small.reused == large.solves + large.reused
    assert (small.mbb_per_hand, small.difference) == (large.mbb_per_hand, large.difference)
    assert _cache({"per_board": 2}).max_bytes == CACHE_BYTES      # a process's cache
    assert _cache({"per_board": 2, "cache_bytes": 5}).max_bytes == 5
    assert _cache({"per_board": 1, "cache_bytes": 5}) is None


def test_resolve_cache_mb_reaches_the_evaluation_in_bytes(hunl_run, monkeypatch):
    from holdem.cli import eval_blueprint
    from holdem.subgame import lbr
    from holdem.subgame.resolving import CACHE_BYTES

    seen = []

    class Recorded(Exception):
        pass

    def record(bp, setting, **options):
        seen.append(options["cache_bytes"])
        raise Recorded

    monkeypatch.setattr(lbr, "resolve_lbr", record)
    base = ["--checkpoint", str(hunl_run), "--resolve", "turn", "--lbr", "fcpa:3-4",
            "--resolve-per-board", "4"]
    for extra in (["--resolve-cache-mb", "512"], ["--resolve-cache-mb", "0.5"], []):
        with pytest.raises(Recorded):
            eval_blueprint.main(base + extra)
    assert seen == [512 << 20, 1 << 19, CACHE_BYTES]


def test_a_turn_solve_uses_the_turn_menu_and_the_river_the_default_one(bp):
    from holdem.subgame.resolving import TURN_MENU
    from holdem.subgame.tree import RIVER, TURN, BetMenu

    bot = ResolvingBot(bp, 100, np.random.default_rng(0), street="turn")
    assert bot.menu == {TURN: TURN_MENU, RIVER: BetMenu()}
    assert TURN_MENU.bets == {TURN: (1.0,), RIVER: (1.0,)} and TURN_MENU.max_raises == 3
    one = BetMenu.uniform(bets=(0.5,))
    assert ResolvingBot(bp, 100, np.random.default_rng(0), menu=one).menu == {TURN: one,
                                                                             RIVER: one}


def test_deals_per_board_share_the_board_and_deal_disjoint_hole_cards(bp):
    from holdem.subgame.match import deals_of, group_means

    table = real_table(bp, 10_000, 100)
    deals = list(deals_of(table, 3, 7, 3))
    assert len(deals) == 7
    boards = [board for _, board, _ in deals]
    assert boards[0] == boards[1] == boards[2] != boards[3] == boards[5] != boards[6]
    for holes, board, seeds in deals:
        cards = list(holes[0]) + list(holes[1]) + list(board)
        assert len(set(cards)) == 9 and len(seeds) == 2
    assert len({d[0] for d in deals[:3]}) == 3                # new hole cards each deal
    independent = list(deals_of(table, 3, 2, 1))
    expected = HandState(table, rng=np.random.default_rng(
        np.random.SeedSequence(3).spawn(2)[0].generate_state(3)[0]))
    assert independent[0][:2] == (expected.hole_cards, expected.full_board)
    assert group_means([1, 2, 3, 4, 5, 6, 7], 3) == [2.0, 5.0, 7.0]
    with pytest.raises(ValueError, match="per_board"):
        resolve_lbr(bp, LbrSetting.parse("fcpa:3-4"), deals=1, per_board=0)


@pytest.mark.parametrize("args,message", [
    (["--lbr", "fcpa:3-4", "--resolve-per-board", "0"], "must be at least 1"),
    (["--lbr", "fcpa:3-4", "--resolve-processes", "0"], "must be at least 1"),
    (["--lbr", "fcpa:3-4", "--resolve-per-board", "2", "--resolve-cache-mb", "-1"],
     "--resolve-cache-mb must be at least 0"),
    (["--lbr", "fcpa:3-4", "--resolve-cache-mb", "100"],
     "--resolve-cache-mb applies to --resolve with --resolve-per-board above 1"),
])
def test_resolve_per_board_is_refused_where_it_means_nothing(hunl_run, capsys, args, message):
    from holdem.cli import eval_blueprint

    with pytest.raises(SystemExit) as stop:
        eval_blueprint.main(["--checkpoint", str(hunl_run), "--resolve", "turn",
                             *[str(hunl_run) if a == "HUNL" else a for a in args]])
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_a_street_that_fell_back_to_the_blueprint_is_followed_by_a_solve_from_its_ranges(bp):
    """A turn re-solver whose turn fell back to the blueprint (no range to solve from, or a
    line it could not re-solve) solves the river from the blueprint's ranges there; it crashed
    reading the missing turn solution's ranges."""
    bot = ResolvingBot(bp, 100, np.random.default_rng(0), street="turn", target=2.0,
                       max_iterations=40)
    state = _river_state(bp)
    bot._hand, bot._game = (state.hole_cards, state.full_board), (2, None, {})
    bot._ranges, bot._values = {}, {}
    labels, actions, probs = bot.policy(state)
    assert bot.solves == 1 and bot._game[0] == 3 and bot._game[1] is not None
    assert labels[0] == "x" and probs[:, combo_index(*state.hole_cards[state.to_act])].sum() > 0


def test_resolve_per_board_without_resolve_is_refused(hunl_run, capsys):
    from holdem.cli import eval_blueprint

    with pytest.raises(SystemExit) as stop:
        eval_blueprint.main(["--checkpoint", str(hunl_run), "--vs", "equity",
                             "--resolve-per-board", "5"])
    assert stop.value.code == 2
    assert "--resolve-per-board applies to --resolve" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        eval_blueprint.main(["--checkpoint", str(hunl_run), "--vs", "equity",
                             "--resolve-processes", "2"])
    assert stop.value.code == 2
    assert "--resolve-processes applies to --resolve" in capsys.readouterr().err


def test_boards_spread_over_processes_give_the_result_of_one_process(bp):
    """play_groups: each board's deals in one spawned process with its own cache; solving is
    deterministic, so LBR and the head-to-head come out as in one process, solves included."""
    options = dict(street="river", deals=6, seed=5, target=2.0, max_iterations=40, per_board=3)
    setting = LbrSetting.parse("fcpa:3-4")
    one = resolve_lbr(bp, setting, **options)
    seen = []
    two = resolve_lbr(bp, setting, processes=2, **options,
                      progress=lambda done, total, seconds, partial: seen.append((done, partial)))
    fields = ("mbb_per_hand", "ci95", "blueprint_mbb", "blueprint_ci95", "difference",
              "difference_ci95", "hands", "solves", "reused")
    assert [getattr(two, f) for f in fields] == [getattr(one, f) for f in fields]
    assert one.solves > 0 and one.hands == 12
    assert sorted(d for d, _ in seen) == [3, 6] and seen[-1][1].hands == 12
    options.update(deals=8, seed=0, per_board=4)      # a deal there re-solves the river
    match_one = resolve_match(bp, bp, **options)
    match_two = resolve_match(bp, bp, processes=2, **options)
    assert match_one.solves > 0
    assert (match_two.mbb_per_hand, match_two.difference, match_two.solves) == \
        (match_one.mbb_per_hand, match_one.difference, match_one.solves)


def test_the_resolve_head_to_head_prints_its_lines(hunl_run, capsys):
    """eval_blueprint --resolve with --vs-checkpoint: it crashed after the match reading seat
    results that a re-solving match does not have."""
    from holdem.cli import eval_blueprint

    code = eval_blueprint.main(["--checkpoint", str(hunl_run), "--resolve", "river",
                                "--vs-checkpoint", str(hunl_run), "--hands", "4",
                                "--resolve-target", "2", "--resolve-iterations", "40"])
    out = capsys.readouterr().out
    assert code == 0 and "re-solving adds" in out and "hands/s (" in out


def test_a_match_dealt_by_board_reads_the_cache_and_pairs_exactly_without_resolving(bp):
    """per_board in the head-to-head: a bot that never re-solves pairs exactly with its
    blueprint (difference 0) on board-grouped deals too, and a river re-solver shares solves."""
    still = resolve_match(bp, bp, street=4, deals=4, seed=1, per_board=2)
    assert still.difference == 0.0 and still.hands == 8 and still.solves == 0
    grouped = resolve_match(bp, bp, street="river", deals=2, seed=1, per_board=2,
                            target=5.0, max_iterations=20)
    assert grouped.hands == 4 and np.isfinite(grouped.mbb_per_hand)
