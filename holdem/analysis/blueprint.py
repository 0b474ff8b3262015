"""Loading a checkpoint's strategies for analysis (read-only)."""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from holdem import checkpoint as ckpt
from holdem import config as config_mod
from holdem.analysis.strategy import average_profile, current_profile
from holdem.games import make_game


@dataclass
class LoadedProfile:
    path: Path
    game: object
    config: object
    iterations: int
    average: np.ndarray        # float64[num_keys, max_actions]
    current: np.ndarray
    visited: np.ndarray        # bool[num_keys]


def load_checkpoint_store(path):
    """(game, store, checkpoint) of a checkpoint file or logdir (or an already loaded
    :class:`holdem.checkpoint.Checkpoint`)."""
    checkpoint = path if isinstance(path, ckpt.Checkpoint) else ckpt.load(ckpt.resolve(path))
    config = config_mod.from_stored(checkpoint.header["config"],
                                  source=f"checkpoint {checkpoint.path}")
    game = make_game(config)
    ckpt.check_resume_config(checkpoint, config, game)       # the bucket file must match
    return game, ckpt.store_from_checkpoint(checkpoint, game), checkpoint


def load_profile(path):
    """Average and current strategy of a small-game checkpoint (file, logdir or Checkpoint)."""
    game, store, checkpoint = load_checkpoint_store(path)
    config = config_mod.from_stored(checkpoint.header["config"],
                                  source=f"checkpoint {checkpoint.path}")
    if not game.is_small:
        raise ckpt.CheckpointError(f"checkpoint {checkpoint.path}: game: dense strategy "
                                   f"profiles are for Kuhn and Leduc, not {game.name!r}")
    rows = store.used()
    average, visited = average_profile(game, rows)
    current, _ = current_profile(game, rows)
    return LoadedProfile(path=checkpoint.path, game=game, config=config,
                         iterations=checkpoint.iterations, average=average, current=current,
                         visited=visited)


class Blueprint:
    """A trained strategy, read-only: ``Blueprint.load(path)`` (checkpoint file or logdir).

    The checkpoint's arrays are memory-mapped (nothing is copied but the sorted key index), so
    opening costs one pass over the file for its checksums plus a sort of the keys. Strategies are
    looked up by infoset key (``history * bucket_stride + bucket``) or, for heads-up No-Limit
    Hold'em, by a line of abstract action labels and the cards (:meth:`query`).
    """

    def __init__(self, checkpoint, game, config):
        self.checkpoint = checkpoint
        self.game = game
        self.config = config
        arrays = checkpoint.arrays
        self._keys = arrays["keys"]
        self._num_actions = arrays["num_actions"]
        self._regrets = arrays["regrets"]
        self._strategy_sum = arrays["strategy_sum"]
        counts = np.asarray(self._num_actions, dtype=np.int64)
        self._offsets = np.cumsum(counts) - counts
        self._order = np.argsort(self._keys, kind="stable")
        self._sorted_keys = np.asarray(self._keys)[self._order]

    @classmethod
    def load(cls, path):
        checkpoint = ckpt.load(ckpt.resolve(path), mmap=True)
        config = config_mod.from_stored(checkpoint.header["config"],
                                      source=f"checkpoint {checkpoint.path}")
        game = make_game(config)
        ckpt.check_resume_config(checkpoint, config, game)       # the bucket file must match
        return cls(checkpoint, game, config)

    @property
    def metadata(self):
        """Config, iterations, training seconds, infosets, bucket-file sha256 and versions."""
        h = self.checkpoint.header
        return {"path": str(self.checkpoint.path), "game": self.game.name,
                "config": h["config"], "iterations": int(h["iterations"]),
                "elapsed": float(h.get("elapsed", 0.0)), "infosets": int(self._keys.shape[0]),
                "buckets_sha256": h.get("abstraction", {}).get("buckets_sha256", ""),
                "versions": h.get("versions", {})}

    def _row(self, key):
        i = int(np.searchsorted(self._sorted_keys, key))
        if i < self._sorted_keys.shape[0] and self._sorted_keys[i] == key:
            return int(self._order[i])
        return -1

    def strategy(self, key, num_actions, average=True):
        """Action probabilities at infoset ``key`` (uniform if it was never visited): the
        normalized average strategy, or with ``average=False`` the current (regret-matching)
        strategy."""
        row = self._row(key)
        if row < 0:
            return np.full(num_actions, 1.0 / num_actions)
        off, na = int(self._offsets[row]), int(self._num_actions[row])
        values = np.asarray(self._strategy_sum[off:off + na] if average
                            else np.maximum(self._regrets[off:off + na], 0.0), dtype=np.float64)
        total = values.sum()
        return values / total if total > 0 else np.full(na, 1.0 / na)

    # -- heads-up No-Limit Hold'em --------------------------------------------------------
    def node_of(self, labels):
        """The betting-tree node reached by a line of abstract labels (e.g. ``["r2.5b", "c"]``);
        heads-up (the multi-way game has no tree: see :meth:`multiway_node`)."""
        if self.game.is_multiway:
            raise ValueError("the multi-way game has no enumerated tree; use multiway_node()")
        tree, names = self.game.tree, self.game.rules.labels
        node = 0
        for label in labels:
            if tree.kind[node] != 0:
                raise ValueError(f"line {labels!r}: the hand is over before {label!r}")
            c0, na = int(tree.child_start[node]), int(tree.num_actions[node])
            match = [c0 + a for a in range(na) if names[c0 + a] == label]
            if not match:
                legal = [names[c0 + a] for a in range(na)]
                raise ValueError(f"line {labels!r}: {label!r} is not an action here "
                                 f"(legal: {', '.join(legal)})")
            node = match[0]
        return node

    def multiway_node(self, labels):
        """The node of the multi-way game reached by a line of abstract labels."""
        from holdem.games.nlhe.multiway import MultiwayNode

        node = MultiwayNode(self.game.multiway, self.game.rules.abstraction)
        for label in labels:
            if node.is_terminal:
                raise ValueError(f"line {labels!r}: the hand is over before {label!r}")
            names = node.labels()
            if label not in names:
                raise ValueError(f"line {labels!r}: {label!r} is not an action here "
                                 f"(legal: {', '.join(names)})")
            node = node.child(names.index(label))
        return node

    def query(self, labels, hole, board=(), average=True):
        """Strategy of the player to act after ``labels`` holding ``hole`` (2 cards) with the
        board cards dealt so far. Returns {label: probability}."""
        from holdem.abstraction.buckets import lookup_buckets

        if self.game.name != "nlhe":
            raise ValueError("query() is for No-Limit Hold'em; use strategy(key, ...)")
        if self.game.is_multiway:
            spot = self.multiway_node(labels)
            if spot.is_terminal:
                raise ValueError(f"line {labels!r} ends the hand")
            street, names, key_of = spot.street, spot.labels(), spot.infoset_key
        else:
            tree = self.game.tree
            node = self.node_of(labels)
            if tree.kind[node] != 0:
                raise ValueError(f"line {labels!r} ends the hand")
            street = int(tree.street[node])
            c0 = int(tree.child_start[node])
            names = [self.game.rules.labels[c0 + a] for a in range(int(tree.num_actions[node]))]
            history = int(tree.history[node]) * self.game.bucket_stride

            def key_of(bucket):
                return history + bucket
        need = (0, 3, 4, 5)[street]
        board = list(board)
        if len(board) < need:
            raise ValueError(f"line {labels!r} is on street {street}: it needs {need} board "
                             f"cards, got {len(board)}")
        filler = [c for c in range(52) if c not in set(hole) | set(board)]
        full_board = (board + filler)[:5]                 # later cards do not change the bucket
        bucket = int(lookup_buckets(self.game.deal.tables, np.array([hole]),
                                    np.array(full_board))[0, street])
        probs = self.strategy(key_of(bucket), len(names), average)
        return {name: float(probs[a]) for a, name in enumerate(names)}

    def translate_line(self, actions, big_blind):
        """Abstract labels for a real heads-up line.

        ``actions`` are (kind, amount) pairs in the real game's chips, kind one of ``fold``,
        ``check``, ``call``, ``bet``, ``raise``, ``allin`` and amount the street commitment after
        a bet/raise ("raise to"); ``big_blind`` the real big blind. A bet or raise that is not in
        the tree is mapped, by pot fraction, to the abstract size the pseudo-harmonic rule
        (Ganzfried & Sandholm 2013) favours; an all-in maps to ``a`` where the tree has one.
        Returns (labels, [(real pot fraction, chosen label, probability of that choice)]).
        """
        from holdem.abstraction.actions import translate

        if self.game.is_multiway:
            raise ValueError("translate_line() is for heads-up games")
        tree, nlhe = self.game.tree, self.game.rules
        scale = nlhe.table.chips_per_bb / float(big_blind)
        node, labels, notes = 0, [], []
        for kind, amount in actions:
            if tree.kind[node] != 0:
                raise ValueError(f"the hand is over before {kind!r}")
            c0, na = int(tree.child_start[node]), int(tree.num_actions[node])
            children = {nlhe.labels[c0 + a]: c0 + a for a in range(na)}
            if kind in ("fold", "check", "call"):
                label = "f" if kind == "fold" else "c"
                if label not in children:
                    raise ValueError(f"{kind!r} is not possible at {'/'.join(labels) or 'root'}")
            elif kind == "allin" and "a" in children:
                label = "a"
            elif kind in ("bet", "raise", "allin"):
                current = float(nlhe.raise_to[children["c"]])
                me = int(tree.player[node])
                to_call = tree.contrib[node, 1 - me] - tree.contrib[node, me]
                pot = float(tree.contrib[node].sum() + to_call)
                raises = [(float((nlhe.raise_to[c] - current) / pot), lab)
                          for lab, c in children.items() if lab not in ("f", "c")]
                if not raises:
                    raise ValueError(f"no raise is possible at {'/'.join(labels) or 'root'}")
                raises.sort()
                x = (float(amount) * scale - current) / pot
                weights = translate(x, [f for f, _ in raises])
                index, prob = max(weights, key=lambda w: w[1])
                label = raises[index][1]
                notes.append((x, label, prob))
            else:
                raise ValueError(f"unknown action kind {kind!r}")
            labels.append(label)
            node = children[label]
        return labels, notes
