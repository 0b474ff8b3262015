"""Slow, obviously-correct references for the solver and the regret store.

- :func:`regret_matching`: the positive part of the regrets, normalized; uniform when no regret is
  positive (Hart & Mas-Colell 2000; Zinkevich et al. 2007, eq. 8).
- :class:`DictStore`: the store's merge as a dict of per-key lists, accumulated one entry at a time
  in the store's precisions (float32 regrets clamped at the floor after each add, float64 strategy
  sums).
- :func:`vanilla_cfr`: full-width CFR with every deal enumerated (Zinkevich et al. 2007) in plain
  Python over a game's betting tree; regrets and strategy sums are accumulated through a
  :class:`DictStore` once per iteration (simultaneous updates).
"""

import numpy as np

from tests.reference.best_response import DECISION, deals, payoff, profile_key


def regret_matching(regrets):
    """Strategy float64[n] from cumulative regrets (any float array of length n >= 1)."""
    positive = np.maximum(np.asarray(regrets, dtype=np.float64), 0.0)
    total = positive.sum()
    if total > 0.0:
        return positive / total
    return np.full(positive.shape[0], 1.0 / positive.shape[0])


class DictStore:
    """``key -> (regrets float32 list, strategy_sum float64 list)`` with the store's merge rule."""

    def __init__(self):
        self.rows = {}            # insertion order = order of first visit, like the store's rows

    def merge(self, keys, num_actions, regret_delta, strategy_delta, regret_floor=-np.inf):
        """Add a delta laid out like ``RegretStore.merge``'s, one entry at a time."""
        floor = np.float64(regret_floor)
        pos = 0
        for key, na in zip(np.asarray(keys).tolist(), np.asarray(num_actions).tolist()):
            regrets, sums = self.rows.setdefault(
                key, ([np.float32(0.0)] * na, [np.float64(0.0)] * na))
            assert len(regrets) == na, "num_actions must be consistent per key"
            for a in range(na):
                r = np.float32(regrets[a] + np.float32(regret_delta[pos + a]))
                if r < floor:
                    r = np.float32(floor)
                regrets[a] = r
                sums[a] = np.float64(sums[a] + np.float64(strategy_delta[pos + a]))
            pos += na

    def as_arrays(self):
        """(keys int64, num_actions int64, regrets float32, strategy_sum float64), row order."""
        keys = np.array(list(self.rows), dtype=np.int64)
        num_actions = np.array([len(r) for r, _ in self.rows.values()], dtype=np.int64)
        regrets = np.array([x for r, _ in self.rows.values() for x in r], dtype=np.float32)
        sums = np.array([x for _, s in self.rows.values() for x in s], dtype=np.float64)
        return keys, num_actions, regrets, sums


def store_contents(store):
    """A :class:`holdem.store.store.RegretStore`'s rows as {key: (regrets, strategy_sum)}."""
    keys, num_actions, offsets, regrets, sums = store.used()
    return {int(k): (regrets[o:o + n].tolist(), sums[o:o + n].tolist())
            for k, n, o in zip(keys, num_actions, offsets)}


def dict_contents(reference):
    return {k: ([float(x) for x in r], [float(x) for x in s])
            for k, (r, s) in reference.rows.items()}


def vanilla_cfr(game, iterations):
    """Run CFR; return the normalized average profile float64[num_keys, max_actions]."""
    tree = game.tree
    all_deals = deals(game)
    store = DictStore()
    num_keys = int(np.count_nonzero(tree.kind == DECISION)) * game.bucket_stride

    def strategy(key, na):
        row = store.rows.get(key)
        return regret_matching(row[0]) if row is not None else np.full(na, 1.0 / na)

    for _ in range(iterations):
        delta = {}                 # key -> (regret increments, strategy increments)

        def cfr(node, deal, reach):
            """Value of ``node`` for player 0 (the game is zero-sum)."""
            if tree.kind[node] != DECISION:
                return payoff(game, node, deal, 0)
            p = int(tree.player[node])
            na = int(tree.num_actions[node])
            key = profile_key(game, node, deal)
            sigma = strategy(key, na)
            start = int(tree.child_start[node])
            values = np.zeros(na)
            for a in range(na):
                child_reach = list(reach)
                child_reach[p] *= sigma[a]
                values[a] = cfr(start + a, deal, child_reach)
            v = float(sigma @ values)
            sign = 1.0 if p == 0 else -1.0
            regrets, sums = delta.setdefault(key, (np.zeros(na), np.zeros(na)))
            regrets += deal.prob * reach[1 - p] * sign * (values - v)
            sums += deal.prob * reach[p] * sigma
            return v

        for deal in all_deals:
            cfr(0, deal, [1.0, 1.0])
        keys = list(delta)
        store.merge(keys, [len(delta[k][0]) for k in keys],
                    np.concatenate([delta[k][0] for k in keys]),
                    np.concatenate([delta[k][1] for k in keys]))

    profile = np.zeros((num_keys, game.max_actions))
    decision = np.flatnonzero(tree.kind == DECISION)
    for h, node in enumerate(decision):
        na = int(tree.num_actions[node])
        profile[h * game.bucket_stride:(h + 1) * game.bucket_stride, :na] = 1.0 / na
    for key, (_, sums) in store.rows.items():
        sums = np.asarray(sums, dtype=np.float64)
        if sums.sum() > 0:
            profile[key, :len(sums)] = sums / sums.sum()
    return profile
