"""Export a checkpoint's average strategy as JSON or CSV.

    python -m holdem.cli.export_strategy --checkpoint runs/leduc --out leduc.json
    python -m holdem.cli.export_strategy --checkpoint runs/x --out flop.csv --street flop --player 1

CSV is chosen by a ``.csv`` suffix or ``--format csv``, JSON otherwise. The records, both formats
and reading an export back (``read_export``) are in :mod:`holdem.analysis.export`.

No-Limit exports hold one record per visited infoset (of the ``--street`` streets): a 3-6 player
export walks the betting histories training visited, printing a progress line on stderr every
few seconds; the 10-minute ``configs/6max.yaml`` blueprint has 3.4 M flop infosets of its
13.5 M (``--street flop``: 1.5 minutes, 10 GB of memory, 700 MB of JSON).
"""

import sys
from pathlib import Path

from holdem.cli.common import ArgumentParser, run_main
from holdem.fileio import atomic_open


def build_parser():
    p = ArgumentParser(prog="python -m holdem.cli.export_strategy",
                       description="Write a checkpoint's average strategy as JSON or CSV, one "
                       "record per infoset (No-Limit: per visited infoset, every street; a "
                       "long 6-max run has millions, so --street keeps the file to the "
                       "streets asked for).")
    p.add_checkpoint()
    p.add_argument("--out", required=True, metavar="FILE", help="output file (.json or .csv)")
    p.add_argument("--format", choices=("json", "csv"),
                   help="output format (default: from the --out suffix, else json)")
    p.add_argument("--street", action="append",
                   choices=("preflop", "flop", "turn", "river", "0", "1"),
                   help="keep only these streets (NLHE names; Kuhn/Leduc rounds 0/1); repeatable")
    p.add_argument("--player", action="append", type=int, choices=(0, 1, 2, 3, 4, 5),
                   help="keep only these players' infosets; repeatable")
    return p


COMPILE_SECONDS = 1
"""CPU seconds that compiling the store's rebuild takes with a cold numba cache."""


PROGRESS_SECONDS = 5.0
"""Seconds between the progress lines of a multi-way export's walk (none for a shorter one)."""


def _progress_printer(stream=None):
    """A ``progress`` for :func:`holdem.analysis.export.multiway_records`: a line on stderr
    every :data:`PROGRESS_SECONDS`."""
    state = {"next": PROGRESS_SECONDS}

    def progress(depth, histories, infosets, seconds):
        if seconds >= state["next"]:
            state["next"] = seconds + PROGRESS_SECONDS
            print(f"walking the visited betting histories: depth {depth}, {histories:,} "
                  f"histories, {infosets:,} infosets, {seconds:.0f} s",
                  file=stream or sys.stderr, flush=True)

    return progress


def main(argv=None):
    args = build_parser().parse_args(argv)
    from holdem.analysis.blueprint import load_checkpoint_store
    from holdem.analysis.export import (export_records, export_strategy_name, filter_records,
                                        to_csv, to_json)
    from holdem.metrics import compile_notice

    with compile_notice(COMPILE_SECONDS):
        game, store, checkpoint = load_checkpoint_store(args.checkpoint)
    records = filter_records(export_records(game, store, checkpoint, args.street,
                                            _progress_printer()), args.street, args.player)
    fmt = args.format or ("csv" if Path(args.out).suffix.lower() == ".csv" else "json")
    strategy = export_strategy_name(game, checkpoint, records)
    text = (to_csv(records) if fmt == "csv"
            else to_json(records, game.name, checkpoint.iterations, strategy))
    with atomic_open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {len(records)} infosets to {Path(args.out).resolve()} ({strategy})",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
