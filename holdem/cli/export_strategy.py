"""Export a checkpoint's average strategy as JSON or CSV.

    python -m holdem.cli.export_strategy --checkpoint runs/leduc --out leduc.json
    python -m holdem.cli.export_strategy --checkpoint runs/x --out flop.csv --street flop --player 1

CSV is chosen by a ``.csv`` suffix or ``--format csv``, JSON otherwise. The records, both formats
and reading an export back (``read_export``) are in :mod:`holdem.analysis.export`.
"""

import sys
from pathlib import Path

from holdem.cli.common import ArgumentParser, run_main
from holdem.fileio import atomic_open


def build_parser():
    p = ArgumentParser(prog="python -m holdem.cli.export_strategy",
                       description="Write a checkpoint's average strategy as JSON or CSV.")
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


def main(argv=None):
    args = build_parser().parse_args(argv)
    from holdem.analysis.blueprint import load_checkpoint_store
    from holdem.analysis.export import (export_records, export_strategy_name, filter_records,
                                        to_csv, to_json)
    from holdem.metrics import compile_notice

    with compile_notice(COMPILE_SECONDS):
        game, store, checkpoint = load_checkpoint_store(args.checkpoint)
    records = filter_records(export_records(game, store, checkpoint, args.street), args.street,
                             args.player)
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
