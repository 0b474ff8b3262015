"""Evaluate a trained strategy.

    python -m holdem.cli.eval_blueprint --checkpoint runs/leduc --exploitability

``--exploitability`` prints ``exploitability: X`` (NashConv / 2 of the normalized average
strategy, chips per game) for Kuhn and Leduc, computed by exact best response.
"""

import sys

from holdem.cli._common import ArgumentParser, run_main


def build_parser():
    p = ArgumentParser(prog="python -m holdem.cli.eval_blueprint",
                       description="Evaluate a checkpoint's average strategy.")
    p.add_argument("--checkpoint", required=True, metavar="PATH",
                   help="checkpoint file, or a logdir (its checkpoint with the most iterations)")
    p.add_argument("--exploitability", action="store_true",
                   help="exact exploitability (Kuhn, Leduc) in chips per game")
    p.add_argument("--value", action="store_true",
                   help="expected value of the average strategy for each player")
    return p


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not (args.exploitability or args.value):
        parser.error("choose what to evaluate: --exploitability and/or --value")
    from holdem.analysis.blueprint import load_checkpoint_store, load_profile
    from holdem.analysis.exact import ExactEvaluator
    from holdem.config import ConfigError

    game, _, checkpoint = load_checkpoint_store(args.checkpoint)
    if not game.is_small:
        raise ConfigError(f"{checkpoint.path}: exact evaluation (--exploitability, --value) is "
                          f"for Kuhn and Leduc; {game.name} needs local best response (--lbr), "
                          "which is not available yet")
    loaded = load_profile(checkpoint)
    evaluator = ExactEvaluator(loaded.game)
    print(f"checkpoint: {loaded.path}")
    print(f"iterations: {loaded.iterations}")
    if args.exploitability:
        print(f"exploitability: {evaluator.exploitability(loaded.average):.9g}")
    if args.value:
        v0, v1 = evaluator.expected_values(loaded.average)
        print(f"value: player0={v0:.9g} player1={v1:.9g}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
