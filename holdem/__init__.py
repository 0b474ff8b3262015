"""holdem: a parallel Monte Carlo CFR solver for Pluribus-style No-Limit Hold'em blueprints.

Small games (Kuhn, Leduc) run through the same kernels, store and files as No-Limit Hold'em, so the
solver's correctness is checked by exact exploitability.
"""

from holdem.version import __version__

__all__ = ["Blueprint", "__version__", "load_config", "train"]


def __getattr__(name):
    # Lazy, so `import holdem` stays cheap (numba loads only when a kernel is needed).
    if name == "Blueprint":
        from holdem.analysis.blueprint import Blueprint
        return Blueprint
    if name == "train":
        from holdem.training import train
        return train
    if name == "load_config":
        from holdem.config import load
        return load
    raise AttributeError(f"module 'holdem' has no attribute {name!r}")
