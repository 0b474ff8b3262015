"""Preflop sanity figures of a heads-up NLHE checkpoint: how often AA raises first in, and how
often 72o folds when facing a raise to 3 big blinds or more.

    python tools/check_preflop.py --checkpoint runs/x

Prints, for the small blind's first decision, AA's raise probability, and for every preflop node
where a player faces a raise to >= 3 big blinds, 72o's fold probability and how often that
infoset was reached (its strategy-sum mass).
"""

import argparse
import sys

import benchlib  # noqa: F401  (first: puts this checkout's holdem on sys.path)

import numpy as np

from holdem.abstraction.bucket_tables import lookup_buckets
from holdem.analysis.blueprint import load_checkpoint_store
from holdem.cards import parse
from holdem.games import LINES
from holdem.games.nlhe.abstract import history_string
from holdem.games.tree import NodeKind
from holdem.store.kernels import find_entry_py


def strategy(store, key, na):
    entry = int(find_entry_py(store.arrays, np.int64(key)))
    if entry < 0:
        return None, 0.0
    off = entry >> 8
    sums = np.asarray(store.arrays.strategy_sum[off:off + na], dtype=np.float64)
    total = sums.sum()
    return (sums / total if total > 0 else np.full(na, 1.0 / na)), total


def preflop_bucket(game, hand):
    hole = parse(hand).reshape(1, 2)
    board = np.array([c for c in range(52) if c not in hole.ravel()][:5])
    return int(lookup_buckets(game.deal.tables, hole, board)[0, 0])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", required=True, help="checkpoint file or logdir (NLHE)")
    args = p.parse_args(argv)
    game, store, checkpoint = load_checkpoint_store(args.checkpoint)
    if not game.supports(LINES):
        sys.exit("check_preflop: needs a No-Limit Hold'em checkpoint")
    tree, nlhe = game.tree, game.rules
    bb = nlhe.table.chips_per_bb
    print(f"checkpoint: {checkpoint.path} ({checkpoint.iterations:,} iterations)")
    aa, seven_two = preflop_bucket(game, "AsAh"), preflop_bucket(game, "7s2h")
    na = int(tree.num_actions[0])
    labels = [nlhe.labels[int(tree.child_start[0]) + a] for a in range(na)]
    sigma, _ = strategy(store, int(tree.history[0]) * game.bucket_stride + aa, na)
    if sigma is not None:
        raise_p = sum(s for s, lab in zip(sigma, labels) if lab not in ("f", "c"))
        print(f"AA first to act (small blind): raise {raise_p:.3f}  "
              + " ".join(f"{lab}={s:.3f}" for lab, s in zip(labels, sigma)))
    for node in np.flatnonzero((tree.kind == NodeKind.DECISION) & (tree.street == 0)):
        node = int(node)
        p_ = int(tree.player[node])
        facing = int(nlhe.raise_to[node]) if nlhe.labels[node] not in ("", "c", "f") else 0
        if facing < 3 * bb:
            continue
        na = int(tree.num_actions[node])
        sigma, mass = strategy(store, int(tree.history[node]) * game.bucket_stride + seven_two,
                               na)
        if sigma is None:
            continue
        print(f"72o facing {history_string(nlhe, node) or 'root'} (player {p_}): "
              f"fold {sigma[0]:.3f} (strategy mass {mass:.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
