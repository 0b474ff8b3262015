"""Range charts of a No-Limit Hold'em blueprint (heads-up or 3-6 players): the action mix of every
hand class at one decision, preflop or after the flop (with the board), and which strategy it is
(the average, or the current one where training kept no average: ``RangeChart.strategy``).

The command line is :mod:`holdem.cli.charts` (``python -m holdem.cli.charts --checkpoint PATH``).

Grid convention (as in most poker tools): rows and columns are the ranks A, K, ..., 2 from the
top left; the diagonal holds the pairs, the upper right triangle (column rank below row rank) the
suited hands ``AKs`` and the lower left triangle the offsuit hands ``AKo`` (named high card
first). Cell (row i, column j) is ``AKs`` for i < j and ``AKo`` for j < i.

Preflop each cell holds exactly what :meth:`Blueprint.query` returns for a representative pair of
cards of that class. Preflop buckets are the 169 classes (or groups of them), so every
representative gives the same answer; :func:`range_chart` checks that with a second
representative. After the flop the combos of a class fall in different buckets: a cell holds the
mix of its live combos weighted by how often the player to act holds each at the node
(:class:`holdem.analysis.ranges.node.NodeRange`), and a class the player never gets there with (or
whose combos are all on the board) is out of the range. Every chart also has the player's reach
per class: the share of the class it plays the line with, which shades each cell (a cell is
filled to the height of its reach in HTML and PNG; in colour in the terminal, its colours fade
towards grey as reach falls), and a class reached with less than :data:`MIN_REACH` (1% of its
combos) is marked as barely in the range (``~`` in the terminal, an unfilled grey cell in HTML
and PNG) instead of being drawn as a full cell of its mix. Outputs: a
self-contained HTML page (probabilities as JSON in ``data-probs``), a terminal grid (24-bit
colour or plain text), a PNG (only if matplotlib is installed) and the difference of two charts.
"""

import html
import json
from dataclasses import dataclass

import numpy as np

from holdem.cards import RANK_CHARS, format_card, make_card
from holdem.fileio import atomic_open
from holdem.games import CARDS

GRID_RANKS = RANK_CHARS[::-1]                   # "AKQJT98765432": row/column order
COMBOS_PER_KIND = {"pair": 6, "suited": 4, "offsuit": 12}    # combos in a class of each kind
FOLD_COLOR, CALL_COLOR, ALLIN_COLOR = "#5b7fbf", "#4caf50", "#6a1b9a"
RAISE_COLORS = ("#f6b26b", "#e69138", "#e06666", "#cc0000", "#990000", "#660000")
OUT_COLOR = "#eeeeee"
MIN_REACH = 0.01
"""Classes the player reaches with less than this share of their combos are marked as barely in
the range, not drawn as their mix (a big blind's KK it 3-bets, called at reach 1e-5, is no
green cell)."""


class ChartError(ValueError):
    """A chart cannot be made (wrong game or line, missing matplotlib); the message says why."""


# -- hand classes ---------------------------------------------------------------------------
def class_name(row, col):
    """Name of the hand class in grid cell (row, col): 'AA', 'AKs' (row < col), 'AKo'."""
    if row == col:
        return GRID_RANKS[row] * 2
    hi, lo = min(row, col), max(row, col)
    return GRID_RANKS[hi] + GRID_RANKS[lo] + ("s" if row < col else "o")


def class_kind(name):
    return "pair" if len(name) == 2 else ("suited" if name[2] == "s" else "offsuit")


def combos(name):
    """All hole-card pairs of a class (6 pairs, 4 suited, 12 offsuit), as (card, card)."""
    hi, lo = RANK_CHARS.index(name[0]), RANK_CHARS.index(name[1])
    kind = class_kind(name)
    if kind == "pair":
        return [(make_card(hi, a), make_card(hi, b)) for a in range(4) for b in range(a + 1, 4)]
    if kind == "suited":
        return [(make_card(hi, s), make_card(lo, s)) for s in range(4)]
    return [(make_card(hi, a), make_card(lo, b)) for a in range(4) for b in range(4) if a != b]


GRID = tuple(tuple(class_name(r, c) for c in range(13)) for r in range(13))


# -- charts ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class RangeChart:
    """The action mix of all 169 classes at one decision.

    ``probs[row, col, a]`` (float64[13, 13, num_actions]) is the probability of ``actions[a]``
    (abstract labels, tree order) for class ``GRID[row][col]`` (zeros where the class is out of
    the range); ``names`` describe the actions. ``reach[row, col]`` is the player's own reach
    with the class (mean over its live combos; NaN where the board holds them all) and
    ``weights`` the classes' weights in :meth:`overall` (preflop: their numbers of combos;
    after the flop: how often the player holds each class at the node).
    """

    source: str
    line: tuple
    player: int                 # 0 = small blind (button heads-up), 1 = big blind, 2 = UTG, ...
    actions: tuple
    names: tuple
    probs: np.ndarray
    reach: np.ndarray = None
    board: tuple = ()           # card names
    weights: np.ndarray = None
    seat: str = ""              # the player's seat name ("" = heads-up: small blind or big blind)
    strategy: str = "average strategy"    # which strategy (Blueprint.strategy_name)

    def in_range(self):
        """bool[13, 13]: the classes the player can hold at this node (preflop: those it
        reaches at all)."""
        if self.weights is None:
            return np.ones((13, 13), dtype=bool) if self.reach is None else self.reach > 0
        return self.weights > 0

    def shown_reach(self):
        """float64[13, 13]: the reach each cell is shaded by, in [0, 1] (1 where the chart has
        no reach; 0 where the board holds every combo)."""
        if self.reach is None:
            return np.ones((13, 13))
        return np.clip(np.nan_to_num(self.reach, nan=0.0), 0.0, 1.0)

    def rare(self):
        """bool[13, 13]: classes in the range but reached with less than :data:`MIN_REACH`."""
        return self.in_range() & (self.shown_reach() < MIN_REACH)

    def mix(self, name):
        """{label: probability} of one class, e.g. ``chart.mix("AKs")``."""
        row, col = _cell_of(name)
        return {a: float(p) for a, p in zip(self.actions, self.probs[row, col])}

    def raise_frequency(self):
        """float64[13, 13]: probability of any raise or all-in."""
        mask = np.array([a[0] in "ra" for a in self.actions])
        return self.probs[:, :, mask].sum(axis=2)

    def overall(self):
        """{label: frequency over the range}: preflop over all 1,326 hole-card pairs (card
        removal ignored), after the flop over the combos weighted as the player holds them."""
        weights = self.weights
        if weights is None:
            weights = np.array([[COMBOS_PER_KIND[class_kind(n)] for n in row] for row in GRID],
                               float)
        totals = (self.probs * weights[:, :, None]).sum(axis=(0, 1)) / max(weights.sum(), 1e-300)
        return dict(zip(self.actions, totals.tolist()))


def _cell_of(name):
    for r, row in enumerate(GRID):
        if name in row:
            return r, row.index(name)
    raise ChartError(f"unknown hand class {name!r} (e.g. 'AA', 'AKs', 'T9o')")


def range_chart(bp, line=(), average=True, check_representatives=True, board=()):
    """The chart of the player to act after ``line`` (abstract labels, as a list or a string,
    or an export history: :meth:`Blueprint.line_labels`) with ``board`` (the cards dealt so
    far, as text or ints: none preflop).

    Preflop, with ``check_representatives`` every class is queried with its first and last
    combination and the two answers must be identical (they are whenever preflop buckets are
    hand classes). Raises ChartError for a non-NLHE blueprint, a bad line or board.
    """
    if not bp.game.supports(CARDS):
        raise ChartError(f"range charts are for No-Limit Hold'em, not {bp.game.name!r}")
    try:
        line = tuple(bp.line_labels(line))
        node_range = bp.range(list(line), board, average=average)
    except ValueError as exc:
        raise ChartError(str(exc)) from None
    by_class = node_range.by_class()
    meta = bp.metadata
    common = dict(source=f"{meta['path']} ({meta['iterations']:,} iterations)", line=line,
                  player=node_range.player, actions=node_range.actions,
                  names=node_range.names, reach=by_class["reach"],
                  board=tuple(map(format_card, node_range.board)),
                  seat=node_range.seats[node_range.player], strategy=node_range.strategy_name)
    if node_range.street > 0:
        return RangeChart(probs=np.nan_to_num(by_class["mix"]), weights=by_class["weight"],
                          **common)
    probs = np.zeros((13, 13, len(node_range.actions)))
    for r in range(13):
        for c in range(13):
            hands = combos(GRID[r][c])
            mix = bp.query(list(line), hands[0], average=average)
            if check_representatives and bp.query(list(line), hands[-1], average=average) != mix:
                raise ChartError(f"{GRID[r][c]}: two representatives get different strategies "
                                 "(preflop buckets are not hand classes)")
            probs[r, c] = [mix[a] for a in node_range.actions]
    return RangeChart(probs=probs, **common)


def action_colors(actions):
    """One colour per label: fold blue, call/check green, raises orange to red by size, all-in
    purple."""
    raises = [a for a in actions if a[0] == "r"]
    return {a: {"f": FOLD_COLOR, "c": CALL_COLOR, "a": ALLIN_COLOR}.get(a) or
            RAISE_COLORS[min(raises.index(a), len(RAISE_COLORS) - 1)] for a in actions}


def _rgb(color):
    return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))


def _blend(colors, weights):
    """The weighted mean of '#rrggbb' colours -> (r, g, b)."""
    rgb = np.array([_rgb(c) for c in colors], dtype=float)
    w = np.asarray(weights, dtype=float)
    return tuple(int(round(x)) for x in (w @ rgb) / max(w.sum(), 1e-12))


def _diverging(delta):
    """(r, g, b) for a difference in [-1, 1]: blue below zero, white at zero, red above."""
    t = min(abs(float(delta)), 1.0)
    far = (204, 0, 0) if delta > 0 else (33, 102, 172)
    return tuple(int(round(255 + (f - 255) * t)) for f in far)


def describe(chart):
    seat = chart.seat or ("small blind (button)" if chart.player == 0 else "big blind")
    board = f" on {' '.join(chart.board)}" if chart.board else ""
    return f"{seat} after {' '.join(chart.line) or '(first to act)'}{board}"


# -- comparison -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Comparison:
    """Two charts of the same line: ``delta`` = second minus first, per label (float64[13, 13,
    num_labels], a label missing from one chart counts as 0) and ``raise_delta`` (float64[13,
    13]) for the raise frequency."""

    first: RangeChart
    second: RangeChart
    actions: tuple
    delta: np.ndarray
    raise_delta: np.ndarray


def compare(first, second):
    if first.line != second.line or first.board != second.board:
        raise ChartError(f"cannot compare lines {first.line} and {second.line}"
                         + (f" on boards {first.board} and {second.board}"
                            if first.board != second.board else ""))
    actions = first.actions + tuple(a for a in second.actions if a not in first.actions)

    def aligned(chart):
        return np.stack([chart.probs[:, :, chart.actions.index(a)] if a in chart.actions
                         else np.zeros((13, 13)) for a in actions], axis=2)
    return Comparison(first, second, actions, aligned(second) - aligned(first),
                      second.raise_frequency() - first.raise_frequency())


# -- terminal -------------------------------------------------------------------------------
def _ansi(text, rgb, color):
    if not color:
        return text
    fg = "0;0;0" if 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] > 140 else "255;255;255"
    return f"\x1b[48;2;{rgb[0]};{rgb[1]};{rgb[2]}m\x1b[38;2;{fg}m{text}\x1b[0m"


def _shade(rgb, reach):
    """``rgb`` faded towards the out-of-range grey as ``reach`` falls from 1 to 0."""
    grey = _rgb(OUT_COLOR)
    return tuple(int(round(g + (x - g) * reach)) for x, g in zip(rgb, grey))


def format_terminal(chart, color=True):
    """The grid as text: each cell is the class, the letter of its most likely action (F fold,
    C call/check, R raise, A all-in) and its raise + all-in frequency in percent, or ``~`` for a
    class reached with less than :data:`MIN_REACH`; with ``color`` the background is the mix of
    the action colours (ANSI 24-bit), faded towards grey by the class's reach."""
    colors = action_colors(chart.actions)
    raises = chart.raise_frequency()
    live, rare, reach = chart.in_range(), chart.rare(), chart.shown_reach()
    lines = [f"{describe(chart)} -- {chart.source}; {chart.strategy}"]
    for r in range(13):
        cells = []
        for c in range(13):
            p = chart.probs[r, c]
            if not live[r, c] or rare[r, c]:
                cells.append(f"{GRID[r][c]:<3}    {'~' if live[r, c] else '.'}")
                continue
            top = chart.actions[int(np.argmax(p))][0].upper()
            text = f"{GRID[r][c]:<3} {top}{round(100 * raises[r, c]):3d}"
            rgb = _shade(_blend([colors[a] for a in chart.actions], p), reach[r, c])
            cells.append(_ansi(text, rgb, color))
        lines.append(" ".join(cells))
    legend = "  ".join(_ansi(f" {a} = {n} ", _rgb(colors[a]), color)
                       for a, n in zip(chart.actions, chart.names))
    out = "; . = out of the range" if not live.all() else ""
    out += f"; ~ = reach under {100 * MIN_REACH:g}%" if rare.any() else ""
    lines.append(f"cell: class, most likely action, raise+all-in %{out}   {legend}")
    lines.append("all hands: " + "  ".join(f"{n} {100 * p:.1f}%" for n, p in
                                           zip(chart.names, chart.overall().values())))
    return "\n".join(lines)


def format_terminal_comparison(cmp, color=True):
    """Each cell: the class and the change of its raise + all-in frequency in percentage points
    (second minus first); red = raises more, blue = less."""
    lines = [f"{describe(cmp.first)}: raise+all-in % of {cmp.second.source} minus "
             f"{cmp.first.source}"]
    for r in range(13):
        lines.append(" ".join(_ansi(f"{GRID[r][c]:<3} {round(100 * cmp.raise_delta[r, c]):+4d}",
                                    _diverging(cmp.raise_delta[r, c]), color)
                              for c in range(13)))
    diff = np.abs(cmp.delta).sum(axis=2) / 2
    lines.append(f"mean |change| of the raise frequency {100 * np.abs(cmp.raise_delta).mean():.1f}"
                 f" points; mean total-variation distance of the mixes {diff.mean():.3f}")
    return "\n".join(lines)


# -- HTML -----------------------------------------------------------------------------------
_CSS = """body{font-family:sans-serif;margin:20px}table{border-collapse:collapse}
td{width:54px;height:38px;padding:0;border:1px solid #fff;position:relative;font-size:12px}
.bar{display:flex;position:absolute;left:0;bottom:0;width:100%}.bar i{display:block;height:100%}
td b{position:absolute;left:3px;top:2px;color:#000;text-shadow:0 0 3px #fff}
td small{position:absolute;right:3px;bottom:2px;text-shadow:0 0 3px #fff}
.key{display:inline-block;width:14px;height:14px;margin:0 4px 0 12px;vertical-align:middle}"""


def _page(title, body):
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}"
            f"</title><style>{_CSS}</style></head><body>\n<h2>{html.escape(title)}</h2>\n{body}"
            "\n</body></html>\n")


def _attr(name, value):
    return f'{name}="{html.escape(value, quote=True)}"'


def to_html(chart):
    """A self-contained HTML page. Each cell has ``data-hand``, ``data-probs`` (the queried
    probabilities as JSON, exact), ``data-reach`` (the player's reach with the class, null where
    the board holds every combo) and a tooltip; the bar widths are the probabilities and its
    height the reach; classes out of the range, or reached with less than :data:`MIN_REACH`
    (``data-rare``), are grey."""
    colors = action_colors(chart.actions)
    live, rare, shown = chart.in_range(), chart.rare(), chart.shown_reach()
    rows = []
    for r in range(13):
        cells = []
        for c in range(13):
            name, p = GRID[r][c], chart.probs[r, c]
            probs = dict(zip(chart.actions, p.tolist()))
            reach = None if chart.reach is None or np.isnan(chart.reach[r, c]) else float(
                chart.reach[r, c])
            tip = name + "".join(f"\n{n}: {100 * q:.2f}%" for n, q in zip(chart.names, p))
            if reach is not None:
                tip += f"\nreach: {100 * reach:.2f}%"
            drawn = live[r, c] and not rare[r, c]
            bars = "".join(f'<i style="width:{100 * q:.4f}%;background:{colors[a]}"></i>'
                           for a, q in zip(chart.actions, p)) if drawn else ""
            cells.append(f"<td {_attr('data-hand', name)} "
                         f"{_attr('data-probs', json.dumps(probs))} "
                         f"{_attr('data-reach', json.dumps(reach))} {_attr('title', tip)}"
                         + ("" if drawn else f' style="background:{OUT_COLOR}"')
                         + (' data-rare="true"' if rare[r, c] else "")
                         + f"><div class=\"bar\" style=\"height:{100 * shown[r, c]:.2f}%\">"
                         f"{bars}</div><b>{name}</b>"
                         + ("<small>~</small>" if rare[r, c] else "") + "</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    legend = "".join(f'<span class="key" style="background:{colors[a]}"></span>'
                     f"{html.escape(f'{a} = {n}')}" for a, n in zip(chart.actions, chart.names))
    overall = ", ".join(f"{n} {100 * p:.1f}%"
                        for n, p in zip(chart.names, chart.overall().values()))
    body = (f"<p>{html.escape(chart.source)}; {html.escape(chart.strategy)}</p><p>{legend}</p>"
            "\n<table>\n" + "\n".join(rows)
            + f"\n</table>\n<p>All hands (combination-weighted): {html.escape(overall)}</p>"
            "<p>Rows and columns A..2; pairs on the diagonal, suited above it, offsuit below."
            " A cell is filled to the height of the player's reach with the class; grey with ~:"
            f" reach under {100 * MIN_REACH:g}%. Hover a cell for its probabilities.</p>")
    return _page(f"Range chart: {describe(chart)}", body)


def comparison_to_html(cmp):
    """Cells coloured by the change of the raise + all-in frequency (red up, blue down);
    ``data-first`` / ``data-second`` hold both mixes as JSON, the tooltip every change."""
    rows = []
    for r in range(13):
        cells = []
        for c in range(13):
            name, d = GRID[r][c], cmp.raise_delta[r, c]
            a, b = cmp.first.mix(name), cmp.second.mix(name)
            tip = name + "".join(f"\n{x}: {100 * a.get(x, 0):.1f}% -> {100 * b.get(x, 0):.1f}%"
                                 for x in cmp.actions)
            cells.append(f"<td {_attr('data-hand', name)} {_attr('data-first', json.dumps(a))} "
                         f"{_attr('data-second', json.dumps(b))} {_attr('title', tip)} "
                         f"style=\"background:rgb{_diverging(d)}\"><b>{name}</b>"
                         f"<small>{round(100 * d):+d}</small></td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    body = (f"<p>second: {html.escape(cmp.second.source)}<br>first: "
            f"{html.escape(cmp.first.source)}</p><p>Number: change of the raise + all-in "
            "frequency in percentage points (second minus first); red = more raising.</p>"
            "\n<table>\n" + "\n".join(rows) + "\n</table>")
    return _page(f"Range chart comparison: {describe(cmp.first)}", body)


# -- PNG ------------------------------------------------------------------------------------
def pyplot():
    """matplotlib.pyplot on the non-interactive Agg backend; raises ChartError when matplotlib is
    not installed (call it first to fail before writing anything)."""
    try:
        import matplotlib
    except ImportError:
        raise ChartError("PNG output needs matplotlib, which is not installed (pip install -e "
                         "'.[charts]', or matplotlib); --html writes a chart without it") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save_png(chart_or_cmp, path):
    """Draw a chart (stacked bars per cell) or a comparison (diverging colours) to ``path``."""
    plt = pyplot()
    from matplotlib.patches import Patch, Rectangle

    is_cmp = isinstance(chart_or_cmp, Comparison)
    chart = chart_or_cmp.first if is_cmp else chart_or_cmp
    colors = action_colors(chart.actions)
    fig, ax = plt.subplots(figsize=(10, 10.8))
    live, rare, reach = chart.in_range(), chart.rare(), chart.shown_reach()
    for r in range(13):
        for c in range(13):
            y = 12 - r
            if is_cmp:
                d = chart_or_cmp.raise_delta[r, c]
                ax.add_patch(Rectangle((c, y), 1, 1, color=[x / 255 for x in _diverging(d)]))
                ax.text(c + 0.95, y + 0.08, f"{round(100 * d):+d}", ha="right", fontsize=8)
            elif not live[r, c] or rare[r, c]:
                ax.add_patch(Rectangle((c, y), 1, 1, color=OUT_COLOR))
                if rare[r, c]:
                    ax.text(c + 0.95, y + 0.08, "~", ha="right", fontsize=8)
            else:
                x, height = float(c), float(reach[r, c])
                ax.add_patch(Rectangle((c, y), 1, 1, color=OUT_COLOR))
                for a, p in zip(chart.actions, chart.probs[r, c]):
                    ax.add_patch(Rectangle((x, y), p, height, color=colors[a], linewidth=0))
                    x += p
            ax.text(c + 0.05, y + 0.9, GRID[r][c], va="top", fontsize=8)
    ax.set_xlim(0, 13)
    ax.set_ylim(0, 13)
    ax.set_aspect("equal")
    ax.axis("off")
    line_color = "#999999" if is_cmp else "white"
    for k in range(14):
        ax.plot([k, k], [0, 13], color=line_color, lw=1)
        ax.plot([0, 13], [k, k], color=line_color, lw=1)
    if is_cmp:
        ax.set_title(f"{describe(chart)}: raise % change\n{chart_or_cmp.second.source}\nminus "
                     f"{chart.source}", fontsize=9)
    else:
        ax.set_title(f"{describe(chart)}\n{chart.source}\n{chart.strategy}", fontsize=9)
        ax.legend(handles=[Patch(color=colors[a], label=f"{a} = {n}")
                           for a, n in zip(chart.actions, chart.names)],
                  loc="upper center", bbox_to_anchor=(0.5, 0), ncol=4, fontsize=8)
    try:
        with atomic_open(path, "wb") as f:          # never a half-written PNG under its name
            fig.savefig(f, format="png", dpi=100, bbox_inches="tight")
    finally:
        plt.close(fig)
