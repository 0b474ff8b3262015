"""Train a blueprint strategy with MCCFR.

    python -m holdem.cli.train_blueprint --game leduc --time-budget 60 --logdir runs/leduc

Prints progress on stderr and, at the end, one line on stdout:
``done: iterations=N elapsed=S it/s=R infosets=I checkpoint=PATH``.
"""

import sys

from holdem import config as config_mod
from holdem.cli.common import (ArgumentParser, directory_name, non_negative_int, positive_float,
                               positive_int, run_main)
from holdem import registry


def build_parser():
    p = ArgumentParser(
        prog="python -m holdem.cli.train_blueprint",
        description="Train a blueprint strategy with Monte Carlo CFR. Flags override the config "
                    "file; without --config, --game selects the defaults of configs/GAME.yaml.")
    p.add_argument("--game", choices=registry.names_with_defaults(),
                   help="small game to train with the defaults of configs/GAME.yaml "
                        "(No-Limit Hold'em: --config configs/hunl_default.yaml)")
    p.add_argument("--config", metavar="FILE",
                   help="YAML config (every key: docs/configuration.md#configuration)")
    p.add_argument("--iters", type=positive_int, metavar="N",
                   help="total iterations of the run (resumed iterations count)")
    p.add_argument("--time-budget", type=positive_float, metavar="SECONDS",
                   help="seconds of training in this invocation (start-up excluded)")
    p.add_argument("--num-workers", type=non_negative_int, metavar="N",
                   help="worker processes: 0 = one per core, 1 = in-process, no pool (default 1)")
    p.add_argument("--batch-size", type=non_negative_int, metavar="N",
                   help="iterations per worker per batch (default 0: sized to ~0.25 s)")
    p.add_argument("--merge-threads", type=non_negative_int, metavar="T",
                   help="threads merging worker deltas in the main process (default 0: one "
                        "per four workers, 1..8)")
    p.add_argument("--logdir", required=True, metavar="DIR", type=directory_name,
                   help="run directory: checkpoints go to DIR/checkpoints/; one run per "
                        "directory (a DIR that holds a run is refused unless --resume-from "
                        "continues it or --overwrite replaces it)")
    p.add_argument("--seed", type=non_negative_int, help="random seed (default 0)")
    p.add_argument("--snapshot-interval", "--checkpoint-interval", type=positive_float,
                   dest="snapshot_interval", metavar="SECONDS",
                   help="seconds between checkpoints (default 600)")
    p.add_argument("--keep-checkpoints", type=positive_int, metavar="K",
                   help="checkpoints to keep (default 3)")
    p.add_argument("--resume-from", metavar="PATH",
                   help="checkpoint file or logdir (its newest checkpoint) to continue from")
    p.add_argument("--overwrite", action="store_true",
                   help="start over in a --logdir that holds a run: once this run has "
                        "started, that run's checkpoints (but the one resumed from) and "
                        "TensorBoard files are deleted")
    p.add_argument("--tensorboard", action="store_true", default=None,
                   help="write TensorBoard scalars under --logdir")
    p.add_argument("--max-memory", type=positive_float, metavar="GB", dest="max_memory_gb",
                   help="checkpoint and stop before the store outgrows this many GiB")
    p.add_argument("--start-method", choices=("spawn", "fork", "forkserver"),
                   help="how worker processes are started (default spawn)")
    p.add_argument("--backend", choices=("process", "ray"),
                   help="where workers run: process = worker processes on this machine "
                        "(default), ray = Ray actors on this machine or a cluster (needs the "
                        "ray extra: pip install -e '.[ray]')")
    p.add_argument("--ray-address", metavar="ADDR",
                   help="with --backend ray: the cluster to join ('auto' or HOST:PORT, as "
                        "'ray start' prints); default: start a local Ray instance")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.config:
        config = config_mod.load(args.config)
        if args.game and args.game != config.game.name:
            raise config_mod.ConfigError(
                f"--game {args.game} contradicts {args.config}: game.name={config.game.name}")
    elif args.game:
        config = config_mod.default_for_game(args.game)
    elif args.resume_from:
        config = None
    else:
        raise config_mod.ConfigError("give --game or --config (or --resume-from)")
    overrides = {"iters": args.iters, "time_budget": args.time_budget,
                 "num_workers": args.num_workers, "seed": args.seed,
                 "snapshot_interval": args.snapshot_interval,
                 "keep_checkpoints": args.keep_checkpoints, "batch_size": args.batch_size,
                 "merge_threads": args.merge_threads,
                 "tensorboard": args.tensorboard, "max_memory_gb": args.max_memory_gb,
                 "start_method": args.start_method, "backend": args.backend,
                 "ray_address": args.ray_address}

    from holdem import checkpoint as ckpt
    from holdem import training

    if args.resume_from:
        header = ckpt.resume_header(args.resume_from)
        stored = config_mod.from_stored(header["config"], source=f"checkpoint {args.resume_from}")
        # The run goes on as it was: settings neither the config file nor a flag gives come
        # from the checkpoint (--config configs/x.yaml must not turn TensorBoard off).
        config = stored if config is None else config_mod.continued(config, stored)
    config = config_mod.with_overrides(config, train=overrides)
    result = training.train(config, args.logdir, resume_from=args.resume_from,
                            progress=not args.quiet, overwrite=args.overwrite)
    print(result.done_line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
