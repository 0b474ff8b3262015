"""Export records of a checkpoint's average strategy, their JSON and CSV text, and reading an
export back.

The command line is :mod:`holdem.cli.export_strategy` (``python -m holdem.cli.export_strategy
--checkpoint PATH --out FILE``); :func:`export_records` is what it writes.

A JSON export is ``{"game": ..., "iterations": ..., "infosets": [records]}`` with one record per
reachable infoset (unvisited ones uniform with ``"visited": false``). Kuhn/Leduc records:
``player``, ``private`` (J/Q/K), ``public`` (board rank letter or null), ``history``
(``f``/``c``/``r`` per action, rounds separated by ``/``), ``actions`` (legal letters in the order
f, c, r), ``strategy`` (probabilities in that order) and ``visited``. No-Limit Hold'em records
(visited infosets only; the full set is too large): ``player``, ``street``, ``history`` (raise-to
amounts in big blinds after ``r``), ``bucket``, preflop ``hand`` (the bucket's hand class, e.g.
``AKs``; space-separated classes when the bucket file groups several), ``actions`` (``f``,
``c``, ``r2.5b``, ``r0.5p``, ``a``) and ``strategy``. For 3-6 players only preflop infosets are
exported (the betting tree after it is too large to list). The JSON's ``strategy`` says which
strategy the records hold: the average, and on streets past ``solver.average_max_street``
(training kept no average there) the current strategy.

CSV: a header row (:data:`CSV_FIELDS`), then one row per record with the same fields;
``actions`` and ``strategy`` are space-separated, probabilities written with full precision so
that :func:`read_export` gives back exactly the exported numbers.
"""

import csv
import io
import json
from pathlib import Path

import numpy as np

from holdem.config import ConfigError
from holdem.games import EXACT, LINES
from holdem.games.small import RANK_LETTERS
from holdem.games.tree import ACTION_LETTERS, NodeKind, history_letters

CSV_FIELDS = ("player", "street", "private", "public", "history", "bucket", "hand", "actions",
              "strategy", "visited")


_STREET_ORDER = {name: i for i, name in enumerate(("0", "1", "preflop", "flop", "turn", "river"))}


def _street_of(record):
    if "street" in record:
        return record["street"]
    return "1" if "/" in record["history"] else "0"


def export_records(game, store, checkpoint, streets=None):
    """The export records of a loaded checkpoint (``game``, ``store``, ``checkpoint`` as
    :func:`holdem.analysis.blueprint.load_checkpoint_store` returns them): every infoset of a
    game solved exactly (Kuhn, Leduc), the visited ones of a heads-up tree, the visited preflop
    ones of a multi-way game. ``streets`` (the ``--street`` names) only lets a multi-way export
    refuse streets it cannot list; :func:`filter_records` selects."""
    from holdem.analysis.blueprint import load_profile

    if game.supports(EXACT):
        return strategy_records(load_profile(checkpoint))
    if game.supports(LINES):
        return nlhe_records(game, store, average_max_street(game, checkpoint))
    return multiway_records(game, store, streets)   # nodes computed during traversal: preflop only


def average_max_street(game, checkpoint):
    """The last street whose average strategy the checkpoint's training kept
    (``solver.average_max_street``; every street when unset)."""
    street = checkpoint.header["config"].get("solver", {}).get("average_max_street")
    return game.num_streets - 1 if street is None else int(street)


def export_strategy_name(game, checkpoint, records):
    """Which strategy the export's records hold, in words (``"average strategy"``; a heads-up
    No-Limit export of a run that kept no average after some street says that the records
    after it hold the current strategy)."""
    from holdem.analysis.blueprint import strategy_name

    if game.supports(EXACT) or not records:
        return strategy_name(0, True, 0)
    names = game.cards.street_names
    last = max(names.index(r["street"]) for r in records)
    first = min(names.index(r["street"]) for r in records)
    return strategy_name(last, True, average_max_street(game, checkpoint), names, first)


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


def to_json(records, game_name, iterations, strategy="average strategy"):
    """The text of a JSON export (one-space indent, a final newline); ``strategy``: which
    strategy the records hold (:func:`export_strategy_name`)."""
    return json.dumps({"game": game_name, "iterations": iterations, "strategy": strategy,
                       "infosets": records}, indent=1) + "\n"


def to_csv(records):
    """The text of a CSV export: a header row of :data:`CSV_FIELDS`, then a row per record."""
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


def _average(num_actions, offsets, strategy_sum, row, regrets=None):
    """The normalized average strategy of store row ``row`` as a list of floats (uniform when
    its strategy sums are all zero); with ``regrets``, the current strategy (regret matching)
    instead."""
    na, off = int(num_actions[row]), int(offsets[row])
    values = strategy_sum if regrets is None else regrets
    sums = np.asarray(values[off:off + na], dtype=np.float64)
    if regrets is not None:
        sums = np.maximum(sums, 0.0)
    total = sums.sum()
    return [float(x) for x in (sums / total if total > 0 else np.full(na, 1.0 / na))]


def nlhe_records(game, store, average_max_street=3):
    """Export records of the visited infosets of a No-Limit Hold'em store (tree order, then
    bucket). ``history`` has raise-to amounts in big blinds after ``r`` (e.g. ``r2.5c/r1.6``);
    ``actions`` are labels ``f``, ``c``, ``r<x>b`` (big blinds), ``r<f>p`` (pot fraction), ``a``.
    On streets past ``average_max_street`` (training kept no strategy sums there) a record holds
    the current strategy (regret matching), as the other views show it."""
    from holdem.abstraction.preflop import preflop_hands
    hands = preflop_hands(game.deal.tables)
    lines, street_names = game.lines, game.cards.street_names
    tree = game.tree
    decision = np.flatnonzero(tree.kind == NodeKind.DECISION)
    keys, num_actions, offsets, regrets, strategy_sum = store.used()
    order = np.argsort(keys, kind="stable")
    records = []
    history_cache = {}
    for i in order.tolist():
        key = int(keys[i])
        hist, bucket = divmod(key, game.bucket_stride)
        node = int(decision[hist])
        if node not in history_cache:
            c0 = int(tree.child_start[node])
            history_cache[node] = (lines.history_string(node),
                                   [lines.labels[c0 + a] for a in range(int(num_actions[i]))])
        history, labels = history_cache[node]
        street = int(tree.street[node])
        records.append({"player": int(tree.player[node]), "street": street_names[street],
                        "history": history, **bucket_fields(hands, street, int(bucket)),
                        "actions": labels,
                        "strategy": _average(num_actions, offsets, strategy_sum, i,
                                             regrets if street > average_max_street else None),
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

    if streets and set(streets) - {"preflop", "0"}:
        raise ConfigError(f"--street {' '.join(streets)}: {game.num_players}-player exports "
                          "cover preflop only: the multi-way game's infoset keys hash the "
                          "betting history, so its infosets are found only by walking the "
                          "betting tree, which after the preflop is too large to walk "
                          "(configs/6max.yaml: 76,521 preflop decisions, millions by the flop); "
                          "for one node after the flop, inspect_blueprint --range "
                          "\"LINE | BOARD\" --out FILE.csv writes every combo's strategy")
    nodes = game.walk_decisions(max_street=0)
    hands = preflop_hands(game.deal.tables)
    num_buckets = int(game.deal.tables.num_buckets[0])
    histories = np.array([node.history for node, _ in nodes], dtype=np.int64)
    table = game.infoset_keys(histories, num_buckets)
    keys, num_actions, offsets, _, strategy_sum = store.used()
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    flat = table.ravel()
    pos = np.minimum(np.searchsorted(sorted_keys, flat), max(sorted_keys.size - 1, 0))
    found = (sorted_keys[pos] == flat) if sorted_keys.size else np.zeros(flat.size, bool)
    records = []
    for i in np.flatnonzero(found).tolist():
        node, history = nodes[i // num_buckets]
        records.append({"player": node.player, "street": game.cards.street_names[0],
                        "history": history,
                        **bucket_fields(hands, 0, i % num_buckets), "actions": node.labels(),
                        "strategy": _average(num_actions, offsets, strategy_sum,
                                             int(order[pos[i]])),
                        "visited": True})
    return records
