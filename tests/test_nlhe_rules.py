"""Tests for the exact No-Limit Hold'em rules engine (holdem.games.nlhe).

Showdowns use rankings defined here (a fake per-card strength, or a slow 7-card evaluator), so
these tests do not depend on holdem.evaluator.
"""

from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from holdem.games.nlhe import (
    Action, ActionKind, ActionRecord, AwardRecord, DealRecord, HandState, IllegalActionError,
    Pot, PostKind, PostRecord, Street, TableConfig, side_pots, split_pot,
)

F, X, C, B, R, A = (ActionKind.FOLD, ActionKind.CHECK, ActionKind.CALL, ActionKind.BET,
                    ActionKind.RAISE, ActionKind.ALL_IN)


def card(text: str) -> int:
    return "23456789TJQKA".index(text[0]) * 4 + "cdhs".index(text[1])


def cards(text: str) -> tuple[int, ...]:
    return tuple(card(t) for t in text.split())


def slow_rank7(seven) -> int:
    """Obvious 7-card evaluator: best of the 21 five-card hands, category then kickers."""
    return max(_rank5(five) for five in combinations(seven, 5))


def _rank5(five) -> int:
    ranks = [c // 4 for c in five]
    counts = Counter(ranks)
    ordered = sorted(ranks, key=lambda r: (counts[r], r), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    is_flush = len({c % 4 for c in five}) == 1
    distinct = sorted(counts, reverse=True)
    straight_high = None
    if len(distinct) == 5 and distinct[0] - distinct[4] == 4:
        straight_high = distinct[0]
    elif distinct == [12, 3, 2, 1, 0]:
        straight_high = 3  # the wheel, five high
    if straight_high is not None:
        category, ordered = (8 if is_flush else 4), [straight_high] * 5
    elif is_flush:
        category = 5
    else:
        category = {(4, 1): 7, (3, 2): 6, (3, 1, 1): 3, (2, 2, 1): 2,
                    (2, 1, 1, 1): 1}.get(tuple(shape), 0)
    value = category
    for r in ordered:
        value = value * 13 + r
    return value


def strength_rank(strength: dict[int, int]):
    """A fake ranking: the sum of per-card strengths (cards not listed count 0)."""
    return lambda seven: sum(strength.get(c, 0) for c in seven)


def tie_rank(seven) -> int:
    return 0


def no_showdown(seven) -> int:
    raise AssertionError("no showdown expected")


DEFAULT_BOARD = cards("2c 7d 9h Js 3c")
H = [51 - 2 * p for p in range(6)]  # a card held by player p in `new_hand` (not on the board)


def new_hand(stacks, sb=50, bb=100, ante=0, *, hole_cards=None, board=DEFAULT_BOARD,
             rank_fn=tie_rank) -> HandState:
    """A hand with explicit cards (player p holds cards H[p] and H[p] - 1 unless given)."""
    if hole_cards is None:
        hole_cards = [(H[p], H[p] - 1) for p in range(len(stacks))]
    return HandState(TableConfig(tuple(stacks), sb, bb, ante), hole_cards=hole_cards,
                     board=board, rank_fn=rank_fn)


def play(state: HandState, *moves) -> None:
    """Apply moves given as ActionKind or (ActionKind, amount)."""
    for move in moves:
        kind, amount = move if isinstance(move, tuple) else (move, None)
        state.apply(Action(kind, amount))


# ---- minimum bets and raises ---------------------------------------------------------------

def test_preflop_min_raise_and_reraise():
    s = new_hand([10_000] * 3)
    legal = s.legal_actions()
    assert legal.player == 2
    assert legal.kinds == (F, C, R, A)
    assert (legal.call_to, legal.min_to, legal.max_to) == (100, 200, 10_000)
    with pytest.raises(IllegalActionError, match="already a bet to 100"):
        s.verify_bet(300)
    with pytest.raises(IllegalActionError, match="below the minimum raise to 200"):
        s.verify_raise(150)
    assert not s.can_raise(199) and s.can_raise(200)
    rec = s.do_raise(350)  # increment 250
    assert rec == ActionRecord(2, Street.PREFLOP, R, 350, 350, False)
    assert s.legal_actions().min_to == 600
    assert not s.can_raise(599)
    s.do_raise(1000)  # increment 650
    assert s.to_act == 1 and s.legal_actions().min_to == 1650


def test_min_bet_is_big_blind_and_raise_sizes_postflop():
    s = new_hand([10_000, 10_000])
    play(s, C, X)
    assert s.street == Street.FLOP and s.to_act == 1
    legal = s.legal_actions()
    assert legal.kinds == (X, B, A) and (legal.min_to, legal.max_to) == (100, 9_900)
    with pytest.raises(IllegalActionError, match="below the minimum bet to 100"):
        s.verify_bet(99)
    with pytest.raises(IllegalActionError, match="no bet"):
        s.verify_raise(200)
    with pytest.raises(IllegalActionError, match="nothing to call"):
        s.verify_fold()
    s.do_bet(100)
    assert s.legal_actions().min_to == 200
    with pytest.raises(IllegalActionError, match="below the minimum raise to 200"):
        s.verify_raise(199)
    s.do_raise(200)
    assert s.legal_actions().min_to == 300
    s.do_raise(500)  # increment 300
    assert s.legal_actions().min_to == 800
    with pytest.raises(IllegalActionError, match="more than player 0's all-in total of 9900"):
        s.verify_raise(9_901)


def test_all_in_for_less_than_min_raise_is_allowed():
    s = new_hand([10_000, 10_000, 150])
    legal = s.legal_actions()
    assert (legal.min_to, legal.max_to) == (150, 150)
    assert not s.can_raise(140)
    rec = s.do_all_in()
    assert (rec.kind, rec.amount, rec.is_all_in) == (R, 150, True)
    assert s.min_increment == 100 and s.legal_actions().min_to == 250


def test_stack_that_only_covers_a_call():
    s = new_hand([10_000, 10_000, 80])
    legal = s.legal_actions()
    assert legal.kinds == (F, C, A) and legal.call_to == 80
    with pytest.raises(IllegalActionError, match="only covers a call"):
        s.verify_raise(200)
    rec = s.do_all_in()
    assert (rec.kind, rec.amount, rec.is_all_in) == (C, 80, True)


# ---- short all-ins and reopening -----------------------------------------------------------

def test_short_all_in_does_not_reopen_for_player_who_acted():
    s = new_hand([10_000, 10_000, 10_000, 400])  # player 3 is the button
    play(s, (R, 300), A)  # UTG raises to 300; button all-in to 400, increment 100 < 200
    assert s.bet_to == 400 and s.min_increment == 200
    # SB and BB have not acted: they may re-raise, to at least 600.
    assert s.to_act == 0 and s.legal_actions().min_to == 600
    play(s, C, C)
    assert s.to_act == 2
    legal = s.legal_actions()
    assert legal.kinds == (F, C) and (legal.min_to, legal.max_to) == (0, 0)
    with pytest.raises(IllegalActionError, match="not reopened"):
        s.verify_raise(600)
    assert not s.can_all_in()
    s.do_call()
    assert s.street == Street.FLOP


def test_raise_by_player_yet_to_act_reopens_after_short_all_in():
    s = new_hand([10_000, 10_000, 10_000, 400])
    play(s, (R, 300), A, F)
    assert s.to_act == 1 and s.can_raise(600)
    s.do_raise(900)
    assert s.to_act == 2 and s.legal_actions().min_to == 1400


def test_short_all_ins_that_add_up_to_a_full_raise_reopen():
    s = new_hand([10_000, 10_000, 10_000, 250, 310])
    play(s, C, C, C, C, X)  # everyone limps, BB checks: 100 each
    assert s.street == Street.FLOP and s.to_act == 0
    play(s, X, X, (B, 100), A)  # player 2 bets 100; player 3 all-in to 150 (short, +50)
    assert s.bet_to == 150 and s.min_increment == 100
    play(s, A)  # player 4 all-in to 210: +60, short again, but 110 over player 2's bet
    assert s.to_act == 0 and s.legal_actions().min_to == 310
    play(s, C, C)
    assert s.to_act == 2 and s.can_raise(310)  # faces 110 more than its bet: a full raise


def test_short_all_in_bet_below_big_blind_does_not_reopen_checkers():
    s = new_hand([10_000, 10_000, 150])
    play(s, C, C, X)
    play(s, X, X, A)  # player 2 bets all-in 50 < big blind
    assert s.bet_to == 50
    assert s.legal_actions().kinds == (F, C)
    play(s, C)
    assert s.legal_actions().kinds == (F, C)


def test_no_bet_or_raise_when_every_opponent_is_all_in():
    s = new_hand([10_000, 500])
    play(s, (R, 300), A)
    legal = s.legal_actions()
    assert legal.kinds == (F, C) and legal.call_to == 500
    with pytest.raises(IllegalActionError, match="no opponent can respond"):
        s.verify_raise(700)


# ---- side pots and splits ------------------------------------------------------------------

def test_side_pots_four_players_unequal_stacks():
    strength = {H[0]: 40, H[1]: 30, H[2]: 20, H[3]: 10}  # player 0 best, then 1, 2, 3
    s = new_hand([100, 200, 300, 1_000], sb=5, bb=10, rank_fn=strength_rank(strength))
    play(s, A, C, A, A)  # UTG 300, button calls 300, SB all-in 100, BB all-in 200
    assert s.is_terminal and len(s.board) == 5
    assert s.pots() == (Pot(400, (0, 1, 2, 3)), Pot(300, (1, 2, 3)), Pot(200, (2, 3)))
    awards = [r for r in s.history if isinstance(r, AwardRecord)]
    assert awards == [AwardRecord(0, 400, 0), AwardRecord(1, 300, 1), AwardRecord(2, 200, 2)]
    assert s.payoffs() == (300, 100, -100, -300)
    assert s.stacks == (400, 300, 200, 700)


def test_side_pots_dead_money_and_uncalled_bet():
    # Player 3 (best hand) folds after putting in 100; player 4 out-chips everyone.
    strength = {H[3]: 99, H[0]: 3, H[1]: 2, H[4]: 1}
    s = new_hand([250, 600, 10_000, 10_000, 10_000], rank_fn=strength_rank(strength))
    play(s, F, C, (R, 400), A, C)  # UTG folds, p3 limps, p4 raises to 400, SB all-in 250, BB
    assert s.to_act == 3 and s.bet_to == 400
    play(s, F)
    assert s.street == Street.FLOP and s.to_act == 1
    play(s, A, C)  # BB all-in for 200 more (total 600); p4 calls
    assert s.is_terminal
    # Levels: 250 (p0, p1, p4; plus p3's dead 100 and p2 nothing) then 600 (p1, p4).
    assert s.total_commitments == (250, 600, 0, 100, 600)
    assert s.pots() == (Pot(850, (0, 1, 4)), Pot(700, (1, 4)))
    assert s.payoffs() == (600, 100, 0, -100, -600)


def test_uncalled_bet_goes_back():
    s = new_hand([10_000, 10_000], rank_fn=no_showdown)
    play(s, C, X, (B, 700), F)
    assert s.payoffs() == (-100, 100) and s.stacks == (9_900, 10_100)


def test_split_pot_board_plays_with_reference_evaluator():
    board = cards("Ts Jh Qd Kc Ad")  # broadway on board: everyone plays it
    s = new_hand([1_000, 1_000], hole_cards=[cards("2c 3d"), cards("4h 5s")], board=board,
                 rank_fn=slow_rank7)
    play(s, C, X, X, X, (B, 200), C, X, X)
    assert s.is_terminal and s.payoffs() == (0, 0)


def test_split_pot_with_odd_chip_goes_left_of_button():
    # 3-handed, blinds 1/2: button limps, SB folds (1 dead chip), BB checks; pot 5 split
    # between BB and button; the odd chip goes to the first winner left of the button (BB).
    s = new_hand([100, 100, 100], sb=1, bb=2, rank_fn=tie_rank)
    play(s, C, F, X, X, X, X, X, X, X)
    assert s.is_terminal
    awards = [r for r in s.history if isinstance(r, AwardRecord)]
    assert awards == [AwardRecord(1, 3, 0), AwardRecord(2, 2, 0)]
    assert s.payoffs() == (-1, 1, 0)


def test_split_pot_helpers():
    assert split_pot(7, [3, 0, 5], odd_chip_order=[0, 1, 2, 3, 4, 5]) == {0: 3, 3: 2, 5: 2}
    assert split_pot(5, [0, 1], odd_chip_order=[1, 0]) == {0: 2, 1: 3}  # heads-up: BB first
    assert side_pots([50, 50, 50], [True, False, False]) == (Pot(150, (1, 2)),)


def test_real_evaluator_ranks_correctly():
    assert slow_rank7(cards("As Ks Qs Js Ts 2c 3d")) > slow_rank7(cards("9s 9h 9d 9c Ah 2c 3d"))
    assert slow_rank7(cards("Ac 2d 3h 4s 5c 9d Kh")) < slow_rank7(cards("2d 3h 4s 5c 6d 9d Kh"))
    assert slow_rank7(cards("Ac Ad Kh Ks 2c 3d 7h")) == slow_rank7(cards("As Ah Kd Kc 2h 3c 7s"))


# ---- order of play -------------------------------------------------------------------------

def test_heads_up_blinds_and_order():
    s = new_hand([1_000, 1_000])
    posts = [r for r in s.history if isinstance(r, PostRecord)]
    assert posts == [PostRecord(0, PostKind.SMALL_BLIND, 50, False),
                     PostRecord(1, PostKind.BIG_BLIND, 100, False)]
    assert s.street_commitments == (50, 100) and s.to_act == 0  # SB/button first preflop
    play(s, C)
    assert s.to_act == 1 and s.legal_actions().kinds == (X, R, A)  # BB option
    play(s, X)
    for street in (Street.FLOP, Street.TURN, Street.RIVER):
        assert s.street == street and s.to_act == 1  # button acts second postflop
        play(s, X)
        assert s.to_act == 0
        play(s, X)
    assert s.is_terminal


@pytest.mark.parametrize("n, preflop, postflop", [
    (3, [2, 0, 1], [0, 1, 2]),
    (4, [2, 3, 0, 1], [0, 1, 2, 3]),
    (6, [2, 3, 4, 5, 0, 1], [0, 1, 2, 3, 4, 5]),
])
def test_order_of_play(n, preflop, postflop):
    s = new_hand([1_000] * n)
    seen = []
    while s.street == Street.PREFLOP:
        seen.append(s.to_act)
        play(s, C if s.can_call() else X)
    assert seen == preflop
    seen = []
    while s.street == Street.FLOP:
        seen.append(s.to_act)
        play(s, X)
    assert seen == postflop


def test_postflop_order_skips_folded_and_all_in_players():
    s = new_hand([1_000, 1_000, 1_000, 300])
    play(s, C, A, F, C)  # UTG limps, button all-in 300, SB folds, BB calls
    assert s.to_act == 2
    play(s, C)
    assert s.street == Street.FLOP and s.to_act == 1
    play(s, X)
    assert s.to_act == 2


# ---- closing the action --------------------------------------------------------------------

def test_big_blind_option_when_limped_to():
    s = new_hand([1_000] * 3)
    play(s, C, C)
    assert s.to_act == 1
    legal = s.legal_actions()
    assert legal.kinds == (X, R, A) and legal.min_to == 200
    assert not s.can_fold()
    play(s, X)
    assert s.street == Street.FLOP


def test_big_blind_raise_reopens_for_limpers():
    s = new_hand([1_000] * 3)
    play(s, C, C, (R, 300))
    assert s.street == Street.PREFLOP and s.to_act == 2
    play(s, C)
    assert s.to_act == 0
    play(s, C)
    assert s.street == Street.FLOP and s.total_commitments == (300, 300, 300)


def test_round_closes_after_bet_and_calls():
    s = new_hand([1_000] * 3)
    play(s, C, C, X, (B, 100), C)
    assert s.street == Street.FLOP and s.to_act == 2
    play(s, C)
    assert s.street == Street.TURN and s.pot_total == 600
    assert [r for r in s.history if isinstance(r, DealRecord)] == [
        DealRecord(Street.FLOP, DEFAULT_BOARD[:3]), DealRecord(Street.TURN, DEFAULT_BOARD[3:4])]


def test_fold_to_win():
    s = new_hand([1_000] * 3, rank_fn=no_showdown)
    play(s, (R, 300), F, F)
    assert s.is_terminal and s.to_act is None and s.board == ()
    assert s.payoffs() == (-50, -100, 150)
    with pytest.raises(IllegalActionError, match="hand is over"):
        s.verify_check()
    with pytest.raises(IllegalActionError, match="hand is over"):
        s.legal_actions()


def test_all_in_preflop_runs_out_the_board():
    s = new_hand([1_000, 1_000], rank_fn=strength_rank({H[0]: 1}))
    play(s, A, C)
    assert s.is_terminal and s.board == DEFAULT_BOARD
    assert [r.street for r in s.history if isinstance(r, DealRecord)] == [
        Street.FLOP, Street.TURN, Street.RIVER]
    assert s.payoffs() == (1_000, -1_000)


def test_short_big_blind_and_antes_put_players_all_in():
    # Player 1's ante leaves 30 for the big blind; player 2 is all-in from the ante alone.
    s = new_hand([1_000, 40, 5], ante=10, rank_fn=strength_rank({H[1]: 9, H[2]: 5}))
    assert s.all_in == (False, True, True)
    assert s.total_commitments == (60, 40, 5)
    # The full big blind is still the amount to call; nobody can raise; SB is the only one left.
    assert s.to_act == 0
    legal = s.legal_actions()
    assert legal.kinds == (F, C) and legal.call_to == 100
    play(s, C)
    assert s.is_terminal
    # Pots: 15 (all three), 70 (players 0, 1), 70 uncalled back to player 0.
    assert s.pots() == (Pot(15, (0, 1, 2)), Pot(70, (0, 1)), Pot(70, (0,)))
    assert s.payoffs() == (-40, 45, -5)


def test_action_amount_must_match_what_it_implies():
    s = new_hand([1_000, 1_000])
    with pytest.raises(IllegalActionError, match="CALL goes to 100, not 200"):
        s.verify(Action(C, 200))
    with pytest.raises(IllegalActionError, match="needs an amount"):
        s.verify(Action(R))
    assert s.can(Action.call()) and s.can(Action(C, 100)) and s.can(Action.raise_to(200))
    assert s.apply(Action.all_in()) == ActionRecord(0, Street.PREFLOP, R, 1_000, 950, True)


# ---- dealing -------------------------------------------------------------------------------

def test_dealing_from_a_generator_is_reproducible_and_leaves_given_cards():
    config = TableConfig((1_000,) * 6, 50, 100)
    a = HandState(config, rng=np.random.default_rng(7))
    b = HandState(config, rng=np.random.default_rng(7))
    assert a.hole_cards == b.hole_cards and a.full_board == b.full_board
    dealt = [c for h in a.hole_cards for c in h] + list(a.full_board)
    assert len(set(dealt)) == 17 and all(0 <= c < 52 for c in dealt)
    flop = cards("Ah Kh Qh")
    s = HandState(config, board=flop, rng=np.random.default_rng(1))
    assert s.full_board[:3] == flop
    assert not set(flop) & {c for h in s.hole_cards for c in h}
    with pytest.raises(ValueError, match="dealt twice: 2d in 2c 2d 2d 2h"):
        HandState(TableConfig((100, 100), 1, 2), hole_cards=[(0, 1), (1, 2)], board=DEFAULT_BOARD)
    text = HandState(TableConfig((100, 100), 1, 2), hole_cards=["As Kd", "7c 7d"],
                     board="2c 7h 9d Ts Js")
    assert text.hole_cards == ((51, 45), (20, 21)) and text.full_board == (0, 22, 29, 35, 39)
    with pytest.raises(ValueError, match="hole cards: bad card 'Kx'"):
        HandState(TableConfig((100, 100), 1, 2), hole_cards=["As Kx", "7c 7d"])
    with pytest.raises(ValueError, match="pass rng"):
        HandState(config)


def test_bad_configs_are_rejected():
    with pytest.raises(ValueError, match="7 players"):
        TableConfig((100,) * 7, 1, 2)
    with pytest.raises(ValueError, match="positive"):
        TableConfig((100, 0), 1, 2)
    with pytest.raises(ValueError, match="small blind <= big blind"):
        TableConfig((100, 100), 3, 2)


# ---- random play: conservation and zero sum ------------------------------------------------

def random_amount(rng: np.random.Generator, low: int, high: int) -> int:
    if rng.random() < 0.3:
        return low
    if rng.random() < 0.2:
        return high
    return int(rng.integers(low, high + 1))


@pytest.mark.parametrize("num_players", [2, 3, 4, 5, 6])
def test_random_hands_are_zero_sum_and_conserve_chips(num_players):
    rng = np.random.default_rng(1000 + num_players)
    num_kinds = Counter()
    for _ in range(1000):
        stacks = tuple(int(x) for x in rng.integers(1, 400, size=num_players))
        ante = int(rng.choice([0, 0, 1, 3]))
        s = HandState(TableConfig(stacks, 2, 5, ante), rng=rng,
                      rank_fn=lambda seven: (seven[0] // 4 + seven[1] // 4) % 5)
        total = sum(stacks)
        while not s.is_terminal:
            legal = s.legal_actions()
            kind = legal.kinds[int(rng.integers(len(legal.kinds)))]
            amount = None
            if kind in (B, R):
                amount = random_amount(rng, legal.min_to, legal.max_to)
                assert not s.can(Action(kind, legal.max_to + 1))
                if legal.min_to < legal.max_to and legal.min_to > s.bet_to + 1:
                    assert not s.can(Action(kind, legal.min_to - 1))
            record = s.apply(Action(kind, amount))
            num_kinds[record.kind] += 1
            assert min(s.stacks) >= 0
            assert sum(p.amount for p in s.pots()) == s.pot_total
            if not s.is_terminal:
                assert sum(s.stacks) + s.pot_total == total
        payoffs = s.payoffs()
        assert sum(payoffs) == 0 and sum(s.stacks) == total and min(s.stacks) >= 0
        assert all(p >= -s0 for p, s0 in zip(payoffs, stacks))
        assert len(s.board) == 5 or sum(not f for f in s.folded) == 1
    assert all(num_kinds[k] > 0 for k in (F, X, C, B, R))


def test_default_ranking_agrees_with_reference_evaluator():
    """The default rank_fn (holdem.evaluator.rank7) settles showdowns like the slow oracle."""
    pytest.importorskip("holdem.evaluator")
    rng = np.random.default_rng(5)
    for _ in range(40):
        config = TableConfig((500, 300, 400), 5, 10)
        seed = int(rng.integers(2**32))
        results = []
        for rank_fn in (None, slow_rank7):
            s = HandState(config, rng=np.random.default_rng(seed), rank_fn=rank_fn)
            play(s, A, A, A)
            results.append(s.payoffs())
        assert results[0] == results[1]
