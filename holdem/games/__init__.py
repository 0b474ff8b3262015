"""Games the solver can train: a betting tree (or, multi-way, an implicit game) plus a deal.

:func:`make_game` returns a :class:`Game`, the one object the solver, checkpoints, evaluation and
export need to know about a game: Kuhn poker, Leduc hold'em, heads-up No-Limit Hold'em with an
action abstraction (the config's ``actions``) and a card abstraction (a bucket file) as an
enumerated tree, or 3-6 player No-Limit Hold'em as an implicit game
(:mod:`holdem.games.nlhe.multiway`): its betting tree is far too large to enumerate, so nodes
are computed during traversal and infoset keys hash the betting history.
"""

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from holdem.config import GAME_NAMES, ConfigError
from holdem.games import small
from holdem.games.deal import DealArrays, small_deal
from holdem.games.tree import NodeKind, TreeArrays, tree_depth

SMALL_GAMES = ("kuhn", "leduc")
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_BUCKETS = "assets/abstraction/default_hu.buckets"
MULTIWAY_INITIAL_ROWS = 1 << 20
MULTIWAY_HEADROOM_ROWS = 1 << 16
"""Multi-way: rows kept free before each iteration (far above the new infosets one iteration
creates; an insertion past the end is skipped, never written out of bounds)."""


@dataclass(frozen=True, eq=False)
class Game:
    """Everything the kernels need about a game, plus what export needs to label it."""

    name: str
    num_players: int
    num_streets: int
    tree: TreeArrays          # None for the multi-way game
    deal: DealArrays
    bucket_stride: int        # infoset key = history * bucket_stride + bucket (tree games)
    max_depth: int
    max_actions: int
    deck_size: int
    rules: object = None      # LimitRules (small games), NlheTree (labels, amounts) or
                              # MultiwayRules (table, action abstraction)
    buckets_sha256: str = ""  # of the bucket file (No-Limit Hold'em)
    buckets_path: str = ""
    multiway: object = None   # MultiwayArrays of the implicit 3-6 player game

    @property
    def is_multiway(self):
        return self.multiway is not None

    @property
    def initial_rows(self):
        """Rows a new store starts with."""
        return MULTIWAY_INITIAL_ROWS if self.is_multiway else 4 * self.num_decision_nodes

    @cached_property
    def decision_nodes(self):
        """Node ids of the decision nodes, in history-id order."""
        return np.flatnonzero(self.tree.kind == NodeKind.DECISION)

    @cached_property
    def history_num_actions(self):
        """num_actions per betting-history id (int8)."""
        return self.tree.num_actions[self.decision_nodes]

    @property
    def num_decision_nodes(self):
        return int(self.decision_nodes.size)

    @property
    def max_new_rows(self):
        """Rows one iteration may add: at most one per decision node (buckets are fixed per
        deal); multi-way, a head-room the kernel checks per insertion."""
        if self.is_multiway:
            return MULTIWAY_HEADROOM_ROWS
        return self.num_decision_nodes

    @property
    def max_new_entries(self):
        if self.is_multiway:
            return MULTIWAY_HEADROOM_ROWS * self.max_actions
        return int(self.tree.num_actions[self.tree.kind == NodeKind.DECISION].sum())

    @property
    def is_small(self):
        return self.name in SMALL_GAMES

    def keys_match(self, keys, num_actions):
        """True when every (key, num_actions) pair can be an infoset of this game: exactly for
        tree games; multi-way keys are hashes, so only the range is checked there (the store
        also rejects a key it holds with another num_actions)."""
        keys = np.asarray(keys, dtype=np.int64)
        num_actions = np.asarray(num_actions)
        if keys.shape != num_actions.shape:
            return False
        if self.is_multiway:
            return bool(np.all(keys >= 0) and np.all(num_actions >= 2)
                        and np.all(num_actions <= self.max_actions))
        return bool(np.all(self.num_actions_of_keys(keys) == num_actions))

    def num_actions_of_keys(self, keys):
        """num_actions for each infoset key (-1 where the key is not an infoset of this game;
        tree games only)."""
        if self.is_multiway:
            raise ValueError("multi-way infoset keys are hashes: num_actions is not derivable")
        keys = np.asarray(keys, dtype=np.int64)
        history = keys // self.bucket_stride
        per_history = self.history_num_actions
        ok = (keys >= 0) & (history < per_history.size)
        out = np.full(keys.shape, -1, dtype=np.int64)
        out[ok] = per_history[history[ok]]
        return out


def _small_game(name):
    rules = small.KUHN if name == "kuhn" else small.LEDUC
    tree = small.build_limit_tree(rules)
    stride = rules.num_ranks * rules.num_ranks if rules.num_streets > 1 else rules.num_ranks
    return Game(name=name, num_players=2, num_streets=rules.num_streets, tree=tree,
                deal=small_deal(rules), bucket_stride=stride, max_depth=tree_depth(tree),
                max_actions=int(tree.num_actions.max()), deck_size=len(rules.deck_ranks),
                rules=rules)


def resolve_asset(path):
    """A relative path as given (from the working directory), else from the repository root."""
    path = Path(path)
    if path.is_absolute() or path.exists():
        return path
    candidate = REPO_ROOT / path
    return candidate if candidate.exists() else path


def _load_buckets(config, path):
    """The bucket file ``game.buckets`` names; its errors name the config too."""
    from holdem.abstraction.buckets import BucketFileError, load_buckets

    try:
        return load_buckets(path)
    except BucketFileError as exc:
        raise ConfigError(f"{config.source}: game.buckets: {exc}") from None


def _nlhe_game(config):
    from holdem.abstraction.actions import ActionAbstraction
    from holdem.games.deal import nlhe_deal
    from holdem.games.nlhe.abstract import HeadsUpTable, build_heads_up_tree

    g = config.game
    abstraction = ActionAbstraction.from_config(config.actions)
    path = resolve_asset(g.buckets or DEFAULT_BUCKETS)
    if g.num_players > 2:
        return _multiway_game(config, abstraction, path)
    table = HeadsUpTable(stack=g.stack, small_blind=g.small_blind, big_blind=g.big_blind,
                         ante=g.ante)
    try:
        nlhe = build_heads_up_tree(table, abstraction)
    except ValueError as exc:
        raise ConfigError(f"{config.source}: game/actions: {exc}") from None
    buckets = _load_buckets(config, path)
    tables = buckets.tables
    stride = int(max(tables.num_buckets))
    tree = nlhe.tree
    return Game(name="nlhe", num_players=2, num_streets=4, tree=tree,
                deal=nlhe_deal(tables, 2), bucket_stride=stride, max_depth=tree_depth(tree),
                max_actions=int(tree.num_actions.max()), deck_size=52, rules=nlhe,
                buckets_sha256=buckets.sha256, buckets_path=str(path))


def _multiway_game(config, abstraction, path):
    from holdem.games.deal import nlhe_deal
    from holdem.games.nlhe import multiway

    g = config.game
    table = multiway.MultiwayTable(num_players=g.num_players, stack=g.stack,
                                   small_blind=g.small_blind, big_blind=g.big_blind, ante=g.ante)
    try:
        arrays = multiway.build_multiway(table, abstraction)
    except ValueError as exc:
        raise ConfigError(f"{config.source}: game/actions: {exc}") from None
    buckets = _load_buckets(config, path)
    return Game(name="nlhe", num_players=g.num_players, num_streets=4, tree=None,
                deal=nlhe_deal(buckets.tables, g.num_players),
                bucket_stride=int(max(buckets.tables.num_buckets)),
                max_depth=multiway.max_depth(arrays), max_actions=multiway.max_actions(arrays),
                deck_size=52, rules=multiway.MultiwayRules(table, abstraction),
                buckets_sha256=buckets.sha256, buckets_path=str(path), multiway=arrays)


def make_game(config):
    """Build a game from a :class:`holdem.config.Config` or, for Kuhn and Leduc, a name."""
    name = config if isinstance(config, str) else config.game.name
    if name in SMALL_GAMES:
        return _small_game(name)
    if name == "nlhe" and not isinstance(config, str):
        return _nlhe_game(config)
    raise ValueError(f"unknown game {name!r}; choose one of {', '.join(GAME_NAMES)}"
                     + (" (nlhe needs a config)" if name == "nlhe" else ""))
