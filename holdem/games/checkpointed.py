"""From a checkpoint to its game and config: the one path training, the solver and analysis take.

A checkpoint stores the resolved config it was trained with and the sha256 of its bucket file.
:func:`stored_config` reads the config back; :func:`game_of_checkpoint` builds the game and
checks it against the checkpoint: with a ``config`` (a resumed run), that the config trains the
same game with the same abstraction; without one (analysis), the stored config is used, and when
the bucket file at its path has changed (a new default was shipped there), a ``.buckets`` file
beside it with the recorded sha256 is used instead (e.g. the old default rebuilt under another
name: docs/configuration.md#abstractions-no-limit-holdem). Problems raise
:class:`holdem.checkpoint.CheckpointError` naming the checkpoint and the field.
"""

import dataclasses
from pathlib import Path

from holdem import config as config_mod
from holdem.checkpoint import CheckpointError
from holdem.games import make_game

_ANY_BUCKETS = "buckets"        # a resumed run may name its bucket file at another path

OLD_HU_DEFAULT_SHA256 = "3907992fe0ce29d132d8f157baeb6a89d6edbc4e38973b5a5b91c12e046a0163"
"""The heads-up default bucket file (E[HS^2]) shipped before the potential-aware one."""


def _rebuild_hint(sha):
    if sha != OLD_HU_DEFAULT_SHA256:
        return ""
    return ("; that is the E[HS^2] heads-up default shipped before: rebuild it beside the new "
            "one with 'python -m holdem.cli.build_buckets --method ehs2 --out "
            "assets/abstraction/ehs2_hu.buckets' and analysis finds it by its sha256")


def stored_config(checkpoint):
    """The config stored in a loaded checkpoint (ConfigError naming the checkpoint)."""
    return config_mod.from_stored(checkpoint.header["config"],
                                  source=f"checkpoint {checkpoint.path}")


def check_same_game(checkpoint, config):
    """The stored config, after checking that ``config`` trains the same game with the same
    abstraction (game and actions sections; the bucket file is checked by its sha256 once the
    game is built)."""
    where = f"checkpoint {checkpoint.path}"
    stored = stored_config(checkpoint)
    if config.game.name != stored.game.name:
        raise CheckpointError(f"{where}: game: checkpoint is {stored.game.name!r}, the run is "
                              f"configured for {config.game.name!r}")
    old_sections, new_sections = config_mod.to_dict(stored), config_mod.to_dict(config)
    for section in ("game", "actions"):
        old, new = old_sections.get(section, {}), new_sections.get(section, {})
        for key in old:
            if key != _ANY_BUCKETS and old[key] != new.get(key):
                raise CheckpointError(
                    f"{where}: {section}.{key}: checkpoint has {old[key]!r}, the run "
                    f"{new.get(key)!r}; a resumed run must keep its game and abstraction")
    return stored


def _check_buckets(checkpoint, game):
    stored_sha = checkpoint.header.get("abstraction", {}).get("buckets_sha256", "")
    if stored_sha != game.buckets_sha256:
        raise CheckpointError(
            f"checkpoint {checkpoint.path}: abstraction.buckets_sha256: the checkpoint was "
            f"trained with bucket file {stored_sha[:12]}..., the run loads {game.buckets_path} "
            f"({game.buckets_sha256[:12]}...){_rebuild_hint(stored_sha)}")


def _relocated(config, game, want):
    """``config`` pointed at a ``.buckets`` file beside the configured one whose sha256 is
    ``want`` (None when there is none)."""
    from holdem.abstraction.bucket_file import BucketFileError, bucket_file_checksum

    for other in sorted(Path(game.buckets_path).parent.glob("*.buckets")):
        try:
            found = bucket_file_checksum(other) == want
        except BucketFileError:
            continue
        if found:
            return dataclasses.replace(config, game=dataclasses.replace(
                config.game, buckets=str(other)))
    return None


def game_of_checkpoint(checkpoint, config=None):
    """(game, config) of a loaded checkpoint: ``config`` (checked against the checkpoint's,
    before the game is built) or, without one, the stored config."""
    relocate = config is None
    if config is None:
        config = stored_config(checkpoint)
    else:
        check_same_game(checkpoint, config)
    game = make_game(config)
    want = checkpoint.header.get("abstraction", {}).get("buckets_sha256", "")
    if relocate and want and game.buckets_path and game.buckets_sha256 != want:
        moved = _relocated(config, game, want)
        if moved is not None:
            config, game = moved, make_game(moved)
    _check_buckets(checkpoint, game)
    return game, config
