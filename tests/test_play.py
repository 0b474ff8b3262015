"""Playing against a blueprint: label -> real action mapping, input handling, the CLI."""

import re
import subprocess
import sys

import numpy as np
import pytest

import holdem
from holdem import config as config_mod
from holdem.analysis.bot import BlueprintBot, bot_action
from holdem.cli.play import PlaySession, parse_command
from holdem.games import make_game
from holdem.games.nlhe.records import Action, ActionKind, TableConfig
from holdem.games.nlhe.rules import HandState
from holdem.solver.solver import Solver
from holdem.solver.solver import save_solver


@pytest.fixture(scope="module")
def bp(hunl_run):
    return holdem.Blueprint.load(hunl_run)


def _state(stacks=(10_000, 10_000)):
    return HandState(TableConfig(stacks=stacks, small_blind=50, big_blind=100),
                     hole_cards=[[51, 47], [0, 5]], board=[10, 20, 30, 40, 44])


def test_bot_labels_map_to_legal_real_actions():
    state = _state()                                     # SB to act, facing the big blind
    legal = state.legal_actions()
    assert bot_action("f", legal) == Action.fold()
    assert bot_action("c", legal) == Action.call()
    assert bot_action("r2.5b", legal, 250) == Action.raise_to(250)
    assert bot_action("r2.5b", legal, 120) == Action.raise_to(200)       # up to the min raise
    assert bot_action("r1p", legal, 50_000) == Action.raise_to(10_000)   # down to the stack
    assert bot_action("a", legal) == Action.raise_to(10_000)
    state.do_call()                                      # BB: nothing to call
    legal = state.legal_actions()
    assert bot_action("f", legal) == Action.check() and bot_action("c", legal) == Action.check()
    assert bot_action("r0.5p", legal, 300) == Action.raise_to(300)
    state.do_check()                                     # flop: a bet, not a raise
    assert bot_action("r0.5p", state.legal_actions(), 100) == Action.bet(100)
    short = _state(stacks=(10_000, 300))                 # BB cannot raise over a 400 open
    short.do_raise(400)
    legal = short.legal_actions()
    for label in ("c", "r1p", "a"):
        assert bot_action(label, legal, 900) == Action.call()
    assert bot_action("f", legal) == Action.fold()


def test_parse_command():
    assert parse_command("c", 100) == ("checkcall", None)
    assert parse_command(" K ", 100) == ("check", None)
    assert parse_command("b 300", 100) == ("wager", 300)
    assert parse_command("r 7bb", 100) == ("wager", 700)
    assert parse_command("raise 2.5bb", 2) == ("wager", 5)
    for text in ("a", "?", "p", "q", "f"):
        assert parse_command(text, 100)[1] is None
    for text, message in [("", "empty"), ("x", "unknown command"), ("r", "needs one amount"),
                          ("r lots", "bad amount"), ("r 1.5", "not a positive whole"),
                          ("c 100", "takes no amount")]:
        with pytest.raises(ValueError, match=message):
            parse_command(text, 100)


def _random_action(state, rng):
    legal = state.legal_actions()
    kinds = [k for k in legal.kinds if k not in (ActionKind.BET, ActionKind.RAISE)]
    if legal.min_to and rng.random() < 0.4:
        kind = ActionKind.BET if ActionKind.BET in legal else ActionKind.RAISE
        return Action(kind, int(rng.integers(legal.min_to, legal.max_to + 1)))
    return Action(kinds[int(rng.integers(len(kinds)))])


@pytest.mark.parametrize("big_blind,stack_bb", [(100, 100), (2, 100), (100, 40)])
def test_bot_always_acts_legally_against_random_play(bp, big_blind, stack_bb):
    rng = np.random.default_rng(big_blind + stack_bb)
    bot = BlueprintBot(bp, big_blind, np.random.default_rng(1))
    config = TableConfig(stacks=(stack_bb * big_blind,) * 2, small_blind=big_blind // 2,
                         big_blind=big_blind)
    decisions = on_tree = 0
    for hand in range(150):
        state, bot_seat = HandState(config, rng=rng), hand % 2
        while not state.is_terminal:
            if state.to_act == bot_seat:
                decision = bot.decide(state)
                assert state.can(decision.action), (decision, state)
                decisions += 1
                on_tree += decision.probs is not None
                if decision.labels == [] and decision.label == "r2.5b":   # open: 2.5 bb
                    assert decision.action == Action.raise_to(5 * big_blind // 2)
                state.apply(decision.action)
            else:
                state.apply(_random_action(state, rng))
        assert sum(state.payoffs()) == 0
    assert decisions > 150 and on_tree > decisions // 2


def test_bot_reads_an_off_tree_open_at_random_and_keeps_its_reading(bp):
    """Against a 7 bb open (the tree has 2.5 bb and all-in) the bot reads r2.5b about 42% of
    the hands (pseudo-harmonic), all-in otherwise, and keeps one reading through a hand."""
    from holdem.abstraction.actions import pseudo_harmonic

    bot = BlueprintBot(bp, 100, np.random.default_rng(2))
    config = TableConfig(stacks=(10_000, 10_000), small_blind=50, big_blind=100)
    reads = []
    for hand in range(600):
        state = HandState(config, rng=np.random.default_rng(hand))
        state.apply(Action.raise_to(700))                   # the human, small blind, opens 7 bb
        labels, notes = bot.translate(state)
        reads.append(labels[0])
        assert notes[0].options[0][:2] == ("r2.5b", 0.75) and notes[0].options[1][0] == "a"
        decision = bot.decide(state)
        assert decision.labels == labels and bot.translate(state)[0] == labels
        if decision.label == "c" and labels == ["r2.5b"]:
            state.apply(decision.action)                    # the flop: same reading
            assert bot.translate(state)[0][:1] == labels
    share = reads.count("r2.5b") / len(reads)               # 0.417, sd 0.02
    assert abs(share - pseudo_harmonic(3.0, 0.75, 49.5)) < 0.07 and "a" in reads


def _game(bp, lines, seed=7, show_probs=False, **session):
    """(a PlaySession whose input is ``lines``, then end of input; what it wrote)."""
    out, feed = [], iter(lines)

    def read(prompt):
        out.append(prompt)
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None
    game = PlaySession(bp, seed=seed, stack=10_000, big_blind=100, show_probs=show_probs,
                       read=read, write=out.append, **session)
    return game, out


def test_illegal_and_unknown_input_reprompts(bp):
    game, out = _game(bp, ["k", "r 50", "r 20000", "xyz", "?", "p", "c"] + ["c"] * 30 + ["q"])
    game.play(2)
    text = "\n".join(out)
    assert "Illegal: you cannot check" in text and "Illegal: player" not in text
    assert "below the minimum raise to 200" in text and "more than your all-in" in text
    assert "unknown command 'xyz'" in text
    assert "legal: f (fold), c (call 50), r (raise to 200..10000), a (all-in: 10000)" in text
    assert "bot probabilities on" in text
    assert out.count("hand 1, your action (? for help): ") >= 7          # asked again each time
    assert text.count("Result: you ") == 2 and game.hands == 2
    assert "Final: " in out[-1] and "over 2 hands" in out[-1]


def test_rules_messages_are_said_to_you():
    from holdem.cli.play import to_you

    assert to_you("player 1 cannot raise: the betting was not reopened (it rose by 50 since "
                  "they acted, less than a full raise of 100); they may only call or fold", 1) \
        == ("you cannot raise: the betting was not reopened (it rose by 50 since you acted, "
            "less than a full raise of 100); you may only call or fold")
    assert to_you("player 0 cannot bet: their stack only covers a call", 0) == \
        "you cannot bet: your stack only covers a call"
    assert to_you("raise to 9 is more than player 2's all-in total of 8", 2) == \
        "raise to 9 is more than your all-in total of 8"


def test_same_seed_same_game_and_eof_stops_cleanly(bp):
    first, out1 = _game(bp, ["c"] * 12, seed=3, show_probs=True)
    second, out2 = _game(bp, ["c"] * 12, seed=3, show_probs=True)
    first.play()
    second.play()
    assert out1 == out2 and "End of input: stopping." in "\n".join(out1)
    assert re.search(r"bot strategy at \[.*\]: ", "\n".join(out1))
    totals = re.findall(r"Running total: ([+-][\d.]+) bb", "\n".join(out1))
    assert len(totals) == first.hands and float(totals[-1]) == first.total / 100


def _cli(*args, stdin="", timeout=120):
    return subprocess.run([sys.executable, "-m", "holdem.cli.play", *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout)


def test_cli_plays_hands_to_completion(hunl_run):
    proc = _cli("--checkpoint", str(hunl_run), "--seed", "11", "--hands", "3",
                stdin="c\n" * 60 + "q\n")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "seed 11" in out and "=== Hand 3:" in out and "=== Hand 4:" not in out
    assert len(re.findall(r"^Result: you (win|lose|split)", out, re.M)) == 3
    assert re.search(r"^Final: [+-][\d.]+ bb over 3 hands", out, re.M)
    assert "you are the small blind (button)" in out and "you are the big blind" in out
    lines = re.findall(r"^Line: (.*) \(the bot's tree;", out, re.M)
    assert len(lines) == 3
    bp = holdem.Blueprint.load(hunl_run)
    for line in lines:                       # the notation --spot and query take
        labels = bp.line_labels(line)
        assert labels == line.split()
        bp.node_of(labels[:-1])              # every prefix is on the tree (no ValueError)


def test_cli_shows_how_the_bot_reads_an_off_tree_bet(hunl_run):
    proc = _cli("--checkpoint", str(hunl_run), "--seed", "4", "--hands", "1",
                stdin="r 7bb\n" + "c\n" * 30)
    assert proc.returncode == 0, proc.stderr
    assert "You raise to 700\n  (3.00 x pot is not a size of the bot's tree: it reads it as " \
           "r2.5b (raise to 2.5 bb) 42% or a (all-in: raise to 100 bb) 58% (pseudo-harmonic on " \
           "the real pot, drawn once per hand))" in proc.stdout
    on_tree = _cli("--checkpoint", str(hunl_run), "--seed", "4", "--hands", "1",
                   stdin="r 250\n" + "c\n" * 30)
    assert "You raise to 250\n" in on_tree.stdout and "size of the bot's tree" not in on_tree.stdout


def test_cli_illegal_action_and_quit(hunl_run):
    proc = _cli("--checkpoint", str(hunl_run), "--seed", "1", stdin="k\nq\n")
    assert proc.returncode == 0, proc.stderr
    assert "Illegal: you cannot check" in proc.stdout
    assert proc.stdout.count("your action (? for help):") == 2
    assert "Quit (hand 1 not counted)." in proc.stdout and "Traceback" not in proc.stderr
    eof = _cli("--checkpoint", str(hunl_run), "--seed", "1", "--show-probs")
    assert eof.returncode == 0 and "End of input: stopping." in eof.stdout


def test_cli_errors_are_one_line(hunl_run, tmp_path):
    proc = _cli("--checkpoint", str(tmp_path / "missing"))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    cfg = config_mod.default_for_game("leduc")
    solver = Solver(make_game(cfg), cfg)
    solver.run(100)
    save_solver(solver, tmp_path / "leduc" / "checkpoints" / "ckpt-000000000100.ckpt")
    leduc = _cli("--checkpoint", str(tmp_path / "leduc"))
    assert leduc.returncode == 2 and "needs a No-Limit Hold'em blueprint" in leduc.stderr
    usage = _cli("--help")
    assert usage.returncode == 0 and "--show-probs" in usage.stdout and "--hands" in usage.stdout
