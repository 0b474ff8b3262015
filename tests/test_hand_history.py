"""Hand histories in the Poker Hand History format (PHH): what ``play --history`` and
``eval_blueprint --history`` write is read back by PokerKit, the format's reference
implementation, and replayed through its state machine to the same final stacks."""

import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import holdem
from holdem import config as config_mod
from holdem.analysis.matches import hand_history as hh
from holdem.analysis.matches.headtohead import (blueprint_store, head_to_head_hands, match_log,
                                        match_samples)
from holdem.games import make_game
from holdem.games.nlhe.records import Action, ActionKind, AwardRecord, TableConfig
from holdem.games.nlhe.rules import HandState


@pytest.fixture(scope="module")
def pokerkit():
    return pytest.importorskip("pokerkit")


@pytest.fixture(scope="module")
def three_way(tmp_path_factory):
    """A barely trained three-player blueprint (20 big blind stacks)."""
    from holdem.solver.solver import Solver, save_solver

    config = config_mod.from_dict({
        "game": {"name": "nlhe", "num_players": 3, "stack": 20.0},
        "actions": {"preflop_open": [2.5], "preflop": [[1.0]], "flop": [[0.5, 1.0]],
                    "turn": [[1.0]], "river": [[1.0]], "all_in": True,
                    "max_raises": [3, 2, 1, 1]},
        "solver": {"weighting": "linear", "discount_interval": 1000},
        "train": {"seed": 3}}, source="test")
    solver = Solver(make_game(config), config)
    solver.run(3000)
    logdir = tmp_path_factory.mktemp("three_way")
    save_solver(solver, logdir / "checkpoints" / "ckpt-000000003000.ckpt")
    return holdem.Blueprint.load(logdir)


def replay(pokerkit, text):
    """[(HandHistory, final stacks)] of every hand of a PHH file's text, replayed by PokerKit
    (any warning, e.g. about a field PHH does not define, fails the test)."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for history in pokerkit.HandHistory.loads_all(text):
            for state in history:
                pass
            assert not state.status, history.actions               # the hand is over
            out.append((history, [int(s) for s in state.stacks]))
    return out


def rules_state(hand):
    """A played hand replayed through holdem's rules engine."""
    state = HandState(TableConfig(stacks=hand.stacks, small_blind=hand.small_blind,
                                  big_blind=hand.big_blind, ante=hand.ante),
                      hole_cards=hand.hole, board=hand.board)
    for _, seat, verb, to in hand.actions:
        assert state.to_act == seat
        if verb == "f":
            state.do_fold()
        elif verb == "cc":
            state.apply(Action.check() if state.can_check() else Action.call())
        else:
            state.apply(Action(ActionKind.BET if state.bet_to == 0 else ActionKind.RAISE, to))
    assert state.is_terminal
    return state


def odd_chips_differ(state):
    """Whether a pot of this finished hand was split three or more ways with two or more odd
    chips: holdem gives them one each, PokerKit all to the first winner."""
    pots = {}
    for rec in state.history:
        if isinstance(rec, AwardRecord):
            pots.setdefault(rec.pot_index, []).append(rec.amount)
    return any(len(a) >= 3 and sum(a) % len(a) >= 2 for a in pots.values())


def check_replays(pokerkit, hands, text):
    """Every hand of ``text`` (written from ``hands``) replays in PokerKit to its
    finishing_stacks, which are holdem's rules engine's; returns the number of showdowns."""
    replayed = replay(pokerkit, text)
    assert len(replayed) == len(hands)
    showdowns = 0
    for hand, (history, stacks) in zip(hands, replayed):
        state = rules_state(hand)
        assert state.payoffs() == hand.net
        order = hh.phh_order(hand.num_players)
        assert history.finishing_stacks == [hand.stacks[s] + hand.net[s] for s in order]
        if stacks != history.finishing_stacks:
            assert odd_chips_differ(state) and sum(stacks) == sum(history.finishing_stacks)
        showdowns += any(" sm " in a for a in history.actions)
    return showdowns


# -- the format -----------------------------------------------------------------------------
def test_a_heads_up_all_in_hand_in_phh_order():
    """Heads-up p1 is the big blind; at an all-in the hands are shown before the rest of the
    board, the last raiser first; amounts are street totals."""
    state = HandState(TableConfig(stacks=(1000, 1000), small_blind=5, big_blind=10, ante=1),
                      hole_cards=["As Ad", "7c 2d"], board="Kh 9s 4c 3d 2h")
    state.apply(Action.raise_to(30))                     # seat 0: small blind, button
    state.apply(Action.call())
    state.apply(Action.bet(20))                          # flop: the big blind first
    state.apply(Action.raise_to(969))                    # all-in: 1000 - ante - 30
    state.apply(Action.call())
    hand = hh.hand_from_state(state, ["Ann", "Bob"], [1, 2], 7)
    text = hh.dumps([hand], ["a comment"])
    assert text.startswith(hh.SIGNATURE + "\n# a comment\n\n[1]\n")
    assert text.split("[1]\n", 1)[1] == """\
variant = "NT"
antes = [1, 1]
blinds_or_straddles = [5, 10]
min_bet = 10
starting_stacks = [1000, 1000]
actions = [
  "d dh p1 7c2d",
  "d dh p2 AsAd",
  "p2 cbr 30",
  "p1 cc",
  "d db Kh9s4c",
  "p1 cbr 20",
  "p2 cbr 969",
  "p1 cc",
  "p2 sm AsAd",
  "p1 sm 7c2d",
  "d db 3d",
  "d db 2h",
]
hand = 7
seat_count = 2
seats = [2, 1]
players = ["Bob", "Ann"]
finishing_stacks = [0, 2000]
"""


def test_strings_are_valid_toml():
    tomllib = pytest.importorskip("tomllib")
    name = 'a "quoted" \\ name\twith\ncontrol \x7f and \udcff and é'
    state = HandState(TableConfig(stacks=(100, 100), small_blind=1, big_blind=2),
                      hole_cards=["As Ad", "7c 2d"], board="Kh 9s 4c 3d 2h")
    state.apply(Action.fold())
    hand = hh.hand_from_state(state, [name, "x"], [1, 2], 1, event=name)
    table = tomllib.loads(hh.dumps([hand]))["1"]
    assert table["players"][1] == name.replace("\udcff", "\ufffd") == table["event"]


def test_random_hands_of_two_to_six_players_replay_in_pokerkit(pokerkit):
    """Random legal play with uneven stacks and antes (side pots, short all-ins, folds at every
    street) through holdem's rules engine, written as PHH and replayed by PokerKit. The random
    player raises only when an opponent could put in more than the current bet: holdem also
    allows a raise nobody can match (the excess comes back), PokerKit does not; with equal
    stacks, as in play and in matches, that never happens."""
    rng = np.random.default_rng(25)
    hands = []
    for number in range(400):
        n = int(rng.integers(2, 7))
        stacks = tuple(int(s) for s in rng.integers(30, 800, size=n))
        state = HandState(TableConfig(stacks=stacks, small_blind=5, big_blind=10,
                                      ante=int(rng.integers(0, 3))), rng=rng)
        while not state.is_terminal:
            legal, me = state.legal_actions(), state.to_act
            matched = any(state.street_commitments[q] + state.stacks[q] > state.bet_to
                          for q in range(n) if q != me and not state.folded[q])
            if legal.min_to and matched and rng.random() < 0.35:
                kind = ActionKind.BET if ActionKind.BET in legal else ActionKind.RAISE
                to = legal.max_to if rng.random() < 0.3 else int(
                    rng.integers(legal.min_to, legal.max_to + 1))
                state.apply(Action(kind, to))
            else:
                kinds = [k for k in legal.kinds if k in (ActionKind.CHECK, ActionKind.CALL)]
                fold = ActionKind.FOLD in legal and rng.random() < 0.2
                state.apply(Action.fold() if fold else Action(kinds[0]))
        hands.append(hh.hand_from_state(state, [f"P{q}" for q in range(n)],
                                        list(range(1, n + 1)), number + 1))
    assert check_replays(pokerkit, hands, hh.dumps(hands)) > 100


# -- matches --------------------------------------------------------------------------------
@pytest.mark.parametrize("opponent", ["equity", "random", "blueprint"])
def test_a_heads_up_match_log_is_the_match_and_replays(pokerkit, hunl_run, opponent):
    """The logged hands are the first hands of the match (A's chips per deal are the match's
    samples) and replay in PokerKit; the samples do not depend on the log."""
    bp = holdem.Blueprint.load(hunl_run)
    store = blueprint_store(bp).arrays
    args = (None, store) if opponent == "blueprint" else (opponent, None)
    full, correction = match_samples(bp.game, store, *args, hands=3000, seed=4)
    log, plain = match_log(bp.game, store, *args, hands=600, seed=4)
    np.testing.assert_array_equal(plain, full[:300])
    again, again_correction = match_samples(bp.game, store, *args, hands=3000, seed=4,
                                            log=log)
    np.testing.assert_array_equal(again, full)
    np.testing.assert_array_equal(again_correction, correction)
    net_a = log.net[np.arange(600), log.seat_a].reshape(300, 2).mean(axis=1)
    np.testing.assert_array_equal(net_a, plain)
    assert np.array_equal(log.seat_a, np.tile([0, 1], 300))
    assert np.array_equal(log.hole[0::2], log.hole[1::2])              # duplicate deals
    hands = hh.hands_from_log(log, bp.game.rules.table, "a", "b")
    assert check_replays(pokerkit, hands, hh.dumps(hands)) > 30


@pytest.mark.parametrize("opponent", ["random", "call", "pot"])
def test_a_three_player_match_log_is_the_match_and_replays(pokerkit, three_way, opponent):
    bp = three_way
    store = blueprint_store(bp).arrays
    full, _ = match_samples(bp.game, store, opponent, hands=1500, seed=2)
    hands = head_to_head_hands(bp, opponent, 900, seed=2)
    assert len(hands) == 900 and [h.number for h in hands[:4]] == [1, 2, 3, 4]
    net_a = np.array([h.net[h.seats.index(1)] for h in hands]).reshape(300, 3).mean(axis=1)
    np.testing.assert_allclose(net_a, full[:300])
    assert {h.players[h.seats.index(1)] for h in hands} == {
        f"A: blueprint {bp.checkpoint.path}"}
    assert hands[4].players[(hands[4].seats.index(1) + 1) % 3] == f"B1: {opponent} bot"
    assert [h.extra["_deal"] for h in hands[:4]] == [1, 1, 1, 2]
    assert check_replays(pokerkit, hands, hh.dumps(hands)) > 30


# -- the commands ---------------------------------------------------------------------------
def _run(module, *args, stdin=None):
    return subprocess.run([sys.executable, "-m", f"holdem.cli.{module}", *map(str, args)],
                          input=stdin, capture_output=True, text=True, timeout=600)


def test_play_writes_every_finished_hand(pokerkit, hunl_run, tmp_path):
    path = tmp_path / "session.phhs"
    moves = "c\nr 300\nc\nb 400\nc\nf\na\nc\nk\nc\nc\nc\nc\nr 7bb\nc\nc\nc\nc\nc\n" * 6
    proc = _run("play", "--checkpoint", hunl_run, "--seed", 5, "--hands", 5, "--big-blind", 50,
                "--stack", 40, "--history", path, stdin=moves + "q\n")
    assert proc.returncode == 0, proc.stderr
    assert f"Hand history: 5 hands in {path} (PHH)" in proc.stdout
    text = path.read_text()
    assert text.startswith(hh.SIGNATURE) and "# Amounts are chips: 50 chips = 1 big blind." in text
    replayed = replay(pokerkit, text)
    assert len(replayed) == 5
    results = [int(m[1]) * (1 if m[0] == "win" else -1) for m in
               re.findall(r"^Result: you (win|lose|split, net) (\d+) chips", proc.stdout, re.M)]
    cards = re.findall(r"^Your cards: (\w\w \w\w)", proc.stdout, re.M)
    for number, ((history, stacks), won, mine) in enumerate(zip(replayed, results, cards), 1):
        assert history.hand == number and stacks == history.finishing_stacks
        assert history.starting_stacks == [2000, 2000] and history.blinds_or_straddles == [25, 50]
        you = history.players.index("You")
        assert history.seats[you] == 1 and history.players[1 - you].startswith("Bot: blueprint")
        assert stacks[you] - 2000 == won
        assert f"d dh p{you + 1} {mine.replace(' ', '')}" in history.actions
    assert {h.players.index("You") for h, _ in replayed} == {0, 1}    # the button moves


def test_play_keeps_finished_hands_when_the_session_stops(pokerkit, hunl_run, tmp_path):
    path = tmp_path / "s.phhs"
    proc = _run("play", "--checkpoint", hunl_run, "--seed", 2, "--history", path,
                stdin="f\nf\nf\nq\n")
    assert proc.returncode == 0, proc.stderr
    finished = proc.stdout.count("Result: you ")
    assert len(replay(pokerkit, path.read_text())) == finished >= 1
    nothing = _run("play", "--checkpoint", hunl_run, "--seed", 2, "--history", path, stdin="q\n")
    assert nothing.returncode == 0 and "Hand history: 0 hands" in nothing.stdout
    assert replay(pokerkit, path.read_text()) == []             # the file was replaced


def test_eval_writes_the_first_hands_of_each_match_and_its_numbers_do_not_change(
        pokerkit, hunl_run, tmp_path):
    path = tmp_path / "match.phhs"
    base = ("eval_blueprint", "--checkpoint", hunl_run, "--vs", "equity", "--vs-checkpoint",
            hunl_run, "--hands", 1000, "--seed", 3)
    plain = _run(*base)
    logged = _run(*base, "--history", path, "--history-hands", 25)
    assert plain.returncode == 0 and logged.returncode == 0, logged.stderr
    numbers = [line for line in logged.stdout.splitlines() if "mbb/hand" in line]
    assert len(numbers) == 2 and numbers == [line for line in plain.stdout.splitlines()
                                             if "mbb/hand" in line]
    assert f"history: 50 hands in {path} (PHH)" in logged.stdout
    replayed = replay(pokerkit, path.read_text())
    # One file, one numbering: the second match's hands go on from 26 (they restarted at 1,
    # issue 40); each match's own deals are its hands' _deal.
    assert [h.hand for h, _ in replayed] == list(range(1, 51))
    assert [h.user_defined_fields["_deal"] for h, _ in replayed] == [
        hand // 2 + 1 for hand in range(25)] * 2
    assert all(stacks == h.finishing_stacks for h, stacks in replayed)
    assert "vs equity bot" in replayed[0][0].event and "vs blueprint" in replayed[25][0].event
    bp = holdem.Blueprint.load(hunl_run)
    hands = head_to_head_hands(bp, "equity", 25, seed=3)
    assert [h.actions for h, _ in replayed[:25]] == [hh.phh_actions(h) for h in hands]


@pytest.fixture(scope="module")
def checkpoint(hunl_run):
    """The checkpoint file itself (a logdir would add a line naming it on stderr)."""
    return next((hunl_run / "checkpoints").glob("*.ckpt"))


def _parse_error(*args):
    from holdem.cli import eval_blueprint

    with pytest.raises(SystemExit) as stop:
        eval_blueprint.main([str(a) for a in args])
    return stop.value.code


@pytest.mark.parametrize("args,message", [
    (["--vs", "call", "--history-hands", 5], "--history-hands needs --history FILE"),
    (["--vs", "call", "--history", "X", "--history-hands", -3],
     "--history-hands must be positive, got -3"),
    (["--vs", "call", "--history", "X", "--history-hands", 0],
     "--history-hands must be positive, got 0"),
    (["--lbr", "--history", "X"], "--history writes the hands of a match"),
    # It wrote 1,000 hands without a word (issue 40).
    (["--vs", "call", "--hands", 1000, "--history", "X", "--history-hands", 5000],
     "--history-hands 5000 is more than the match's --hands 1000"),
])
def test_eval_history_argument_errors(checkpoint, tmp_path, capsys, args, message):
    args = [str(tmp_path / "h.phhs") if a == "X" else a for a in args]
    assert _parse_error("--checkpoint", checkpoint, *args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_history_never_replaces_other_files(checkpoint, tmp_path, capsys):
    other = tmp_path / "notes.txt"
    other.write_text("my notes\n")
    assert _parse_error("--checkpoint", checkpoint, "--vs", "call", "--history", other) == 2
    assert "exists and is not a hand history written by holdem" in capsys.readouterr().err
    assert _parse_error("--checkpoint", checkpoint, "--vs", "call", "--history", tmp_path) == 2
    assert "is a directory" in capsys.readouterr().err
    proc = _run("play", "--checkpoint", checkpoint, "--history", other, stdin="q\n")
    assert proc.returncode == 2 and "not a hand history written by holdem" in proc.stderr
    assert other.read_text() == "my notes\n"


def test_writes_are_atomic(tmp_path):
    """A write that fails leaves the previous file whole and no temporary file behind; the
    history file has every hand after each one."""
    path = tmp_path / "h.phhs"
    state = HandState(TableConfig(stacks=(100, 100), small_blind=1, big_blind=2),
                      hole_cards=["As Ad", "7c 2d"], board="Kh 9s 4c 3d 2h")
    state.apply(Action.fold())
    hand = hh.hand_from_state(state, ["a", "b"], [1, 2], 1)
    history = hh.HistoryFile(path, ["c"])
    assert path.read_text() == hh.SIGNATURE + "\n# c\n"
    history.add(hand)
    history.add(hand)
    before = path.read_text()
    assert before.count("[2]\n") == 1
    with pytest.raises(AttributeError):
        history.add(object())
    assert path.read_text() == before
    assert sorted(p.name for p in Path(tmp_path).iterdir()) == ["h.phhs"]
