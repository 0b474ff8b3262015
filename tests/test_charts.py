"""Preflop range charts: the grid convention, exact probabilities in every output, the CLI."""

import importlib.util
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import holdem
from holdem import config as config_mod
from holdem.abstraction.bucket_tables import lookup_buckets
from holdem.analysis.ranges import charts
from holdem.analysis.ranges.charts import GRID, ChartError, combos, compare, range_chart
from holdem.cli import charts as charts_cli
from holdem.games import make_game
from holdem.solver.solver import Solver
from holdem.solver.solver import save_solver

ROOT = Path(__file__).resolve().parents[1]


def _train(directory, iterations, seed=0):
    cfg = config_mod.load(ROOT / "configs" / "hunl_default.yaml")
    solver = Solver(make_game(cfg), cfg)
    solver.run(iterations)
    save_solver(solver, directory / "checkpoints" / f"ckpt-{iterations:012d}.ckpt")
    return directory


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("charts")
    return _train(tmp / "a", 20_000), _train(tmp / "b", 40_000)


@pytest.fixture(scope="module")
def bp(runs):
    return holdem.Blueprint.load(runs[0])


class CellParser(HTMLParser):
    """Collects the data-* attributes of every table cell."""

    def __init__(self):
        super().__init__()
        self.cells, self.tags = [], set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag == "td":
            self.cells.append(dict(attrs))


def _cells(page):
    parser = CellParser()
    parser.feed(page)
    return parser


def test_grid_convention_pairs_diagonal_suited_above_offsuit_below():
    assert GRID[0][:3] == ("AA", "AKs", "AQs") and GRID[1][0] == "AKo"
    assert GRID[12][12] == "22" and GRID[11][12] == "32s" and GRID[12][11] == "32o"
    names = [n for row in GRID for n in row]
    assert len(set(names)) == 169
    assert sum(charts.class_kind(n) == "pair" for n in names) == 13
    assert all(charts.class_kind(GRID[r][c]) == "suited" for r in range(13)
               for c in range(r + 1, 13))
    all_combos = {frozenset(h) for n in names for h in combos(n)}
    assert len(all_combos) == 1326                        # every hole-card pair exactly once


def test_every_combination_of_a_class_gets_the_same_preflop_bucket(bp):
    tables = bp.game.deal.tables
    bucket_of = {}
    for name in (n for row in GRID for n in row):
        found = set()
        for hole in combos(name):
            board = [c for c in range(52) if c not in hole][:5]
            found.add(int(lookup_buckets(tables, np.array([hole]), np.array(board))[0, 0]))
        assert len(found) == 1, name
        bucket_of[name] = found.pop()
    assert len(set(bucket_of.values())) == 169            # the shipped file: lossless classes


@pytest.mark.parametrize("line", [[], ["r2.5b"], ["c"]])
def test_chart_cells_are_exactly_the_queried_probabilities(bp, line):
    chart = range_chart(bp, line)
    assert chart.player == len(line) % 2
    for name in (n for row in GRID for n in row):
        hands = combos(name)
        assert chart.mix(name) == bp.query(line, hands[0])
        assert chart.mix(name) == bp.query(line, hands[len(hands) // 2])   # any representative
    np.testing.assert_allclose(chart.probs.sum(axis=2), 1.0)
    assert sum(chart.overall().values()) == pytest.approx(1.0)


def test_html_is_self_contained_and_holds_the_exact_probabilities(bp):
    line = ["r2.5b"]
    page = charts.to_html(range_chart(bp, line))
    parsed = _cells(page)
    assert len(parsed.cells) == 169
    assert not parsed.tags & {"script", "link", "img"} and "http" not in page
    for cell in parsed.cells:
        probs = json.loads(cell["data-probs"])
        hole = combos(cell["data-hand"])[-1]
        assert probs == bp.query(line, hole)
        assert cell["title"].startswith(cell["data-hand"] + "\nfold: ")
    for label in ("fold", "call", "raise to 7.5 bb", "all-in"):
        assert label in page


def test_terminal_grid_colour_and_plain(bp):
    chart = range_chart(bp, [])
    plain = charts.format_terminal(chart, color=False).splitlines()
    assert "\x1b" not in "\n".join(plain)
    rows = plain[1:14]
    raises = chart.raise_frequency()
    for r, row in enumerate(rows):
        cells = [row[9 * c:9 * c + 8] for c in range(13)]          # "AKs R 98" per cell
        assert tuple(cell[:3].strip() for cell in cells) == GRID[r]
        assert [int(cell[5:]) for cell in cells] == [round(100 * x) for x in raises[r]]
        top = [chart.actions[int(np.argmax(p))][0].upper() for p in chart.probs[r]]
        assert [cell[4] for cell in cells] == top
    colored = charts.format_terminal(chart, color=True)
    assert colored.count("\x1b[48;2;") >= 169


def test_comparison_of_two_checkpoints(bp, runs):
    first = range_chart(bp, ["r2.5b"])
    second = range_chart(holdem.Blueprint.load(runs[1]), ["r2.5b"])
    cmp = compare(first, second)
    # Expected from the two blueprints' own answers (Blueprint.query per class), not from the
    # charts' arrays: the delta of each label, and of the raise and all-in labels together.
    bp_b = holdem.Blueprint.load(runs[1])
    assert cmp.actions == first.actions == second.actions
    moved = 0
    for r, row in enumerate(GRID):
        for c, name in enumerate(row):
            hole = combos(name)[0]
            a, b = bp.query(["r2.5b"], hole), bp_b.query(["r2.5b"], hole)
            want = [b[label] - a[label] for label in cmp.actions]
            np.testing.assert_allclose(cmp.delta[r, c], want, rtol=0, atol=1e-15)
            raises = sum(want[k] for k, label in enumerate(cmp.actions) if label[0] in "ra")
            assert cmp.raise_delta[r, c] == pytest.approx(raises, abs=1e-12)
            moved += any(want)
    assert moved > 84, moved                    # 20,000 more iterations move most classes
    assert not compare(first, first).delta.any()
    for cell in _cells(charts.comparison_to_html(cmp)).cells:
        assert json.loads(cell["data-first"]) == first.mix(cell["data-hand"])
        assert json.loads(cell["data-second"]) == second.mix(cell["data-hand"])
    text = charts.format_terminal_comparison(cmp, color=False)
    assert len(text.splitlines()) == 15 and "\x1b" not in text
    with pytest.raises(ChartError, match="cannot compare"):
        compare(first, range_chart(bp, []))


def test_comparison_aligns_labels_that_only_one_chart_has():
    """A label missing from one chart counts as probability 0 there (hand-made charts)."""
    def chart(actions, mix):
        probs = np.broadcast_to(np.array(mix, float), (13, 13, len(mix))).copy()
        return charts.RangeChart(source="x", line=("r2.5b",), player=1, actions=actions,
                                 names=actions, probs=probs)

    first = chart(("f", "c", "r7.5b"), [0.5, 0.25, 0.25])
    second = chart(("f", "c", "a"), [0.125, 0.5, 0.375])
    cmp = compare(first, second)
    assert cmp.actions == ("f", "c", "r7.5b", "a")
    np.testing.assert_array_equal(cmp.delta[3, 7], [-0.375, 0.25, -0.25, 0.375])
    np.testing.assert_array_equal(cmp.raise_delta, np.full((13, 13), 0.125))   # 0.375 - 0.25


def test_bad_lines_are_rejected(bp):
    with pytest.raises(ChartError, match="the board needs 3 cards, got 0"):
        range_chart(bp, ["c", "c"])                     # a flop decision needs its flop
    with pytest.raises(ChartError, match="needs 0 cards, got 3"):
        range_chart(bp, ["r2.5b"], board="Ah Kd 7c")
    with pytest.raises(ChartError, match="not an action here"):
        range_chart(bp, ["r9b"])
    with pytest.raises(ChartError, match="ends the hand"):
        range_chart(bp, ["f"])


def test_a_postflop_chart_mixes_each_class_by_how_often_it_is_held_there(bp):
    """After the flop a cell is its live combos' mixes weighted by the acting player's weights
    (the range view's numbers); a class whose combos are all on the board is out of the range."""
    line, board = ["r2.5b", "c"], "Ah Ad 7c"
    chart = range_chart(bp, line, board=board)
    node = bp.range(line, board)
    assert chart.player == node.player == 1 and chart.board == ("Ah", "Ad", "7c")
    cells = node.class_cells()
    for name in ("KQs", "72o", "77", "AKo"):
        r, c = next((r, c) for r in range(13) for c in range(13) if GRID[r][c] == name)
        inside = (cells[:, 0] == r) & (cells[:, 1] == c)
        w = node.weight[1, inside]
        expected = (w[:, None] * node.mix[inside]).sum(axis=0) / w.sum()
        np.testing.assert_allclose(chart.probs[r, c], expected, rtol=1e-12)
    aa = GRID[0].index("AA")
    assert chart.reach[0, aa] == pytest.approx(node.reach[1, [
        i for i, n in enumerate(node.combo_names()) if n[0] == n[2] == "A"]].mean())
    live = chart.in_range()
    assert live.sum() == 169 and sum(chart.overall().values()) == pytest.approx(1.0)
    text = charts.format_terminal(chart, color=False)
    assert "on Ah Ad 7c" in text.splitlines()[0]
    page = charts.to_html(chart)
    assert 'data-reach="' in page
    with pytest.raises(ChartError, match="cannot compare"):
        compare(chart, range_chart(bp, line, board="Kh Kd 7c"))


def _chart_with_reach(reach):
    """A big blind's flop chart (check 92%, bet 8% for every class) with the given reach."""
    probs = np.zeros((13, 13, 3))
    probs[:, :, 0], probs[:, :, 1] = 0.92, 0.08
    return charts.RangeChart(source="test", line=("r2.5b", "c"), player=1,
                             actions=("c", "r0.5p", "a"),
                             names=("check", "bet 2.5 bb", "all-in: bet 97.5 bb"), probs=probs,
                             reach=reach, board=("2c", "7h", "9d"), weights=reach * 6)


def test_a_class_reached_with_almost_nothing_is_marked_not_drawn_as_a_full_cell(tmp_path):
    """Issue 40: the big blind's KK at reach 1e-5 (it 3-bets KK) was drawn as "KK C 8" and a
    solid green cell. A class reached with less than MIN_REACH (1%) is marked ~ and grey; the
    others are shaded by their reach (HTML and PNG: the cell filled to that height)."""
    assert charts.MIN_REACH == 0.01
    reach = np.full((13, 13), 0.5)
    kk, aa, qq = (_cell(name) for name in ("KK", "AA", "QQ"))
    reach[kk], reach[aa], reach[qq] = 1e-5, 1.0, 0.01
    chart = _chart_with_reach(reach)
    assert chart.rare()[kk] and not chart.rare()[qq] and chart.rare().sum() == 1
    text = charts.format_terminal(chart, color=False).splitlines()

    def grid_cell(name):
        row, col = _cell(name)
        return text[1 + row][9 * col:9 * col + 8]
    assert grid_cell("KK") == "KK     ~" and grid_cell("AA") == "AA  C  8"
    assert "~ = reach under 1%" in text[14]
    colored = charts.format_terminal(chart, color=True)
    full, half = (charts._ansi("X", charts._shade(charts._blend(
        [charts.CALL_COLOR, charts.RAISE_COLORS[0]], [0.92, 0.08]), r), True)[:19]
        for r in (1.0, 0.5))
    assert full != half and colored.count(full) == 1      # AA alone has the full colour
    page = charts.to_html(chart)
    cell_html = {m[1]: m[0]
                 for m in re.finditer(r'<td data-hand="([^"]+)".*?</td>', page, re.S)}
    assert 'data-rare="true"' in cell_html["KK"] and "<i " not in cell_html["KK"]
    assert 'class="bar" style="height:100.00%"' in cell_html["AA"]
    assert 'class="bar" style="height:50.00%"' in cell_html["AKs"]
    assert "data-rare" not in cell_html["QQ"] and "<i " in cell_html["QQ"]
    if importlib.util.find_spec("matplotlib"):
        charts.save_png(chart, tmp_path / "reach.png")
        assert (tmp_path / "reach.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_preflop_class_the_player_never_reaches_is_out_of_the_range():
    """Preflop (no weights) a class at reach 0 (folded earlier in the line) is '.', not '~'."""
    reach = np.zeros((13, 13))
    reach[_cell("AA")] = 1.0
    chart = charts.RangeChart(**{**_chart_with_reach(reach).__dict__, "weights": None,
                                 "board": ()})
    assert chart.in_range().sum() == 1 and not chart.rare().any()
    assert charts.format_terminal(chart, color=False).splitlines()[1][9:17] == "AKs    ."


def _cell(name):
    return charts._cell_of(name)


def test_png_without_matplotlib_says_so(bp, monkeypatch, tmp_path):
    chart = range_chart(bp, [])
    monkeypatch.setitem(sys.modules, "matplotlib", None)          # import fails
    with pytest.raises(ChartError, match="needs matplotlib, which is not installed"):
        charts.save_png(chart, tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_png_with_matplotlib(bp, tmp_path):
    pytest.importorskip("matplotlib")
    chart = range_chart(bp, [])
    charts.save_png(chart, tmp_path / "a.png")
    charts.save_png(compare(chart, chart), tmp_path / "b.png")
    for name in ("a.png", "b.png"):
        png = (tmp_path / name).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[-8:-4] == b"IEND", name   # whole files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "b.png"]   # no temp files


def test_png_that_fails_to_draw_leaves_the_old_file(bp, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    chart = range_chart(bp, [])
    out = tmp_path / "a.png"
    out.write_bytes(b"old chart")

    def broken(self, f, **kwargs):
        f.write(b"half a PNG")
        raise RuntimeError("renderer failed")

    monkeypatch.setattr(Figure, "savefig", broken)
    with pytest.raises(RuntimeError, match="renderer failed"):
        charts.save_png(chart, out)
    assert out.read_bytes() == b"old chart"
    assert [p.name for p in tmp_path.iterdir()] == ["a.png"]


def test_cli_in_process(runs, tmp_path, capsys, monkeypatch):
    from holdem.cli.common import run_main

    a, b = (str(r) for r in runs)
    assert run_main(charts_cli.main, ["--checkpoint", a, "--no-color"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("small blind (button) after (first to act)") and len(out) == 16
    html_path = tmp_path / "c.html"
    assert run_main(charts_cli.main, ["--checkpoint", a, "--line", "r2.5b", "--compare", b,
                                      "--html", str(html_path)]) == 0
    assert len(_cells(html_path.read_text()).cells) == 169
    assert run_main(charts_cli.main, ["--checkpoint", a, "--line", "c c"]) == 2
    assert "the board needs 3 cards" in capsys.readouterr().err
    assert run_main(charts_cli.main, ["--checkpoint", a, "--line", "c c", "--board",
                                      "2c 7h 9d", "--compare", b, "--no-color"]) == 0
    assert "on 2c 7h 9d" in capsys.readouterr().out
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert run_main(charts_cli.main, ["--checkpoint", a, "--png", str(tmp_path / "x.png")]) == 2
    from holdem.checkpoint import resolve

    *notes, error = capsys.readouterr().err.strip().splitlines()
    assert "needs matplotlib" in error                  # one line, after the note saying
    assert notes == [f"{a}: loading {resolve(a)} (the newest of 1 "
                     "checkpoint)"]                     # which checkpoint the logdir gave


def test_cli_subprocess(runs):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "holdem.cli.charts", *args],
                              capture_output=True, text=True, timeout=120)
    assert "--compare" in run("--help").stdout
    proc = run("--checkpoint", str(runs[0]), "--line", "r2.5b")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "big blind after r2.5b" in proc.stdout   # a pipe
    bad = run("--checkpoint", str(runs[0]), "--line", "r9b")
    assert bad.returncode == 2 and "not an action here" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_cli_refuses_to_compare_blueprints_of_different_games(runs, tmp_path, capsys):
    """A six-max checkpoint against a heads-up one: its seats are not the heads-up seats (it was
    charted as "small blind (button)"), so the command says which settings differ, exit 2."""
    from holdem.cli.common import run_main

    cfg = config_mod.load(ROOT / "configs" / "6max.yaml")
    six = tmp_path / "6max" / "checkpoints" / "ckpt-000000000000.ckpt"
    save_solver(Solver(make_game(cfg), cfg), six)
    with pytest.raises(SystemExit) as exit_:
        run_main(charts_cli.main, ["--checkpoint", str(runs[0]), "--compare", str(six),
                                   "--no-color"])
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    error = err.strip().splitlines()[-1]
    assert out == "" and error.startswith("python -m holdem.cli.charts: error: argument "
                                          f"--compare: {six} is another game than ")
    assert "num_players 6 (against 2)" in error


@pytest.mark.parametrize("tty, env, coloured", [(True, {}, True), (False, {}, False),
                                                (True, {"NO_COLOR": "1"}, False),
                                                (True, {"NO_COLOR": ""}, True)])
def test_terminal_colour_only_on_a_terminal_without_no_color(runs, capsys, monkeypatch, tty, env,
                                                              coloured):
    from holdem.cli.common import run_main

    monkeypatch.delenv("NO_COLOR", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: tty)
    assert run_main(charts_cli.main, ["--checkpoint", str(runs[0])]) == 0
    out = capsys.readouterr().out
    assert ("\x1b[48;2;" in out) == coloured and "AKs" in out
