"""Export a checkpoint's average strategy as JSON or CSV.

    python -m holdem.cli.export_strategy --checkpoint runs/leduc --out leduc.json
    python -m holdem.cli.export_strategy --checkpoint runs/x --out flop.csv --street flop --player 1

Output: ``{"game": ..., "iterations": ..., "infosets": [records]}`` with one record per reachable
infoset (unvisited ones uniform with ``"visited": false``). Kuhn/Leduc records: ``player``,
``private`` (J/Q/K), ``public`` (board rank letter or null), ``history`` (``f``/``c``/``r`` per
action, rounds separated by ``/``), ``actions`` (legal letters in the order f, c, r),
``strategy`` (probabilities in that order) and ``visited``. No-Limit Hold'em records (visited
infosets only; the full set is too large): ``player``, ``street``, ``history`` (raise-to amounts
in big blinds after ``r``), ``bucket``, preflop ``hand`` (the bucket's hand class, e.g.
``AKs``; space-separated classes when the bucket file groups several), ``actions`` (``f``,
``c``, ``r2.5b``, ``r0.5p``, ``a``) and ``strategy``. For 3-6 players only preflop infosets are
exported (the betting tree after it is too large to list).

CSV (chosen by a ``.csv`` suffix or ``--format csv``): a header row, then one row per record with
the same fields; ``actions`` and ``strategy`` are space-separated, probabilities written with
full precision so that :func:`read_export` gives back exactly the exported numbers.
"""

import csv
import io
import json
import sys
from pathlib import Path

import numpy as np

from holdem.cli.common import ArgumentParser, run_main
from holdem.config import ConfigError
from holdem.fileio import atomic_open
from holdem.games.small import RANK_LETTERS
from holdem.games.tree import ACTION_LETTERS, NodeKind, history_letters


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


CSV_FIELDS = ("player", "street", "private", "public", "history", "bucket", "hand", "actions",
              "strategy", "visited")


_STREET_ORDER = {name: i for i, name in enumerate(("0", "1", "preflop", "flop", "turn", "river"))}


def _street_of(record):
    if "street" in record:
        return record["street"]
    return "1" if "/" in record["history"] else "0"


def filter_records(records, streets=None, players=None):
    """The records of ``streets`` and ``players`` (None or empty: all). Raises ConfigError,
    naming what the export holds, when a filter, or the two together, select nothing."""
    kept = [r for r in records
            if (not streets or _street_of(r) in streets)
            and (not players or r["player"] in players)]
    if kept or not records or not (streets or players):
        return kept
    have_streets = sorted({_street_of(r) for r in records}, key=_STREET_ORDER.get)
    have_players = sorted({r["player"] for r in records})
    if streets and not set(streets) & set(have_streets):
        raise ConfigError(f"--street {' '.join(streets)}: no infoset of this checkpoint is on "
                          f"it; its streets are {', '.join(have_streets)}")
    if players and not set(players) & set(have_players):
        raise ConfigError(f"--player {' '.join(map(str, players))}: no infoset of this "
                          f"checkpoint belongs to it; its players are "
                          f"{', '.join(map(str, have_players))}")
    raise ConfigError(f"--street {' '.join(streets)} --player {' '.join(map(str, players))}: "
                      "no infoset of this checkpoint is on those streets and belongs to those "
                      "players")


def to_csv(records):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for r in records:
        writer.writerow([
            r["player"], _street_of(r), r.get("private", ""),
            "" if r.get("public") is None else r["public"], r["history"], r.get("bucket", ""),
            r.get("hand", ""), " ".join(r["actions"]),
            " ".join(repr(float(x)) for x in r["strategy"]), "true" if r["visited"] else "false"])
    return out.getvalue()


def read_export(path):
    """Records of an exported JSON or CSV file (the inverse of the export)."""
    path = Path(path)
    text = path.read_text()
    if path.suffix.lower() != ".csv":
        return json.loads(text)["infosets"]
    records = []
    for row in csv.DictReader(io.StringIO(text)):
        records.append({"player": int(row["player"]), "street": row["street"],
                        "history": row["history"],
                        "actions": row["actions"].split(),
                        "strategy": [float(x) for x in row["strategy"].split()],
                        "visited": row["visited"] == "true",
                        **({"bucket": int(row["bucket"])} if row["bucket"] else {}),
                        **({"hand": row["hand"]} if row.get("hand") else {}),
                        **({"private": row["private"]} if row["private"] else {})})
    return records


def strategy_records(loaded):
    """The export records of a loaded small-game profile, in tree order then bucket order."""
    game = loaded.game
    tree = game.tree
    r = game.deal.num_ranks
    records = []
    for node in range(tree.kind.shape[0]):
        if tree.kind[node] != NodeKind.DECISION:
            continue
        street = int(tree.street[node])
        na = int(tree.num_actions[node])
        c0 = int(tree.child_start[node])
        letters = [ACTION_LETTERS[int(tree.action[c0 + a])] for a in range(na)]
        history = history_letters(tree, node)
        buckets = range(r) if street == 0 else range(r * r)
        for bucket in buckets:
            private, public = (bucket, None) if street == 0 else divmod(bucket, r)
            key = int(tree.history[node]) * game.bucket_stride + bucket
            records.append({
                "player": int(tree.player[node]),
                "private": RANK_LETTERS[private],
                "public": None if public is None else RANK_LETTERS[public],
                "history": history,
                "actions": letters,
                "strategy": [float(x) for x in loaded.average[key, :na]],
                "visited": bool(loaded.visited[key]),
            })
    return records


def nlhe_records(game, store):
    """Export records of the visited infosets of a No-Limit Hold'em store (tree order, then
    bucket). ``history`` has raise-to amounts in big blinds after ``r`` (e.g. ``r2.5c/r1.6``);
    ``actions`` are labels ``f``, ``c``, ``r<x>b`` (big blinds), ``r<f>p`` (pot fraction), ``a``."""
    from holdem.abstraction.preflop import preflop_hands
    from holdem.games.nlhe.abstract import STREET_NAMES, history_string

    hands = preflop_hands(game.deal.tables)
    nlhe = game.rules
    tree = game.tree
    decision = np.flatnonzero(tree.kind == NodeKind.DECISION)
    keys, num_actions, offsets, _, strategy_sum = store.used()
    order = np.argsort(keys, kind="stable")
    records = []
    history_cache = {}
    for i in order.tolist():
        key = int(keys[i])
        hist, bucket = divmod(key, game.bucket_stride)
        node = int(decision[hist])
        na, off = int(num_actions[i]), int(offsets[i])
        sums = np.asarray(strategy_sum[off:off + na], dtype=np.float64)
        total = sums.sum()
        strategy = sums / total if total > 0 else np.full(na, 1.0 / na)
        if node not in history_cache:
            c0 = int(tree.child_start[node])
            history_cache[node] = (history_string(nlhe, node),
                                   [nlhe.labels[c0 + a] for a in range(na)])
        history, labels = history_cache[node]
        street = int(tree.street[node])
        records.append({"player": int(tree.player[node]), "street": STREET_NAMES[street],
                        "history": history, **bucket_fields(hands, street, int(bucket)),
                        "actions": labels, "strategy": [float(x) for x in strategy],
                        "visited": True})
    return records


def bucket_fields(hands, street, bucket):
    """A record's ``bucket`` and, preflop, ``hand``: the hand classes of the bucket (``hands``
    from :func:`holdem.abstraction.preflop.preflop_hands`), e.g. ``"AKs"``, space-separated
    when the bucket file groups several."""
    return {"bucket": bucket, **({"hand": " ".join(hands[bucket])} if street == 0 else {})}


def multiway_records(game, store, streets=None):
    """Export records of the visited preflop infosets of a multi-way store (decision nodes in
    depth-first order, then bucket). Later streets cannot be listed: the betting tree past the
    flop is far too large to walk and infoset keys are hashes of the history."""
    from holdem.abstraction.preflop import preflop_hands
    from holdem.games.nlhe import multiway_kernels as mk
    from holdem.games.nlhe.abstract import STREET_NAMES
    from holdem.games.nlhe.multiway import walk_decisions

    if streets and set(streets) - {"preflop", "0"}:
        raise ConfigError(f"--street {' '.join(streets)}: {game.num_players}-player exports "
                          "cover preflop only (the multi-way betting tree after it is too large "
                          "to list)")
    nodes = walk_decisions(game.multiway, game.rules.abstraction, max_street=0)
    hands = preflop_hands(game.deal.tables)
    num_buckets = int(game.deal.tables.num_buckets[0])
    histories = np.array([node.history for node, _ in nodes], dtype=np.int64)
    table = np.zeros((histories.size, num_buckets), dtype=np.int64)
    mk.infoset_keys(histories, np.int64(num_buckets), table)
    keys, num_actions, offsets, _, strategy_sum = store.used()
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    flat = table.ravel()
    pos = np.minimum(np.searchsorted(sorted_keys, flat), max(sorted_keys.size - 1, 0))
    found = (sorted_keys[pos] == flat) if sorted_keys.size else np.zeros(flat.size, bool)
    records = []
    for i in np.flatnonzero(found).tolist():
        node, history = nodes[i // num_buckets]
        row = int(order[pos[i]])
        na, off = int(num_actions[row]), int(offsets[row])
        sums = np.asarray(strategy_sum[off:off + na], dtype=np.float64)
        total = sums.sum()
        strategy = sums / total if total > 0 else np.full(na, 1.0 / na)
        records.append({"player": node.player, "street": STREET_NAMES[0], "history": history,
                        **bucket_fields(hands, 0, i % num_buckets), "actions": node.labels(),
                        "strategy": [float(x) for x in strategy], "visited": True})
    return records


def write_json_atomic(path, data):
    with atomic_open(path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


COMPILE_SECONDS = 1
"""CPU seconds that compiling the store's rebuild takes with a cold numba cache."""


def main(argv=None):
    args = build_parser().parse_args(argv)
    from holdem.analysis.blueprint import load_checkpoint_store, load_profile
    from holdem.metrics import compile_notice

    with compile_notice(COMPILE_SECONDS):
        game, store, checkpoint = load_checkpoint_store(args.checkpoint)
    if game.is_small:
        loaded = load_profile(checkpoint)
        records = strategy_records(loaded)
    elif game.is_multiway:
        records = multiway_records(game, store, args.street)
    else:
        records = nlhe_records(game, store)
    records = filter_records(records, args.street, args.player)
    fmt = args.format or ("csv" if Path(args.out).suffix.lower() == ".csv" else "json")
    if fmt == "csv":
        with atomic_open(args.out, "w") as f:
            f.write(to_csv(records))
    else:
        write_json_atomic(args.out, {"game": game.name, "iterations": checkpoint.iterations,
                                     "infosets": records})
    print(f"wrote {len(records)} infosets to {Path(args.out).resolve()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
