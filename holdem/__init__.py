"""holdem: a parallel Monte Carlo CFR solver for Pluribus-style No-Limit Hold'em blueprints.

Small games (Kuhn, Leduc) run through the same kernels, store and files as No-Limit Hold'em, so the
solver's correctness is checked by exact exploitability.
"""

__version__ = "0.1.0"
