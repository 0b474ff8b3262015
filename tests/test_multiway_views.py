"""Six-max views (issue 40, point 1): every view says which strategy it shows -- the average, or
where training kept none (``solver.average_max_street: 0``) the current strategy with that
reason, never a silent uniform -- and the range view and charts give one range per player still
in the hand."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

import holdem
from holdem import config as config_mod
from holdem.cards import parse
from holdem.games import make_game

ROOT = Path(__file__).resolve().parents[1]
NO_AVERAGE = ("current strategy (regret matching; solver.average_max_street: 0 keeps no average "
              "after the preflop)")
LINE, FLOP = "f f r2.5b f f c", "2c 7h 9d"        # the cutoff opens, the big blind calls


def _train(config, iterations, logdir):
    from holdem.solver.solver import Solver, save_solver

    solver = Solver(make_game(config), config)
    solver.run(iterations)
    save_solver(solver, logdir / "checkpoints" / f"ckpt-{iterations:012d}.ckpt")
    return logdir


@pytest.fixture(scope="module")
def six_max(tmp_path_factory):
    """``configs/6max.yaml`` (average strategy kept preflop only), 20,000 iterations."""
    config = config_mod.load(ROOT / "configs" / "6max.yaml")
    return holdem.Blueprint.load(_train(config, 20_000, tmp_path_factory.mktemp("six_max")))


def _regret_matching(bp, key, na):
    return bp.strategy(key, na, average=False)


def test_a_spot_with_no_average_kept_shows_the_current_strategy_and_says_so(six_max, capsys):
    from holdem.cli.inspect_blueprint import main

    bp = six_max
    spot = bp.spot(LINE, "Qs Qd", FLOP)
    assert spot.street == 1 and spot.player == 1 and spot.visited
    assert spot.strategy_name == NO_AVERAGE
    np.testing.assert_allclose(spot.strategy, _regret_matching(bp, spot.key, len(spot.labels)))
    assert bp.strategy(spot.key, len(spot.labels)).tolist() == [0.25] * 4   # sums: none kept
    assert bp.query(LINE, "Qs Qd", FLOP) == dict(zip(spot.labels, spot.strategy.tolist()))
    preflop = bp.spot("f f", "Qs Qd")
    assert preflop.strategy_name == "average strategy"
    assert bp.spot(LINE, "Qs Qd", FLOP, average=False).strategy_name == (
        "current (regret matching) strategy")
    assert main(["--checkpoint", str(bp.checkpoint.path), "--spot",
                 f"{LINE} | Qs Qd | {FLOP}"]) == 0
    out = capsys.readouterr().out
    assert f"{NO_AVERAGE} after 20,000 iterations:" in out
    assert "average strategy after" not in out


def test_six_max_range_has_one_range_per_player_still_in_the_hand(six_max):
    """After UTG and hijack fold, the cutoff opens, the button and small blind fold and the big
    blind calls: two ranges, the cutoff's (seat 4) and the big blind's. Each combo's reach is
    the product of its player's own action probabilities along the line, as ``spot`` gives
    them (the average strategy preflop), and the mix at the node is ``spot``'s (current)."""
    bp = six_max
    r = bp.range(LINE, FLOP)
    assert r.players == (1, 4) and r.player == 1 and r.street == 1
    assert r.seats[4] == "cutoff" and r.strategy_name == (
        "average strategy up to the preflop, then " + NO_AVERAGE)
    assert r.reach.shape == (6, 1176) and r.weight.shape == (6, 1176)
    assert (r.weight[[0, 2, 3, 5]] == 0).all() and (r.weight[[1, 4]] > 0).any()
    labels = bp.line_labels(LINE)
    rng = np.random.default_rng(5)
    for i in rng.choice(r.combos.shape[0], 12, replace=False):
        hole = r.combos[i].tolist()
        for seat in (1, 4):
            expected = 1.0
            for k, label in enumerate(labels):
                spot = bp.spot(labels[:k], hole)
                if spot.player == seat:
                    expected *= spot.strategy[spot.labels.index(label)]
            assert r.reach[seat, i] == pytest.approx(expected, rel=1e-9)
        spot = bp.spot(labels, hole, FLOP)
        np.testing.assert_allclose(r.mix[i], spot.strategy, rtol=1e-12)
        assert r.buckets[i] == spot.bucket
    # Card removal: a combo's weight is its reach times the opponent's reach on the combos
    # that share no card with it (heads-up at the node: exact, as in the heads-up view).
    assert r.weight[1].sum() == pytest.approx(r.weight[4].sum(), rel=1e-9)
    assert r.line_probability == pytest.approx(r.weight[1].sum())
    assert not any(set(c) & set(parse(FLOP)) for c in r.combos.tolist())


def test_three_players_in_the_hand_each_get_a_range(six_max, tmp_path, capsys):
    from holdem.cli.inspect_blueprint import main

    bp = six_max
    r = bp.range("f f c f c c", FLOP)                       # a limped flop: cutoff, SB, BB
    assert r.players == (0, 1, 4) and r.player == 0
    assert all((r.weight[p] > 0).any() for p in r.players)
    out = tmp_path / "limped.csv"
    assert main(["--checkpoint", str(bp.checkpoint.path), "--range", f"f f c f c c | {FLOP}",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.count("reach % per class") == 3 and "player 4 (cutoff) reach" in text
    assert "range string, player 4: " in text and "range string, player 2" not in text
    assert NO_AVERAGE in text.splitlines()[0]
    header = out.read_text().splitlines()[0].split(",")
    assert header[:9] == ["combo", "class", "bucket", "reach_p0", "reach_p1", "reach_p4",
                          "weight_p0", "weight_p1", "weight_p4"]


def test_six_max_charts_name_the_seat_and_the_strategy(six_max):
    from holdem.analysis.ranges import charts

    bp = six_max
    chart = charts.range_chart(bp, LINE, board=FLOP)
    assert chart.seat == "big blind" and NO_AVERAGE in chart.strategy
    text = charts.format_terminal(chart, color=False)
    assert text.splitlines()[0].startswith(f"big blind after {LINE} on {FLOP}")
    assert NO_AVERAGE in text.splitlines()[0]
    assert NO_AVERAGE in charts.to_html(chart)
    pre = charts.range_chart(bp, "f f")                     # the cutoff first in
    assert pre.seat == "cutoff" and pre.strategy == "average strategy"
    assert pre.mix("AA") == bp.query("f f", "Ah As")


def test_heads_up_export_and_range_use_the_current_strategy_where_no_average_is_kept(
        tmp_path, capsys):
    """A heads-up run with ``average_max_street: 0``: the export's flop records hold the
    current strategy (not a uniform one) and the file says so; the range view's mix too."""
    from holdem.cli.export_strategy import main

    data = config_mod.to_dict(config_mod.load(ROOT / "configs" / "hunl_default.yaml"))
    data["solver"]["average_max_street"] = 0
    logdir = _train(config_mod.from_dict(data, source="test"), 3000, tmp_path / "avg0")
    out = tmp_path / "avg0.json"
    assert main(["--checkpoint", str(logdir), "--out", str(out)]) == 0
    assert NO_AVERAGE in capsys.readouterr().err
    export = json.loads(out.read_text())
    assert export["strategy"] == "average strategy up to the preflop, then " + NO_AVERAGE
    bp = holdem.Blueprint.load(logdir)
    flop = [r for r in export["infosets"] if r["street"] == "flop"]
    assert flop and not all(r["strategy"] == [1 / len(r["actions"])] * len(r["actions"])
                            for r in flop)
    for record in flop[:50]:
        labels = bp.line_labels(record["history"])
        node = bp.node_of(labels)
        key = int(bp.game.tree.history[node]) * bp.game.bucket_stride + record["bucket"]
        np.testing.assert_allclose(record["strategy"],
                                   bp.strategy(key, len(record["actions"]), average=False))
    r = bp.range("r2.5b c", FLOP)
    spot = bp.spot("r2.5b c", r.combos[0][::-1].tolist(), FLOP)
    assert spot.strategy_name == NO_AVERAGE
    np.testing.assert_allclose(r.mix[0], spot.strategy, rtol=1e-12)


def test_six_max_flop_export_holds_the_current_strategy_and_says_so(six_max, tmp_path, capsys):
    """A six-max export lists the flop (walking the histories training visited), its records
    hold the current strategy where training kept no average, and the file says so."""
    from holdem.cli.export_strategy import main

    bp = six_max
    out = tmp_path / "flop.json"
    assert main(["--checkpoint", str(bp.checkpoint.path), "--out", str(out), "--street",
                 "flop", "--player", "1"]) == 0
    assert NO_AVERAGE in capsys.readouterr().err
    export = json.loads(out.read_text())
    assert export["strategy"] == NO_AVERAGE
    flop = export["infosets"]
    assert len(flop) > 100 and {(r["street"], r["player"]) for r in flop} == {("flop", 1)}
    line = [r for r in flop if r["history"] == "ffr2.5ffc/"]
    assert line and line[0]["actions"] == list(bp.spot(LINE, "Qs Qd", FLOP).labels)
    for record in flop[:: max(1, len(flop) // 40)] + line:
        node = bp.multiway_node(bp.line_labels(record["history"]))
        assert node.street == 1 and node.player == 1
        np.testing.assert_allclose(record["strategy"], _regret_matching(
            bp, node.infoset_key(record["bucket"]), len(record["actions"])))


# -- play at a six-max table -----------------------------------------------------------------

def test_the_bot_plays_every_seat_of_a_six_max_table_legally_and_on_its_tree(six_max):
    """Five bot seats against a random player: every bot action is legal, and while the real
    hand stays on the abstract game the bot follows its blueprint there (labels walk the
    multi-way game to the seat to act, with the blueprint's probabilities)."""
    from holdem.analysis.bot import BlueprintBot
    from holdem.games.nlhe.records import Action, ActionKind, TableConfig
    from holdem.games.nlhe.rules import HandState

    bp = six_max
    rng = np.random.default_rng(11)
    bot = BlueprintBot(bp, 100, np.random.default_rng(1))
    config = TableConfig(stacks=(10_000,) * 6, small_blind=50, big_blind=100)
    decisions = on_tree = 0
    for hand in range(40):
        state, human = HandState(config, rng=rng), hand % 6
        while not state.is_terminal:
            if state.to_act != human:
                decision = bot.decide(state)
                assert state.can(decision.action), (decision, state)
                decisions += 1
                if decision.probs is not None:
                    on_tree += 1
                    assert bp.actions_at(decision.labels)[0] == state.to_act
                    assert decision.probs == bp.query(decision.labels,
                                                      state.hole_cards[state.to_act],
                                                      state.board)
                state.apply(decision.action)
                continue
            legal = state.legal_actions()
            passive = [k for k in legal.kinds if k not in (ActionKind.BET, ActionKind.RAISE)]
            if legal.min_to and rng.random() < 0.3:
                kind = ActionKind.BET if ActionKind.BET in legal else ActionKind.RAISE
                state.apply(Action(kind, int(rng.integers(legal.min_to, legal.max_to + 1))))
            else:
                state.apply(Action(passive[int(rng.integers(len(passive)))]))
        assert sum(state.payoffs()) == 0
    assert decisions > 150 and on_tree > 0.8 * decisions


def test_play_seats_you_at_a_six_max_table_with_five_bots(six_max, tmp_path):
    from holdem.analysis.matches.hand_history import HistoryFile
    from tests.test_play import _game

    history = HistoryFile(tmp_path / "six.phhs")
    game, out = _game(six_max, ["c"] * 200, seed=5, show_probs=True, history=history)
    assert game.play(6) == 6
    text = "\n".join(out)
    seats = ("small blind", "big blind", "UTG", "hijack", "cutoff", "button")
    for k, seat in enumerate(seats, 1):
        assert f"=== Hand {k}: you are the {seat}, bots in the other 5 seats" in text
    bots = {m for m in re.findall(r"^Bot \(([\w ]+)\) (?:folds|checks|calls|bets|raises)", text,
                                  re.M)}
    assert bots == set(seats)
    assert text.count("Result: you ") == 6 and "Final: " in out[-1]
    assert re.search(r"bot strategy at \[.*\]: ", text)
    assert len(history.hands) == 6
    first = history.hands[0]
    assert len(first.players) == 6 and first.players.count("You") == 1
    assert first.seats[first.players.index("You")] == 1 and sorted(first.seats) == [1, 2, 3, 4,
                                                                                    5, 6]
    assert sum(sum(hand.net) for hand in history.hands) == 0


def test_play_cli_on_a_six_max_checkpoint(six_max):
    import subprocess
    import sys

    path = str(six_max.checkpoint.path)
    proc = subprocess.run([sys.executable, "-m", "holdem.cli.play", "--checkpoint", path,
                           "--seed", "2", "--hands", "2"], input="c\n" * 60, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "you are the small blind, bots in the other 5 seats" in proc.stdout
    assert "over 2 hands" in proc.stdout
    resolve = subprocess.run([sys.executable, "-m", "holdem.cli.play", "--checkpoint", path,
                              "--resolve", "river"], capture_output=True, text=True, timeout=300)
    assert resolve.returncode == 2 and "heads-up only" in resolve.stderr
