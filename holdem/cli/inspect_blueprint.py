"""Summarize a checkpoint, or show the strategy at one decision.

    python -m holdem.cli.inspect_blueprint --checkpoint runs/x
    python -m holdem.cli.inspect_blueprint --checkpoint runs/x --spot "r2.5b c | As Kd | 2c 7h 9d"

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
"""

import sys

from holdem.cli.common import ArgumentParser, run_main


def build_parser():
    p = ArgumentParser(prog="python -m holdem.cli.inspect_blueprint",
                       description="Summarize a checkpoint or show one decision's strategy.")
    p.add_checkpoint()
    p.add_argument("--spot", metavar='"LINE | HOLE | BOARD"',
                   help="a decision (NLHE), e.g. \"r2.5b c | As Kd | 2c 7h 9d\"")
    p.add_argument("--current", action="store_true",
                   help="show the current (regret-matching) strategy instead of the average")
    return p


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
    from holdem.metrics import compile_notice, format_bytes, format_seconds

    bp = Blueprint.load(args.checkpoint)
    meta = bp.metadata
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
    print("\n".join(describe_spot(spot, meta["iterations"], args.current)))
    return 0


def describe_spot(spot, iterations, current=False):
    """The lines ``--spot`` prints for a :class:`holdem.analysis.blueprint.Spot`."""
    from holdem.analysis.blueprint import STREETS

    street = STREETS[spot.street]
    call = f"{spot.to_call:g} bb to call" if spot.to_call else "nothing to call"
    cards = " ".join(spot.hole) + (f", board {' '.join(spot.board)}" if spot.board else "")
    hands = (f" = hand class{'es' if len(spot.hands) > 1 else ''} {' '.join(spot.hands)}"
             if spot.hands else "")
    which = "current (regret matching)" if current else "average"
    lines = [f"to act: player {spot.player}, the {spot.seat}; {street}; pot {spot.pot:g} bb, "
             f"{call}",
             f"cards: {cards} -> {street} bucket {spot.bucket} of {spot.num_buckets}{hands}",
             f"{which} strategy after {iterations:,} iterations:"]
    width = max(len(label) for label in spot.labels)
    mwidth = max(len(m) for m in spot.meanings)
    lines += [f"  {label:<{width}}  {meaning:<{mwidth}}  {p:.4f}"
              for label, meaning, p in zip(spot.labels, spot.meanings, spot.strategy)]
    if not spot.visited:
        lines.append("note: training never reached this infoset, so its strategy is uniform")
    return lines


if __name__ == "__main__":
    sys.exit(run_main(main))
