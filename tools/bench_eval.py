"""Benchmark what a run's learning curves cost: training with the default evaluations against
training with them off, alternating, end to end through the CLI.

Each round runs ``python -m holdem.cli.train_blueprint`` in-process for ``--seconds`` twice --
evaluations on (the config's ``eval_*`` keys, or the defaults) and off (``eval_baseline: null``,
``eval_lbr: null`` and no cheap evaluation) -- alternating which goes first, and prints both
rates and the cost.
Evaluations that run once per ``eval_baseline_interval`` (300 s by default) would not happen in
a short run, so the runs divide every evaluation interval by ``--speed-up`` (default 10): the
measured cost is that of evaluating ``--speed-up`` times as often, and the cost at the default
intervals is that divided by ``--speed-up`` (the evaluations' cost is per evaluation, not per
iteration). The ``eval:`` lines' own timings are summed as a cross-check.

    python tools/bench_eval.py --config configs/hunl_default.yaml --seconds 60 --rounds 3
    python tools/bench_eval.py --game leduc --seconds 20
"""

import re
import statistics
import sys
import tempfile
from pathlib import Path

import benchlib
import yaml
from benchlib import log

EVAL_SECONDS_RE = re.compile(r"^eval: .* \[([\d.]+) s\]$", re.M)


def parse_args(argv):
    p = benchlib.parser(__doc__, "small game when no --config is given (default leduc)")
    p.add_argument("--seconds", type=float, default=60.0, help="seconds per run (default 60)")
    p.add_argument("--rounds", type=int, default=3, help="alternating pairs (default 3)")
    p.add_argument("--speed-up", type=float, default=10.0,
                   help="evaluate this many times as often as the config says (default 10)")
    return p.parse_args(argv)


def variant(source, tmp, name, train_keys):
    """A copy of the YAML ``source`` with ``train_keys`` set, written under ``tmp``."""
    data = yaml.safe_load(Path(source).read_text())
    data.setdefault("train", {}).update(train_keys)
    path = Path(tmp) / f"{name}.yaml"
    if data.get("game", {}).get("buckets"):
        from holdem.games.nlhe.game import resolve_asset
        data["game"]["buckets"] = str(resolve_asset(data["game"]["buckets"]).resolve())
    path.write_text(yaml.safe_dump(data))
    return path


def main(argv=None):
    args = parse_args(argv)
    from holdem import config as config_mod
    from holdem import registry

    source = benchlib.config_source(args.config, args.game)
    config = config_mod.load(source)
    tc, nlhe = config.train, "train.eval_baseline" in registry.spec(config.game.name).uses
    on_keys = {"eval_interval": tc.eval_interval / args.speed_up}
    if nlhe and tc.eval_baseline:
        on_keys["eval_baseline_interval"] = tc.eval_baseline_interval / args.speed_up
    heads_up = nlhe and config.game.num_players == 2
    if heads_up and tc.eval_lbr:
        on_keys["eval_lbr_interval"] = tc.eval_lbr_interval / args.speed_up
    off_keys = {"eval_interval": 1e9}
    if nlhe:
        off_keys["eval_baseline"] = None
    if heads_up:
        off_keys["eval_lbr"] = None
    with tempfile.TemporaryDirectory(prefix="bench-eval-") as tmp:
        on_src = variant(source, tmp, "on", on_keys)
        off_src = variant(source, tmp, "off", off_keys)
        rates = {"on": [], "off": []}
        eval_seconds = []
        for r in range(args.rounds):
            order = ("off", "on") if r % 2 == 0 else ("on", "off")
            for name in order:
                src = on_src if name == "on" else off_src
                logdir = Path(tmp) / f"{name}{r}"
                run = benchlib.train(src, logdir, 1, seconds=args.seconds, memory=False)
                rates[name].append(run.rate)
                if name == "on":
                    stderr = logdir.with_suffix(".stderr").read_text()
                    eval_seconds.append(sum(map(float, EVAL_SECONDS_RE.findall(stderr))))
            log(f"round {r + 1}: evaluations on {rates['on'][-1]:,.0f} it/s, off "
                f"{rates['off'][-1]:,.0f} it/s")
    on, off = statistics.median(rates["on"]), statistics.median(rates["off"])
    cost = 1.0 - on / off
    print(f"config: {Path(source).name}; {args.rounds} pairs of {args.seconds:g} s; evaluations "
          f"every {', '.join(f'{k} {v:g} s' for k, v in on_keys.items())} "
          f"({args.speed_up:g}x the config's rate)")
    print(f"rounds on: {', '.join(f'{x:,.0f}' for x in rates['on'])} it/s")
    print(f"rounds off: {', '.join(f'{x:,.0f}' for x in rates['off'])} it/s")
    print(f"cost at {args.speed_up:g}x the evaluation rate: {100 * cost:.2f}% of iterations/s "
          f"(medians {on:,.0f} vs {off:,.0f})")
    print(f"evaluation time per run (eval: lines): {statistics.median(eval_seconds):.2f} s of "
          f"{args.seconds:g} s = {100 * statistics.median(eval_seconds) / args.seconds:.2f}%")
    print(f"cost at the config's intervals: {100 * cost / args.speed_up:.2f}% (measured), "
          f"{100 * statistics.median(eval_seconds) / args.seconds / args.speed_up:.3f}% "
          "(from the eval: lines)")


if __name__ == "__main__":
    sys.exit(main())
