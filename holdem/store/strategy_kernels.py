"""Kernels that read a strategy off a regret store's rows: the current strategy (regret
matching) and the average strategy.

They touch only a store's arrays (:mod:`holdem.store.kernels`), so every floor above reads a
strategy the same way: the solver's traversals (:mod:`holdem.solver.kernels`), the games' play
kernels and analysis.
"""

from holdem._jit import njit_inline
from holdem.store import kernels as store_kernels


@njit_inline
def normalize_positive(out, total, num_actions):
    """out[:n] /= total, or uniform when no action has positive regret (total <= 0)."""
    if total > 0.0:
        inv = 1.0 / total
        for a in range(num_actions):
            out[a] *= inv
    else:
        u = 1.0 / num_actions
        for a in range(num_actions):
            out[a] = u


@njit_inline
def regret_matching(regrets, offset, num_actions, out):
    """out[:n] = positive part of regrets, normalized; uniform if none is positive."""
    total = 0.0
    for a in range(num_actions):
        r = regrets[offset + a]
        r = r if r > 0.0 else 0.0
        out[a] = r
        total += r
    normalize_positive(out, total, num_actions)


@njit_inline
def average_strategy(store, key, na, out):
    """The average strategy of infoset ``key`` into ``out[:na]``: normalized strategy sums,
    else regret matching (no sums yet), else uniform (never visited)."""
    entry = store_kernels.find_entry(store, key)
    if entry < 0:
        for a in range(na):
            out[a] = 1.0 / na
        return
    off = store_kernels.entry_offset(entry)
    total = 0.0
    for a in range(na):
        total += store.strategy_sum[off + a]
    if total <= 0.0:
        regret_matching(store.regrets, off, na, out)
    else:
        for a in range(na):
            out[a] = store.strategy_sum[off + a] / total
