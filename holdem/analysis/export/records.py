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
``c``, ``r2.5b``, ``r0.5p``, ``a``) and ``strategy``; for 3-6 players they are found by walking
only the betting histories training visited (:mod:`holdem.analysis.export.multiway`). The JSON's
``strategy`` says which strategy the records hold: the average, and on streets past
``solver.average_max_street`` (training kept no average there) the current strategy.

CSV: a header row (:data:`CSV_FIELDS`), then one row per record with the same fields;
``actions`` and ``strategy`` are space-separated, probabilities written with full precision so
that :func:`read_export` gives back exactly the exported numbers.

An export is streamed: :func:`iter_export_records` yields the records a chunk at a time,
:class:`RecordFilter` selects them, :func:`write_json` and :func:`write_csv` write them to an open
file, so memory holds the store and one chunk, never every record nor the whole text (a six-max
export has millions of records). :func:`export_records`, :func:`filter_records`,
:func:`to_json` and :func:`to_csv` are the same code on a list.
"""

import csv
import io
import json
import math
import shutil
import tempfile
from itertools import chain
from pathlib import Path

import numpy as np

from holdem.analysis.export.multiway import RECORD_CHUNK, iter_multiway_records
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


def export_records(game, store, checkpoint, streets=None, progress=None):
    """The export records of a loaded checkpoint (``game``, ``store``, ``checkpoint`` as
    :func:`holdem.analysis.blueprint.load_checkpoint_store` returns them): every infoset of a
    game solved exactly (Kuhn, Leduc), the visited ones of a No-Limit game. ``streets`` (the
    ``--street`` names) lets a multi-way export walk only up to the last of them and build
    only their records (``progress``: see :func:`multiway_records`); :func:`filter_records`
    selects. A list of :func:`iter_export_records`."""
    return list(chain.from_iterable(iter_export_records(game, store, checkpoint, streets,
                                                        progress)))


def iter_export_records(game, store, checkpoint, streets=None, progress=None):
    """:func:`export_records` a chunk at a time: lists of at most :data:`RECORD_CHUNK`
    records, in export order."""
    from holdem.analysis.blueprint import load_profile

    if game.supports(EXACT):
        records = strategy_records(load_profile(checkpoint))
        for lo in range(0, len(records), RECORD_CHUNK):
            yield records[lo:lo + RECORD_CHUNK]
    elif game.supports(LINES):
        yield from iter_nlhe_records(game, store, average_max_street(game, checkpoint))
    else:
        yield from iter_multiway_records(game, store, streets,
                                         average_max_street(game, checkpoint), progress,
                                         walk_gap(game, checkpoint))


def walk_gap(game, checkpoint):
    """How many decision nodes in a row without a key a multi-way export walks through
    (:func:`holdem.analysis.export.multiway.multiway_records`): none for a run trained in one
    process (``train.num_workers`` 1: every node it visited has a key), else the number of
    players."""
    workers = checkpoint.header["config"].get("train", {}).get("num_workers", 1)
    return 0 if workers == 1 else game.num_players


def average_max_street(game, checkpoint):
    """The last street whose average strategy the checkpoint's training kept
    (``solver.average_max_street``; every street when unset)."""
    street = checkpoint.header["config"].get("solver", {}).get("average_max_street")
    return game.num_streets - 1 if street is None else int(street)


def export_strategy_name(game, checkpoint, records):
    """Which strategy the export's records hold, in words (``"average strategy"``; a heads-up
    No-Limit export of a run that kept no average after some street says that the records
    after it hold the current strategy)."""
    return _strategy_name_of(game, checkpoint, {r["street"] for r in records}
                             if not game.supports(EXACT) else ())


def _strategy_name_of(game, checkpoint, streets):
    """:func:`export_strategy_name` of records on ``streets`` (street names)."""
    from holdem.analysis.blueprint import strategy_name

    if game.supports(EXACT) or not streets:
        return strategy_name(0, True, 0)
    names = game.cards.street_names
    index = [names.index(s) for s in streets]
    return strategy_name(max(index), True, average_max_street(game, checkpoint), names,
                         min(index))


def planned_strategy_name(game, store, checkpoint, streets=None):
    """:func:`export_strategy_name` of the export of ``streets`` (None or empty: all), known
    before its records are built (a JSON export writes it first), or None where it depends on
    which streets the records turn out to be on (a No-Limit export of streets on both sides
    of ``solver.average_max_street``)."""
    if game.supports(EXACT) or not store.num_infosets:
        return _strategy_name_of(game, checkpoint, ())
    names = game.cards.street_names
    wanted = [s for s in streets if s in names] if streets else names
    if not wanted:                      # no record: an error, or for heads-up an empty export
        return None
    cut = average_max_street(game, checkpoint)
    below = [s for s in wanted if names.index(s) <= cut]
    if below and len(below) < len(wanted):
        return None
    return _strategy_name_of(game, checkpoint, wanted)


class RecordFilter:
    """Selects the records of ``streets`` and ``players`` (None or empty: all) from a stream of
    them, noting what it saw: :meth:`check` then raises the error of :func:`filter_records`,
    and :meth:`strategy_name` names the strategy of the records kept."""

    def __init__(self, streets=None, players=None):
        self.streets, self.players = streets, players
        self.num_seen = self.num_kept = 0
        self.seen_streets, self.seen_players, self.kept_streets = set(), set(), set()

    def select(self, records):
        """The records of this filter's streets and players among ``records`` (a list)."""
        self.num_seen += len(records)
        streets = [_street_of(r) for r in records]
        self.seen_streets.update(streets)
        self.seen_players.update(r["player"] for r in records)
        kept = []
        for r, s in zip(records, streets):
            if ((not self.streets or s in self.streets)
                    and (not self.players or r["player"] in self.players)):
                kept.append(r)
                self.kept_streets.add(s)
        self.num_kept += len(kept)
        return kept

    def chunks(self, chunks):
        """The nonempty selections of a stream of record lists (:func:`iter_export_records`)."""
        for records in chunks:
            kept = self.select(records)
            if kept:
                yield kept

    def check(self):
        """Raises ConfigError, naming what the export holds, when the records seen so far
        include some but a filter, or the two together, selected none of them."""
        streets, players = self.streets, self.players
        if self.num_kept or not self.num_seen or not (streets or players):
            return
        have_streets = sorted(self.seen_streets, key=_STREET_ORDER.get)
        have_players = sorted(self.seen_players)
        if streets and not set(streets) & set(have_streets):
            raise ConfigError(f"--street {' '.join(streets)}: no infoset of this checkpoint is "
                              f"on it; its streets are {', '.join(have_streets)}")
        if players and not set(players) & set(have_players):
            raise ConfigError(f"--player {' '.join(map(str, players))}: no infoset of this "
                              f"checkpoint belongs to it; its players are "
                              f"{', '.join(map(str, have_players))}")
        raise ConfigError(f"--street {' '.join(streets)} --player "
                          f"{' '.join(map(str, players))}: no infoset of this checkpoint is on "
                          "those streets and belongs to those players")

    def strategy_name(self, game, checkpoint):
        """:func:`export_strategy_name` of the records kept so far."""
        return _strategy_name_of(game, checkpoint,
                                 () if game.supports(EXACT) else self.kept_streets)


def filter_records(records, streets=None, players=None):
    """The records of ``streets`` and ``players`` (None or empty: all). Raises ConfigError,
    naming what the export holds, when a filter, or the two together, select nothing
    (:class:`RecordFilter` on a list)."""
    selection = RecordFilter(streets, players)
    kept = selection.select(records)
    selection.check()
    return kept


def to_json(records, game_name, iterations, strategy="average strategy"):
    """The text of a JSON export (one-space indent, a final newline); ``strategy``: which
    strategy the records hold (:func:`export_strategy_name`). :func:`write_json` to a string."""
    out = io.StringIO()
    write_json(out, [records], game_name, iterations, strategy)
    return out.getvalue()


def write_json(f, chunks, game_name, iterations, strategy="average strategy", spool_dir=None):
    """Write a JSON export of the records of ``chunks`` (lists of records) to the open text
    file ``f``: the text of :func:`to_json`, a chunk at a time. ``strategy`` may be a function
    that names the strategy once every chunk is written (:meth:`RecordFilter.strategy_name`
    where :func:`planned_strategy_name` is None): the records then go to an unnamed temporary
    file in ``spool_dir`` (default: the system's), copied after the name."""
    if not callable(strategy):
        f.write(_json_head(game_name, iterations, strategy))
        _write_json_infosets(f, chunks)
        return
    with tempfile.TemporaryFile("w+", dir=spool_dir) as spool:
        _write_json_infosets(spool, chunks)
        f.write(_json_head(game_name, iterations, strategy()))
        spool.seek(0)
        shutil.copyfileobj(spool, f, 1 << 20)


def _json_head(game_name, iterations, strategy):
    """The text of a JSON export up to its ``infosets`` list."""
    text = json.dumps({"game": game_name, "iterations": iterations, "strategy": strategy,
                       "infosets": []}, indent=1)
    return text[:-len("[]\n}")]


def _write_json_infosets(f, chunks):
    """Write the ``infosets`` list of a JSON export and the rest of the file."""
    opened = False
    for records in chunks:
        if not records:
            continue
        f.write(",\n" if opened else "[\n")
        f.write(",\n".join(map(_json_record, records)))
        opened = True
    f.write("\n ]\n}\n" if opened else "[]\n}\n")


class _NotFlat(Exception):
    """A record :func:`_json_record` leaves to :func:`json.dumps`."""


def _json_float(x):
    if not math.isfinite(x):
        raise _NotFlat
    return float.__repr__(x)


_JSON_SCALARS = {str: json.encoder.encode_basestring_ascii, int: int.__repr__,
                 float: _json_float, bool: lambda x: "true" if x else "false",
                 type(None): lambda x: "null"}


def _json_scalar(value):
    encode = _JSON_SCALARS.get(type(value))
    if encode is None:
        raise _NotFlat
    return encode(value)


def _json_record(record):
    """A record as an item of the ``infosets`` list of ``json.dumps(..., indent=1)`` (two
    levels deep): written directly for a flat record (str keys; str, int, finite float, bool,
    None and lists of them), by :func:`json.dumps` otherwise (whose pure-Python indenting
    encoder is several times slower)."""
    try:
        fields = []
        for key, value in record.items():
            if type(key) is not str:
                raise _NotFlat
            if type(value) is not list:
                text = _json_scalar(value)
            elif value:
                text = "[\n    " + ",\n    ".join(map(_json_scalar, value)) + "\n   ]"
            else:
                text = "[]"
            fields.append(f"   {json.encoder.encode_basestring_ascii(key)}: {text}")
    except _NotFlat:
        return "  " + json.dumps(record, indent=1).replace("\n", "\n  ")
    return "  {\n" + ",\n".join(fields) + "\n  }" if fields else "  {}"


def to_csv(records):
    """The text of a CSV export: a header row of :data:`CSV_FIELDS`, then a row per record
    (:func:`write_csv` to a string)."""
    out = io.StringIO()
    write_csv(out, [records])
    return out.getvalue()


def write_csv(f, chunks):
    """Write a CSV export of the records of ``chunks`` (lists of records) to the open text
    file ``f``: the text of :func:`to_csv`, a chunk at a time."""
    writer = csv.writer(f, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for records in chunks:
        writer.writerows(map(_csv_row, records))


def _csv_row(r):
    return [r["player"], _street_of(r), r.get("private", ""),
            "" if r.get("public") is None else r["public"], r["history"], r.get("bucket", ""),
            r.get("hand", ""), " ".join(r["actions"]),
            " ".join(repr(float(x)) for x in r["strategy"]), "true" if r["visited"] else "false"]


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
    return list(chain.from_iterable(iter_nlhe_records(game, store, average_max_street)))


def iter_nlhe_records(game, store, average_max_street=3):
    """:func:`nlhe_records` a chunk (a list of at most :data:`RECORD_CHUNK`) at a time."""
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
        if len(records) == RECORD_CHUNK:
            yield records
            records = []
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
    if records:
        yield records


def bucket_fields(hands, street, bucket):
    """A record's ``bucket`` and, preflop, ``hand``: the hand classes of the bucket (``hands``
    from :func:`holdem.abstraction.preflop.preflop_hands`), e.g. ``"AKs"``, space-separated
    when the bucket file groups several."""
    return {"bucket": bucket, **({"hand": " ".join(hands[bucket])} if street == 0 else {})}
