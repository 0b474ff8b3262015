"""The study command ``solve_spot`` and :mod:`holdem.subgame.report`.

- At the root a report is the solver's own numbers (``values``, ``equity``, ``strategy``), and
  the two players' range EVs add up to the pot.
- At later nodes (after checks, facing a bet, after a river card of a turn spot) each combo's EV
  and equity match a slow reference that walks the tree for every pair of hands with the
  solved average strategies and the hand evaluator.
- Class rows are the weighted means of their combos; the menu flags shape the tree.
- A blueprint's node: pot and stacks in its chips, ranges = its reach (big blind out of
  position), its config's sizes, and a clear error for a line that is not a street's start.
- The command: memory, progress and result lines, CSV / HTML / PNG outputs agreeing with the
  Python report, and one-line errors naming the flag.

Ranges are small so every solve takes well under a second.
"""

import csv
import dataclasses
import html
import json
import re
from pathlib import Path

import numpy as np
import pytest

from holdem.cards import card_tuple
from holdem.evaluator import rank7
from holdem.subgame import BetMenu, Spot, SubgameSolver
from holdem.subgame.blueprint import blueprint_menu, blueprint_spot, street_start
from holdem.subgame.report import csv_rows, find_line, format_text, node_report, to_html
from holdem.subgame.solver import COMBOS, combo_index
from holdem.subgame.tree import CHANCE, DECISION, FOLD, RIVER, TURN
from test_cli import run

ROOT = Path(__file__).resolve().parents[1]
RIVER_ARGS = dict(board="Td 9d 6h Qc 2s", oop="QQ+,AK,T9s", ip="JJ-88,AQs,KJs", pot=10,
                  stack=45)
SMALL_MENU = BetMenu.uniform(bets=(1.0,), raises=(), all_in=False, max_raises=1)
TURN_ARGS = dict(board="Td 9d 6h Qc", oop="AA,KK,T9s", ip="JJ,88,AQs", pot=10, stack=20,
                 menu=SMALL_MENU)


def solved(target=0.5, **spot):
    solver = SubgameSolver(Spot.make(**spot))
    return solver.solve(target=target, max_iterations=400)


@pytest.fixture(scope="module")
def river():
    return solved(**RIVER_ARGS)


@pytest.fixture(scope="module")
def turn():
    return solved(**TURN_ARGS)


# -- a slow reference -------------------------------------------------------------------------
def reference(solver, line):
    """{combo: (EV, equity)} of the player to act after ``line``, by walking the tree for every
    pair of hands: EV = E[share of the final pot - chips in at the end] + chips in at the node
    over the other player's hands weighted by their reach there; equity = the pot share at
    showdown over the remaining rivers."""
    tree, spot = solver.tree, solver.spot
    node, _, river_card = find_line(solver, line)
    path = []
    n = node
    while n > 0:
        path.append(n)
        n = int(tree.parent[n])
    reach = [spot.ranges[p].copy() for p in (0, 1)]
    parent = 0
    for child in reversed(path):
        k = child - int(tree.first_child[parent])
        if tree.kind[parent] == DECISION:
            reach[int(tree.player[parent])] *= solver.strategy(parent)[k]
        elif tree.kind[parent] == CHANCE:
            for r in reach:
                r[(COMBOS == solver.river_cards[k]).any(axis=1)] = 0
        parent = child
    q = int(tree.player[node])
    board = list(spot.board) + ([river_card] if river_card is not None else [])
    strategies = {}

    def share(h, o, cards):
        mine, theirs = rank7(cards + list(COMBOS[h])), rank7(cards + list(COMBOS[o]))
        return 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0

    def value(n, h, o, cards):
        kind = int(tree.kind[n])
        pot = spot.pot + float(tree.invest[n].sum())
        if kind == FOLD:
            return (0.0 if int(tree.player[n]) == q else pot) - float(tree.invest[n, q])
        if kind == CHANCE:
            values = [value(child, h, o, cards + [int(card)])
                      for child, card in zip(tree.children(n), solver.river_cards)
                      if card not in COMBOS[h] and card not in COMBOS[o]]
            return float(np.mean(values))
        if kind != DECISION:
            return pot * share(h, o, cards) - float(tree.invest[n, q])
        if n not in strategies:
            strategies[n] = solver.strategy(n)
        combo = h if int(tree.player[n]) == q else o
        return sum(p * value(child, h, o, cards)
                   for p, child in zip(strategies[n][:, combo], tree.children(n)) if p > 0)

    def equity(h, o):
        if len(board) == 5:
            return share(h, o, board)
        return np.mean([share(h, o, board + [c]) for c in range(52)
                        if c not in board and c not in COMBOS[h] and c not in COMBOS[o]])

    out = {}
    for h in np.flatnonzero(reach[q] > 0):
        pairs = [(o, reach[1 - q][o]) for o in np.flatnonzero(reach[1 - q] > 0)
                 if not set(COMBOS[o]) & set(COMBOS[h])]
        total = sum(w for _, w in pairs)
        if total > 0:
            ev = sum(w * value(node, h, o, board) for o, w in pairs) / total
            eq = sum(w * equity(h, o) for o, w in pairs) / total
            out[int(h)] = (ev + float(tree.invest[node, q]), eq)
    return out


# -- the report -------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["river", "turn"])
def test_root_report_is_the_solvers_numbers_and_the_evs_add_up_to_the_pot(which, river, turn):
    solution = {"river": river, "turn": turn}[which]
    solver = solution.solver
    report = node_report(solution)
    assert report.player == 0 and report.line == () and report.pot == solver.spot.pot
    assert report.actions == solver.tree.child_labels(0)
    np.testing.assert_array_equal(report.combos, np.flatnonzero(solver.spot.ranges[0] > 0))
    np.testing.assert_allclose(report.ev, solver.values(0)[report.combos], rtol=1e-9)
    np.testing.assert_allclose(report.equity, solver.equity(0)[report.combos], rtol=1e-9)
    np.testing.assert_allclose(report.strategy, solver.strategy(0)[:, report.combos].T)
    # player 1's range EV from the solver, weighted the same way (reach x card removal)
    ranges = solver.spot.ranges
    cards = np.zeros((len(COMBOS), 52))
    cards[np.arange(len(COMBOS))[:, None], COMBOS] = 1
    disjoint = cards @ cards.T == 0
    weight1 = ranges[1] * (disjoint @ ranges[0])
    ev1 = np.nansum(weight1 * solver.values(1)) / weight1.sum()
    assert report.overall()["ev"] + ev1 == pytest.approx(solver.spot.pot, abs=1e-3)


@pytest.mark.parametrize("which, line", [
    ("river", "x"), ("river", "b5"), ("river", "x b5"), ("river", "b10 r40"),
    ("turn", "x"), ("turn", "b10"), ("turn", "x x 2s"), ("turn", "b10 c 8c x"),
])
def test_later_nodes_match_the_reference(which, line, river, turn):
    solution = {"river": river, "turn": turn}[which]
    report = node_report(solution, line)
    expected = reference(solution.solver, line)
    assert sorted(expected) == sorted(report.combos.tolist())
    ev = np.array([expected[c][0] for c in report.combos])
    equity = np.array([expected[c][1] for c in report.combos])
    np.testing.assert_allclose(report.ev, ev, atol=2e-4 * solution.solver.spot.stack)
    np.testing.assert_allclose(report.equity, equity, atol=1e-9)
    if " " in line and line.split()[-1] in ("2s", "8c"):
        river_card = card_tuple(line.split()[-1])[0]
        assert report.board == solution.solver.spot.board + (river_card,)
        assert report.street == RIVER
        assert not np.isin(COMBOS[report.combos], river_card).any()


def test_node_reach_is_the_range_times_the_own_strategy(river):
    solver = river.solver
    report = node_report(river, "x b5")       # player 0 again: its range after checking
    check = solver.strategy(0)[0]
    np.testing.assert_allclose(report.reach, (solver.spot.ranges[0] * check)[report.combos])
    assert report.to_call == 5 and report.pot == 15 and report.behind == 45
    assert report.names[:2] == ("fold", "call 5")
    assert report.names[-1] == "all-in: raise to 45"


def test_class_rows_are_weighted_means_of_their_combos(river):
    report = node_report(river)
    rows = report.by_class()
    assert list(rows)[:3] == ["AA", "KK", "QQ"]             # pairs first, then suited, offsuit
    assert rows["AA"]["combos"] == pytest.approx(6.0) and rows["QQ"]["combos"] == 3.0
    classes = np.array(report.classes())
    for name, row in rows.items():
        w = report.weight[classes == name]
        np.testing.assert_allclose(row["strategy"], w @ report.strategy[classes == name]
                                   / w.sum())
        assert row["ev"] == pytest.approx(w @ report.ev[classes == name] / w.sum())
    total = report.overall()
    assert total["strategy"].sum() == pytest.approx(1.0)
    assert total["combos"] == pytest.approx(report.reach.sum())
    grid = report.grid()
    assert grid["combos"][0, 0] == pytest.approx(6.0)             # AA, top left
    assert grid["combos"][0, 1] == pytest.approx(4.0)             # AKs
    assert grid["combos"][1, 0] == pytest.approx(12.0)            # AKo
    assert np.isnan(grid["ev"][12, 12])                           # 22: out of the range
    text = format_text(report)
    assert re.search(r"^AA\s+6\.00\s", text, re.M) and re.search(r"^all\s", text, re.M)
    assert "AsKs" in format_text(report, combos=True)


def test_find_line_errors_say_what_is_wrong(turn):
    solver = turn.solver
    with pytest.raises(ValueError, match="'b3' is not an action after the root"):
        find_line(solver, "b3")
    with pytest.raises(ValueError, match="ends where the river is dealt: add its card"):
        find_line(solver, "x x")
    with pytest.raises(ValueError, match="Qc is on the board"):
        find_line(solver, "x x Qc")
    with pytest.raises(ValueError, match="ends the hand"):
        find_line(solver, "b10 f")


# -- blueprint spots --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bp(untrained):
    from holdem import Blueprint

    return Blueprint.load(untrained)


def test_blueprint_spot_takes_the_nodes_pot_stacks_ranges_and_sizes(bp, monkeypatch):
    board = "Ah 7d 2c 9s"
    spot, start = blueprint_spot(bp, "r2.5b c c c", board)
    assert start.street == TURN and start.big_blind == 100
    assert (spot.pot, spot.stack) == (500.0, 9750.0)          # 2.5 bb each of 100 bb, in chips
    # the untrained blueprint's two reaches are equal: halve the small blind's to tell them apart
    real = bp.range("r2.5b c c c", board)
    node_range = dataclasses.replace(real, reach=real.reach * np.array([[0.5], [1.0]]))
    monkeypatch.setattr(bp, "range", lambda *args, **kwargs: node_range)
    spot, _ = blueprint_spot(bp, "r2.5b c c c", board)
    monkeypatch.undo()
    rows = [combo_index(a, b) for a, b in node_range.combos.tolist()]
    np.testing.assert_array_equal(spot.ranges[0][rows], node_range.reach[1])   # big blind: OOP
    np.testing.assert_array_equal(spot.ranges[1][rows], node_range.reach[0])
    assert spot.ranges[0].sum() == pytest.approx(2 * spot.ranges[1].sum())
    assert spot.menu == (blueprint_menu(bp, TURN),) * 2
    menu = spot.menu[0]
    assert menu.bets == {TURN: (0.5, 1.0), RIVER: (0.5, 1.0)} and menu.raises[TURN] == (1.0,)
    assert menu.all_in and menu.max_raises == 2
    river_spot, start = blueprint_spot(bp, "r2.5b c r0.5p c c c", board + " 3d")
    assert start.street == RIVER and (river_spot.pot, river_spot.stack) == (1000.0, 9500.0)


@pytest.mark.parametrize("line, message", [
    ("r2.5b c", "reaches the start of the flop"),
    ("r2.5b c c c c", "reaches a turn decision"),
    ("r2.5b f", "ends the hand"),
])
def test_blueprint_lines_must_reach_the_start_of_the_turn_or_river(bp, line, message):
    with pytest.raises(ValueError, match=message):
        street_start(bp, line)


# -- the command ------------------------------------------------------------------------------
def solve_spot(capsys, *args):
    """(exit status, stdout, stderr) of the command run in this process."""
    from holdem.cli.solve_spot import main

    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


SPOT_FLAGS = ["--oop", RIVER_ARGS["oop"], "--ip", RIVER_ARGS["ip"], "--board",
              RIVER_ARGS["board"], "--pot", 10, "--stack", 45]


def test_command_end_to_end_with_every_output(tmp_path):
    out_csv, page, png = tmp_path / "spot.csv", tmp_path / "spot.html", tmp_path / "spot.png"
    pytest.importorskip("matplotlib")
    proc = run("solve_spot", *SPOT_FLAGS, "--target", 0.5, "--at", "x b5", "--out", out_csv,
               "--html", page, "--png", png)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("river spot, board Td 9d 6h Qc 2s; pot 10, 45 behind each")
    assert re.fullmatch(r"tree: \d+ nodes, \d+ decisions; memory [\d.]+ [KM]?B", lines[2])
    progress = re.findall(r"^iteration ([\d,]+): exploitability ([\d.e-]+)% of the pot, "
                          r"[\d.]+ s$", proc.stderr, re.M)
    assert progress and int(progress[0][0]) == 10
    solved_line = [line for line in lines if line.startswith("solved: ")]
    assert len(solved_line) == 1 and "(target reached)" in solved_line[0]
    assert float(progress[-1][1]) <= 0.5
    assert "OOP (player 0) to act after x b5: river" in proc.stdout
    # the CSV is the report of the same solve in Python (one thread: deterministic)
    iterations = int(progress[-1][0].replace(",", ""))
    solver = SubgameSolver(Spot.make(**RIVER_ARGS))
    report = node_report(solver.solve(target=0.5, max_iterations=iterations), "x b5")
    header, rows = csv_rows(report)
    with out_csv.open() as f:
        written = list(csv.reader(f))
    assert written[0] == header == ["combo", "class", "weight", "mix_f", "mix_c", "mix_r25",
                                    "mix_a", "ev", "equity"]
    assert written[1:] == rows
    text = page.read_text()
    cells = dict(re.findall(r'data-hand="(\w+)" data-probs="([^"]*)"', text))
    assert len(cells) == 169
    kk = report.by_class()["KK"]
    probs = json.loads(html.unescape(cells["KK"]))
    assert list(probs) == list(report.actions)
    np.testing.assert_allclose(list(probs.values()), kk["strategy"], rtol=1e-6)
    assert text == to_html(report)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_command_prints_combos_and_stops_on_its_limits(capsys):
    code, out, err = solve_spot(capsys, *SPOT_FLAGS, "--target", 1e-9, "--max-iterations", 25,
                                "--check-every", 5, "--combos")
    assert code == 0
    assert re.findall(r"^iteration (\d+):", err, re.M) == ["5", "10", "15", "20", "25"]
    assert "solved: 25 iterations" in out and "(--max-iterations reached)" in out
    assert re.search(r"^AsKs\s+1\.0000\s", out, re.M)          # a combo row, not a class row
    code, out, err = solve_spot(capsys, *SPOT_FLAGS, "--time-limit", 1e-9, "--quiet")
    assert code == 0 and err == ""
    assert "solved: 10 iterations" in out and "(time limit)" in out


def test_menu_flags_shape_the_tree(capsys):
    code, out, _ = solve_spot(capsys, *SPOT_FLAGS, "--bets", "0.75", "--raises", "none",
                              "--no-allin", "--max-raises", 1, "--max-iterations", 10, "--quiet")
    assert code == 0 and "  x = check, b8 = bet 8 (80% pot)\n" in out   # 7.5 -> whole chips
    assert "bets 75% of the pot, raises none; no all-in" in out
    code, out, _ = solve_spot(capsys, *SPOT_FLAGS, "--oop-bets", "1", "--ip-bets", "0.5",
                              "--max-iterations", 10, "--quiet", "--at", "x")
    assert code == 0
    assert "bet menu: OOP bets 100% of the pot" in out and "IP  bets 50% of the pot" in out
    assert "  x = check, b5 = bet 5 (50% pot), a = all-in: bet 45 (450% pot)\n" in out


def test_command_solves_a_blueprint_node(untrained, capsys):
    code, out, _ = solve_spot(capsys, "--checkpoint", untrained, "--line", "r2.5b c c c c c",
                              "--board", "Ah 7d 2c 9s 4h", "--max-iterations", 10, "--quiet")
    assert code == 0, out
    assert "line r2.5b c c c c c: OOP = the big blind, IP = the small blind" in out
    assert "river spot, board Ah 7d 2c 9s 4h; pot 500, 9,750 behind each" in out
    assert "at most 2 bets and raises per street" in out
    assert "  x = check, b250 = bet 250 (50% pot), b500 = bet 500 (100% pot), a = all-in" in out


@pytest.mark.parametrize("flags, message", [
    (["--oop", "ZZ"], "argument --oop: range: 'ZZ' at position 0"),
    (["--ip", "TdTc"], "argument --ip: every combo of 'TdTc' uses a board card"),
    (["--board", "Td 9d 6h"], "argument --board: a turn spot has 4 cards, a river spot 5"),
    (["--board", "Td 9d 6h Qc Td"], "argument --board: Td is on the board twice"),
    (["--board", "Td 9d 6h Qx"], "argument --board: bad card 'Qx'"),
    (["--pot", "0"], "argument --pot: must be positive, got '0'"),
    (["--stack", "-1"], "argument --stack: must not be negative"),
    (["--stack", "0"], "argument --stack: 0 chips behind: both players are all in"),
    (["--oop", "AsKs", "--ip", "AsQs", "--board", "Td 9d 6h Qc 2h"],
     "arguments --oop, --ip: no deal: on Td 9d 6h Qc 2h every oop combo shares a card"),
    (["--oop", "AA", "--ip", "AA", "--board", "As Ad 6h Qc 2s"], "no deal"),
    (["--bets", "0.5,x"], "argument --bets: expected pot fractions"),
    (["--at", "x b7"], "argument --at: line 'x b7': 'b7' is not an action after x"),
    (["--line", "r2.5b c c c"], "--line goes with --checkpoint"),
])
def test_bad_input_is_one_line_naming_the_flag(capsys, flags, message):
    args = list(SPOT_FLAGS)
    for flag, value in zip(flags[::2], flags[1::2]):
        if flag in args:
            args[args.index(flag) + 1] = value
        else:
            args += [flag, value]
    code, out, err = solve_spot(capsys, *args)
    assert code == 2 and out == ""
    assert err.startswith("python -m holdem.cli.solve_spot: error: ") and message in err, err
    assert err.count("\n") == 1


@pytest.mark.parametrize("flags, message", [
    (["--line", "r2.5b c", "--board", "Ah 7d 2c"], "argument --line: line 'r2.5b c' reaches "
     "the start of the flop"),
    (["--line", "r2.5b c c c", "--board", "Ah 7d 2c"], "argument --board: line 'r2.5b c c c' "
     "reaches the turn: 4 cards, got 3"),
    (["--line", "r2.5b c c c", "--board", "Ah 7d 2c 9s", "--pot", "5"], "--pot: not with "
     "--checkpoint"),
    (["--board", "Ah 7d 2c 9s"], "--checkpoint needs --line"),
])
def test_bad_blueprint_input_names_the_flag(untrained, capsys, flags, message):
    code, out, err = solve_spot(capsys, "--checkpoint", untrained, *flags)
    assert code == 2 and message in err, err


def test_help():
    proc = run("solve_spot", "--help")
    assert proc.stdout.startswith("usage: python -m holdem.cli.solve_spot")
    for flag in ("--oop", "--checkpoint", "--bets", "--target", "--at", "--html"):
        assert flag in proc.stdout
