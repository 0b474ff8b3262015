"""Export a checkpoint's strategy (the average one; the current one past
``solver.average_max_street``, e.g. after the preflop for six-max) as JSON or CSV.

    python -m holdem.cli.export_strategy --checkpoint runs/leduc --out leduc.json
    python -m holdem.cli.export_strategy --checkpoint runs/x --out flop.csv --street flop --player 1

CSV is chosen by a ``.csv`` suffix or ``--format csv``, JSON otherwise (``--format`` against a
``.json`` or ``.csv`` name is refused). The records, both formats
and reading an export back (``read_export``) are in :mod:`holdem.analysis.export.records`.

No-Limit exports hold one record per visited infoset (of the ``--street`` streets): a 3-6 player
export walks the betting histories training visited, printing a progress line on stderr every
few seconds; the 10-minute ``configs/6max.yaml`` blueprint has 3.4 M flop infosets of its
13.5 M (``--street flop``: a minute, 2.1 GB of memory, 700 MB of JSON).

The records are streamed to a temporary file beside ``--out``, renamed over it once complete:
memory holds the checkpoint's store and a chunk of records, not the whole export.
"""

import sys
from pathlib import Path

from holdem.cli.common import ArgumentParser, output_file, run_main
from holdem.fileio import atomic_open


def build_parser():
    p = ArgumentParser(prog="python -m holdem.cli.export_strategy",
                       description="Write a checkpoint's strategy as JSON or CSV, one record "
                       "per infoset (No-Limit: per visited infoset, every street; a long "
                       "6-max run has millions, so --street keeps the file to the streets "
                       "asked for). The strategy is the average one, except past "
                       "solver.average_max_street, where training kept no average: "
                       "configs/6max.yaml keeps it preflop only, so a six-max export holds "
                       "the current (regret-matching) strategy after the preflop; the JSON's "
                       "\"strategy\" field and the closing line say which.")
    p.add_checkpoint()
    p.add_argument("--out", required=True, metavar="FILE", type=output_file,
                   help="output file (.json or .csv)")
    p.add_argument("--format", choices=("json", "csv"),
                   help="output format (default: from the --out suffix, else json); a "
                   ".json or .csv --out of the other format is refused")
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
    """A ``progress`` for :func:`holdem.analysis.export.multiway.multiway_records`: a line on stderr
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
    parser = build_parser()
    args = parser.parse_args(argv)
    suffix = Path(args.out).suffix.lower().lstrip(".")
    if args.format and suffix in ("json", "csv") and suffix != args.format:
        parser.error(f"argument --format: {args.format}, but --out {args.out} is named "
                     f".{suffix}: name it {Path(args.out).with_suffix('.' + args.format)} "
                     f"or leave out --format")
    from holdem.analysis.blueprint import load_checkpoint_store
    from holdem.analysis.export.records import (RecordFilter, iter_export_records,
                                        planned_strategy_name, write_csv, write_json)
    from holdem.metrics import compile_notice

    with compile_notice(COMPILE_SECONDS):
        game, store, checkpoint = load_checkpoint_store(args.checkpoint)
    out = Path(args.out)
    fmt = args.format or ("csv" if out.suffix.lower() == ".csv" else "json")
    selection = RecordFilter(args.street, args.player)
    chunks = selection.chunks(iter_export_records(game, store, checkpoint, args.street,
                                                  _progress_printer()))
    # Streamed into the temporary file of atomic_open: an error (a filter that selects
    # nothing included) removes it and leaves --out as it was.
    with atomic_open(out, "w") as f:
        if fmt == "csv":
            write_csv(f, chunks)
        else:
            strategy = (planned_strategy_name(game, store, checkpoint, args.street)
                        or (lambda: selection.strategy_name(game, checkpoint)))
            write_json(f, chunks, game.name, checkpoint.iterations, strategy, out.parent)
        selection.check()
    print(f"wrote {selection.num_kept} infosets to {out.resolve()} "
          f"({selection.strategy_name(game, checkpoint)})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
