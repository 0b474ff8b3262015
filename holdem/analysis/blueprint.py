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


def load_profile(path):
    """Average and current strategy of a small-game checkpoint (file or logdir)."""
    from holdem.training import store_from_checkpoint

    checkpoint = ckpt.load(ckpt.resolve(path))
    config = config_mod.from_dict(checkpoint.header["config"],
                                  source=f"checkpoint {checkpoint.path}")
    game = make_game(config.game.name)
    store = store_from_checkpoint(checkpoint, game)
    rows = store.used()
    average, visited = average_profile(game, rows)
    current, _ = current_profile(game, rows)
    return LoadedProfile(path=checkpoint.path, game=game, config=config,
                         iterations=checkpoint.iterations, average=average, current=current,
                         visited=visited)
