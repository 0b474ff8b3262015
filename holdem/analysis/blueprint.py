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
    from holdem.training import check_resume_config, store_from_checkpoint

    checkpoint = path if isinstance(path, ckpt.Checkpoint) else ckpt.load(ckpt.resolve(path))
    config = config_mod.from_dict(checkpoint.header["config"],
                                  source=f"checkpoint {checkpoint.path}")
    game = make_game(config)
    check_resume_config(checkpoint, config, game)       # the bucket file must match
    return game, store_from_checkpoint(checkpoint, game), checkpoint


def load_profile(path):
    """Average and current strategy of a small-game checkpoint (file, logdir or Checkpoint)."""
    game, store, checkpoint = load_checkpoint_store(path)
    config = config_mod.from_dict(checkpoint.header["config"],
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
