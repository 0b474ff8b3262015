"""No-Limit Hold'em games built from a config: the heads-up game as an enumerated betting tree
(:func:`holdem.games.nlhe.abstract.build_heads_up_tree`), 3-6 players as the implicit
:class:`holdem.games.nlhe.multiway.MultiwayGame`. Both take the config's action abstraction
(``actions``) and card abstraction (the bucket file ``game.buckets``).
"""

from pathlib import Path

from holdem.config import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_BUCKETS = "assets/abstraction/default_hu.buckets"


def resolve_asset(path):
    """A relative path as given (from the working directory), else from the repository root."""
    path = Path(path)
    if path.is_absolute() or path.exists():
        return path
    candidate = REPO_ROOT / path
    return candidate if candidate.exists() else path


def _load_buckets(config, path):
    """The bucket file ``game.buckets`` names; its errors name the config too."""
    from holdem.abstraction.bucket_file import BucketFileError, load_buckets

    try:
        return load_buckets(path)
    except BucketFileError as exc:
        raise ConfigError(f"{config.source}: game.buckets: {exc}") from None


def _built(config, build, *args):
    try:
        return build(*args)
    except ValueError as exc:
        raise ConfigError(f"{config.source}: game/actions: {exc}") from None


def build(config):
    """The No-Limit Hold'em game ``config`` describes."""
    from holdem.abstraction.actions import ActionAbstraction

    abstraction = ActionAbstraction.from_config(config.actions)
    path = resolve_asset(config.game.buckets or DEFAULT_BUCKETS)
    if config.game.num_players > 2:
        return _multiway_game(config, abstraction, path)
    return _heads_up_game(config, abstraction, path)


def _heads_up_game(config, abstraction, path):
    from holdem.games.deal_kernels import nlhe_deal
    from holdem.games.nlhe.abstract import HeadsUpTable, build_heads_up_tree
    from holdem.games.tree_game import tree_game

    g = config.game
    table = HeadsUpTable(stack=g.stack, small_blind=g.small_blind, big_blind=g.big_blind,
                         ante=g.ante)
    nlhe = _built(config, build_heads_up_tree, table, abstraction)
    buckets = _load_buckets(config, path)
    tables = buckets.tables
    return tree_game("nlhe", nlhe.tree, nlhe_deal(tables, 2),
                     bucket_stride=int(max(tables.num_buckets)), num_streets=4, deck_size=52,
                     rules=nlhe, cards=nlhe, lines=nlhe,
                     buckets_sha256=buckets.sha256, buckets_path=str(path))


def _multiway_game(config, abstraction, path):
    from holdem.games.deal_kernels import nlhe_deal
    from holdem.games.nlhe import multiway

    g = config.game
    table = multiway.MultiwayTable(num_players=g.num_players, stack=g.stack,
                                   small_blind=g.small_blind, big_blind=g.big_blind, ante=g.ante)
    arrays = _built(config, multiway.build_multiway, table, abstraction)
    buckets = _load_buckets(config, path)
    rules = multiway.MultiwayRules(table, abstraction)
    deal = nlhe_deal(buckets.tables, g.num_players)
    return multiway.MultiwayGame(
        name="nlhe", num_players=g.num_players, num_streets=4, deal=deal,
        bucket_stride=int(max(buckets.tables.num_buckets)),
        max_depth=multiway.max_depth(arrays), max_actions=multiway.max_actions(arrays),
        deck_size=52, rules=rules, cards=rules,
        rotations=multiway.MultiwayRotations(arrays, deal),
        buckets_sha256=buckets.sha256, buckets_path=str(path), arrays=arrays)
