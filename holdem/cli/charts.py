"""Range chart of a No-Limit Hold'em blueprint (2-6 players) at any decision, from the command
line.

    python -m holdem.cli.charts --checkpoint runs/x                  # SB first to act
    python -m holdem.cli.charts --checkpoint runs/x --line "r2.5b" --html bb.html
    python -m holdem.cli.charts --checkpoint runs/x --line "r2.5b c" --board "Ah Kd 7c"
    python -m holdem.cli.charts --checkpoint runs/x --compare runs/y  # y minus x

The charts themselves (grid convention, outputs) are in :mod:`holdem.analysis.ranges.charts`.
"""

import os
import sys

from holdem.analysis.ranges.charts import (ChartError, compare, comparison_to_html, format_terminal,
                                    format_terminal_comparison, pyplot, range_chart, save_png,
                                    to_html)
from holdem.cli.common import ArgumentParser, checkpoint_file, output_file, run_main
from holdem.fileio import atomic_open


def build_parser():
    p = ArgumentParser(prog="python -m holdem.cli.charts",
                       description="Range chart of a No-Limit Hold'em blueprint (2-6 players): the "
                       "action mix of all "
                       "169 hand classes at one decision, preflop or with a board (terminal grid "
                       "by default).")
    p.add_checkpoint()
    p.add_argument("--line", default="", metavar='"LABELS"',
                   help='abstract actions so far, space-separated labels or an export '
                   'history: "" = small blind first to act (default), "r2.5b" (or "r2.5") = '
                   'big blind facing the open, "r2.5b c" = big blind first to act on the '
                   'flop (with --board), ...')
    p.add_argument("--board", default="", metavar='"CARDS"',
                   help='the board for a decision after the flop, e.g. "Ah Kd 7c" (3, 4 or 5 '
                   'cards, as the line\'s street needs); each cell then mixes its combos by '
                   'how often the player holds them there')
    p.add_argument("--html", metavar="OUT.html", type=output_file,
                   help="write a self-contained HTML page")
    p.add_argument("--png", metavar="OUT.png", type=output_file,
                   help="write a PNG (needs matplotlib)")
    p.add_argument("--compare", metavar="PATH2", type=checkpoint_file,
                   help="second checkpoint: chart the change from PATH to PATH2")
    p.add_argument("--current", action="store_true",
                   help="the current (regret-matching) strategy instead of the average")
    p.add_argument("--no-color", action="store_true",
                   help="plain-text terminal grid (the default when stdout is not a terminal "
                   "or NO_COLOR is set)")
    return p


COMPILE_SECONDS = 10
"""CPU seconds that compiling the bucket lookup and the range kernels takes with a cold numba
cache."""


def game_difference(first, second):
    """How the games of two Blueprints differ (``""`` when they are the same game: players,
    stacks, blinds and ante; the card and action abstractions may differ), for a one-line
    error."""
    from dataclasses import asdict

    a, b = asdict(first.config.game), asdict(second.config.game)
    changed = [f"{key} {b[key]} (against {a[key]})" for key in a
               if key != "buckets" and a.get(key) != b.get(key)]
    return ", ".join(changed)


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    from holdem.analysis.blueprint import Blueprint
    from holdem.config import ConfigError
    from holdem.metrics import compile_notice

    bp = Blueprint.load(args.checkpoint)
    other = Blueprint.load(args.compare) if args.compare else None
    if other is not None and game_difference(bp, other):
        parser.error(f"argument --compare: {other.checkpoint.path} is another game than "
                     f"{bp.checkpoint.path}: {game_difference(bp, other)}; charts compare "
                     "two blueprints of the same game")
    try:
        with compile_notice(COMPILE_SECONDS):
            chart = range_chart(bp, args.line, average=not args.current, board=args.board)
        result = chart
        if other is not None:
            result = compare(chart, range_chart(other, chart.line, average=not args.current,
                                                board=args.board))
        if args.png:
            pyplot()                                    # fail before writing anything
    except ChartError as exc:
        raise ConfigError(str(exc)) from None
    if args.html:
        page = comparison_to_html(result) if args.compare else to_html(result)
        with atomic_open(args.html, "w", encoding="utf-8") as f:
            f.write(page)
        print(f"wrote {args.html}")
    if args.png:
        save_png(result, args.png)
        print(f"wrote {args.png}")
    if not (args.html or args.png):
        # colour codes only for a terminal (not into a pipe or a file), and never with
        # NO_COLOR set to anything (no-color.org)
        color = not args.no_color and not os.environ.get("NO_COLOR") and sys.stdout.isatty()
        print(format_terminal_comparison(result, color) if args.compare
              else format_terminal(result, color))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
