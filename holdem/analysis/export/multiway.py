"""The multi-way (3-6 player) part of a strategy export: the visited infosets of a store whose
keys hash the betting history, found by walking only the histories training visited
(:func:`iter_multiway_records`); :mod:`holdem.analysis.export.records` writes them."""

import time
import warnings
from itertools import chain

import numpy as np

from holdem.config import ConfigError

RECORD_CHUNK = 1 << 15
"""Records an export yields at most at a time (here and in
:mod:`holdem.analysis.export.records`)."""


WALK_CHUNK = 1 << 14
"""Decision nodes a multi-way export expands with one kernel call."""


def multiway_records(game, store, streets=None, average_max_street=3, progress=None,
                     max_gap=None):
    """The records of :func:`iter_multiway_records` in a list."""
    return list(chain.from_iterable(iter_multiway_records(game, store, streets,
                                                          average_max_street, progress,
                                                          max_gap)))


def iter_multiway_records(game, store, streets=None, average_max_street=3, progress=None,
                          max_gap=None):
    """Export records of the visited infosets of a multi-way store on ``streets`` (street
    names; None or empty: every street), breadth first (by the number of actions before the
    node, then parent and action order), then bucket. On streets past ``average_max_street`` a
    record holds the current strategy (regret matching), as :func:`nlhe_records`.

    The multi-way game's infoset keys hash the betting history, so its infosets are found by
    walking its betting tree, far too large to walk whole after the preflop. But training
    (external sampling) inserts an infoset at every decision node a traversal reaches, so a
    history with no key in the store for any bucket was never reached, nor was anything after
    it: the walk descends only into the children with at least one key (looked up a depth at
    a time, every bucket of thousands of children in one vectorized call), and so visits
    about as many nodes as training did. One exception: a worker process sends no infoset
    whose updates were all zero (an opponent's node on a street that keeps no average, or a
    node whose regrets did not move), so with workers a visited history can lack a key while
    those after it have one. The walk therefore also passes through up to ``max_gap``
    (default: the number of players; :func:`walk_gap` chooses 0 for a run trained in one
    process) decision nodes in a row that have no key: between two decisions of the player
    a traversal updates every other seat acts at most once, and one more allows for a node of
    that player whose regrets did not move. On ``configs/6max.yaml`` a gap of 5 walks 2.3
    times the visited flop histories, in 1.6 times the time. It goes no further than the
    last street asked for. When it walked every street and still missed some of the store's
    infosets, a warning says how many.

    A record per infoset training visited on those streets: millions for a long six-max run
    (the 10-minute ``6max.yaml`` blueprint: 3.4 M on the flop of its 13.5 M, about 200 bytes
    each in JSON).

    ``progress(depth, histories, infosets, seconds)``, if given, is called after each depth
    with the decision nodes walked and the infosets found so far (on every street walked).

    Yields the records as they are built, in lists of at most :data:`RECORD_CHUNK`."""
    from holdem.abstraction.preflop import preflop_hands

    names = game.cards.street_names
    wanted = ({names.index(s) for s in streets if s in names} if streets
              else set(range(len(names))))
    if not wanted:
        raise ConfigError(f"--street {' '.join(streets)}: the {game.num_players}-player game's "
                          f"streets are {', '.join(names)}")
    last = max(wanted)
    max_gap = game.num_players if max_gap is None else max_gap
    hands = preflop_hands(game.deal.tables)
    num_buckets = [int(x) for x in game.deal.tables.num_buckets]
    keys, num_actions, offsets, regrets, strategy_sum = store.used()
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]

    def entries(histories, street):
        """int64[len(histories), buckets]: the store row of each (history, bucket); -1 where
        training never visited it."""
        table = game.infoset_keys(histories, num_buckets[street])
        if not sorted_keys.size:
            return np.full(table.shape, -1, np.int64)
        pos = np.minimum(np.searchsorted(sorted_keys, table), sorted_keys.size - 1)
        return np.where(sorted_keys[pos] == table, order[pos], -1)

    root = game.root_node()
    frontier = [(0, game.root_rows(), [""], np.array([root.player]),
                 entries(np.array([root.history]), 0), np.zeros(1, np.int64))]
    labels_cache, clock = {}, time.perf_counter()
    depth = walked = found = num_records = 0
    while frontier:
        grown = {}
        for street, rows, texts, players, rows_in_store, gap in frontier:
            walked += rows.shape[0]
            found += int((rows_in_store >= 0).sum())
            for lo in range(0, rows.shape[0], WALK_CHUNK):
                hi = min(lo + WALK_CHUNK, rows.shape[0])
                kids = game.children(rows[lo:hi])
                if street in wanted:
                    current = street > average_max_street
                    for records in _emit(game, kids, rows[lo:hi], texts[lo:hi],
                                         players[lo:hi], rows_in_store[lo:hi], names[street],
                                         hands if street == 0 else None,
                                         (num_actions, offsets,
                                          regrets if current else strategy_sum, current),
                                         labels_cache):
                        num_records += len(records)
                        yield records
                _grow(grown, game, kids, street, last, texts, lo, entries, gap[lo:hi],
                      max_gap)
        frontier = [(s, np.concatenate([g[0] for g in groups]),
                     [t for g in groups for t in g[1]], np.concatenate([g[2] for g in groups]),
                     np.concatenate([g[3] for g in groups]),
                     np.concatenate([g[4] for g in groups]))
                    for s, groups in sorted(grown.items())]
        depth += 1
        if progress is not None:
            progress(depth, walked, found, time.perf_counter() - clock)
    if last == len(names) - 1 and found < keys.size:
        warnings.warn(f"{keys.size - found:,} of the store's {keys.size:,} infosets lie below "
                      f"more than {max_gap} decisions in a row that have no key, and are not "
                      "exported", stacklevel=2)
    if streets and not num_records:
        raise ConfigError(f"--street {' '.join(streets)}: no infoset of this checkpoint is on "
                          "it: training visited none there")


def _grow(grown, game, kids, street, last, texts, lo, entries, gap, max_gap):
    """Add to ``grown`` ({street: [groups]}) the children in ``kids`` (of a ``street`` node at
    frontier index ``lo`` + parent; ``gap``: how many nodes in a row without a key end at each
    parent) that the walk goes on with: decision nodes up to street ``last`` with a key in the
    store for at least one bucket, or after at most ``max_gap`` nodes in a row without one."""
    candidates = kids.is_decision & (kids.street <= last)
    for s in np.unique(kids.street[candidates]).tolist():
        index = np.flatnonzero(candidates & (kids.street == s))
        rows_in_store = entries(kids.history[index], s)
        present = (rows_in_store >= 0).any(axis=1)
        child_gap = np.where(present, 0, gap[kids.parent[index]] + 1)
        keep = child_gap <= max_gap
        index = index[keep]
        if not index.size:
            continue
        steps = game.history_steps(kids, index, street)
        grown.setdefault(s, []).append((
            kids.rows[index], [texts[lo + p] + step
                               for p, step in zip(kids.parent[index].tolist(), steps)],
            kids.player[index], rows_in_store[keep], child_gap[keep]))


def _emit(game, kids, rows, texts, players, rows_in_store, street_name, hands, values,
          labels_cache):
    """Yield the records of the visited infosets of frontier nodes ``rows`` (their
    :data:`Children` ``kids`` give each node's actions), node by node, then bucket, in lists of
    at most :data:`RECORD_CHUNK`."""
    nodes, buckets = np.nonzero(rows_in_store >= 0)
    if not nodes.size:
        return
    starts = np.searchsorted(kids.parent, np.arange(rows.shape[0] + 1))
    labels, previous = None, -1
    for lo in range(0, nodes.size, RECORD_CHUNK):
        node, bucket = nodes[lo:lo + RECORD_CHUNK], buckets[lo:lo + RECORD_CHUNK]
        strategies = _strategies(*values, rows_in_store[node, bucket])
        records = []
        for i, b, strategy in zip(node.tolist(), bucket.tolist(), strategies):
            if i != previous:
                k0, k1 = int(starts[i]), int(starts[i + 1])
                labels = game.action_labels(rows[i], kids.kind[k0:k1].tolist(),
                                            kids.to[k0:k1].tolist(), labels_cache)
                previous = i
            records.append({"player": int(players[i]), "street": street_name,
                            "history": texts[i], "bucket": b,
                            **({"hand": " ".join(hands[b])} if hands is not None else {}),
                            "actions": labels, "strategy": strategy, "visited": True})
        yield records


def _strategies(num_actions, offsets, values, current, rows):
    """:func:`_average` of many store rows at once (lists of floats, in the order of
    ``rows``): the normalized ``values`` (strategy sums, or with ``current`` the positive part
    of the regrets), uniform where they sum to zero."""
    out = [None] * rows.shape[0]
    na = num_actions[rows]
    for n in np.unique(na).tolist():
        select = np.flatnonzero(na == n)
        sums = np.asarray(values[offsets[rows[select]][:, None] + np.arange(n)],
                          dtype=np.float64)
        if current:
            sums = np.maximum(sums, 0.0)
        total = sums.sum(axis=1, keepdims=True)
        probs = np.where(total > 0, sums / np.where(total > 0, total, 1.0), 1.0 / n)
        for j, p in zip(select.tolist(), probs.tolist()):
            out[j] = p
    return out
