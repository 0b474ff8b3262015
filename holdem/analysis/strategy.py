"""Strategies read out of a regret store as dense profiles over a game's infoset keys.

A profile is float64[num_keys, max_actions] where num_keys = decision nodes x bucket_stride and row
``key`` holds the action probabilities of that infoset (zeros beyond its num_actions). Infosets the
store never saw are uniform.
"""

import numpy as np

from holdem.games.tree import NodeKind


def uniform_profile(game):
    tree = game.tree
    decision = np.flatnonzero(tree.kind == NodeKind.DECISION)
    na = np.repeat(tree.num_actions[decision].astype(np.int64), game.bucket_stride)
    profile = np.zeros((na.shape[0], game.max_actions))
    cols = np.arange(game.max_actions)
    profile[cols[None, :] < na[:, None]] = 1.0
    return profile / na[:, None]


def _profile_from(game, keys, num_actions, offsets, values, positive_only):
    profile = uniform_profile(game)
    visited = np.zeros(profile.shape[0], dtype=bool)
    for key, na, off in zip(keys.tolist(), num_actions.tolist(), offsets.tolist()):
        v = np.asarray(values[off:off + na], dtype=np.float64)
        if positive_only:
            v = np.maximum(v, 0.0)
        total = v.sum()
        if total > 0:
            profile[key, :na] = v / total
        visited[key] = True
    return profile, visited


def average_profile(game, store_rows):
    """The normalized average strategy (strategy sums) and a visited mask.

    ``store_rows`` is ``RegretStore.used()``: (keys, num_actions, offsets, regrets, strategy_sum).
    """
    keys, num_actions, offsets, _, strategy_sum = store_rows
    return _profile_from(game, keys, num_actions, offsets, strategy_sum, positive_only=False)


def current_profile(game, store_rows):
    """The current strategy (regret matching on cumulative regrets) and a visited mask."""
    keys, num_actions, offsets, regrets, _ = store_rows
    return _profile_from(game, keys, num_actions, offsets, regrets, positive_only=True)
