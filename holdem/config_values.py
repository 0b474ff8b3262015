"""The values each shared config key takes: the choices of the keys that name one, and the
keys that must be positive, non-negative, probabilities or in a range. :mod:`holdem.config`
checks every value against these tables; a game's own keys are checked by its
:class:`holdem.registry.GameSpec`."""

from holdem import registry

SAMPLINGS = ("external", "outcome")
WEIGHTINGS = ("none", "linear", "dcfr")
CLOCKS = ("iterations", "seconds")
START_METHODS = ("spawn", "fork", "forkserver")
BACKENDS = ("process", "ray")

CHOICES = {
    ("game", "name"): registry.names,       # a callable: games can be registered at run time
    ("solver", "sampling"): SAMPLINGS,
    ("solver", "weighting"): WEIGHTINGS,
    ("solver", "schedule_clock"): CLOCKS,
    ("train", "start_method"): START_METHODS,
    ("train", "backend"): BACKENDS,
    ("train", "eval_baseline"): ("fold", "call", "pot", "random", "equity"),
    ("train", "eval_lbr"): tuple(f"{a}:{r}" for a in ("abstract", "fc", "fcpa", "56")
                                 for r in ("1-4", "3-4")),   # analysis/lbr/sampled.py's settings
}
POSITIVE = {("game", "num_players"),
             ("solver", "discount_interval"), ("solver", "dcfr_interval"),
             ("solver", "strategy_interval"),
             ("train", "snapshot_interval"),
             ("train", "progress_interval"), ("train", "keep_checkpoints"),
             ("train", "log_interval"), ("train", "eval_interval"), ("train", "utility_window"),
             ("train", "worker_timeout"), ("train", "worker_restarts"),
             ("train", "worker_restart_window"), ("train", "max_memory_gb"),
             ("train", "eval_baseline_interval"), ("train", "eval_hands"),
             ("train", "eval_lbr_interval"), ("train", "eval_lbr_hands")}
NON_NEGATIVE = {("solver", "prune_after"), ("train", "iters"),
                 ("train", "time_budget"),
                 ("train", "num_workers"), ("train", "batch_size"), ("train", "seed"),
                 ("train", "merge_threads"), ("train", "own_delta_weight"),
                 ("train", "flush_iters"), ("train", "max_unmerged_iters"),
                 ("train", "hold_strategy_seconds"),
                 ("solver", "average_max_street"), ("solver", "discount_stop"),
                 ("solver", "opponent_exploration_stop")}
PROBABILITY = {("solver", "exploration"), ("solver", "opponent_exploration"),
                ("solver", "prune_prob")}
RANGE = {("game", "num_players"): (2, 6)}      # the multi-way kernels' MAX_PLAYERS
