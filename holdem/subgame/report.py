"""What a solved subgame shows at one decision: the strategy of the player to act per combo and
per hand class, with each hand's EV and equity there, as text, CSV rows, an HTML page or a PNG
(the command line is :mod:`holdem.cli.solve_spot`), and spots taken from a heads-up blueprint.

    from holdem.subgame import Spot, SubgameSolver
    from holdem.subgame.report import node_report, format_text
    solver = SubgameSolver(Spot.make("Td 9d 6h Qc", "QQ+,AK", "JJ-88,AQs", pot=10, stack=45))
    solution = solver.solve(target=0.5)
    report = node_report(solution, "x b5")     # out of position: checked, faces a bet of 5
    print(format_text(report))                 # per class; report.strategy etc. per combo

A node is given by a *line*: the subgame's labels from the root (``x``, ``c``, ``f``, ``b5``,
``r15``, ``a``: :mod:`holdem.subgame.tree`), separated by spaces, with the river card (``7h``)
where a turn spot deals it. At that node, per combo the player to act can hold there:

- ``reach``: its own reach -- its weight in the spot's range times its own solved strategy
  along the line (what a range string of the node gives the combo);
- ``strategy``: the average strategy, one probability per action;
- ``ev``: its expected share of the final pot minus the chips it puts in from the node on, both
  players playing the average strategies (at the root this is ``SubgameSolver.values``);
- ``equity``: its share of the pot at showdown against the other player's range at the node
  (ties half), over every river card still to come.

Per hand class (``AA``, ``AKs``, ``AKo``) the numbers are means over the class's combos weighted
by ``weight``: the combo's reach times the other player's reach over the hands that share no
card with it (card removal), so a class's EV is the EV of holding the class at the node. The
class's ``combos`` is the sum of its combos' reach (6 for a pair held at full weight).
"""

import csv
import html
import io
import json
from dataclasses import dataclass

import numpy as np

from holdem.analysis.ranges.charts import (ALLIN_COLOR, CALL_COLOR, FOLD_COLOR, GRID, RAISE_COLORS,
                                    pyplot)
from holdem.analysis.ranges.strings import CLASS_ORDER
from holdem.cards import RANK_CHARS, card_tuple, format_card, format_cards
from holdem.fileio import atomic_open
from holdem.subgame.solver import COMBOS, combo_names
from holdem.subgame.tree import CHANCE, DECISION, RIVER, STREET_NAMES

PLAYER_NAMES = ("OOP", "IP")
"""Subgame player 0 is out of position (first to act on each street), player 1 in position."""

_CELL = {name: (r, c) for r, row in enumerate(GRID) for c, name in enumerate(row)}


# -- hand classes -----------------------------------------------------------------------------
def combo_class(index):
    """The hand class (``"AKs"``) of the combo at ``index`` in :data:`COMBOS`."""
    low, high = (int(c) for c in COMBOS[index])
    if low // 4 == high // 4:
        return RANK_CHARS[high // 4] * 2
    return RANK_CHARS[high // 4] + RANK_CHARS[low // 4] + ("s" if low % 4 == high % 4 else "o")


COMBO_CLASSES = tuple(combo_class(i) for i in range(len(COMBOS)))
"""The class of every combo, in :data:`COMBOS` order."""


# -- the node of a line -----------------------------------------------------------------------
def find_line(solver, line):
    """The node after ``line`` (a string of labels separated by spaces, or a sequence; the
    river card as text where a turn spot deals it): (node, the labels as given, the river card
    or None). ValueError naming the label that is not an action there."""
    tokens = line.split() if isinstance(line, str) else [str(t) for t in line]
    tree = solver.tree
    node, river = 0, None
    for i, token in enumerate(tokens):
        where = " ".join(tokens[:i]) or "the root"
        if tree.kind[node] == CHANCE:
            try:
                (card,) = card_tuple(token, "river card")
            except ValueError:
                raise ValueError(f"line {' '.join(tokens)!r}: the river is dealt after {where}: "
                                 f"give its card (e.g. 7h), not {token!r}") from None
            k = np.flatnonzero(solver.river_cards == card)
            if not len(k):
                raise ValueError(f"line {' '.join(tokens)!r}: {format_card(card)} is on the "
                                 f"board ({format_cards(solver.spot.board)})")
            node, river = int(tree.first_child[node]) + int(k[0]), card
            continue
        if tree.kind[node] != DECISION:
            raise ValueError(f"line {' '.join(tokens)!r}: the hand is over after {where}")
        labels = tree.child_labels(node)
        if token not in labels:
            raise ValueError(f"line {' '.join(tokens)!r}: {token!r} is not an action after "
                             f"{where} (actions: {', '.join(labels)})")
        node = int(tree.first_child[node]) + labels.index(token)
    if tree.kind[node] == CHANCE:
        example = " ".join(tokens + [format_card(solver.river_cards[0])])
        raise ValueError(f"line {' '.join(tokens)!r} ends where the river is dealt: add its "
                         f"card, e.g. {example!r}")
    if tree.kind[node] != DECISION:
        raise ValueError(f"line {' '.join(tokens)!r} ends the hand: no decision to show")
    return node, tuple(tokens), river


def _street_base(tree, node):
    """Chips each player had in when the node's street began."""
    street = tree.node_street[node]
    while node > 0 and tree.node_street[tree.parent[node]] == street:
        node = int(tree.parent[node])
    return float(tree.invest[node, 0])


def action_names(tree, node):
    """What each action at decision ``node`` does, in words: 'check', 'call 5', 'fold', 'bet 5
    (50% pot)', 'raise to 20', 'all-in: bet 45'; amounts are chips put in on the street."""
    me = int(tree.player[node])
    invest = tree.invest[node]
    pot = tree.pot + float(invest.sum())
    base = _street_base(tree, node)
    facing = invest[1 - me] > invest[me]
    out = []
    for child, label in zip(tree.children(node), tree.child_labels(node)):
        street_in = float(tree.invest[child, me]) - base
        if label == "f":
            out.append("fold")
        elif label == "x":
            out.append("check")
        elif label == "c":
            out.append(f"call {float(invest[1 - me] - invest[me]):g}")
        elif facing:
            out.append(("all-in: " if label == "a" else "") + f"raise to {street_in:g}")
        else:
            text = f"bet {street_in:g} ({100 * street_in / pot:.0f}% pot)"
            out.append(("all-in: " if label == "a" else "") + text)
    return tuple(out)


def action_colors(labels):
    """One colour per subgame label, as :func:`holdem.analysis.ranges.charts.action_colors` colours
    a blueprint's: fold blue, check/call green, bets and raises orange to red by size, all-in
    purple."""
    sized = [a for a in labels if a[0] in "br"]
    return {a: {"f": FOLD_COLOR, "x": CALL_COLOR, "c": CALL_COLOR, "a": ALLIN_COLOR}.get(a)
            or RAISE_COLORS[min(sized.index(a), len(RAISE_COLORS) - 1)] for a in labels}


@dataclass(frozen=True)
class NodeReport:
    """The numbers at one decision of a solved subgame (see the module docstring). Per combo
    arrays are over ``combos`` (:data:`COMBOS` indices of the hands the player to act reaches
    the node with); ``strategy`` is float64[n, num_actions]. Amounts in the spot's chips."""

    line: tuple                 # the line as given (labels, the river card as text)
    node: int
    player: int                 # to act: 0 = out of position, 1 = in position
    street: int                 # TURN or RIVER
    board: tuple                # card ints at the node (the river card included)
    pot: float                  # chips in the middle at the node
    to_call: float
    behind: float               # chips the player to act has left
    actions: tuple
    names: tuple
    combos: np.ndarray
    reach: np.ndarray
    weight: np.ndarray
    strategy: np.ndarray
    ev: np.ndarray
    equity: np.ndarray
    iterations: int
    exploitability_pct: float

    def combo_names(self):
        """Each combo as text, higher card first (``"AsKh"``)."""
        return combo_names(self.combos)

    def classes(self):
        """The class of each combo (``"AKs"``)."""
        return [COMBO_CLASSES[i] for i in self.combos]

    def _mean(self, weight, values):
        total = weight.sum()
        if not total > 0:
            return np.full(values.shape[1:], np.nan)
        return np.tensordot(weight, np.nan_to_num(values), axes=1) / total

    def by_class(self):
        """{class: {"combos", "strategy", "ev", "equity"}} for the classes in the range, in
        :data:`holdem.analysis.ranges.strings.CLASS_ORDER` (pairs, suited, offsuit)."""
        classes = np.array(self.classes())
        out = {}
        for name in CLASS_ORDER:
            mask = classes == name
            if not mask.any():
                continue
            w = self.weight[mask]
            out[name] = {"combos": float(self.reach[mask].sum()),
                         "strategy": self._mean(w, self.strategy[mask]),
                         "ev": float(self._mean(w, self.ev[mask])),
                         "equity": float(self._mean(w, self.equity[mask]))}
        return out

    def overall(self):
        """The same over the whole range: {"combos", "strategy", "ev", "equity"}."""
        return {"combos": float(self.reach.sum()),
                "strategy": self._mean(self.weight, self.strategy),
                "ev": float(self._mean(self.weight, self.ev)),
                "equity": float(self._mean(self.weight, self.equity))}

    def grid(self):
        """Per cell of the 13 x 13 grid (:data:`holdem.analysis.ranges.charts.GRID`): ``combos``
        float64[13, 13] (0 out of the range), ``strategy`` [13, 13, num_actions], ``ev`` and
        ``equity`` [13, 13] (NaN out of the range)."""
        combos = np.zeros((13, 13))
        strategy = np.zeros((13, 13, len(self.actions)))
        ev, equity = np.full((13, 13), np.nan), np.full((13, 13), np.nan)
        for name, row in self.by_class().items():
            r, c = _CELL[name]
            combos[r, c], strategy[r, c] = row["combos"], row["strategy"]
            ev[r, c], equity[r, c] = row["ev"], row["equity"]
        return {"combos": combos, "strategy": strategy, "ev": ev, "equity": equity}


def node_report(solution, line=()):
    """The :class:`NodeReport` of the decision after ``line`` (see :func:`find_line`) of a
    :class:`holdem.subgame.Solution` (or a solved :class:`SubgameSolver`)."""
    solver = getattr(solution, "solver", solution)
    solver.allocate()
    tree = solver.tree
    node, tokens, river = find_line(solver, line)
    reach = solver.reach_at(node)
    q = int(tree.player[node])
    opp = 1 - q
    if tree.street == RIVER:
        boards = [0]
    elif tree.segment[node] >= 0:
        boards = [int(tree.board[node])]
    else:
        boards = list(range(1, len(solver.river_cards) + 1))
    mass, equity = solver.against(q, reach[opp], boards)
    values = solver.node_values(node, q, reach)
    invest = tree.invest[node]
    with np.errstate(invalid="ignore", divide="ignore"):
        ev = np.where(mass > 0, values / mass + tree.pot / 2 + invest[q], np.nan)
    n = int(solver.num_hands[q])
    keep = np.flatnonzero(reach[q, :n] > 0)
    strategy = solver.strategy(node)[:, solver.combos[q][keep]].T
    expl = getattr(solution, "exploitability_pct", None)
    if expl is None:
        expl = solver.exploitability() / solver.spot.pot * 100
    board = tuple(solver.spot.board) + ((int(river),) if river is not None else ())
    return NodeReport(
        line=tokens, node=node, player=q,
        street=int(tree.node_street[node]), board=board,
        pot=tree.pot + float(invest.sum()), to_call=float(invest[opp] - invest[q]),
        behind=tree.stack - float(invest[q]), actions=tree.child_labels(node),
        names=action_names(tree, node), combos=solver.combos[q][keep].copy(),
        reach=reach[q, keep], weight=reach[q, keep] * mass[keep], strategy=strategy,
        ev=ev[keep], equity=equity[keep], iterations=int(solver.iterations),
        exploitability_pct=float(expl))


# -- text -------------------------------------------------------------------------------------
def _chips(x):
    return f"{x:,.6g}"


def describe_spot(spot):
    """One line: the street, board, pot, stacks and both ranges' sizes."""
    sizes = ", ".join(f"{name} {r.sum():,.1f} combos ({np.count_nonzero(r)} with weight)"
                      for name, r in zip(PLAYER_NAMES, spot.ranges))
    return (f"{STREET_NAMES[spot.street]} spot, board {format_cards(spot.board)}; pot "
            f"{_chips(spot.pot)}, {_chips(spot.stack)} behind each; ranges: {sizes}")


def _fractions(sizes):
    return ", ".join(f"{100 * f:g}%" for f in sizes) or "none"


def describe_menu(menus):
    """The bet menu of each player (one line if both have the same)."""
    def one(m):
        streets = sorted(set(m.bets) | set(m.raises))
        parts = []
        same = len({(m.bets.get(s, ()), m.raises.get(s, ())) for s in streets}) <= 1
        for s in streets[:1] if same else streets:
            where = "" if same else f"{STREET_NAMES[s]}: "
            parts.append(f"{where}bets {_fractions(m.bets.get(s, ()))} of the pot, raises "
                         f"{_fractions(m.raises.get(s, ()))}")
        parts.append("all-in" if m.all_in else "no all-in but where a size reaches it")
        parts.append("any number of bets and raises" if m.max_raises is None else
                     f"at most {m.max_raises} bets and raises per street")
        return "; ".join(parts)

    oop, ip = (one(m) for m in menus)
    return f"bet menu: {oop}" if oop == ip else f"bet menu: OOP {oop}\n          IP  {ip}"


def describe_node(report):
    where = f"after {' '.join(report.line)}" if report.line else "at the root"
    call = (f"{_chips(report.to_call)} to call" if report.to_call > 0
            else "nothing to call")
    return (f"{PLAYER_NAMES[report.player]} (player {report.player}) to act {where}: "
            f"{STREET_NAMES[report.street]}, board {format_cards(report.board)}, pot "
            f"{_chips(report.pot)}, {call}, {_chips(report.behind)} "
            "behind")


def _pct(x):
    return "      ." if np.isnan(x) else f"{100 * x:6.1f}%"


def format_text(report, combos=False):
    """The node as a table: per class (per combo with ``combos``) its combos (or weight), each
    action's frequency in %, EV and equity; then the whole range."""
    width = max(7, *(len(a) + 1 for a in report.actions))
    head = (f"{'combo' if combos else 'class':<7}{'weight' if combos else 'combos':>8} "
            + "".join(f"{a:>{width}}" for a in report.actions) + f"{'EV':>10}{'equity':>8}")
    lines = [describe_node(report),
             "  " + ", ".join(f"{a} = {n}" for a, n in zip(report.actions, report.names)),
             head]

    def row(name, amount, strategy, ev, equity, digits):
        freqs = "".join(f"{100 * p:>{width - 1}.1f}%" for p in strategy)
        ev_text = "         ." if np.isnan(ev) else f"{ev:10.2f}"
        return f"{name:<7}{amount:8.{digits}f} {freqs}{ev_text} {_pct(equity)}"

    if combos:
        for name, r, s, ev, eq in zip(report.combo_names(), report.reach, report.strategy,
                                      report.ev, report.equity):
            lines.append(row(name, r, s, ev, eq, 4))
    else:
        for name, c in report.by_class().items():
            lines.append(row(name, c["combos"], c["strategy"], c["ev"], c["equity"], 2))
    total = report.overall()
    lines.append(row("all", total["combos"], total["strategy"], total["ev"], total["equity"], 2))
    lines.append(f"(EV: share of the final pot minus chips put in from here on; "
                 f"{report.iterations:,} iterations, exploitability "
                 f"{report.exploitability_pct:.3g}% of the pot)")
    return "\n".join(lines)


# -- CSV --------------------------------------------------------------------------------------
def csv_rows(report):
    """Header and one row per combo: combo, class, weight (own reach), ``mix_<label>`` per
    action, ev, equity (empty where undefined)."""
    header = ["combo", "class", "weight", *(f"mix_{a}" for a in report.actions), "ev",
              "equity"]
    rows = []
    for name, cls, r, s, ev, eq in zip(report.combo_names(), report.classes(), report.reach,
                                       report.strategy, report.ev, report.equity):
        rows.append([name, cls, repr(float(r)), *(repr(float(p)) for p in s),
                     "" if np.isnan(ev) else repr(float(ev)),
                     "" if np.isnan(eq) else repr(float(eq))])
    return header, rows


def write_csv(report, path):
    """Write :func:`csv_rows` to ``path`` atomically."""
    header, rows = csv_rows(report)
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    with atomic_open(path, "w", encoding="utf-8") as f:
        f.write(text.getvalue())


# -- HTML -------------------------------------------------------------------------------------
_CSS = """body{font-family:sans-serif;margin:20px}table.grid{border-collapse:collapse}
.grid td{width:58px;height:40px;padding:0;border:1px solid #fff;position:relative;font-size:12px}
.bar{display:flex;height:100%;width:100%}.bar i{display:block;height:100%}
.grid td b{position:absolute;left:3px;top:2px;color:#000;text-shadow:0 0 3px #fff}
.grid td small{position:absolute;right:3px;bottom:2px;text-shadow:0 0 3px #fff}
.key{display:inline-block;width:14px;height:14px;margin:0 4px 0 12px;vertical-align:middle}
table.combos{border-collapse:collapse;font-size:12px}
.combos td,.combos th{padding:1px 6px;text-align:right}"""


def _attr(name, value):
    return f'{name}="{html.escape(value, quote=True)}"'


def _number(x):
    return None if np.isnan(x) else float(x)


def to_html(report, title=None):
    """A self-contained page: the 13 x 13 grid of the node (stacked bars of the action
    frequencies, EV in the corner; ``data-hand``, ``data-probs``, ``data-combos``, ``data-ev``,
    ``data-equity`` exact as JSON, a tooltip), the whole range, and every combo in a table."""
    colors = action_colors(report.actions)
    grid = report.grid()
    rows = []
    for r in range(13):
        cells = []
        for c in range(13):
            name, p = GRID[r][c], grid["strategy"][r, c]
            live = grid["combos"][r, c] > 0
            ev, eq = _number(grid["ev"][r, c]), _number(grid["equity"][r, c])
            tip = name
            if live:
                tip += "".join(f"\n{n}: {100 * q:.2f}%" for n, q in zip(report.names, p))
                tip += f"\ncombos: {grid['combos'][r, c]:.3f}"
                tip += f"\nEV: {ev:.3f}" if ev is not None else ""
                tip += f"\nequity: {100 * eq:.2f}%" if eq is not None else ""
            bars = "".join(f'<i style="width:{100 * q:.4f}%;background:{colors[a]}"></i>'
                           for a, q in zip(report.actions, p)) if live else ""
            corner = f"<small>{ev:.1f}</small>" if live and ev is not None else ""
            probs = json.dumps(dict(zip(report.actions, p.tolist())))
            cells.append(f"<td {_attr('data-hand', name)} {_attr('data-probs', probs)} "
                         f"{_attr('data-combos', json.dumps(float(grid['combos'][r, c])))} "
                         f"{_attr('data-ev', json.dumps(ev))} "
                         f"{_attr('data-equity', json.dumps(eq))} {_attr('title', tip)}"
                         + ("" if live else ' style="background:#eeeeee"')
                         + f"><div class=\"bar\">{bars}</div><b>{name}</b>{corner}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    legend = "".join(f'<span class="key" style="background:{colors[a]}"></span>'
                     f"{html.escape(f'{a} = {n}')}" for a, n in zip(report.actions, report.names))
    total = report.overall()
    overall = ", ".join(f"{n} {100 * q:.1f}%" for n, q in zip(report.names, total["strategy"]))
    head = ("<tr><th>combo</th><th>class</th><th>weight</th>"
            + "".join(f"<th>{html.escape(a)}</th>" for a in report.actions)
            + "<th>EV</th><th>equity</th></tr>")
    table = [head]
    for name, cls, r, s, ev, eq in zip(report.combo_names(), report.classes(), report.reach,
                                       report.strategy, report.ev, report.equity):
        table.append(f"<tr><td>{name}</td><td>{cls}</td><td>{r:.4f}</td>"
                     + "".join(f"<td>{100 * q:.1f}%</td>" for q in s)
                     + f"<td>{'' if np.isnan(ev) else f'{ev:.3f}'}</td>"
                     f"<td>{'' if np.isnan(eq) else f'{100 * eq:.1f}%'}</td></tr>")
    title = title or f"Solved spot: {describe_node(report)}"
    body = (f"<p>{report.iterations:,} iterations, exploitability "
            f"{report.exploitability_pct:.3g}% of the pot</p><p>{legend}</p>\n"
            "<table class=\"grid\">\n" + "\n".join(rows) + "\n</table>\n"
            f"<p>Whole range ({total['combos']:.1f} combos): {html.escape(overall)}; EV "
            f"{total['ev']:.3f} chips, equity {100 * total['equity']:.1f}%</p>"
            "<p>Rows and columns A..2; pairs on the diagonal, suited above it, offsuit below. "
            "Bar widths: action frequencies (combos weighted by how often the player holds "
            f"them here); corner: EV in chips (share of the final pot minus chips "
            "put in from here on). Hover a cell for its numbers.</p>\n"
            "<details><summary>Every combo</summary>\n<table class=\"combos\">\n"
            + "\n".join(table) + "\n</table></details>")
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}"
            f"</title><style>{_CSS}</style></head><body>\n<h2>{html.escape(title)}</h2>\n"
            f"{body}\n</body></html>\n")


# -- PNG --------------------------------------------------------------------------------------
def save_png(report, path, title=None):
    """Draw the grid (stacked bars per class, EV in the corner) to ``path``; needs matplotlib
    (:func:`holdem.analysis.ranges.charts.pyplot` raises ChartError without it)."""
    plt = pyplot()
    from matplotlib.patches import Patch, Rectangle

    colors = action_colors(report.actions)
    grid = report.grid()
    fig, ax = plt.subplots(figsize=(10, 10.8))
    for r in range(13):
        for c in range(13):
            y = 12 - r
            if grid["combos"][r, c] > 0:
                x = float(c)
                for a, p in zip(report.actions, grid["strategy"][r, c]):
                    ax.add_patch(Rectangle((x, y), p, 1, color=colors[a], linewidth=0))
                    x += p
                if not np.isnan(grid["ev"][r, c]):
                    ax.text(c + 0.95, y + 0.08, f"{grid['ev'][r, c]:.1f}", ha="right",
                            fontsize=7)
            else:
                ax.add_patch(Rectangle((c, y), 1, 1, color="#eeeeee"))
            ax.text(c + 0.05, y + 0.9, GRID[r][c], va="top", fontsize=8)
    ax.set_xlim(0, 13)
    ax.set_ylim(0, 13)
    ax.set_aspect("equal")
    ax.axis("off")
    for k in range(14):
        ax.plot([k, k], [0, 13], color="white", lw=1)
        ax.plot([0, 13], [k, k], color="white", lw=1)
    ax.set_title(title or describe_node(report), fontsize=9)
    ax.legend(handles=[Patch(color=colors[a], label=f"{a} = {n}")
                       for a, n in zip(report.actions, report.names)],
              loc="upper center", bbox_to_anchor=(0.5, 0), ncol=4, fontsize=8)
    try:
        with atomic_open(path, "wb") as f:
            fig.savefig(f, format="png", dpi=100, bbox_inches="tight")
    finally:
        plt.close(fig)
