"""Decision-node visits/s of in-process training, this checkout against another, alternating.

Each measurement is a fresh child process that imports holdem from one checkout, warms the
kernels up (200 iterations), then times ``Solver.run(iters)`` on a new solver and divides the
decision-node visits (``Workspace.visits``) by the seconds. Rounds alternate the checkouts, so a
machine whose speed drifts moves both; compare the medians. For a refactor that must not cost
speed: check out the commit before it with ``git worktree add /tmp/old <commit>``, then

    python tools/bench_visits.py --config configs/hunl_default.yaml --iters 300000 \\
        --against /tmp/old --rounds 3
    python tools/bench_visits.py --game leduc --iters 1500000 --against /tmp/old
"""

import statistics
import subprocess
import sys
from pathlib import Path

import benchlib
from benchlib import ROOT

CHILD = """
import sys, time
sys.path.insert(0, sys.argv[1])
from holdem import config as config_mod
from holdem.games import make_game
from holdem.solver.solver import Solver
source, iters = sys.argv[2], int(sys.argv[3])
cfg = (config_mod.load(source) if source.endswith((".yaml", ".yml"))
       else config_mod.default_for_game(source))
game = make_game(cfg)
Solver(game, cfg).run(200)
solver = Solver(game, cfg)
start = time.perf_counter()
solver.run(iters)
seconds = time.perf_counter() - start
print(int(solver.workspace.visits[0]) / seconds, iters / seconds)
"""


def measure(root, source, iters):
    """(visits/s, iterations/s) of one child importing holdem from ``root``."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(root), source, str(iters)],
                         capture_output=True, text=True, check=True, cwd=root).stdout.split()
    return float(out[0]), float(out[1])


def main(argv=None):
    p = benchlib.parser(__doc__, "game with --game defaults (default leduc)")
    p.add_argument("--iters", type=int, default=300_000, help="iterations timed per round")
    p.add_argument("--rounds", type=int, default=3, help="measurements per checkout")
    p.add_argument("--against", metavar="DIR", type=Path,
                   help="another checkout to measure in turn (e.g. a worktree of main)")
    args = p.parse_args(argv)
    source = str(Path(args.config).resolve()) if args.config else args.game
    roots = [ROOT] + ([args.against.resolve()] if args.against else [])
    rates = {root: [] for root in roots}
    for r in range(args.rounds):
        for root in roots if r % 2 == 0 else roots[::-1]:
            visits, its = measure(root, source, args.iters)
            rates[root].append(visits)
            benchlib.log(f"round {r + 1}: {root}: {visits / 1e6:.3f} M visits/s "
                         f"({its:,.0f} it/s)")
    print(f"config: {args.config or args.game}; {args.iters:,} iterations per round")
    for root, values in rates.items():
        print(f"{root}: median {statistics.median(values) / 1e6:.3f} M visits/s "
              f"(rounds: {', '.join(f'{v / 1e6:.3f}' for v in values)})")
    if args.against:
        ratio = statistics.median(rates[roots[0]]) / statistics.median(rates[roots[1]])
        print(f"this checkout / the other: {ratio:.3f}")


if __name__ == "__main__":
    main()
