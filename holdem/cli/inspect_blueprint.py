"""Summarize a checkpoint, show the strategy at one decision, or both players' ranges at a node.

    python -m holdem.cli.inspect_blueprint --checkpoint runs/x
    python -m holdem.cli.inspect_blueprint --checkpoint runs/x --spot "r2.5b c | As Kd | 2c 7h 9d"
    python -m holdem.cli.inspect_blueprint --checkpoint runs/x --range "r2.5b c | 2c 7h 9d"

Spot notation (No-Limit Hold'em, any number of seats): ``LINE | HOLE | BOARD``. LINE is the
abstract actions so far, every seat's in order of play, separated by spaces (``f``, ``c``,
``r2.5b`` = raise to 2.5 big blinds, ``r0.5p`` = half-pot bet or raise, ``a`` = all-in; see
export_strategy's ``actions``), HOLE the two cards of the player to act, BOARD the board cards
dealt so far: none preflop, 3 on the flop, 4 on the turn, 5 on the river (another count is an
error). Cards as in ``holdem.cards.parse`` (e.g. ``As Kd``).

It prints who acts (seat number and name), the street, the pot and the amount to call, the
card bucket (preflop also its hand classes, e.g. ``AKo``), then each action's label, what it
does here (``c`` is a check or a call of so much, ``r...`` a bet or raise to so much) and its
probability.

Range notation (any number of seats): ``LINE | BOARD``. It prints the probability of the line on
that board (every player's actions, card removal between their hands included), the reach per
hand class of each player still in the hand as a 13 x 13 grid (the share of the class it plays
the line with: 100 = always, . = every combo is on the board), the action mix of the player to
act over its range, and each player's range as a range string (``AA,KK:0.5,...``: weight =
reach; per combo with ``--combos``), which other poker tools read. ``--out FILE.csv`` writes one
row per live combo: its class, bucket, each player's reach and weight, and the action mix. The
first line names the strategy: the average, or the current one on the streets where training
kept no average (``solver.average_max_street``).
"""

import sys

from holdem.cli.common import ArgumentParser, output_file, run_main


def build_parser():
    p = ArgumentParser(prog="python -m holdem.cli.inspect_blueprint",
                       description="Summarize a checkpoint or show one decision's strategy.")
    p.add_checkpoint()
    p.add_argument("--spot", metavar='"LINE | HOLE | BOARD"',
                   help="a decision (NLHE), e.g. \"r2.5b c | As Kd | 2c 7h 9d\"")
    p.add_argument("--range", metavar='"LINE | BOARD"', dest="range_",
                   help="every player's range at a node (NLHE), e.g. "
                   "\"r2.5b c | 2c 7h 9d\"")
    p.add_argument("--combos", action="store_true",
                   help="--range: range strings per combo (AsKh:0.5) instead of per class")
    p.add_argument("--out", metavar="FILE.csv", type=output_file,
                   help="--range: write one row per live combo (class, bucket, reach, weight, "
                   "action mix)")
    p.add_argument("--current", action="store_true",
                   help="show the current (regret-matching) strategy instead of the average")
    return p


def parse_range(text):
    """(line, board cards) of the range notation ``LINE | BOARD``."""
    from holdem.cards import parse
    from holdem.config import ConfigError

    parts = [part.strip() for part in text.split("|")]
    if len(parts) > 2:
        raise ConfigError(f"--range {text!r}: expected 'LINE | BOARD'")
    try:
        board = [int(c) for c in parse(parts[1])] if len(parts) == 2 and parts[1] else []
    except ValueError as exc:
        raise ConfigError(f"--range {text!r}: {exc}") from None
    return parts[0], board


def parse_spot(text):
    """(line, hole cards, board cards) of the spot notation (the line as written: labels or an
    export history, read by :meth:`holdem.analysis.blueprint.Blueprint.line_labels`)."""
    from holdem.cards import parse
    from holdem.config import ConfigError

    parts = [part.strip() for part in text.split("|")]
    if len(parts) not in (2, 3):
        raise ConfigError(f"--spot {text!r}: expected 'LINE | HOLE | BOARD'")
    line, hole = parts[0], parts[1]
    board = parts[2] if len(parts) == 3 else ""
    try:
        hole_cards = [int(c) for c in parse(hole)]
        board_cards = [int(c) for c in parse(board)] if board else []
    except ValueError as exc:
        raise ConfigError(f"--spot {text!r}: {exc}") from None
    if len(hole_cards) != 2:
        raise ConfigError(f"--spot {text!r}: HOLE needs 2 cards")
    return line, hole_cards, board_cards


COMPILE_SECONDS = 4
"""CPU seconds that compiling the bucket lookup of ``--spot`` takes with a cold numba cache."""


def main(argv=None):
    args = build_parser().parse_args(argv)
    from holdem.analysis.blueprint import Blueprint
    from holdem.config import ConfigError
    from holdem.games import CARDS
    from holdem.metrics import compile_notice, format_bytes, format_seconds

    bp = Blueprint.load(args.checkpoint)
    meta = bp.metadata
    if args.spot is not None and args.range_ is not None:
        raise ConfigError("--spot and --range: choose one")
    if (args.combos or args.out) and args.range_ is None:
        raise ConfigError("--combos and --out go with --range")
    view = "--spot" if args.spot is not None else "--range" if args.range_ is not None else None
    if view and not bp.game.supports(CARDS):
        raise ConfigError(
            f"{view} is for No-Limit Hold'em; {meta['path']} is {bp.game.name} with "
            f"{bp.game.num_players} players: python -m holdem.cli.export_strategy --checkpoint "
            f"{args.checkpoint} --out FILE.json lists its strategy at every infoset")
    if args.range_ is not None:
        line, board = parse_range(args.range_)
        try:
            with compile_notice(COMPILE_SECONDS + RANGE_COMPILE_SECONDS):
                node = bp.range(line, board, average=not args.current)
        except ValueError as exc:
            raise ConfigError(f"--range {args.range_!r}: {exc}") from None
        print("\n".join(describe_range(node, meta["iterations"], args.combos)))
        if args.out:
            write_range_csv(node, args.out)
            print(f"wrote {args.out}")
        return 0
    if args.spot is None:
        print(f"checkpoint: {meta['path']}")
        print(f"game: {meta['game']}")
        print(f"players: {bp.game.num_players}")
        print(f"iterations: {meta['iterations']}")
        print(f"training time: {format_seconds(meta['elapsed'])}")
        print(f"infosets: {meta['infosets']}")
        print(f"store: {format_bytes(bp.checkpoint.header.get('stats', {}).get('store_bytes', 0))}")
        if meta["buckets_sha256"]:
            print(f"bucket file sha256: {meta['buckets_sha256']}")
        versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
        print(f"written by: {versions}")
        return 0
    labels, hole, board = parse_spot(args.spot)
    try:
        with compile_notice(COMPILE_SECONDS):
            spot = bp.spot(labels, hole, board, average=not args.current)
    except ValueError as exc:
        raise ConfigError(f"--spot {args.spot!r}: {exc}") from None
    print("\n".join(describe_spot(spot, meta["iterations"])))
    return 0


RANGE_COMPILE_SECONDS = 6
"""CPU seconds that compiling the range kernels takes with a cold numba cache."""

def describe_range(node, iterations, combos=False):
    """The lines ``--range`` prints for a :class:`holdem.analysis.ranges.node.NodeRange`: one grid,
    likeliest combos and range string per player still in the hand."""
    import numpy as np

    from holdem.analysis.blueprint import STREETS
    from holdem.analysis.ranges.charts import GRID
    from holdem.analysis.ranges.strings import format_range
    from holdem.cards import format_card

    board = " ".join(map(format_card, node.board)) or "no board"
    seats = node.seats
    lines = [f"range after {' '.join(node.line) or '(the start)'} on {board}: "
             f"{STREETS[node.street]}, player {node.player} ({seats[node.player]}) to act; "
             f"{node.strategy_name} after {iterations:,} iterations",
             f"line probability on this board: {node.line_probability:.6g} "
             f"({node.combos.shape[0]:,} live combos per player)"]
    if len(seats) > 2:
        lines.append(f"players in the hand: {', '.join(f'{p} ({seats[p]})' for p in node.players)}"
                     " (card removal between each player and each opponent, one at a time)")
    for player in node.players:
        by_class = node.by_class(player)
        share = node.weight[player] / max(node.weight[player].sum(), 1e-300)
        lines.append(f"player {player} ({seats[player]}) reach % per class "
                     f"({(node.reach[player] > 0).sum():,} combos in the range):")
        for r in range(13):
            cells = []
            for c in range(13):
                reach = by_class["reach"][r, c]
                cells.append(f"{GRID[r][c]:<3} " + ("  ." if reach != reach
                                                     else f"{round(100 * reach):3d}"))
            lines.append("  " + " ".join(cells))
        top = np.argsort(-share, kind="stable")[:8]
        names = node.combo_names()
        lines.append("  likeliest combos: " + ", ".join(
            f"{names[i]} {100 * share[i]:.2f}%" for i in top if share[i] > 0))
    acting = node.weight[node.player]
    total = max(acting.sum(), 1e-300)
    mix = (acting[:, None] * node.mix).sum(axis=0) / total
    lines.append(f"player {node.player} over its range: " + ", ".join(
        f"{label} ({meaning}) {100 * p:.1f}%"
        for label, meaning, p in zip(node.actions, node.names, mix)))
    for player in node.players:
        text = format_range(node.range_weights(player, combos=combos), combos=combos)
        lines.append(f"range string, player {player}: {text or '(empty)'}")
    return lines


def write_range_csv(node, path):
    """One row per live combo: combo, class, bucket, reach and weight of each player still in
    the hand, and the mix of the player to act (one column per action label)."""
    import csv
    import io

    from holdem.analysis.ranges.charts import GRID
    from holdem.fileio import atomic_open

    cells = node.class_cells()
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    players = node.players
    writer.writerow(["combo", "class", "bucket", *(f"reach_p{p}" for p in players),
                     *(f"weight_p{p}" for p in players), *(f"mix_{a}" for a in node.actions)])
    for i, name in enumerate(node.combo_names()):
        writer.writerow([name, GRID[cells[i, 0]][cells[i, 1]], int(node.buckets[i]),
                         *(f"{node.reach[p, i]:.9g}" for p in players),
                         *(f"{node.weight[p, i]:.9g}" for p in players),
                         *(f"{x:.9g}" for x in node.mix[i])])
    with atomic_open(path, "w", encoding="utf-8") as f:
        f.write(out.getvalue())


def describe_spot(spot, iterations):
    """The lines ``--spot`` prints for a :class:`holdem.analysis.blueprint.Spot`."""
    from holdem.analysis.blueprint import STREETS

    street = STREETS[spot.street]
    call = f"{spot.to_call:g} bb to call" if spot.to_call else "nothing to call"
    cards = " ".join(spot.hole) + (f", board {' '.join(spot.board)}" if spot.board else "")
    hands = (f" = hand class{'es' if len(spot.hands) > 1 else ''} {' '.join(spot.hands)}"
             if spot.hands else "")
    lines = [f"to act: player {spot.player}, the {spot.seat}; {street}; pot {spot.pot:g} bb, "
             f"{call}",
             f"cards: {cards} -> {street} bucket {spot.bucket} of {spot.num_buckets}{hands}",
             f"{spot.strategy_name} after {iterations:,} iterations:"]
    width = max(len(label) for label in spot.labels)
    mwidth = max(len(m) for m in spot.meanings)
    lines += [f"  {label:<{width}}  {meaning:<{mwidth}}  {p:.4f}"
              for label, meaning, p in zip(spot.labels, spot.meanings, spot.strategy)]
    if not spot.visited:
        lines.append("note: training never reached this infoset, so its strategy is uniform")
    return lines


if __name__ == "__main__":
    sys.exit(run_main(main))
