"""Solve a turn or river spot with exact cards and show the strategy, EV and equity per hand.

    python -m holdem.cli.solve_spot --oop "QQ+,AK" --ip "JJ-88,AQs" --board "Td 9d 6h Qc" \\
        --pot 10 --stack 45
    python -m holdem.cli.solve_spot --checkpoint runs/x --line "r2.5b c c c" --board "Ah 7d 2c 9s"
    python -m holdem.cli.solve_spot ... --at "x b5" --combos --out spot.csv --html spot.html

The spot is two ranges, a board of 4 cards (turn) or 5 (river), the pot and the stack behind
each player, or a node of a heads-up blueprint where the turn or river begins (its ranges there,
pot and stacks in its chips, its config's bet sizes). The solver is
:class:`holdem.subgame.SubgameSolver` (player 0 is out of position: the big blind of a
blueprint); what is printed and written comes from :mod:`holdem.subgame.report`.
"""

import argparse
import sys

from holdem.cli.common import (ArgumentParser, checkpoint_file, iteration_count,
                               non_negative_int, output_file, positive_float, positive_int,
                               run_main)


def sizes(text):
    """argparse type of a list of pot fractions: ``0.5,1`` (``none`` or nothing: no size)."""
    text = text.strip()
    if text.lower() in ("", "none"):
        return ()
    out = []
    for part in text.split(","):
        try:
            value = float(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected pot fractions such as 0.5,1, got "
                                             f"{text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"sizes are fractions of the pot above 0, got "
                                             f"{part.strip()!r}")
        out.append(value)
    return tuple(sorted(set(out)))


def non_negative_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text!r}")
    return value


def build_parser():
    p = ArgumentParser(prog="python -m holdem.cli.solve_spot",
                       description="Solve a turn or river spot with exact cards (two ranges, "
                       "or a heads-up blueprint's ranges where the turn or river begins) and "
                       "show the strategy, EV and equity of every hand class at a decision.")
    spot = p.add_argument_group("the spot (--oop, --ip, --pot and --stack; or --checkpoint "
                                "and --line)")
    spot.add_argument("--board", required=True, metavar='"CARDS"',
                      help='4 cards (a turn spot: every river is dealt) or 5 (river), e.g. '
                      '"Td 9d 6h Qc"')
    spot.add_argument("--oop", metavar="RANGE",
                      help='range of the player out of position (first to act), e.g. '
                      '"QQ+,AK,T9s:0.5" (a range string; combos on the board are dropped)')
    spot.add_argument("--ip", metavar="RANGE", help="range of the player in position")
    spot.add_argument("--pot", type=positive_float, metavar="P",
                      help="chips in the middle when the street begins (bets are whole "
                      "chips: give amounts in small units, e.g. 100 chips to a big blind)")
    spot.add_argument("--stack", type=non_negative_float, metavar="S",
                      help="chips behind each player (the effective stack)")
    spot.add_argument("--checkpoint", metavar="PATH", type=checkpoint_file,
                      help="a heads-up No-Limit blueprint (file or logdir): solve from its "
                      "node after --line, with both players' ranges there")
    spot.add_argument("--line", metavar='"LABELS"',
                      help='with --checkpoint: abstract actions up to the start of the turn or '
                      'river, e.g. "r2.5b c c c" (turn after a checked flop) or an export '
                      'history')
    menu = p.add_argument_group("bet menu (default: the blueprint config's turn and river "
                                "sizes, else bets 0.5,1 and raises 1 with all-in)")
    menu.add_argument("--bets", type=sizes, metavar="F,F",
                      help="bet sizes, fractions of the pot, both players, turn and river "
                      "(none: no bets)")
    menu.add_argument("--raises", type=sizes, metavar="F,F",
                      help="raise sizes: raise by F x the pot after calling")
    menu.add_argument("--no-allin", action="store_true",
                      help="no all-in action (but where a size reaches the stack)")
    menu.add_argument("--max-raises", type=non_negative_int, metavar="N",
                      help="at most N bets and raises per street")
    menu.add_argument("--oop-bets", type=sizes, metavar="F,F",
                      help="bet sizes of the out-of-position player only")
    menu.add_argument("--ip-bets", type=sizes, metavar="F,F",
                      help="bet sizes of the in-position player only")
    solve = p.add_argument_group("solving")
    solve.add_argument("--target", type=positive_float, default=0.3, metavar="PCT",
                       help="stop at this exploitability, %% of the pot (default 0.3)")
    solve.add_argument("--max-iterations", type=iteration_count, default=1000, metavar="N",
                       help="stop after N iterations (default 1000)")
    solve.add_argument("--check-every", type=positive_int, default=10, metavar="N",
                       help="measure the exploitability every N iterations (default 10)")
    solve.add_argument("--time-limit", type=positive_float, metavar="SECONDS",
                       help="stop at the first check after this many seconds")
    solve.add_argument("--threads", type=positive_int, default=1, metavar="N",
                       help="threads for a turn spot's rivers (default 1)")
    solve.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    out = p.add_argument_group("output")
    out.add_argument("--at", default="", metavar='"LINE"',
                     help='the decision to show: subgame labels from the root, e.g. "x b5" '
                     '(the river card as a card: "x x 7h"); default the root')
    out.add_argument("--combos", action="store_true",
                     help="print every combo instead of every hand class")
    out.add_argument("--out", metavar="FILE.csv", type=output_file,
                     help="write one row per combo: class, weight, action frequencies, EV, "
                     "equity")
    out.add_argument("--html", metavar="FILE.html", type=output_file,
                     help="write a self-contained chart page")
    out.add_argument("--png", metavar="FILE.png", type=output_file,
                     help="write a PNG chart (needs matplotlib)")
    return p


COMPILE_SECONDS = {"solve": 8, "blueprint": 6}
"""CPU seconds that compiling takes with a cold numba cache: the subgame kernels and the hand
evaluator (``solve``); with --checkpoint also the bucket lookup and range kernels."""


def _menu(args, base):
    """The bet menu: ``base`` with the flags' changes; a pair when one player's bets differ."""
    from dataclasses import replace

    from holdem.subgame.tree import RIVER, TURN

    def streets(values, old):
        return old if values is None else {TURN: values, RIVER: values}

    common = replace(base, bets=streets(args.bets, base.bets),
                     raises=streets(args.raises, base.raises),
                     all_in=base.all_in and not args.no_allin,
                     max_raises=base.max_raises if args.max_raises is None else args.max_raises)
    if args.oop_bets is None and args.ip_bets is None:
        return common
    return tuple(replace(common, bets=streets(own, common.bets))
                 for own in (args.oop_bets, args.ip_bets))


def _range(parser, flag, text, board):
    import numpy as np

    from holdem.subgame.solver import COMBOS, range_weights

    try:
        weights = range_weights(text, f"{flag} range")
    except ValueError as exc:
        parser.error(f"argument {flag}: {exc}")
    dead = np.isin(COMBOS, board).any(axis=1)
    if not (weights > 0).any():
        parser.error(f"argument {flag}: the range {text!r} has no combo")
    if not (weights[~dead] > 0).any():
        parser.error(f"argument {flag}: every combo of {text!r} uses a board card")
    return weights


def _spot_from_ranges(parser, args, board):
    from holdem.subgame.solver import Spot
    from holdem.subgame.tree import BetMenu

    if args.line is not None:
        parser.error("--line goes with --checkpoint")
    missing = [f"--{f}" for f in ("oop", "ip", "pot", "stack") if getattr(args, f) is None]
    if missing:
        parser.error(f"the spot needs {', '.join(missing)} (or --checkpoint PATH --line LINE)")
    if args.stack == 0:
        parser.error("argument --stack: 0 chips behind: both players are all in, there is "
                     "nothing to decide (give the chips behind each player, above 0)")
    oop = _range(parser, "--oop", args.oop, board)
    ip = _range(parser, "--ip", args.ip, board)
    try:
        spot = Spot.make(board, oop, ip, args.pot, args.stack, menu=_menu(args, BetMenu()))
    except ValueError as exc:
        parser.error(f"arguments --oop, --ip: {exc}")
    return spot, []


def _spot_from_blueprint(parser, args, board):
    from holdem.analysis.blueprint import Blueprint
    from holdem.subgame.blueprint import blueprint_menu, blueprint_spot, street_start

    given = [f"--{f}" for f in ("oop", "ip", "pot", "stack") if getattr(args, f) is not None]
    if given:
        parser.error(f"{', '.join(given)}: not with --checkpoint (the spot is the blueprint's)")
    if args.line is None:
        parser.error("--checkpoint needs --line (the actions up to the start of the turn or "
                     "river)")
    from holdem.games import LINES

    bp = Blueprint.load(args.checkpoint)
    if not bp.game.supports(LINES):
        parser.error(f"argument --checkpoint: {bp.checkpoint.path} is {bp.game.name!r} with "
                     f"{bp.game.num_players} players; a spot needs heads-up No-Limit Hold'em")
    try:
        start = street_start(bp, args.line)
    except ValueError as exc:
        parser.error(f"argument --line: {exc}")
    need = 4 if start.street == 2 else 5
    if len(board) != need:
        parser.error(f"argument --board: line {' '.join(start.labels)!r} reaches the "
                     f"{('turn', 'river')[start.street - 2]}: {need} cards, got {len(board)}")
    try:
        spot, start = blueprint_spot(bp, start.labels, board,
                                     menu=_menu(args, blueprint_menu(bp, start.street)))
    except ValueError as exc:
        parser.error(f"argument --board: {exc}")
    meta = bp.metadata
    notes = [f"checkpoint: {meta['path']} ({meta['iterations']:,} iterations), line "
             f"{' '.join(start.labels)}: OOP = the big blind, IP = the small blind (button), "
             f"their ranges = their reach on this board; chips ({start.big_blind} = 1 big "
             "blind)"]
    return spot, notes


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    from holdem.cards import card_tuple, repeated_card
    from holdem.analysis.ranges.charts import ChartError, pyplot
    from holdem.metrics import compile_notice

    try:
        board = card_tuple(args.board, "board")
    except ValueError as exc:
        parser.error(f"argument --board: {str(exc).removeprefix('board: ')}")
    if len(board) not in (4, 5) and args.checkpoint is None:   # else as the line's street needs
        parser.error(f"argument --board: a turn spot has 4 cards, a river spot 5; got "
                     f"{len(board)}")
    if repeated_card(board):
        parser.error(f"argument --board: {repeated_card(board)} is on the board twice")
    if args.png:
        try:
            pyplot()                                    # fail before solving
        except ChartError as exc:
            parser.error(f"argument --png: {exc}")
    seconds = COMPILE_SECONDS["solve"] + COMPILE_SECONDS["blueprint"] * bool(args.checkpoint)
    with compile_notice(seconds, enabled=not args.quiet):
        return _solve(parser, args, board)


def _solve(parser, args, board):
    from holdem.fileio import atomic_open
    from holdem.metrics import format_bytes
    from holdem.subgame.report import (describe_menu, describe_spot, find_line, format_text,
                                       node_report, save_png, to_html, write_csv)
    from holdem.subgame.solver import SubgameSolver

    if args.checkpoint is not None:
        spot, notes = _spot_from_blueprint(parser, args, board)
    else:
        spot, notes = _spot_from_ranges(parser, args, board)
    solver = SubgameSolver(spot, threads=args.threads)
    try:
        find_line(solver, args.at)
    except ValueError as exc:
        parser.error(f"argument --at: {exc}")
    for note in notes:
        print(note)
    print(describe_spot(spot))
    print(describe_menu(spot.menu))
    tree = solver.tree
    print(f"tree: {tree.num_nodes:,} nodes, {tree.num_decisions():,} decisions; memory "
          f"{format_bytes(solver.memory_bytes())}", flush=True)

    def progress(iterations, pct, seconds):
        if not args.quiet:
            print(f"iteration {iterations:,}: exploitability {pct:.3g}% of the pot, "
                  f"{seconds:.1f} s", file=sys.stderr, flush=True)

    try:
        solution = solver.solve(target=args.target, max_iterations=args.max_iterations,
                                check_every=args.check_every, time_limit=args.time_limit,
                                progress=progress)
        why = ("target reached" if solution.exploitability_pct <= args.target else
               "time limit" if args.time_limit is not None and solution.iterations
               < args.max_iterations else "--max-iterations reached")
        print(f"solved: {solution.iterations:,} iterations in {solution.seconds:.1f} s, "
              f"exploitability {solution.exploitability_pct:.3g}% of the pot ({why})")
        report = node_report(solution, args.at)
    finally:
        solver.close()
    print(format_text(report, combos=args.combos))
    if args.out:
        write_csv(report, args.out)
        print(f"wrote {args.out}")
    if args.html:
        with atomic_open(args.html, "w", encoding="utf-8") as f:
            f.write(to_html(report))
        print(f"wrote {args.html}")
    if args.png:
        save_png(report, args.png)
        print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
